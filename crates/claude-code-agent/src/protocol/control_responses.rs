//! Typed answers to the control requests of [`controls`](super::controls)
//! and to `get_context_usage` and `rewind_files`.

use serde_json::Value;

use super::responses::{AgentInfo, McpServerStatus};
use crate::shared_types::SlashCommand;
use crate::wire::wire_struct;

wire_struct! {
    /// One row of a [`ContextUsage`]: what fills the context window.
    pub struct ContextCategory {
        /// Its display name.
        req name: String = "name",
        /// Tokens it takes.
        req tokens: u64 = "tokens",
        /// A stable id (`system_prompt`, `system_tools`, `mcp_tools`,
        /// `messages`, `free_space`, …); match rows on this, not the name.
        opt id: String = "id",
        /// `used`, `free`, `buffer` or `deferred`.
        opt kind: String = "kind",
        /// The CLI's colour for the row.
        opt color: String = "color",
        /// Out-of-window tool schemas.
        opt is_deferred: bool = "isDeferred",
    }
}

wire_struct! {
    /// Answer to `get_context_usage`: how full the context window is, and
    /// with what. The many details the CLI adds (grid rows, per-file and
    /// per-tool counts, skills, agents) are typed loosely or kept in `extra`.
    pub struct ContextUsage {
        /// What fills the window, by category.
        def categories: Vec<ContextCategory> = "categories",
        /// Tokens used.
        req total_tokens: u64 = "totalTokens",
        /// The window's size, as the CLI counts it.
        req max_tokens: u64 = "maxTokens",
        /// The model's raw window size.
        opt raw_max_tokens: u64 = "rawMaxTokens",
        /// Percentage used.
        opt percentage: f64 = "percentage",
        /// The model.
        opt model: String = "model",
        /// Whether auto-compaction is on.
        opt is_auto_compact_enabled: bool = "isAutoCompactEnabled",
        /// When auto-compaction starts, in tokens.
        opt auto_compact_threshold: u64 = "autoCompactThreshold",
        /// Memory files (`CLAUDE.md`…) and their tokens.
        opt memory_files: Vec<Value> = "memoryFiles",
        /// MCP tools and their tokens.
        opt mcp_tools: Vec<Value> = "mcpTools",
        /// Agents and their tokens.
        opt agents: Vec<Value> = "agents",
        /// Tokens by message kind (tool calls, results, …).
        opt message_breakdown: Value = "messageBreakdown",
        /// The API's own usage numbers of the last request.
        opt api_usage: Value = "apiUsage",
    }
}

wire_struct! {
    /// Answer to `rewind_files`.
    pub struct RewindFilesResult {
        /// Whether the files can be (or were) rewound.
        req can_rewind: bool = "canRewind",
        /// Why not.
        opt error: String = "error",
        /// Files that change (dry run).
        opt files_changed: Vec<String> = "filesChanged",
        /// Lines added back (dry run).
        opt insertions: u64 = "insertions",
        /// Lines removed (dry run).
        opt deletions: u64 = "deletions",
        /// Symbolic links left alone.
        opt skipped_links: u64 = "skippedLinks",
    }
}

wire_struct! {
    /// Answer to `background_tasks`.
    pub struct BackgroundTasksResponse {
        /// Whether anything was moved to the background (absent: nothing ran).
        opt backgrounded: bool = "backgrounded",
    }
}

wire_struct! {
    /// Answer to `read_file`.
    pub struct ReadFileResponse {
        /// The contents, in `encoding`.
        req contents: String = "contents",
        /// The absolute path read.
        opt abs_path: String = "absPath",
        /// Cut at `max_bytes`.
        opt truncated: bool = "truncated",
        /// `utf-8` or `base64`.
        opt encoding: String = "encoding",
        /// Bytes that were not valid UTF-8 were replaced.
        opt lossy: bool = "lossy",
    }
}

wire_struct! {
    /// Answer to `reload_plugins`: what the CLI offers now.
    pub struct ReloadPluginsResponse {
        /// Slash commands.
        def commands: Vec<SlashCommand> = "commands",
        /// Agents.
        def agents: Vec<AgentInfo> = "agents",
        /// Plugins.
        def plugins: Vec<Value> = "plugins",
        /// MCP servers.
        def mcp_servers: Vec<McpServerStatus> = "mcpServers",
        /// How many plugins failed to load.
        opt error_count: u64 = "error_count",
        /// Held back because of the prompt cache (`hold_on_cache_impact`).
        opt held: bool = "held",
        /// What a reload would cost the prompt cache.
        opt cache_impact: Value = "cache_impact",
    }
}

wire_struct! {
    /// Answer to `reload_skills`.
    pub struct ReloadSkillsResponse {
        /// The skills now available (`{name, description, …}`).
        def skills: Vec<Value> = "skills",
    }
}

wire_struct! {
    /// Answer to `reload_output_styles`.
    pub struct ReloadOutputStylesResponse {
        /// The output styles now available.
        def available_output_styles: Vec<String> = "available_output_styles",
    }
}

wire_struct! {
    /// Answer to `mcp_read_resource`.
    pub struct McpReadResourceResponse {
        /// The resource's contents (MCP `ResourceContents`).
        def contents: Vec<Value> = "contents",
    }
}

wire_struct! {
    /// Answer to `set_mcp_permission_mode_override`.
    pub struct McpPermissionOverrideResponse {
        /// A warning, e.g. when the override cannot tighten anything.
        opt warning: String = "warning",
    }
}
