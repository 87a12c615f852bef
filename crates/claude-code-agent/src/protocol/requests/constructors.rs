//! The constructors on [`SdkRequest`] of the requests in
//! [`controls`](crate::protocol::controls), and of the session requests
//! with their less common fields.

use serde_json::Value;

use super::{
    GetContextUsageRequest, InterruptRequest, RewindFilesRequest, SdkRequest,
    SetMaxThinkingTokensRequest,
};
use crate::protocol::controls::{
    ApplyFlagSettingsRequest, BackgroundTasksRequest, ContextDetail, McpReadResourceRequest,
    ReadFileRequest, ReloadOutputStylesRequest, ReloadPluginsRequest, ReloadSkillsRequest,
    SeedReadStateRequest, SetMcpPermissionModeOverrideRequest, ThinkingDisplay,
    UpdateSettingsRequest,
};

impl SdkRequest {
    /// `{"subtype":"interrupt","cancel_queued":…}`: also drops queued prompts.
    pub fn interrupt_and_cancel_queued(cancel_queued: bool) -> Self {
        Self::Interrupt(InterruptRequest {
            cancel_queued: Some(cancel_queued),
            ..Default::default()
        })
    }

    /// `set_max_thinking_tokens` with a display mode.
    pub fn set_max_thinking_tokens_with_display(
        tokens: Option<u64>,
        display: Option<ThinkingDisplay>,
    ) -> Self {
        Self::SetMaxThinkingTokens(SetMaxThinkingTokensRequest {
            max_thinking_tokens: tokens,
            thinking_display: display,
            ..Default::default()
        })
    }

    /// `{"subtype":"get_context_usage","detail":…}`.
    pub fn get_context_usage_detail(detail: Option<ContextDetail>) -> Self {
        Self::GetContextUsage(GetContextUsageRequest {
            detail,
            ..Default::default()
        })
    }

    /// `{"subtype":"rewind_files","user_message_id":…,"dry_run":…}`.
    pub fn rewind_files(user_message_id: impl Into<String>, dry_run: bool) -> Self {
        Self::RewindFiles(RewindFilesRequest {
            user_message_id: user_message_id.into(),
            dry_run: dry_run.then_some(true),
            ..Default::default()
        })
    }

    /// `{"subtype":"apply_flag_settings","settings":…}`.
    pub fn apply_flag_settings(settings: Value) -> Self {
        Self::ApplyFlagSettings(ApplyFlagSettingsRequest {
            settings,
            ..Default::default()
        })
    }

    /// `{"subtype":"update_settings","source":…,"settings":…}`.
    pub fn update_settings(source: impl Into<String>, settings: Value) -> Self {
        Self::UpdateSettings(UpdateSettingsRequest {
            source: source.into(),
            settings,
            ..Default::default()
        })
    }

    /// `{"subtype":"read_file","path":…}` with optional limits.
    pub fn read_file(path: impl Into<String>, max_bytes: Option<u64>, base64: bool) -> Self {
        Self::ReadFile(ReadFileRequest {
            path: path.into(),
            max_bytes,
            encoding: base64.then(|| "base64".to_owned()),
            ..Default::default()
        })
    }

    /// `{"subtype":"reload_plugins"}`.
    pub fn reload_plugins() -> Self {
        Self::ReloadPlugins(ReloadPluginsRequest::default())
    }

    /// `{"subtype":"reload_skills"}`.
    pub fn reload_skills() -> Self {
        Self::ReloadSkills(ReloadSkillsRequest::default())
    }

    /// `{"subtype":"reload_output_styles"}`.
    pub fn reload_output_styles() -> Self {
        Self::ReloadOutputStyles(ReloadOutputStylesRequest::default())
    }

    /// `{"subtype":"seed_read_state","path":…,"mtime":…}`.
    pub fn seed_read_state(path: impl Into<String>, mtime_ms: u64) -> Self {
        Self::SeedReadState(SeedReadStateRequest {
            path: path.into(),
            mtime: mtime_ms,
            ..Default::default()
        })
    }

    /// `{"subtype":"set_mcp_permission_mode_override","serverName":…,"mode":…}`.
    pub fn set_mcp_permission_mode_override(
        server_name: impl Into<String>,
        mode: Option<String>,
    ) -> Self {
        Self::SetMcpPermissionModeOverride(SetMcpPermissionModeOverrideRequest {
            server_name: server_name.into(),
            mode,
            ..Default::default()
        })
    }

    /// `{"subtype":"mcp_read_resource","serverName":…,"uri":…}`.
    pub fn mcp_read_resource(server_name: impl Into<String>, uri: impl Into<String>) -> Self {
        Self::McpReadResource(McpReadResourceRequest {
            server_name: server_name.into(),
            uri: uri.into(),
            ..Default::default()
        })
    }

    /// `{"subtype":"background_tasks","tool_use_id":…}`.
    pub fn background_tasks(tool_use_id: Option<String>) -> Self {
        Self::BackgroundTasks(BackgroundTasksRequest {
            tool_use_id,
            ..Default::default()
        })
    }
}
