//! Types both the messages and the control protocol name (the system
//! `init` message and the `initialize` response, for instance), declared
//! beneath both so that neither imports the other for them; public as
//! [`protocol`](crate::protocol)'s.

use crate::wire::{string_enum, wire_struct};

string_enum! {
    /// The CLI's permission mode (`--permission-mode`, `set_permission_mode`).
    pub enum PermissionMode default Default {
        /// Ask for anything not allowed by rules.
        "default" => Default,
        /// Accept file edits without asking.
        "acceptEdits" => AcceptEdits,
        /// Plan only; no edits.
        "plan" => Plan,
        /// Allow everything (as root only with `IS_SANDBOX=1`).
        "bypassPermissions" => BypassPermissions,
        /// Deny instead of asking.
        "dontAsk" => DontAsk,
        /// Let a classifier decide.
        "auto" => Auto,
    }
}

string_enum! {
    /// Connection state of an MCP server.
    pub enum McpServerState default Pending {
        /// Connected; tools are available.
        "connected" => Connected,
        /// The connection or handshake failed.
        "failed" => Failed,
        /// Disabled by `mcp_toggle`.
        "disabled" => Disabled,
        /// Still connecting.
        "pending" => Pending,
        /// Needs OAuth.
        "needs-auth" => NeedsAuth,
    }
}

wire_struct! {
    /// A slash command (initialize response).
    pub struct SlashCommand {
        /// Name without `/`.
        req name: String = "name",
        /// What it does.
        opt description: String = "description",
        /// Argument hint.
        opt argument_hint: String = "argumentHint",
        /// Built into the CLI.
        opt builtin: bool = "builtin",
        /// Other names.
        opt aliases: Vec<String> = "aliases",
    }
}
