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
//! use claude_code_agent::message::Message;
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
mod events;
mod result;
mod skipped;
mod stream;
mod system;
mod system_events;
#[cfg(test)]
mod tests;
mod user;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

pub use assistant::{ApiMessage, AssistantError, AssistantMessage, Usage};
pub use content::{
    ContentBlock, DocumentBlock, ImageBlock, MediaSource, MessageContent, RedactedThinkingBlock,
    ServerToolResultBlock, ServerToolUseBlock, TextBlock, ThinkingBlock, ToolResultBlock,
    ToolUseBlock,
};
pub use events::{
    ActiveGoal, AuthStatus, ConversationReset, McpProgress, PromptSuggestion, ToolUseSummary,
};
pub use result::{
    AutoModeUnchecked, ModelUsage, PermissionDenial, ResultMessage, ResultSubtype,
    StartupFailureReason, TerminalReason,
};
pub use skipped::{SkipReason, SkippedLine};
pub use stream::{
    ApiStreamEvent, CommandLifecycle, CommandState, ContentBlockDelta, ContentBlockStart,
    ContentBlockStop, Delta, InputJsonDelta, KeepAlive, MessageDelta, MessageStart, MessageStop,
    RateLimitEvent, SignatureDelta, StreamEvent, TextDelta, ThinkingDelta, ToolProgress,
};
pub use system::{
    ApiRetry, BackgroundTasksChanged, CommandsChanged, CompactBoundary, ControlRequestProgress,
    ElicitationComplete, FileFailure, FilesPersisted, HookEventMessage, Informational,
    InitMcpServer, LocalCommandOutput, MemoryRecall, MirrorError, ModelRefusalFallback,
    ModelRefusalNoFallback, Notification, PermissionDenied, PersistedFile, PluginInstall,
    RecalledMemory, SessionState, SessionStateChanged, SessionTitleChanged, SessionWritesLost,
    SystemInit, SystemMessage, SystemStatus, TaskEventMessage, ThinkingTokens, WorkerShuttingDown,
};
pub use user::{Priority, UserBody, UserInput, UserMessage};

use crate::wire::{Wire, str_at};

/// Declares [`Message`] and its accessors from one list of top-level
/// types; every payload but `system` and `keep_alive` has `session_id` and
/// `uuid` fields.
macro_rules! messages {
    ($($(#[$m:meta])* $wire:literal => $variant:ident($inner:ty)),* $(,)?) => {
        /// One message the CLI wrote on stdout (control envelopes excluded: the
        /// SDK answers those itself),
        /// or one the SDK made itself ([`Message::McpProgress`],
        /// [`Message::SkippedLine`]).
        ///
        /// In a stream ([`MessageStream`](crate::MessageStream)), nothing the
        /// CLI writes is an error: a line the SDK could not read is a
        /// [`Message::SkippedLine`] and the stream goes on, so a loop that
        /// stops at the first `Err` with `?` sees every turn to its end.
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum Message {
            /// `system`: metadata and events, by subtype.
            System(SystemMessage),
            $($(#[$m])* $variant($inner),)*
            /// `keep_alive`: ignore it.
            KeepAlive(KeepAlive),
            /// `skipped_line`: a line from the CLI the SDK had to skip (too long,
            /// or a JSON object that does not parse), so a message may be
            /// missing. Made by the SDK; the stream goes on after it.
            SkippedLine(SkippedLine),
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
                    $(Some($wire) => <$inner>::from_wire(value).map(Self::$variant),)*
                    Some("keep_alive") => KeepAlive::from_wire(value).map(Self::KeepAlive),
                    _ => Err(value),
                };
                decoded.unwrap_or_else(Self::Unknown)
            }

            /// The top-level `type`.
            pub fn message_type(&self) -> Option<&str> {
                Some(match self {
                    Self::System(_) => "system",
                    $(Self::$variant(_) => $wire,)*
                    Self::KeepAlive(_) => "keep_alive",
                    Self::SkippedLine(_) => "skipped_line",
                    Self::Unknown(v) => return v.get("type").and_then(Value::as_str),
                })
            }

            /// The `session_id`, when the message carries one.
            pub fn session_id(&self) -> Option<&str> {
                match self {
                    Self::System(m) => m.session_id(),
                    $(Self::$variant(m) => m.session_id.as_deref(),)*
                    Self::KeepAlive(_) | Self::SkippedLine(_) => None,
                    Self::Unknown(v) => v.get("session_id").and_then(Value::as_str),
                }
            }

            /// The message's `uuid`, when it carries one.
            pub fn uuid(&self) -> Option<&str> {
                match self {
                    Self::System(m) => m.uuid(),
                    $(Self::$variant(m) => m.uuid.as_deref(),)*
                    Self::KeepAlive(_) | Self::SkippedLine(_) => None,
                    Self::Unknown(v) => v.get("uuid").and_then(Value::as_str),
                }
            }
        }

        impl Serialize for Message {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    Self::System(m) => m.serialize(s),
                    $(Self::$variant(m) => m.serialize(s),)*
                    Self::KeepAlive(m) => m.serialize(s),
                    Self::SkippedLine(m) => m.serialize(s),
                    Self::Unknown(v) => v.serialize(s),
                }
            }
        }
    };
}

messages! {
    /// `assistant`: one model content block.
    "assistant" => Assistant(AssistantMessage),
    /// `user`: tool results, replays, synthetic messages.
    "user" => User(UserMessage),
    /// `result`: the end of a turn.
    "result" => Result(ResultMessage),
    /// `stream_event`: a raw API stream event.
    "stream_event" => StreamEvent(StreamEvent),
    /// `tool_progress`: progress or heartbeat of a running tool.
    "tool_progress" => ToolProgress(ToolProgress),
    /// `command_lifecycle`: progress of a user message sent with a `uuid`.
    "command_lifecycle" => CommandLifecycle(CommandLifecycle),
    /// `rate_limit_event`.
    "rate_limit_event" => RateLimitEvent(RateLimitEvent),
    /// `auth_status`: authentication progress.
    "auth_status" => AuthStatus(AuthStatus),
    /// `tool_use_summary`: a summary of preceding tool calls.
    "tool_use_summary" => ToolUseSummary(ToolUseSummary),
    /// `prompt_suggestion`: a suggested next prompt.
    "prompt_suggestion" => PromptSuggestion(PromptSuggestion),
    /// `conversation_reset`: the conversation started over.
    "conversation_reset" => ConversationReset(ConversationReset),
    /// `active_goal`: the session's goal changed.
    "active_goal" => ActiveGoal(ActiveGoal),
    /// `mcp_progress`: progress of an in-process tool, delivered by the SDK
    /// itself (never from the CLI).
    "mcp_progress" => McpProgress(McpProgress),
}

impl Message {
    /// Parses and decodes one line of JSON (lone surrogate escapes, which
    /// the CLI writes for a string cut mid-emoji, decode to U+FFFD).
    pub fn from_slice(line: &[u8]) -> serde_json::Result<Self> {
        crate::mcp::__private::transport::json::from_slice(line).map(Self::from_value)
    }

    /// Encodes as JSON; equal to the value it was decoded from.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
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
