//! Top-level message types beyond the conversation: `auth_status`,
//! `tool_use_summary`, `prompt_suggestion`, `conversation_reset`,
//! `active_goal` (TypeScript SDK 0.3.332 names and fields), and
//! [`McpProgress`], which this SDK makes itself.

use serde_json::Value;

use crate::wire::wire_struct;

wire_struct! {
    /// `auth_status`: progress of an authentication the CLI runs.
    pub struct AuthStatus tags { "type" = "auth_status" } {
        /// Whether it is still running.
        opt is_authenticating: bool = "isAuthenticating",
        /// Output lines.
        opt output: Vec<String> = "output",
        /// Why it failed.
        opt error: String = "error",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `tool_use_summary`: a one-line summary of the tool calls before it.
    pub struct ToolUseSummary tags { "type" = "tool_use_summary" } {
        /// The summary.
        opt summary: String = "summary",
        /// The tool calls it summarises.
        opt preceding_tool_use_ids: Vec<String> = "preceding_tool_use_ids",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `prompt_suggestion`: a suggested next prompt (with
    /// `initialize.promptSuggestions`).
    pub struct PromptSuggestion tags { "type" = "prompt_suggestion" } {
        /// The suggestion.
        opt suggestion: String = "suggestion",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `conversation_reset`: the conversation started over (`/clear`, plan
    /// mode exit, …) under a new id.
    pub struct ConversationReset tags { "type" = "conversation_reset" } {
        /// The new conversation's id.
        opt new_conversation_id: String = "new_conversation_id",
        /// `clear`, `plan_mode_exit`, `fresh_session`, `onboarding`.
        opt trigger: String = "trigger",
        /// The user message that caused it.
        opt user_message_uuid: String = "user_message_uuid",
        /// When (ISO 8601).
        opt timestamp: String = "timestamp",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `active_goal`: the session's goal (`/goal`) changed. A CLI stdout
    /// message outside the TypeScript `SDKMessage` union.
    pub struct ActiveGoal tags { "type" = "active_goal" } {
        /// `{condition, iterations, set_at, tokens_at_start, last_reason?}`,
        /// or `null` (then `None`) when the goal was cleared.
        opt value: Value = "value",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `mcp_progress`: progress an in-process tool reported
    /// ([`ToolContext::progress`](crate::mcp::ToolContext::progress)).
    ///
    /// The CLI does not forward MCP progress to its stdout, so the SDK, which
    /// runs the server itself, puts this message in the stream first-hand,
    /// while the tool runs: it never comes from the CLI, and neither official
    /// SDK has it.
    pub struct McpProgress tags { "type" = "mcp_progress" } {
        /// The in-process server.
        opt server_name: String = "server_name",
        /// The tool, as the server names it (the model sees
        /// `mcp__<server>__<tool>`).
        opt tool_name: String = "tool_name",
        /// The model's `tool_use` id of the call, when the CLI sent it
        /// (`_meta["claudecode/toolUseId"]`).
        opt tool_use_id: String = "tool_use_id",
        /// The progress token of the call.
        opt progress_token: Value = "progress_token",
        /// Progress so far.
        opt progress: f64 = "progress",
        /// The total, when known.
        opt total: f64 = "total",
        /// A message.
        opt message: String = "message",
        /// Not set by the SDK (the bridge does not know the CLI's session
        /// id); kept for symmetry with the other messages.
        opt session_id: String = "session_id",
        /// Not set by the SDK.
        opt uuid: String = "uuid",
    }
}
