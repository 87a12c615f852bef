//! Control request payloads (`request` of a `control_request`), both
//! directions.

mod constructors;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::agents::AgentDefinition;
use super::controls::{
    ApplyFlagSettingsRequest, BackgroundTasksRequest, ContextDetail, McpReadResourceRequest,
    ReadFileRequest, ReloadOutputStylesRequest, ReloadPluginsRequest, ReloadSkillsRequest,
    SeedReadStateRequest, SetMcpPermissionModeOverrideRequest, ThinkingDisplay,
    UpdateSettingsRequest,
};
use super::dialogs::{ElicitationRequest, UserDialogRequest};
use super::hooks::{HookEvent, HookFailure, HookInput};
use super::mcp_config::McpServerConfig;
use super::permission::PermissionUpdate;
use crate::shared_types::PermissionMode;
use crate::wire::{wire_enum, wire_struct};

// ---------------------------------------------------------------- CLI → SDK

wire_struct! {
    /// `mcp_server` of a `can_use_tool` request: `{"name":…,"source":…}`.
    pub struct McpServerRef {
        /// The server's name.
        req name: String = "name",
        /// `sdk` for in-process servers.
        opt source: String = "source",
    }
}

wire_struct! {
    /// `can_use_tool`: may the model run this tool?
    /// Answer with a [`PermissionResult`](super::PermissionResult).
    pub struct CanUseToolRequest tags { "subtype" = "can_use_tool" } {
        /// The tool.
        req tool_name: String = "tool_name",
        /// Its input.
        req input: Value = "input",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// Rules the CLI suggests for "always allow".
        opt permission_suggestions: Vec<PermissionUpdate> = "permission_suggestions",
        /// The MCP server of an MCP tool.
        opt mcp_server: McpServerRef = "mcp_server",
        /// Human-readable tool name.
        opt display_name: String = "display_name",
        /// The path that triggered the question (file tools).
        opt blocked_path: String = "blocked_path",
        /// Why the CLI asks.
        opt decision_reason: String = "decision_reason",
        /// The subagent that wants the tool.
        opt agent_id: String = "agent_id",
        /// Dialog title.
        opt title: String = "title",
        /// Dialog description.
        opt description: String = "description",
    }
}

wire_struct! {
    /// `hook_callback`: run a hook registered in `initialize`.
    /// Answer with a [`HookOutput`](super::HookOutput).
    pub struct HookCallbackRequest tags { "subtype" = "hook_callback" } {
        /// The id given in `initialize.hooks[…].hookCallbackIds`.
        req callback_id: String = "callback_id",
        /// The hook input; see [`HookCallbackRequest::hook_input`].
        req input: Value = "input",
        /// The tool call id (a random uuid for non-tool events).
        opt tool_use_id: String = "tool_use_id",
    }
}

impl HookCallbackRequest {
    /// The input, typed (a copy).
    pub fn hook_input(&self) -> HookInput {
        HookInput::from_value(self.input.clone())
    }

    /// The input, typed.
    pub fn into_hook_input(self) -> HookInput {
        HookInput::from_value(self.input)
    }
}

wire_struct! {
    /// `mcp_message`: a JSON-RPC message for an in-process MCP server (CLI →
    /// SDK), or from one (SDK → CLI).
    pub struct McpMessageRequest tags { "subtype" = "mcp_message" } {
        /// The server's name.
        req server_name: String = "server_name",
        /// The JSON-RPC message.
        req message: Value = "message",
    }
}

impl McpMessageRequest {
    /// A message for or from `server_name`.
    pub fn new(server_name: impl Into<String>, message: Value) -> Self {
        Self {
            server_name: server_name.into(),
            message,
            ..Self::default()
        }
    }
}

wire_enum! {
    /// A request the CLI sends to the SDK, by `subtype`.
    pub enum CliRequest on "subtype" {
        /// `can_use_tool`.
        "can_use_tool" => CanUseTool(CanUseToolRequest),
        /// `hook_callback`.
        "hook_callback" => HookCallback(HookCallbackRequest),
        /// `mcp_message`.
        "mcp_message" => McpMessage(McpMessageRequest),
        /// `elicitation`: an MCP server asks the user for input.
        "elicitation" => Elicitation(ElicitationRequest),
        /// `request_user_dialog`: the CLI asks the host to show a dialog.
        "request_user_dialog" => UserDialog(UserDialogRequest),
    }
}

impl CliRequest {
    /// The `subtype`.
    pub fn subtype(&self) -> Option<&str> {
        match self {
            Self::CanUseTool(_) => Some("can_use_tool"),
            Self::HookCallback(_) => Some("hook_callback"),
            Self::McpMessage(_) => Some("mcp_message"),
            Self::Elicitation(_) => Some("elicitation"),
            Self::UserDialog(_) => Some("request_user_dialog"),
            Self::Unknown(v) => v.get("subtype").and_then(Value::as_str),
        }
    }
}

// ---------------------------------------------------------------- SDK → CLI

wire_struct! {
    /// One matcher of `initialize.hooks.<event>`:
    /// `{"matcher":…,"hookCallbackIds":[…],"timeout":…}`.
    pub struct HookMatcherConfig {
        /// Tool-name pattern (`null` = every tool / not applicable).
        nul matcher: String = "matcher",
        /// Callback ids the CLI will send back in `hook_callback`.
        req hook_callback_ids: Vec<String> = "hookCallbackIds",
        /// Timeout in seconds.
        opt timeout: u64 = "timeout",
        /// What a failed callback means (CLIs that answer `initialize` with
        /// `hook_on_failure_supported: true` honour it).
        opt on_failure: HookFailure = "onFailure",
    }
}

impl HookMatcherConfig {
    /// A matcher (`None` = all) with its callback ids.
    pub fn new(matcher: Option<String>, hook_callback_ids: Vec<String>) -> Self {
        Self {
            matcher,
            hook_callback_ids,
            ..Self::default()
        }
    }

    /// Sets the timeout in seconds.
    pub fn with_timeout(mut self, seconds: u64) -> Self {
        self.timeout = Some(seconds);
        self
    }
}

wire_struct! {
    /// `initialize`: the first request. `hooks` is always written (`null`
    /// when there are none), as the Python SDK does.
    pub struct InitializeRequest tags { "subtype" = "initialize" } {
        /// Hook matchers per event.
        nul hooks: BTreeMap<HookEvent, Vec<HookMatcherConfig>> = "hooks",
        /// Subagents.
        opt agents: BTreeMap<String, AgentDefinition> = "agents",
        /// Names of in-process MCP servers (alternative to `--mcp-config`).
        opt sdk_mcp_servers: Vec<String> = "sdkMcpServers",
        /// Pre-computed handshakes of in-process servers (docs/protocol.md §5.13).
        opt sdk_mcp_server_manifests: Map<String, Value> = "sdkMcpServerManifests",
        /// System prompt parts.
        opt system_prompt: Vec<String> = "systemPrompt",
        /// Text appended to the system prompt.
        opt append_system_prompt: String = "appendSystemPrompt",
        /// JSON schema for structured output.
        opt json_schema: Value = "jsonSchema",
        /// Whether to send prompt suggestions.
        opt prompt_suggestions: bool = "promptSuggestions",
        /// Instructions used in plan mode.
        opt plan_mode_instructions: String = "planModeInstructions",
        /// Whether the system prompt is snapshotted for the session.
        opt system_prompt_snapshot: bool = "systemPromptSnapshot",
        /// Tool renames: a name the model emits → the tool it means.
        opt tool_aliases: BTreeMap<String, String> = "toolAliases",
        /// Leave the per-session dynamic sections out of the system prompt.
        opt exclude_dynamic_sections: bool = "excludeDynamicSections",
        /// The session's title.
        opt title: String = "title",
        /// The skills the model is offered.
        opt skills: Vec<String> = "skills",
        /// Summaries of subagents' progress.
        opt agent_progress_summaries: bool = "agentProgressSummaries",
        /// Subagents' text is forwarded as messages.
        opt forward_subagent_text: bool = "forwardSubagentText",
        /// Each background task can be stopped on its own; an interrupt does
        /// not stop them.
        opt per_task_stop_affordance: bool = "perTaskStopAffordance",
        /// External MCP servers, instead of `--mcp-config` (with `--await-initialize`).
        opt mcp_servers: BTreeMap<String, McpServerConfig> = "mcpServers",
        /// Plugins (`{"type":"local","path":…}`), instead of `--plugin-dir`.
        opt plugins: Vec<Value> = "plugins",
        /// The `request_user_dialog` kinds this session can show; the CLI
        /// sends no other kind.
        opt supported_dialog_kinds: Vec<String> = "supportedDialogKinds",
    }
}

impl InitializeRequest {
    /// An `initialize` with no hooks (written as `"hooks": null`), agents
    /// or in-process servers; add them with the `with_*` methods.
    ///
    /// ```
    /// use claude_code_agent::protocol::{HookEvent, HookMatcherConfig, InitializeRequest};
    /// use serde_json::json;
    /// let init = InitializeRequest::new()
    ///     .with_hook(HookEvent::PreToolUse, HookMatcherConfig::new(Some("Bash".into()), vec!["hook_0".into()]))
    ///     .with_sdk_mcp_servers(vec!["calc".into()]);
    /// assert_eq!(init.to_value(), json!({"subtype": "initialize",
    ///     "hooks": {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]},
    ///     "sdkMcpServers": ["calc"]}));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a hook matcher for `event`.
    pub fn with_hook(mut self, event: HookEvent, matcher: HookMatcherConfig) -> Self {
        self.hooks
            .get_or_insert_with(BTreeMap::new)
            .entry(event)
            .or_default()
            .push(matcher);
        self
    }

    /// Sets the subagents (left out when empty).
    pub fn with_agents(mut self, agents: BTreeMap<String, AgentDefinition>) -> Self {
        self.agents = (!agents.is_empty()).then_some(agents);
        self
    }

    /// Sets the names of the in-process servers (left out when empty).
    pub fn with_sdk_mcp_servers(mut self, names: Vec<String>) -> Self {
        self.sdk_mcp_servers = (!names.is_empty()).then_some(names);
        self
    }
}

wire_struct! {
    /// `interrupt`: stop the current turn.
    pub struct InterruptRequest tags { "subtype" = "interrupt" } {
        /// Also drop the prompts still queued (answered in `cancelled`).
        opt cancel_queued: bool = "cancel_queued",
    }
}

wire_struct! {
    /// `set_permission_mode`.
    pub struct SetPermissionModeRequest tags { "subtype" = "set_permission_mode" } {
        /// The new mode.
        req mode: PermissionMode = "mode",
    }
}

wire_struct! {
    /// `set_model` (`null` = the CLI's default model, not the `--model` one).
    pub struct SetModelRequest tags { "subtype" = "set_model" } {
        /// The model.
        nul model: String = "model",
    }
}

wire_struct! {
    /// `set_max_thinking_tokens`.
    pub struct SetMaxThinkingTokensRequest tags { "subtype" = "set_max_thinking_tokens" } {
        /// The limit (`null` = default).
        nul max_thinking_tokens: u64 = "max_thinking_tokens",
        /// How thinking is shown from now on.
        opt thinking_display: ThinkingDisplay = "thinking_display",
    }
}

wire_struct! {
    /// `mcp_status`.
    pub struct McpStatusRequest tags { "subtype" = "mcp_status" } {}
}

wire_struct! {
    /// `mcp_toggle`: enable or disable a server (persisted by the CLI!).
    pub struct McpToggleRequest tags { "subtype" = "mcp_toggle" } {
        /// The server.
        req server_name: String = "serverName",
        /// On or off.
        req enabled: bool = "enabled",
    }
}

wire_struct! {
    /// `mcp_reconnect` (does not work for in-process servers).
    pub struct McpReconnectRequest tags { "subtype" = "mcp_reconnect" } {
        /// The server.
        req server_name: String = "serverName",
    }
}

wire_struct! {
    /// `mcp_set_servers`: replaces the whole dynamic server set.
    pub struct McpSetServersRequest tags { "subtype" = "mcp_set_servers" } {
        /// Name → configuration (in-process servers as `{"type":"sdk","name":…}`).
        def servers: BTreeMap<String, McpServerConfig> = "servers",
    }
}

wire_struct! {
    /// `get_context_usage`.
    pub struct GetContextUsageRequest tags { "subtype" = "get_context_usage" } {
        /// How much to report (`summary` when absent).
        opt detail: ContextDetail = "detail",
    }
}

wire_struct! {
    /// `get_settings`.
    pub struct GetSettingsRequest tags { "subtype" = "get_settings" } {}
}

wire_struct! {
    /// `rewind_files` (needs file checkpointing).
    pub struct RewindFilesRequest tags { "subtype" = "rewind_files" } {
        /// Rewind to the state before this user message.
        req user_message_id: String = "user_message_id",
        /// Only report what would change.
        opt dry_run: bool = "dry_run",
    }
}

wire_struct! {
    /// `stop_task`: stop a background task.
    pub struct StopTaskRequest tags { "subtype" = "stop_task" } {
        /// The task.
        req task_id: String = "task_id",
    }
}

wire_enum! {
    /// A request the SDK sends to the CLI, by `subtype`. Use
    /// `Unknown(json!({"subtype": …}))` for subtypes not listed.
    pub enum SdkRequest on "subtype" {
        /// `initialize`.
        "initialize" => Initialize(InitializeRequest),
        /// `interrupt`.
        "interrupt" => Interrupt(InterruptRequest),
        /// `set_permission_mode`.
        "set_permission_mode" => SetPermissionMode(SetPermissionModeRequest),
        /// `set_model`.
        "set_model" => SetModel(SetModelRequest),
        /// `set_max_thinking_tokens`.
        "set_max_thinking_tokens" => SetMaxThinkingTokens(SetMaxThinkingTokensRequest),
        /// `mcp_status`.
        "mcp_status" => McpStatus(McpStatusRequest),
        /// `mcp_toggle`.
        "mcp_toggle" => McpToggle(McpToggleRequest),
        /// `mcp_reconnect`.
        "mcp_reconnect" => McpReconnect(McpReconnectRequest),
        /// `mcp_set_servers`.
        "mcp_set_servers" => McpSetServers(McpSetServersRequest),
        /// `mcp_message`.
        "mcp_message" => McpMessage(McpMessageRequest),
        /// `get_context_usage`.
        "get_context_usage" => GetContextUsage(GetContextUsageRequest),
        /// `get_settings`.
        "get_settings" => GetSettings(GetSettingsRequest),
        /// `rewind_files`.
        "rewind_files" => RewindFiles(RewindFilesRequest),
        /// `stop_task`.
        "stop_task" => StopTask(StopTaskRequest),
        /// `background_tasks`.
        "background_tasks" => BackgroundTasks(BackgroundTasksRequest),
        /// `apply_flag_settings`.
        "apply_flag_settings" => ApplyFlagSettings(ApplyFlagSettingsRequest),
        /// `update_settings`.
        "update_settings" => UpdateSettings(UpdateSettingsRequest),
        /// `read_file`.
        "read_file" => ReadFile(ReadFileRequest),
        /// `reload_plugins`.
        "reload_plugins" => ReloadPlugins(ReloadPluginsRequest),
        /// `reload_skills`.
        "reload_skills" => ReloadSkills(ReloadSkillsRequest),
        /// `reload_output_styles`.
        "reload_output_styles" => ReloadOutputStyles(ReloadOutputStylesRequest),
        /// `seed_read_state`.
        "seed_read_state" => SeedReadState(SeedReadStateRequest),
        /// `set_mcp_permission_mode_override`.
        "set_mcp_permission_mode_override" => SetMcpPermissionModeOverride(SetMcpPermissionModeOverrideRequest),
        /// `mcp_read_resource`.
        "mcp_read_resource" => McpReadResource(McpReadResourceRequest),
    }
}

impl SdkRequest {
    /// A request by subtype with its fields, decoded into the typed variant
    /// when the subtype is known (else kept as `Unknown`).
    ///
    /// ```
    /// use claude_code_agent::protocol::SdkRequest;
    /// use serde_json::{Map, json};
    /// let r = SdkRequest::new("set_model", Map::from_iter([("model".into(), json!("haiku"))]));
    /// assert_eq!(r, SdkRequest::set_model(Some("haiku".into())));
    /// let other = SdkRequest::new("brand_new", Map::new());
    /// assert_eq!(other.subtype(), Some("brand_new"));
    /// ```
    pub fn new(subtype: &str, mut fields: Map<String, Value>) -> Self {
        fields.insert("subtype".into(), Value::String(subtype.to_owned()));
        Self::from_value(Value::Object(fields))
    }

    /// `{"subtype":"interrupt"}`.
    pub fn interrupt() -> Self {
        Self::Interrupt(InterruptRequest::default())
    }

    /// `{"subtype":"set_permission_mode","mode":…}`.
    pub fn set_permission_mode(mode: PermissionMode) -> Self {
        Self::SetPermissionMode(SetPermissionModeRequest {
            mode,
            ..Default::default()
        })
    }

    /// `{"subtype":"set_model","model":…}`.
    pub fn set_model(model: Option<String>) -> Self {
        Self::SetModel(SetModelRequest {
            model,
            ..Default::default()
        })
    }

    /// `{"subtype":"set_max_thinking_tokens","max_thinking_tokens":…}`.
    pub fn set_max_thinking_tokens(tokens: Option<u64>) -> Self {
        Self::SetMaxThinkingTokens(SetMaxThinkingTokensRequest {
            max_thinking_tokens: tokens,
            ..Default::default()
        })
    }

    /// `{"subtype":"mcp_status"}`.
    pub fn mcp_status() -> Self {
        Self::McpStatus(McpStatusRequest::default())
    }

    /// `{"subtype":"mcp_toggle","serverName":…,"enabled":…}`.
    pub fn mcp_toggle(server_name: impl Into<String>, enabled: bool) -> Self {
        Self::McpToggle(McpToggleRequest {
            server_name: server_name.into(),
            enabled,
            ..Default::default()
        })
    }

    /// `{"subtype":"mcp_reconnect","serverName":…}`.
    pub fn mcp_reconnect(server_name: impl Into<String>) -> Self {
        Self::McpReconnect(McpReconnectRequest {
            server_name: server_name.into(),
            ..Default::default()
        })
    }

    /// `{"subtype":"mcp_set_servers","servers":{…}}`.
    pub fn mcp_set_servers(servers: BTreeMap<String, McpServerConfig>) -> Self {
        Self::McpSetServers(McpSetServersRequest {
            servers,
            ..Default::default()
        })
    }

    /// `{"subtype":"mcp_message","server_name":…,"message":…}`.
    pub fn mcp_message(server_name: impl Into<String>, message: Value) -> Self {
        Self::McpMessage(McpMessageRequest::new(server_name, message))
    }

    /// `{"subtype":"get_context_usage"}`.
    pub fn get_context_usage() -> Self {
        Self::GetContextUsage(GetContextUsageRequest::default())
    }

    /// `{"subtype":"get_settings"}`.
    pub fn get_settings() -> Self {
        Self::GetSettings(GetSettingsRequest::default())
    }

    /// `{"subtype":"stop_task","task_id":…}`.
    pub fn stop_task(task_id: impl Into<String>) -> Self {
        Self::StopTask(StopTaskRequest {
            task_id: task_id.into(),
            ..Default::default()
        })
    }

    /// The `subtype`.
    pub fn subtype(&self) -> Option<&str> {
        Some(match self {
            Self::Initialize(_) => "initialize",
            Self::Interrupt(_) => "interrupt",
            Self::SetPermissionMode(_) => "set_permission_mode",
            Self::SetModel(_) => "set_model",
            Self::SetMaxThinkingTokens(_) => "set_max_thinking_tokens",
            Self::McpStatus(_) => "mcp_status",
            Self::McpToggle(_) => "mcp_toggle",
            Self::McpReconnect(_) => "mcp_reconnect",
            Self::McpSetServers(_) => "mcp_set_servers",
            Self::McpMessage(_) => "mcp_message",
            Self::GetContextUsage(_) => "get_context_usage",
            Self::GetSettings(_) => "get_settings",
            Self::RewindFiles(_) => "rewind_files",
            Self::StopTask(_) => "stop_task",
            Self::BackgroundTasks(_) => "background_tasks",
            Self::ApplyFlagSettings(_) => "apply_flag_settings",
            Self::UpdateSettings(_) => "update_settings",
            Self::ReadFile(_) => "read_file",
            Self::ReloadPlugins(_) => "reload_plugins",
            Self::ReloadSkills(_) => "reload_skills",
            Self::ReloadOutputStyles(_) => "reload_output_styles",
            Self::SeedReadState(_) => "seed_read_state",
            Self::SetMcpPermissionModeOverride(_) => "set_mcp_permission_mode_override",
            Self::McpReadResource(_) => "mcp_read_resource",
            Self::Unknown(v) => return v.get("subtype").and_then(Value::as_str),
        })
    }
}

impl From<InitializeRequest> for SdkRequest {
    fn from(r: InitializeRequest) -> Self {
        Self::Initialize(r)
    }
}
