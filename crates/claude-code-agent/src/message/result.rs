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
