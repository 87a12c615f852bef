//! The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on the
//! wire: a `tools/call` the server answers with a task (`resultType:
//! "task"`), polled with `tasks/get`, given input with `tasks/update`,
//! cancelled with `tasks/cancel`.
//!
//! The extension is defined for the stateless revision (2026-07-28): a
//! client opts in per request, in `_meta`'s client capabilities
//! (`extensions["io.modelcontextprotocol/tasks"]: {}`), and the server
//! declares it under `capabilities.extensions`. It has no `tasks/result`
//! and no `tasks/list` (the 2025-11-25 experimental tasks had them; the
//! extension replaced them: the result is inlined in `tasks/get`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::CallToolResult;
use crate::jsonrpc::ErrorObject;

/// The identifier of the Tasks extension, the key a client and a server
/// declare it under in their capabilities' `extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The extensions entry that declares the Tasks extension (no settings are
/// defined: an empty object), for a server's or a client's `capabilities`.
pub fn tasks_extension_capability() -> Value {
    json!({ TASKS_EXTENSION: {} })
}

/// The state of a task. Open: a status this crate does not know is kept
/// as [`Unknown`](Self::Unknown).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The server waits for the client's answers to the task's
    /// [`input_requests`](Task::input_requests) (`tasks/update`).
    InputRequired,
    /// The request finished with a result ([`Task::result`]), a tool's
    /// `isError` result included.
    Completed,
    /// The request failed with a JSON-RPC error ([`Task::error`]).
    Failed,
    /// The request was cancelled before it finished.
    Cancelled,
    /// A status this crate does not know, as sent.
    Unknown(String),
}

impl TaskStatus {
    /// The status as the wire spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Unknown(s) => s,
        }
    }

    /// Whether the task is over: completed, failed or cancelled.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

impl From<&str> for TaskStatus {
    fn from(s: &str) -> Self {
        match s {
            "working" => Self::Working,
            "input_required" => Self::InputRequired,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            other => Self::Unknown(other.to_owned()),
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for TaskStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<str>::deserialize(d)?;
        Ok(Self::from(s.as_ref()))
    }
}

/// A task, as the server describes it: in a `CreateTaskResult` (the answer
/// to a `tools/call` the server runs as a task: no `result`, `error` or
/// `inputRequests`), in a `tasks/get` result, and in `notifications/tasks`
/// (the spec's `DetailedTask`: what its status has, inlined).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The task's identifier, unguessable (a bearer handle).
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// What the status means now, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long after its creation the server keeps it, in milliseconds;
    /// `None` (`null`): without limit. Always sent.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// How often the server would like to be polled, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: the requests to the client (`elicitation/create`,
    /// `sampling/createMessage`, `roots/list`, …) the task waits on, by the
    /// key a `tasks/update` answers each under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// `completed`: the call's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<CallToolResult>,
    /// `failed`: the JSON-RPC error the call failed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// Other fields (`resultType`, `_meta`, …), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Task {
    /// A task with this id and status, created and last updated at `at`
    /// (ISO 8601), kept `ttl_ms`.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        at: &str,
        ttl_ms: Option<u64>,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: at.to_owned(),
            last_updated_at: at.to_owned(),
            ttl_ms,
            poll_interval_ms: None,
            input_requests: None,
            result: None,
            error: None,
            extra: Map::new(),
        }
    }
}

/// What a `tools/call` that let the server choose came back with: the
/// result at once, or a task to follow.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolCallOutcome {
    /// The server answered at once (a tool it runs synchronously, or one it
    /// finished fast enough).
    Done(CallToolResult),
    /// The server runs the call as a task (`resultType: "task"`); boxed, a
    /// task is large.
    Task(Box<Task>),
}

/// ISO 8601 (UTC, milliseconds) of a time in milliseconds since the Unix
/// epoch: `2026-07-28T10:30:00.000Z`.
pub(crate) fn iso8601(epoch_ms: u64) -> String {
    let secs = epoch_ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        epoch_ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_iso_8601() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_785_234_600_000), "2026-07-28T10:30:00.000Z");
    }

    #[test]
    fn a_task_keeps_what_it_does_not_know_and_always_sends_its_ttl() {
        let wire = json!({"resultType":"task","taskId":"t1","status":"paused","createdAt":"a",
                          "lastUpdatedAt":"b","ttlMs":null,"x":1});
        let task: Task = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(task.status, TaskStatus::Unknown("paused".into()));
        assert!(!task.status.is_terminal());
        assert_eq!(serde_json::to_value(&task).unwrap(), wire);
        let done = Task::new("t2", TaskStatus::Completed, "a", Some(5));
        assert!(done.status.is_terminal());
        assert_eq!(serde_json::to_value(&done).unwrap()["ttlMs"], 5);
    }
}
