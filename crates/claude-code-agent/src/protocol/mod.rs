//! The control protocol: envelopes, requests in both directions, their typed
//! responses, permissions, hooks and MCP server configurations.
//!
//! Like the [`message`](crate::message) types, everything here is open
//! (`Unknown`/`Other` variants) and lossless (`extra` maps).

mod agents;
mod control_responses;
mod controls;
mod dialogs;
mod envelope;
mod hooks;
mod mcp_config;
mod permission;
mod requests;
mod responses;

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
pub use envelope::{
    ControlCancelRequest, ControlError, ControlRequest, ControlResponse, ControlResponseBody,
    ControlSuccess, Incoming, SdkControlRequest,
};
pub use hooks::{
    BackgroundTaskSummary, ConfigChangeInput, CwdChangedInput, DirectoryAddedInput,
    ElicitationAction, ElicitationInput, ElicitationResultInput, FileChangedInput, HookDecision,
    HookEffort, HookEvent, HookFailure, HookInput, HookOutput, HookSpecificOutput,
    InstructionsLoadedInput, McpServerProvenance, MessageDisplayInput, NotificationInput,
    PermissionDecision, PermissionDeniedInput, PermissionRequestInput, PostCompactInput,
    PostModelSwitchInput, PostToolBatchInput, PostToolBatchToolCall, PostToolUseFailureInput,
    PostToolUseInput, PreCompactInput, PreModelSwitchInput, PreSkillShellCommandInput,
    PreToolUseInput, SessionCronSummary, SessionEndInput, SessionStartInput, SetupInput,
    StopFailureInput, StopInput, SubagentStartInput, SubagentStopInput, TaskCompletedInput,
    TaskCreatedInput, TeammateIdleInput, UserPromptExpansionInput, UserPromptSubmitInput,
    WorktreeCreateInput, WorktreeRemoveInput,
};
pub use mcp_config::{
    HttpServerConfig, InProcessServer, McpServerConfig, SdkServerConfig, SseServerConfig,
    StdioServerConfig,
};
pub use permission::{
    PermissionBehavior, PermissionDestination, PermissionResult, PermissionRule, PermissionUpdate,
    PermissionUpdateKind,
};
pub use requests::{
    CanUseToolRequest, CliRequest, GetContextUsageRequest, GetSettingsRequest, HookCallbackRequest,
    HookMatcherConfig, InitializeRequest, InterruptRequest, McpMessageRequest, McpReconnectRequest,
    McpServerRef, McpSetServersRequest, McpStatusRequest, McpToggleRequest, RewindFilesRequest,
    SdkRequest, SetMaxThinkingTokensRequest, SetModelRequest, SetPermissionModeRequest,
    StopTaskRequest,
};
pub use responses::{
    AccountInfo, AgentInfo, InitializeResponse, InterruptResponse, McpMessageResponse,
    McpServerInfo, McpServerStatus, McpSetServersResponse, McpStatusResponse, McpToolInfo,
    ModelInfo, SetModelResponse, SetPermissionModeResponse,
};
