//! `{"type":"assistant"}` messages.

use serde_json::Value;

use super::content::{ContentBlock, ThinkingBlock, ToolUseBlock, join_text};
use crate::wire::{string_enum, wire_struct};

string_enum! {
    /// The `error` of a synthetic assistant message that reports an API failure.
    pub enum AssistantError default Unknown {
        /// Bad credentials.
        "authentication_failed" => AuthenticationFailed,
        /// Billing problem.
        "billing_error" => BillingError,
        /// Rate limited.
        "rate_limit" => RateLimit,
        /// The request was invalid.
        "invalid_request" => InvalidRequest,
        /// Server-side failure.
        "server_error" => ServerError,
        /// Output hit the token limit.
        "max_output_tokens" => MaxOutputTokens,
        /// Anything else.
        "unknown" => Unknown,
    }
}

wire_struct! {
    /// Token usage of an API call (`message.usage`, `result.usage`).
    pub struct Usage {
        /// Input tokens.
        opt input_tokens: u64 = "input_tokens",
        /// Output tokens.
        opt output_tokens: u64 = "output_tokens",
        /// Input tokens written to the prompt cache.
        opt cache_creation_input_tokens: u64 = "cache_creation_input_tokens",
        /// Input tokens read from the prompt cache.
        opt cache_read_input_tokens: u64 = "cache_read_input_tokens",
        /// `standard`, `priority`, …
        opt service_tier: String = "service_tier",
    }
}

wire_struct! {
    /// The API message inside an assistant message (`message`).
    pub struct ApiMessage {
        /// API message id; the per-block messages of one response share it.
        opt id: String = "id",
        /// The model (`<synthetic>` for SDK-side error messages).
        opt model: String = "model",
        /// `assistant`.
        opt role: String = "role",
        /// The content; the CLI sends one block per assistant message.
        req content: Vec<ContentBlock> = "content",
        /// Why generation stopped (`null` in per-block messages → `None`).
        opt stop_reason: String = "stop_reason",
        /// The stop sequence that matched.
        opt stop_sequence: String = "stop_sequence",
        /// Token usage.
        opt usage: Usage = "usage",
    }
}

wire_struct! {
    /// `{"type":"assistant","message":{…},"parent_tool_use_id","session_id","uuid",…}`.
    ///
    /// The CLI emits one assistant message per content block; blocks of the
    /// same API response share `message.id`.
    pub struct AssistantMessage tags { "type" = "assistant" } {
        /// The API message.
        req message: ApiMessage = "message",
        /// The Agent tool's `tool_use` id for subagent traffic; `None` on the main thread.
        opt parent_tool_use_id: String = "parent_tool_use_id",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
        /// ISO-8601 time stamp.
        opt timestamp: String = "timestamp",
        /// Set on the synthetic message that reports an API failure.
        opt error: AssistantError = "error",
    }
}

impl AssistantMessage {
    /// The content blocks.
    pub fn content(&self) -> &[ContentBlock] {
        &self.message.content
    }

    /// All text blocks joined with `\n`.
    pub fn text(&self) -> String {
        join_text(&self.message.content)
    }

    /// The tool calls in this message.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUseBlock> {
        self.message
            .content
            .iter()
            .filter_map(ContentBlock::as_tool_use)
    }

    /// The thinking blocks in this message.
    pub fn thinking(&self) -> impl Iterator<Item = &ThinkingBlock> {
        self.message.content.iter().filter_map(|b| match b {
            ContentBlock::Thinking(t) => Some(t),
            _ => None,
        })
    }

    /// The model that wrote it.
    pub fn model(&self) -> Option<&str> {
        self.message.model.as_deref()
    }

    /// Whether this is the CLI's synthetic report of an API error
    /// (`is_api_error_message: true`, or an `error` field).
    pub fn is_api_error(&self) -> bool {
        self.error.is_some()
            || self
                .extra
                .get("is_api_error_message")
                .and_then(Value::as_bool)
                == Some(true)
    }
}
