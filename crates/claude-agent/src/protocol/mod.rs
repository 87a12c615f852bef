//! The control protocol: envelopes, requests in both directions, their typed
//! responses, permissions, hooks and MCP server configurations.
//!
//! Like the [`message`](crate::message) types, everything here is open
//! (`Unknown`/`Other` variants) and lossless (`extra` maps).

mod envelope;
mod hooks;
mod mcp_config;
mod permission;
mod requests;
mod responses;

pub use envelope::{
    ControlCancelRequest, ControlError, ControlRequest, ControlResponse, ControlResponseBody,
    ControlSuccess, Incoming, SdkControlRequest,
};
pub use hooks::{
    HookDecision, HookEvent, HookInput, HookOutput, HookSpecificOutput, NotificationInput,
    PermissionDecision, PermissionRequestInput, PostToolUseFailureInput, PostToolUseInput,
    PreCompactInput, PreToolUseInput, SessionEndInput, SessionStartInput, StopInput,
    SubagentStartInput, SubagentStopInput, UserPromptSubmitInput,
};
pub use mcp_config::{
    HttpServerConfig, InProcessServer, McpServerConfig, SdkServerConfig, SseServerConfig,
    StdioServerConfig,
};
pub use permission::{
    PermissionBehavior, PermissionDestination, PermissionMode, PermissionResult, PermissionRule,
    PermissionUpdate, PermissionUpdateKind,
};
pub use requests::{
    AgentDefinition, CanUseToolRequest, CliRequest, GetContextUsageRequest, GetSettingsRequest,
    HookCallbackRequest, HookMatcherConfig, InitializeRequest, InterruptRequest, McpMessageRequest,
    McpReconnectRequest, McpServerRef, McpSetServersRequest, McpStatusRequest, McpToggleRequest,
    RewindFilesRequest, SdkRequest, SetMaxThinkingTokensRequest, SetModelRequest,
    SetPermissionModeRequest, StopTaskRequest,
};
pub use responses::{
    AccountInfo, AgentInfo, InitializeResponse, InterruptResponse, McpMessageResponse,
    McpServerInfo, McpServerState, McpServerStatus, McpSetServersResponse, McpStatusResponse,
    McpToolInfo, ModelInfo, SetModelResponse, SetPermissionModeResponse, SlashCommand,
};
