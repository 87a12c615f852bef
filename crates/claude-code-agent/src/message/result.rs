//! `{"type":"result"}`: the end of a turn.

use std::collections::BTreeMap;

use serde_json::Value;

use super::assistant::Usage;
use crate::wire::{string_enum, wire_struct};

string_enum! {
    /// `result.subtype`. Note that an API error is reported as `Success` with
    /// `is_error: true`: always check [`ResultMessage::is_error`].
    pub enum ResultSubtype default Success {
        /// The turn ended (possibly with an API error; see `is_error`).
        "success" => Success,
        /// `--max-turns` was reached.
        "error_max_turns" => ErrorMaxTurns,
        /// Interrupted, or failed while running.
        "error_during_execution" => ErrorDuringExecution,
        /// The budget (`--max-budget-usd`) was exhausted.
        "error_max_budget_usd" => ErrorMaxBudgetUsd,
        /// Structured output could not be produced.
        "error_max_structured_output_retries" => ErrorMaxStructuredOutputRetries,
    }
}

string_enum! {
    /// `result.terminal_reason`: why the turn ended.
    pub enum TerminalReason default Completed {
        /// Normal end.
        "completed" => Completed,
        /// `--max-turns` reached.
        "max_turns" => MaxTurns,
        /// Interrupted while tools ran.
        "aborted_tools" => AbortedTools,
        /// Interrupted while the model was streaming.
        "aborted_streaming" => AbortedStreaming,
        /// The API failed.
        "api_error" => ApiError,
        /// The prompt was too long.
        "blocking_limit" => BlockingLimit,
    }
}

string_enum! {
    /// `result.startup_failure_reason`: why Claude Code refused to start
    /// (TypeScript `SDKStartupFailureReason`, 0.3.337), so that a host can
    /// offer the fix instead of a retry. Set on the zeroed
    /// `error_during_execution` result a stream-json run writes before it
    /// exits on a known startup failure; `errors` carries the message. The
    /// CLI adds values; one this version does not know is kept in `Other`.
    pub enum StartupFailureReason default OrgPinApiKeyConflict {
        /// Managed settings pin a first-party or Cloud gateway sign-in, and
        /// an Anthropic API key or auth token is configured instead.
        "org_pin_api_key_conflict" => OrgPinApiKeyConflict,
        /// The session is set up for an API provider managed settings do not
        /// list in `allowedProviders`.
        "provider_not_allowed" => ProviderNotAllowed,
        /// The sign-in's organization could not be verified against the pin.
        "org_verify_failed" => OrgVerifyFailed,
        /// The sign-in belongs to an organization the pin does not allow.
        "org_pin_mismatch" => OrgPinMismatch,
        /// Managed policy settings could not be read, name no organization,
        /// or leave no allowed model.
        "managed_settings_invalid" => ManagedSettingsInvalid,
        /// Managed settings the organization requires could not be loaded.
        "remote_settings_required_unavailable" => RemoteSettingsRequiredUnavailable,
        /// The Cloud gateway ended this sign-in.
        "gateway_signin_required" => GatewaySigninRequired,
        /// The Cloud gateway refused managed settings for this account.
        "gateway_access_denied" => GatewayAccessDenied,
        /// A proxy setting is not a complete URL.
        "proxy_invalid" => ProxyInvalid,
        /// The per-user temp directory is unsafe or could not be created.
        "temp_dir_unusable" => TempDirUnusable,
        /// The working directory is gone or cannot be read.
        "cwd_unavailable" => CwdUnavailable,
        /// Windows has no shell tool (no Git Bash, no PowerShell).
        "shell_tool_missing" => ShellToolMissing,
        /// The conversation to resume runs as a background session.
        "session_held_by_background" => SessionHeldByBackground,
        /// The session's worktree failed its safety checks.
        "worktree_resume_refused" => WorktreeResumeRefused,
        /// The session's worktree could not be verified now; a retry may work.
        "worktree_unverified" => WorktreeUnverified,
        /// This Claude Code is older than Anthropic's minimum.
        "cli_version_too_old" => CliVersionTooOld,
        /// Bypass-permissions mode was asked for while running as root.
        "bypass_root" => BypassRoot,
        /// The organization's required policy limits and managed settings
        /// could not be loaded; a retry may work.
        "org_config_required_unavailable" => OrgConfigRequiredUnavailable,
        /// Anthropic refused the organization's required configuration for
        /// this sign-in; sign in again rather than retry.
        "org_config_refused" => OrgConfigRefused,
        /// A sandbox is required and cannot run in this session.
        "sandbox_required_unavailable" => SandboxRequiredUnavailable,
        /// With `--await-initialize`, the first stdin line was not the
        /// `initialize` control request.
        "initialize_not_first" => InitializeNotFirst,
        /// A configuration file read at start-up is not valid JSON.
        "config_file_invalid" => ConfigFileInvalid,
        /// `--managed-settings-in-initialize` could not use the managed
        /// settings of the `initialize` request.
        "managed_settings_not_delivered" => ManagedSettingsNotDelivered,
        /// As `managed_settings_not_delivered`, for `--initialize-fields`.
        "initialize_fields_not_delivered" => InitializeFieldsNotDelivered,
        /// Managed settings set `disableSideloadFlags` and the launch names
        /// plugins, agents or MCP servers of its own.
        "sideload_flags_disabled" => SideloadFlagsDisabled,
        /// `--resume` named a session id or transcript file, and no single
        /// conversation was found to load for it; a retry finds the same
        /// unless that changes (TypeScript SDK 0.3.337).
        "resume_target_not_found" => ResumeTargetNotFound,
        /// The account has not answered the updated Consumer Terms, and a
        /// start without a terminal cannot ask: the person runs `claude` in a
        /// terminal to review them (TypeScript SDK 0.3.337).
        "consumer_terms_review_in_terminal" => ConsumerTermsReviewInTerminal,
        /// As `consumer_terms_review_in_terminal`, for a sign-in that cannot
        /// save the answer: the person accepts the terms on claude.ai, at the
        /// URL in `errors` (TypeScript SDK 0.3.337).
        "consumer_terms_accept_on_web" => ConsumerTermsAcceptOnWeb,
        /// The person's organization sign-in has ended and Claude Code
        /// removed it; the fix is a new sign-in, not a retry (and not a
        /// logout, which deletes the person's own login and secrets)
        /// (TypeScript SDK 0.3.337).
        "org_signin_ended" => OrgSigninEnded,
    }
}

string_enum! {
    /// `auto_mode_unchecked` of a [`PermissionDenial`]: auto mode refused the
    /// call without a safety check (it was not judged unsafe). New values
    /// are additive; one this version does not know is kept in `Other`.
    pub enum AutoModeUnchecked default NoCheckInSession {
        /// The safety check does not run for this session.
        "no_check_in_session" => NoCheckInSession,
        /// The check gave no verdict on this call, as in an outage.
        "no_verdict" => NoVerdict,
    }
}

wire_struct! {
    /// Usage and cost of one model (`result.modelUsage.<model>`).
    pub struct ModelUsage {
        /// Input tokens.
        opt input_tokens: u64 = "inputTokens",
        /// Output tokens.
        opt output_tokens: u64 = "outputTokens",
        /// Cache reads.
        opt cache_read_input_tokens: u64 = "cacheReadInputTokens",
        /// Cache writes.
        opt cache_creation_input_tokens: u64 = "cacheCreationInputTokens",
        /// Web searches.
        opt web_search_requests: u64 = "webSearchRequests",
        /// Cost in USD.
        opt cost_usd: f64 = "costUSD",
        /// Context window size.
        opt context_window: u64 = "contextWindow",
        /// Output token limit.
        opt max_output_tokens: u64 = "maxOutputTokens",
    }
}

wire_struct! {
    /// One entry of `result.permission_denials`.
    pub struct PermissionDenial {
        /// The tool.
        req tool_name: String = "tool_name",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// The call's input.
        opt tool_input: Value = "tool_input",
        /// Set when auto mode refused the call without a safety check;
        /// absent once a retry has run or been judged.
        opt auto_mode_unchecked: AutoModeUnchecked = "auto_mode_unchecked",
    }
}

wire_struct! {
    /// `{"type":"result",…}`: exactly one per turn.
    pub struct ResultMessage tags { "type" = "result" } {
        /// `success`, `error_max_turns`, …
        req subtype: ResultSubtype = "subtype",
        /// Whether the turn failed — also true for API errors with `subtype: success`.
        req is_error: bool = "is_error",
        /// Wall time of the turn.
        opt duration_ms: u64 = "duration_ms",
        /// Time spent in API calls.
        opt duration_api_ms: u64 = "duration_api_ms",
        /// Number of model turns.
        opt num_turns: u64 = "num_turns",
        /// The final text (absent for `error_*` subtypes).
        opt result: String = "result",
        /// The API stop reason of the last response.
        opt stop_reason: String = "stop_reason",
        /// The session id.
        opt session_id: String = "session_id",
        /// Total cost of the session so far, in USD.
        opt total_cost_usd: f64 = "total_cost_usd",
        /// Token usage.
        opt usage: Usage = "usage",
        /// Usage per model.
        opt model_usage: BTreeMap<String, ModelUsage> = "modelUsage",
        /// Tool calls that were denied.
        opt permission_denials: Vec<PermissionDenial> = "permission_denials",
        /// Why the turn ended.
        opt terminal_reason: TerminalReason = "terminal_reason",
        /// Error texts (on `error_*` subtypes).
        opt errors: Vec<String> = "errors",
        /// The structured output, with `--json-schema`.
        opt structured_output: Value = "structured_output",
        /// HTTP status of an API error.
        opt api_error_status: u64 = "api_error_status",
        /// Why Claude Code refused to start, on the result a stream-json run
        /// writes before exiting on a known startup failure.
        opt startup_failure_reason: StartupFailureReason = "startup_failure_reason",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

impl ResultMessage {
    /// Whether the turn failed (same as the `is_error` field).
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The final text, if any.
    pub fn result_text(&self) -> Option<&str> {
        self.result.as_deref()
    }
}
