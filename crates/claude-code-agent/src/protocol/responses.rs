//! Typed `response` payloads of successful control responses.

use serde_json::{Map, Value};

use super::mcp_config::McpServerConfig;
use crate::message::SessionState;
use crate::shared_types::{McpServerState, PermissionMode, SlashCommand};
use crate::wire::wire_struct;

wire_struct! {
    /// `serverInfo` of an MCP server.
    pub struct McpServerInfo {
        /// The server's own name.
        opt name: String = "name",
        /// Its version.
        opt version: String = "version",
    }
}

wire_struct! {
    /// A tool as listed by `mcp_status`.
    pub struct McpToolInfo {
        /// The server's own tool name.
        req name: String = "name",
        /// MCP tool annotations.
        opt annotations: Value = "annotations",
    }
}

wire_struct! {
    /// One server in an `mcp_status` response.
    pub struct McpServerStatus {
        /// The server's name.
        req name: String = "name",
        /// Its state.
        req status: McpServerState = "status",
        /// `serverInfo` from its handshake.
        opt server_info: McpServerInfo = "serverInfo",
        /// Failure text (external servers only).
        opt error: String = "error",
        /// Its configuration (external servers only; headers in clear text).
        opt config: McpServerConfig = "config",
        /// `sdk`, `stdio`, `http`, `sse`, …
        opt transport: String = "transport",
        /// `dynamic`, `user`, `project`, …
        opt scope: String = "scope",
        /// `sdk` or `dynamic`.
        opt source: String = "source",
        /// Its tools.
        opt tools: Vec<McpToolInfo> = "tools",
    }
}

wire_struct! {
    /// Response to `mcp_status`: `{"mcpServers":[…]}`. In-process servers whose
    /// handshake is still running are omitted.
    pub struct McpStatusResponse {
        /// The servers.
        def mcp_servers: Vec<McpServerStatus> = "mcpServers",
    }
}

wire_struct! {
    /// Response to `mcp_set_servers`.
    pub struct McpSetServersResponse {
        /// Servers added.
        def added: Vec<String> = "added",
        /// Servers removed.
        def removed: Vec<String> = "removed",
        /// Errors per server.
        def errors: Map<String, Value> = "errors",
    }
}

wire_struct! {
    /// Response to `interrupt`.
    pub struct InterruptResponse {
        /// Queued messages that stay queued.
        def still_queued: Vec<Value> = "still_queued",
        /// Queued messages dropped (when asked with `cancel_queued`).
        opt cancelled: Vec<Value> = "cancelled",
    }
}

wire_struct! {
    /// Response to `set_model`.
    pub struct SetModelResponse {
        /// The resolved model now in use.
        opt model: String = "model",
    }
}

wire_struct! {
    /// Response to `set_permission_mode`.
    pub struct SetPermissionModeResponse {
        /// The mode now in effect.
        opt mode: PermissionMode = "mode",
    }
}

wire_struct! {
    /// The SDK's answer to an `mcp_message` request: `{"mcp_response":<JSON-RPC>}`.
    pub struct McpMessageResponse {
        /// The JSON-RPC response (or `{"jsonrpc":"2.0","result":{}}` for notifications).
        req mcp_response: Value = "mcp_response",
    }
}

impl McpMessageResponse {
    /// Wraps a JSON-RPC message.
    pub fn new(mcp_response: Value) -> Self {
        Self {
            mcp_response,
            ..Self::default()
        }
    }

    /// The acknowledgement of a CLI→SDK `mcp_message` that carries no
    /// request (a notification, or a JSON-RPC response to the server): a
    /// JSON-RPC result object without an id, `{"jsonrpc":"2.0","result":{}}`.
    /// The CLI waits for it (after `notifications/initialized` it sends
    /// nothing more until it comes), and a control error instead makes it
    /// drop the server.
    pub fn notification_ack() -> Self {
        let mut ack = Map::with_capacity(2);
        ack.insert("jsonrpc".into(), Value::String("2.0".into()));
        ack.insert("result".into(), Value::Object(Map::new()));
        Self::new(Value::Object(ack))
    }

    /// The payload of the control response, `{"mcp_response": …}`, built by
    /// moving the reply (no copy, however big it is).
    pub fn into_value(self) -> Value {
        let mut map = self.extra;
        map.insert("mcp_response".into(), self.mcp_response);
        Value::Object(map)
    }
}

wire_struct! {
    /// An agent (initialize response).
    pub struct AgentInfo {
        /// Its name.
        req name: String = "name",
        /// When to use it.
        opt description: String = "description",
        /// Its model.
        opt model: String = "model",
    }
}

wire_struct! {
    /// A model the CLI offers (initialize response).
    pub struct ModelInfo {
        /// The value to pass to `set_model`.
        req value: String = "value",
        /// The model id it resolves to.
        opt resolved_model: String = "resolvedModel",
        /// Display name.
        opt display_name: String = "displayName",
        /// Description.
        opt description: String = "description",
        /// Whether it supports effort levels.
        opt supports_effort: bool = "supportsEffort",
    }
}

wire_struct! {
    /// Account information (initialize response).
    pub struct AccountInfo {
        /// Token source.
        opt token_source: String = "tokenSource",
        /// API key source.
        opt api_key_source: String = "apiKeySource",
        /// `firstParty`, `bedrock`, `vertex`, …
        opt api_provider: String = "apiProvider",
        /// Account e-mail, when logged in.
        opt email: String = "email",
    }
}

wire_struct! {
    /// Response to `initialize`: what the CLI offers. Much more is in `extra`.
    pub struct InitializeResponse {
        /// Slash commands.
        opt commands: Vec<SlashCommand> = "commands",
        /// Agents.
        opt agents: Vec<AgentInfo> = "agents",
        /// Models.
        opt models: Vec<ModelInfo> = "models",
        /// Account.
        opt account: AccountInfo = "account",
        /// The CLI's process id.
        opt pid: u64 = "pid",
        /// The CLI's version.
        opt claude_code_version: String = "claude_code_version",
        /// The permission mode in effect.
        opt current_permission_mode: PermissionMode = "current_permission_mode",
        /// Capability flags.
        opt capabilities: Vec<String> = "capabilities",
        /// Output style in effect.
        opt output_style: String = "output_style",
        /// Available output styles.
        opt available_output_styles: Vec<String> = "available_output_styles",
        /// Session state.
        opt session_state: SessionState = "session_state",
        /// Whether matchers may carry `onFailure`.
        opt hook_on_failure_supported: bool = "hook_on_failure_supported",
    }
}
