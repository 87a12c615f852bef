//! The SDK → CLI control requests beyond the session basics of
//! [`requests`](super::requests): settings, files, plugins, skills, tasks,
//! and per-server MCP requests (their constructors on
//! [`SdkRequest`](super::SdkRequest) are in `requests/constructors.rs`).

use serde_json::Value;

use crate::wire::{string_enum, wire_struct};

string_enum! {
    /// How much thinking a model shows (`--thinking-display`,
    /// `set_max_thinking_tokens.thinking_display`).
    pub enum ThinkingDisplay default Summarized {
        /// A summary of the thinking.
        "summarized" => Summarized,
        /// No thinking text (the blocks still arrive, empty).
        "omitted" => Omitted,
        /// Highlights only (runtime `set_max_thinking_tokens` only).
        "highlights" => Highlights,
    }
}

string_enum! {
    /// How hard the model works on a turn (`--effort`).
    pub enum Effort default Medium {
        /// Least effort.
        "low" => Low,
        /// The CLI's default on models with effort levels.
        "medium" => Medium,
        /// More.
        "high" => High,
        /// More still.
        "xhigh" => XHigh,
        /// The most.
        "max" => Max,
    }
}

string_enum! {
    /// How much [`get_context_usage`](crate::Control::get_context_usage) reports.
    pub enum ContextDetail default Summary {
        /// The categories and totals.
        "summary" => Summary,
        /// Everything, counted exactly (the CLI calls the token-counting API).
        "full" => Full,
    }
}

wire_struct! {
    /// `apply_flag_settings`: settings merged into the flag-settings layer
    /// (the one `--settings` fills) for the rest of the session.
    pub struct ApplyFlagSettingsRequest tags { "subtype" = "apply_flag_settings" } {
        /// A settings object.
        req settings: Value = "settings",
    }
}

wire_struct! {
    /// `update_settings`: writes settings to a settings file. The CLI
    /// accepts only a few keys (e.g. `localSettings.outputStyle`,
    /// `userSettings.effortLevel`).
    pub struct UpdateSettingsRequest tags { "subtype" = "update_settings" } {
        /// `userSettings`, `projectSettings` or `localSettings`.
        req source: String = "source",
        /// The settings to write.
        req settings: Value = "settings",
    }
}

wire_struct! {
    /// `read_file`: a file read by the CLI, under its Read permission rules.
    pub struct ReadFileRequest tags { "subtype" = "read_file" } {
        /// Absolute, or relative to the CLI's working directory.
        req path: String = "path",
        /// Read at most this many bytes.
        opt max_bytes: u64 = "max_bytes",
        /// `utf-8` (default) or `base64`.
        opt encoding: String = "encoding",
    }
}

wire_struct! {
    /// `reload_plugins`.
    pub struct ReloadPluginsRequest tags { "subtype" = "reload_plugins" } {
        /// Do not reload when it would invalidate the prompt cache.
        opt hold_on_cache_impact: bool = "hold_on_cache_impact",
        /// Plugins to add first (`{"type":"local","path":…}`).
        opt add_plugins: Vec<Value> = "add_plugins",
        /// Refuse while a turn runs.
        opt refuse_if_busy: bool = "refuse_if_busy",
    }
}

wire_struct! {
    /// `reload_skills`.
    pub struct ReloadSkillsRequest tags { "subtype" = "reload_skills" } {}
}

wire_struct! {
    /// `reload_output_styles`.
    pub struct ReloadOutputStylesRequest tags { "subtype" = "reload_output_styles" } {}
}

wire_struct! {
    /// `seed_read_state`: tells the CLI a file was read at `mtime`, so that
    /// editing it does not need a fresh Read first.
    pub struct SeedReadStateRequest tags { "subtype" = "seed_read_state" } {
        /// The file.
        req path: String = "path",
        /// Its modification time, in milliseconds since the epoch.
        req mtime: u64 = "mtime",
    }
}

wire_struct! {
    /// `set_mcp_permission_mode_override`: a tighter permission mode for one
    /// MCP server's tools (`null` removes the override).
    pub struct SetMcpPermissionModeOverrideRequest tags { "subtype" = "set_mcp_permission_mode_override" } {
        /// The server.
        req server_name: String = "serverName",
        /// `default` or `auto`; `null` clears.
        nul mode: String = "mode",
    }
}

wire_struct! {
    /// `mcp_read_resource` (external servers only; the CLI refuses it for
    /// in-process ones, which this process can read directly).
    pub struct McpReadResourceRequest tags { "subtype" = "mcp_read_resource" } {
        /// The server.
        req server_name: String = "serverName",
        /// The resource.
        req uri: String = "uri",
    }
}

wire_struct! {
    /// `background_tasks`: moves running foreground work (a Bash command, a
    /// subagent) to the background.
    pub struct BackgroundTasksRequest tags { "subtype" = "background_tasks" } {
        /// Only this tool call's work; all when absent.
        opt tool_use_id: String = "tool_use_id",
    }
}
