//! Typed messages the CLI writes on stdout (`system`, `assistant`, `user`,
//! `result`, `stream_event`, …), the content blocks inside them, and the user
//! messages the SDK writes ([`UserInput`]).
//!
//! All types are *open* and *lossless*: unknown `type`s, `subtype`s and block
//! types decode to `Unknown(Value)` variants, never to errors, and every struct
//! keeps the fields it does not model in `extra`, so
//! `Message::from_value(v).to_value() == v` for every JSON object `v`, with
//! one exception: an integral float in a numeric field the types model
//! (`1.0`) comes back as the integer (`1`), as JavaScript writes it.
//!
//! ```
//! use claude_agent::message::Message;
//! use serde_json::json;
//!
//! let line = json!({"type": "result", "subtype": "success", "is_error": false,
//!                   "result": "4", "session_id": "s1", "new_field": [1, 2]});
//! let message = Message::from_value(line.clone());
//! let Message::Result(result) = &message else { panic!() };
//! assert_eq!(result.result.as_deref(), Some("4"));
//! assert_eq!(message.session_id(), Some("s1"));
//! assert_eq!(message.to_value(), line);
//! ```

mod assistant;
mod content;
mod result;
mod stream;
mod system;
#[cfg(test)]
mod tests;
mod user;
pub(crate) mod wire;
mod wire_enums;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

pub use assistant::{ApiMessage, AssistantError, AssistantMessage, Usage};
pub use content::{
    ContentBlock, DocumentBlock, ImageBlock, MediaSource, MessageContent, RedactedThinkingBlock,
    ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock, ToolResultBlock,
    ToolUseBlock,
};
pub use result::{ModelUsage, PermissionDenial, ResultMessage, ResultSubtype, TerminalReason};
pub use stream::{
    ApiStreamEvent, CommandLifecycle, CommandState, ContentBlockDelta, ContentBlockStart,
    ContentBlockStop, Delta, InputJsonDelta, KeepAlive, MessageDelta, MessageStart, MessageStop,
    RateLimitEvent, SignatureDelta, StreamEvent, TextDelta, ThinkingDelta, ToolProgress,
};
pub use system::{
    ApiRetry, BackgroundTasksChanged, CompactBoundary, HookEventMessage, Informational,
    InitMcpServer, Notification, PermissionDenied, SessionState, SessionStateChanged, SystemInit,
    SystemMessage, SystemStatus, TaskEventMessage, ThinkingTokens,
};
pub use user::{Priority, UserBody, UserInput, UserMessage};

use wire::{Wire, str_at};

/// One message the CLI wrote on stdout (control envelopes excluded; see
/// [`crate::protocol::Incoming`] for the classification of a whole line).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// `system`: metadata and events, by subtype.
    System(SystemMessage),
    /// `assistant`: one model content block.
    Assistant(AssistantMessage),
    /// `user`: tool results, replays, synthetic messages.
    User(UserMessage),
    /// `result`: the end of a turn.
    Result(ResultMessage),
    /// `stream_event`: a raw API stream event.
    StreamEvent(StreamEvent),
    /// `tool_progress`: progress or heartbeat of a running tool.
    ToolProgress(ToolProgress),
    /// `command_lifecycle`: progress of a user message sent with a `uuid`.
    CommandLifecycle(CommandLifecycle),
    /// `rate_limit_event`.
    RateLimitEvent(RateLimitEvent),
    /// `keep_alive`: ignore it.
    KeepAlive(KeepAlive),
    /// Any other JSON (unknown `type`, missing required fields, not an object).
    Unknown(Value),
}

impl Message {
    /// Decodes one JSON value; never fails. Strings and containers are moved,
    /// not copied.
    pub fn from_value(value: Value) -> Self {
        let kind = match &value {
            Value::Object(map) => str_at(map, "type"),
            _ => None,
        };
        let decoded = match kind {
            Some("system") => Ok(Self::System(SystemMessage::from_value(value))),
            Some("assistant") => AssistantMessage::from_wire(value).map(Self::Assistant),
            Some("user") => UserMessage::from_wire(value).map(Self::User),
            Some("result") => ResultMessage::from_wire(value).map(Self::Result),
            Some("stream_event") => StreamEvent::from_wire(value).map(Self::StreamEvent),
            Some("tool_progress") => ToolProgress::from_wire(value).map(Self::ToolProgress),
            Some("command_lifecycle") => {
                CommandLifecycle::from_wire(value).map(Self::CommandLifecycle)
            }
            Some("rate_limit_event") => RateLimitEvent::from_wire(value).map(Self::RateLimitEvent),
            Some("keep_alive") => KeepAlive::from_wire(value).map(Self::KeepAlive),
            _ => Err(value),
        };
        decoded.unwrap_or_else(Self::Unknown)
    }

    /// Parses and decodes one line of JSON.
    pub fn from_slice(line: &[u8]) -> serde_json::Result<Self> {
        serde_json::from_slice(line).map(Self::from_value)
    }

    /// Encodes as JSON; equal to the value it was decoded from.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The top-level `type`.
    pub fn message_type(&self) -> Option<&str> {
        Some(match self {
            Self::System(_) => "system",
            Self::Assistant(_) => "assistant",
            Self::User(_) => "user",
            Self::Result(_) => "result",
            Self::StreamEvent(_) => "stream_event",
            Self::ToolProgress(_) => "tool_progress",
            Self::CommandLifecycle(_) => "command_lifecycle",
            Self::RateLimitEvent(_) => "rate_limit_event",
            Self::KeepAlive(_) => "keep_alive",
            Self::Unknown(v) => return v.get("type").and_then(Value::as_str),
        })
    }

    /// The `session_id`, when the message carries one.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Self::System(m) => m.session_id(),
            Self::Assistant(m) => m.session_id.as_deref(),
            Self::User(m) => m.session_id.as_deref(),
            Self::Result(m) => m.session_id.as_deref(),
            Self::StreamEvent(m) => m.session_id.as_deref(),
            Self::ToolProgress(m) => m.session_id.as_deref(),
            Self::CommandLifecycle(m) => m.session_id.as_deref(),
            Self::RateLimitEvent(m) => m.session_id.as_deref(),
            Self::KeepAlive(_) => None,
            Self::Unknown(v) => v.get("session_id").and_then(Value::as_str),
        }
    }

    /// The message's `uuid`, when it carries one.
    pub fn uuid(&self) -> Option<&str> {
        match self {
            Self::Assistant(m) => m.uuid.as_deref(),
            Self::User(m) => m.uuid.as_deref(),
            Self::Result(m) => m.uuid.as_deref(),
            Self::StreamEvent(m) => m.uuid.as_deref(),
            Self::ToolProgress(m) => m.uuid.as_deref(),
            Self::CommandLifecycle(m) => m.uuid.as_deref(),
            Self::RateLimitEvent(m) => m.uuid.as_deref(),
            Self::KeepAlive(_) => None,
            Self::System(m) => system_uuid(m),
            Self::Unknown(v) => v.get("uuid").and_then(Value::as_str),
        }
    }

    /// Whether this is the `result` that ends a turn.
    pub fn is_result(&self) -> bool {
        matches!(self, Self::Result(_))
    }

    /// The [`ResultMessage`], if this is one.
    pub fn as_result(&self) -> Option<&ResultMessage> {
        match self {
            Self::Result(m) => Some(m),
            _ => None,
        }
    }

    /// The [`AssistantMessage`], if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The [`SystemInit`], if this is `system/init`.
    pub fn as_init(&self) -> Option<&SystemInit> {
        match self {
            Self::System(SystemMessage::Init(m)) => Some(m),
            _ => None,
        }
    }
}

fn system_uuid(m: &SystemMessage) -> Option<&str> {
    match m {
        SystemMessage::Init(m) => m.uuid.as_deref(),
        SystemMessage::Status(m) => m.uuid.as_deref(),
        SystemMessage::ApiRetry(m) => m.uuid.as_deref(),
        SystemMessage::SessionStateChanged(m) => m.uuid.as_deref(),
        SystemMessage::PermissionDenied(m) => m.uuid.as_deref(),
        SystemMessage::Informational(m) => m.uuid.as_deref(),
        SystemMessage::Notification(m) => m.uuid.as_deref(),
        SystemMessage::ThinkingTokens(m) => m.uuid.as_deref(),
        SystemMessage::CompactBoundary(m) => m.uuid.as_deref(),
        SystemMessage::BackgroundTasksChanged(m) => m.uuid.as_deref(),
        SystemMessage::HookStarted(m)
        | SystemMessage::HookProgress(m)
        | SystemMessage::HookResponse(m) => m.uuid.as_deref(),
        SystemMessage::TaskStarted(m)
        | SystemMessage::TaskProgress(m)
        | SystemMessage::TaskUpdated(m)
        | SystemMessage::TaskNotification(m) => m.uuid.as_deref(),
        SystemMessage::Unknown(v) => v.get("uuid").and_then(Value::as_str),
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::System(m) => m.serialize(s),
            Self::Assistant(m) => m.serialize(s),
            Self::User(m) => m.serialize(s),
            Self::Result(m) => m.serialize(s),
            Self::StreamEvent(m) => m.serialize(s),
            Self::ToolProgress(m) => m.serialize(s),
            Self::CommandLifecycle(m) => m.serialize(s),
            Self::RateLimitEvent(m) => m.serialize(s),
            Self::KeepAlive(m) => m.serialize(s),
            Self::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from_value(Value::deserialize(d)?))
    }
}

impl From<Value> for Message {
    fn from(value: Value) -> Self {
        Self::from_value(value)
    }
}
