//! Partial messages (`stream_event`) and the smaller top-level message types:
//! `tool_progress`, `command_lifecycle`, `rate_limit_event`, `keep_alive`.

use serde_json::Value;

use super::content::ContentBlock;
use crate::wire::{string_enum, wire_enum, wire_struct};

wire_struct! {
    /// `content_block_delta` payload `text_delta`.
    pub struct TextDelta tags { "type" = "text_delta" } {
        /// The new text.
        req text: String = "text",
    }
}

wire_struct! {
    /// `content_block_delta` payload `thinking_delta`.
    pub struct ThinkingDelta tags { "type" = "thinking_delta" } {
        /// The new thinking text.
        req thinking: String = "thinking",
    }
}

wire_struct! {
    /// `content_block_delta` payload `signature_delta`.
    pub struct SignatureDelta tags { "type" = "signature_delta" } {
        /// The signature.
        req signature: String = "signature",
    }
}

wire_struct! {
    /// `content_block_delta` payload `input_json_delta` (tool input as it streams).
    pub struct InputJsonDelta tags { "type" = "input_json_delta" } {
        /// A fragment of JSON text.
        req partial_json: String = "partial_json",
    }
}

wire_enum! {
    /// The `delta` of a `content_block_delta` event.
    pub enum Delta on "type" {
        /// Text.
        "text_delta" => Text(TextDelta),
        /// Thinking.
        "thinking_delta" => Thinking(ThinkingDelta),
        /// Thinking signature.
        "signature_delta" => Signature(SignatureDelta),
        /// Tool input JSON.
        "input_json_delta" => InputJson(InputJsonDelta),
    }
}

wire_struct! {
    /// `message_start`.
    pub struct MessageStart tags { "type" = "message_start" } {
        /// The (empty) API message.
        opt message: Value = "message",
    }
}

wire_struct! {
    /// `content_block_start`.
    pub struct ContentBlockStart tags { "type" = "content_block_start" } {
        /// Block index.
        opt index: u64 = "index",
        /// The (empty) block.
        opt content_block: ContentBlock = "content_block",
    }
}

wire_struct! {
    /// `content_block_delta`.
    pub struct ContentBlockDelta tags { "type" = "content_block_delta" } {
        /// Block index.
        opt index: u64 = "index",
        /// The delta.
        opt delta: Delta = "delta",
    }
}

wire_struct! {
    /// `content_block_stop`.
    pub struct ContentBlockStop tags { "type" = "content_block_stop" } {
        /// Block index.
        opt index: u64 = "index",
    }
}

wire_struct! {
    /// `message_delta`: stop reason and final usage.
    pub struct MessageDelta tags { "type" = "message_delta" } {
        /// `{stop_reason, stop_sequence}`.
        opt delta: Value = "delta",
        /// Usage.
        opt usage: Value = "usage",
    }
}

wire_struct! {
    /// `message_stop`.
    pub struct MessageStop tags { "type" = "message_stop" } {}
}

wire_enum! {
    /// A raw Messages API stream event (`stream_event.event`).
    pub enum ApiStreamEvent on "type" {
        /// `message_start`.
        "message_start" => MessageStart(MessageStart),
        /// `content_block_start`.
        "content_block_start" => ContentBlockStart(ContentBlockStart),
        /// `content_block_delta`.
        "content_block_delta" => ContentBlockDelta(ContentBlockDelta),
        /// `content_block_stop`.
        "content_block_stop" => ContentBlockStop(ContentBlockStop),
        /// `message_delta`.
        "message_delta" => MessageDelta(MessageDelta),
        /// `message_stop`.
        "message_stop" => MessageStop(MessageStop),
    }
}

wire_struct! {
    /// `{"type":"stream_event","event":…}` (with `--include-partial-messages`).
    pub struct StreamEvent tags { "type" = "stream_event" } {
        /// The API event.
        req event: ApiStreamEvent = "event",
        /// The session id.
        opt session_id: String = "session_id",
        /// Subagent marker; `None` on the main thread.
        opt parent_tool_use_id: String = "parent_tool_use_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
        /// The API message id the event belongs to.
        opt api_message_id: String = "api_message_id",
    }
}

wire_struct! {
    /// `{"type":"tool_progress",…}`: progress or heartbeat of a running tool.
    ///
    /// For MCP heartbeats `tool_use_id` is `<id>-heartbeat-<n>` and the real
    /// call id is in `parent_tool_use_id`.
    pub struct ToolProgress tags { "type" = "tool_progress" } {
        /// Progress id (not the real call id for heartbeats).
        opt tool_use_id: String = "tool_use_id",
        /// The tool.
        opt tool_name: String = "tool_name",
        /// The running call's id for heartbeats.
        opt parent_tool_use_id: String = "parent_tool_use_id",
        /// Seconds since the call started.
        opt elapsed_time_seconds: f64 = "elapsed_time_seconds",
        /// Whether this is a keep-alive heartbeat.
        opt heartbeat: bool = "heartbeat",
        /// The background task the tool runs in.
        opt task_id: String = "task_id",
        /// The subagent type, for a subagent's tool.
        opt subagent_type: String = "subagent_type",
        /// A subagent's API retry: `{agent_id, attempt, max_retries,
        /// retry_delay_ms, error_status, error_category}`.
        opt subagent_retry: Value = "subagent_retry",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

string_enum! {
    /// State of a user message that carried a `uuid`.
    pub enum CommandState default Queued {
        /// Waiting.
        "queued" => Queued,
        /// Being processed.
        "started" => Started,
        /// Done.
        "completed" => Completed,
    }
}

wire_struct! {
    /// `{"type":"command_lifecycle",…}`: progress of a user message sent with a `uuid`.
    pub struct CommandLifecycle tags { "type" = "command_lifecycle" } {
        /// The user message's uuid.
        opt command_uuid: String = "command_uuid",
        /// Its state.
        opt state: CommandState = "state",
        /// The session id.
        opt session_id: String = "session_id",
        /// This message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `{"type":"rate_limit_event",…}`.
    pub struct RateLimitEvent tags { "type" = "rate_limit_event" } {
        /// Rate limit details.
        opt rate_limit_info: Value = "rate_limit_info",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `{"type":"keep_alive"}`: a heartbeat with no payload.
    pub struct KeepAlive tags { "type" = "keep_alive" } {}
}
