//! What a message and a tool call carry besides their JSON: the session, the
//! request's `_meta`, cancellation, progress and logging.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::session::Session;
use crate::jsonrpc;

/// The `_meta` key under which the Claude Code CLI sends the model's `tool_use` id.
pub const TOOL_USE_ID_META: &str = "claudecode/toolUseId";

/// Everything besides the message itself that [`Handler::handle`](super::Handler::handle) needs.
///
/// [`RequestContext::new`] is a context with no session: nothing can be
/// cancelled by notification and server-originated notifications go nowhere
/// (what an in-process client that talks to one server directly uses).
/// [`RequestContext::with_session`] ties the message to a connection.
#[derive(Clone, Default, Debug)]
pub struct RequestContext {
    session: Option<Session>,
}

impl RequestContext {
    /// A fresh context: no session, no notifications.
    pub fn new() -> Self {
        Self::default()
    }

    /// A context for a message that arrived on `session`'s connection.
    pub fn with_session(session: Session) -> Self {
        Self {
            session: Some(session),
        }
    }

    /// The session, if there is one.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    pub(crate) fn into_session(self) -> Option<Session> {
        self.session
    }
}

/// MCP's logging levels (RFC 5424 severities), least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum LogLevel {
    /// `debug`
    Debug = 0,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    const ALL: [LogLevel; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// The level's wire name (`"warning"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    pub(crate) fn from_index(i: u8) -> Self {
        Self::ALL
            .get(usize::from(i))
            .copied()
            .unwrap_or(Self::Debug)
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown log level {s:?}"))
    }
}

/// What a tool handler gets besides its arguments.
///
/// * the request's `_meta` ([`meta`](Self::meta)), with typed accessors for
///   what the Claude Code CLI sends: [`tool_use_id`](Self::tool_use_id) and
///   [`progress_token`](Self::progress_token);
/// * a [`CancellationToken`] that fires when the client cancels the call,
///   when it times out, or when the caller stops waiting for it;
/// * [`progress`](Self::progress) and [`log`](Self::log), which send
///   notifications through the session (no-ops without one).
///
/// Cloning is cheap enough to move a copy into a spawned task.
/// `ToolContext::default()` is a detached context, handy to call a handler
/// directly in a unit test.
#[derive(Clone, Default)]
pub struct ToolContext {
    pub(crate) request_id: Value,
    pub(crate) tool: String,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) token: CancellationToken,
    pub(crate) session: Option<Session>,
}

impl ToolContext {
    /// The JSON-RPC id of the `tools/call` request, as the client sent it.
    pub fn request_id(&self) -> &Value {
        &self.request_id
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The request's `params._meta`, if it had one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// The model's `tool_use` id (`_meta["claudecode/toolUseId"]`), when the
    /// call comes from the Claude Code CLI.
    pub fn tool_use_id(&self) -> Option<&str> {
        self.meta.as_ref()?.get(TOOL_USE_ID_META)?.as_str()
    }

    /// `_meta.progressToken` (a string or a number), if the client wants
    /// progress reports. The Claude Code CLI sends the request id.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta
            .as_ref()?
            .get("progressToken")
            .filter(|t| t.is_string() || t.is_number())
    }

    /// The call's cancellation token.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.token
    }

    /// Whether the call has been cancelled (or timed out).
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Completes when the call is cancelled (or times out).
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }

    /// The session the call arrived on, if any.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// Reports progress: sends `notifications/progress` with the request's
    /// progress token. `total` and `message` are optional.
    ///
    /// Returns whether a notification went out: nothing is sent without a
    /// progress token or without a session that has a notifier.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let (Some(session), Some(token)) = (&self.session, self.progress_token()) else {
            return false;
        };
        if !session.has_notifier() {
            return false;
        }
        let mut params = Map::with_capacity(4);
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), message.into());
        }
        session.notify(jsonrpc::notification(
            "notifications/progress",
            Some(Value::Object(params)),
        ));
        true
    }

    /// Sends a log message (`notifications/message`) to the client, with
    /// this tool's name as the `logger`.
    ///
    /// Messages below the level the client set with `logging/setLevel` are
    /// dropped. Returns whether a notification went out.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) -> bool {
        let Some(session) = &self.session else {
            return false;
        };
        if !session.has_notifier() || level < session.log_level() {
            return false;
        }
        session.notify(jsonrpc::notification(
            "notifications/message",
            Some(json!({"level": level.as_str(), "logger": self.tool, "data": data.into()})),
        ));
        true
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("request_id", &self.request_id)
            .field("tool", &self.tool)
            .field("meta", &self.meta)
            .field("cancelled", &self.is_cancelled())
            .field("session", &self.session)
            .finish()
    }
}

/// A whole number as a JSON integer (`1`, not `1.0`), anything else as a float.
fn number(x: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if x.fract() == 0.0 && x.abs() <= EXACT {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip_and_order() {
        for l in LogLevel::ALL {
            assert_eq!(l.as_str().parse::<LogLevel>().unwrap(), l);
            assert_eq!(LogLevel::from_index(l as u8), l);
        }
        assert!(LogLevel::Warning > LogLevel::Info);
        assert!("loud".parse::<LogLevel>().is_err());
    }

    #[test]
    fn whole_numbers_are_integers() {
        assert_eq!(number(1.0).to_string(), "1");
        assert_eq!(number(0.5).to_string(), "0.5");
        assert_eq!(number(f64::NAN), Value::Null);
    }

    #[test]
    fn detached_context_sends_nothing() {
        let ctx = ToolContext::default();
        assert!(!ctx.progress(1.0, None, None));
        assert!(!ctx.log(LogLevel::Emergency, "x"));
        assert!(ctx.tool_use_id().is_none());
    }
}
