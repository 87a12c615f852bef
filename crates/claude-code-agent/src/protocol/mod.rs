//! The control protocol as a user meets it: the requests the SDK can send
//! (for [`Control::control_request`](crate::Control::control_request)), their
//! typed responses, permissions, hooks, dialogs and MCP server configurations.
//! The envelopes and the CLI's own requests are the SDK's business.
//!
//! Like the [`message`](crate::message) types, everything here is open
//! (`Unknown`/`Other` variants) and lossless (`extra` maps).

mod agents;
mod control_responses;
mod controls;
mod dialogs;
pub(crate) mod envelope;
mod hooks;
mod mcp_config;
mod permission;
pub(crate) mod requests;
pub(crate) mod responses;

pub use crate::shared_types::{McpServerState, PermissionMode, SlashCommand};
pub use agents::AgentDefinition;
pub use control_responses::{
    BackgroundTasksResponse, ContextCategory, ContextUsage, McpPermissionOverrideResponse,
    McpReadResourceResponse, ReadFileResponse, ReloadOutputStylesResponse, ReloadPluginsResponse,
    ReloadSkillsResponse, RewindFilesResult,
};
pub use controls::{
    ApplyFlagSettingsRequest, BackgroundTasksRequest, ContextDetail, Effort,
    McpReadResourceRequest, ReadFileRequest, ReloadOutputStylesRequest, ReloadPluginsRequest,
    ReloadSkillsRequest, SeedReadStateRequest, SetMcpPermissionModeOverrideRequest,
    ThinkingDisplay, UpdateSettingsRequest,
};
pub use dialogs::{
    ElicitationMode, ElicitationRequest, ElicitationResponse, UserDialogRequest, UserDialogResult,
};
pub(crate) use envelope::{
    ControlRequest, ControlResponse, Incoming, McpMessageLine, SdkControlRequest,
};
pub use hooks::{
    BackgroundTaskSummary, ConfigChangeInput, CwdChangedInput, DirectoryAddedInput,
    ElicitationAction, ElicitationInput, ElicitationResultInput, FileChangedInput, HookDecision,
    HookEffort, HookEvent, HookFailure, HookInput, HookOutput, HookSpecificOutput,
    InstructionsLoadedInput, InterruptInput, McpServerProvenance, MessageDisplayInput,
    NotificationInput, PermissionDecision, PermissionDeniedInput, PermissionRequestInput,
    PostCompactInput, PostModelSwitchInput, PostToolBatchInput, PostToolBatchToolCall,
    PostToolUseFailureInput, PostToolUseInput, PreCompactInput, PreModelSwitchInput,
    PreSkillShellCommandInput, PreToolUseInput, SessionCronSummary, SessionEndInput,
    SessionStartInput, SetupInput, StopFailureInput, StopInput, SubagentStartInput,
    SubagentStopInput, TaskCompletedInput, TaskCreatedInput, TeammateIdleInput,
    UserPromptExpansionInput, UserPromptSubmitInput, WorktreeCreateInput, WorktreeRemoveInput,
};
pub use mcp_config::{
    HttpServerConfig, InProcessServer, McpServerConfig, SdkServerConfig, SseServerConfig,
    StdioServerConfig,
};
pub use permission::{
    PermissionBehavior, PermissionDecisionClassification, PermissionDestination, PermissionResult,
    PermissionRule, PermissionUpdate, PermissionUpdateKind,
};
pub(crate) use requests::CliRequest;
pub use requests::{
    GetContextUsageRequest, GetSettingsRequest, HookMatcherConfig, InitializeRequest,
    InterruptRequest, McpMessageRequest, McpReconnectRequest, McpSetServersRequest,
    McpStatusRequest, McpToggleRequest, RewindFilesRequest, SdkRequest,
    SetMaxThinkingTokensRequest, SetModelRequest, SetPermissionModeRequest, StopTaskRequest,
};
pub(crate) use responses::McpMessageResponse;
pub use responses::{
    AccountInfo, AgentInfo, InitializeResponse, InterruptResponse, McpServerInfo, McpServerStatus,
    McpSetServersResponse, McpStatusResponse, McpToolInfo, ModelInfo, SetModelResponse,
    SetPermissionModeResponse,
};
