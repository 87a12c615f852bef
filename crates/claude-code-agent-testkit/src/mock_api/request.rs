//! Requests recorded by the mock, with helpers for assertions.

use std::time::{Duration, SystemTime};

use serde_json::Value;

/// What kind of request the mock received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestKind {
    /// A `POST /v1/messages` that is part of the conversation: it consumes the script.
    Conversation,
    /// A `POST /v1/messages` the CLI makes for itself (not the conversation); answered
    /// by the side-call reply without consuming the script.
    SideCall,
    /// `POST /v1/messages/count_tokens`.
    CountTokens,
    /// Anything else (answered 404, or 405/400 for a bad method or body).
    Other,
}

/// How the mock answered a request (which reply was chosen; see
/// [`RecordedRequest::status`] for whether it was sent).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answer {
    /// Not decided yet (the request is still being processed).
    Pending,
    /// By the script entry with this index (0-based, in the order given to the builder
    /// and [`MockModel::push_turn`](super::MockModel::push_turn)).
    Script(usize),
    /// By the script entry with this index again, because the request repeats one that
    /// got an API error (a CLI retry).
    Retry(usize),
    /// By the default reply (the script was exhausted).
    Default,
    /// By the side-call reply.
    SideCall,
    /// With a token count.
    CountTokens,
    /// With an error because the request was not understood (404, 405, bad JSON).
    Rejected,
}

/// One `tool_result` block the CLI sent back to the model, as recorded in a request.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedToolResult {
    /// The `tool_use_id` it answers.
    pub tool_use_id: String,
    /// The `content` as sent: a string or a list of blocks (or `Null` if absent).
    pub content: Value,
    /// The `is_error` flag (false when absent).
    pub is_error: bool,
}

impl RecordedToolResult {
    /// The text of the result: the string content, or the `text` blocks joined by `\n`.
    pub fn text(&self) -> String {
        content_text(&self.content)
    }
}

/// One request received by the mock.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// Position in arrival order (0-based).
    pub index: usize,
    /// How the request was classified.
    pub kind: RequestKind,
    /// HTTP method.
    pub method: String,
    /// Path without the query, e.g. `/v1/messages`.
    pub path: String,
    /// The query string, e.g. `beta=true` (the CLI adds it).
    pub query: Option<String>,
    /// Request headers in order (names lowercase).
    pub headers: Vec<(String, String)>,
    /// The parsed JSON body (`Null` if empty or not JSON).
    pub body: Value,
    /// Size of the raw body in bytes.
    pub body_len: usize,
    /// Time since the mock started.
    pub elapsed: Duration,
    /// Wall-clock time of arrival.
    pub received_at: SystemTime,
    /// How it was answered.
    pub answer: Answer,
    /// HTTP status of the answer (0 while pending, or if the client went away first).
    pub status: u16,
    /// The client disconnected before the (delayed) answer was sent, e.g. because the
    /// CLI was interrupted.
    pub client_disconnected: bool,
    /// The answer as a JSON value: the full message (also for streamed replies, as if
    /// non-streaming), the error body, or the count_tokens body.
    pub response: Value,
}

impl RecordedRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `body.model`.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// `body.stream == true`.
    pub fn is_streaming(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    /// `body.max_tokens`.
    pub fn max_tokens(&self) -> Option<u64> {
        self.body.get("max_tokens").and_then(Value::as_u64)
    }

    /// `body.messages` (empty if absent).
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The last message, usually the `user` message this request asks the model to answer.
    pub fn last_message(&self) -> Option<&Value> {
        self.messages().last()
    }

    /// The text of the system prompt: a string, or its `text` blocks joined by `\n`.
    pub fn system_text(&self) -> String {
        self.body
            .get("system")
            .map(content_text)
            .unwrap_or_default()
    }

    /// The names of the offered tools (`tools[].name`).
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools()
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .collect()
    }

    /// The offered tool definitions (`tools`, empty if absent).
    pub fn tools(&self) -> &[Value] {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The definition of the offered tool with this name.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.tools()
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }

    /// The `tool_result` blocks after the last `assistant` message: the results the CLI
    /// sends back in this request. (Anywhere after it, not only in the last message:
    /// CLIs before 2.1.314 end the request with a `system` message after the results.)
    pub fn tool_results(&self) -> Vec<RecordedToolResult> {
        let messages = self.messages();
        let start = messages
            .iter()
            .rposition(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .map_or(0, |i| i + 1);
        messages[start..]
            .iter()
            .flat_map(tool_results_of_message)
            .collect()
    }

    /// Every `tool_result` block in the whole history of this request.
    pub fn all_tool_results(&self) -> Vec<RecordedToolResult> {
        self.messages()
            .iter()
            .flat_map(tool_results_of_message)
            .collect()
    }

    /// The text of the last `user` message (string content, or its `text` blocks joined
    /// by `\n`; includes the CLI's `<system-reminder>` blocks if any).
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .and_then(|m| m.get("content"))
            .map(content_text)
    }

    /// The `tool_use` blocks of the mock's answer, as `(id, name, input)`.
    pub fn answered_tool_uses(&self) -> Vec<(String, String, Value)> {
        self.response
            .get("content")
            .and_then(Value::as_array)
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .map(|b| {
                        (
                            b.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                            b.get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                            b.get("input").cloned().unwrap_or(Value::Null),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn tool_results_of_message(message: &Value) -> Vec<RecordedToolResult> {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .map(|b| RecordedToolResult {
            tool_use_id: b
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            content: b.get("content").cloned().unwrap_or(Value::Null),
            is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        })
        .collect()
}

/// Text of a `content`/`system` value: a string, or the `text` of its text blocks
/// joined by `\n`.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.as_str()),
                _ => b.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
