//! The client's one error type: [`Error`], with its [`ErrorKind`].

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::jsonrpc::ErrorObject;

/// A cause an [`Error`] keeps, shared by its clones.
type Source = Arc<dyn StdError + Send + Sync>;

/// Why a client call failed.
///
/// An opaque error, one pointer wide: ask it what kind of failure it is
/// ([`kind`](Self::kind), or a predicate: [`is_jsonrpc`](Self::is_jsonrpc),
/// [`is_timeout`](Self::is_timeout), [`is_closed`](Self::is_closed),
/// [`is_transport`](Self::is_transport), …; whether a request may have
/// run without an answer: [`is_interrupted`](Self::is_interrupted)), read what it carries
/// ([`jsonrpc_error`](Self::jsonrpc_error), [`code`](Self::code),
/// [`status`](Self::status)), and follow [`source`](StdError::source) to
/// the cause: the [`std::io::Error`] of a stdio server that could not be
/// started or written to, the `reqwest::Error` of an HTTP request that
/// failed, the [`serde_json::Error`] of a result that does not decode, the
/// message of an in-process handler that panicked.
///
/// A JSON-RPC error object sent by the server is its own kind,
/// [`ErrorKind::JsonRpc`], displayed exactly `MCP error {code}: {message}`;
/// every other kind is a failure on this side (the transport, the response,
/// a timeout), so a caller can always tell the two apart. The display says
/// what failed and where; it does not repeat the cause, which
/// [`source`](StdError::source) returns (print the chain with an error
/// reporter, such as `anyhow`'s `{:#}`).
///
/// ```
/// use std::error::Error as _;
/// use claude_code_agent_mcp::client::{Error, ErrorKind};
/// use claude_code_agent_mcp::jsonrpc::ErrorObject;
///
/// let e = Error::from(ErrorObject::new(-32601, "Method not found: x"));
/// assert_eq!(e.to_string(), "MCP error -32601: Method not found: x");
/// assert_eq!(e.kind(), ErrorKind::JsonRpc);
/// assert_eq!(e.code(), Some(-32601));
///
/// let io = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
/// let t = Error::closed("writing to the MCP server failed").with_source(io);
/// assert!(t.is_closed() && t.jsonrpc_error().is_none());
/// assert_eq!(t.to_string(), "writing to the MCP server failed");
/// let cause = t.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
/// assert_eq!(cause.kind(), std::io::ErrorKind::BrokenPipe);
/// ```
///
/// Cloning is cheap: clones share the cause.
#[derive(Clone)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    kind: Kind,
    /// What failed and where (unused for a JSON-RPC error, which says it).
    message: String,
    /// The HTTP status that failed the request.
    status: Option<u16>,
    /// The request was sent and its answer was lost with its connection.
    interrupted: bool,
    source: Option<Source>,
}

#[derive(Clone)]
enum Kind {
    JsonRpc(ErrorObject),
    Other(ErrorKind),
}

/// What kind of failure an [`Error`] is ([`Error::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server answered with a JSON-RPC error object (`code`, `message`,
    /// `data`): [`Error::jsonrpc_error`].
    JsonRpc,
    /// The server answered with an `error` that is no JSON-RPC error object
    /// (a string, a number, an array, an object without a code); the
    /// message shows the value.
    ErrorResponse,
    /// No usable response: no reply to a request, `"error": null` without a
    /// result, a result of the wrong shape (the [`serde_json::Error`] is the
    /// source), a body that is not JSON-RPC or is over the message cap.
    InvalidResponse,
    /// The transport failed: an I/O or HTTP failure (the source says which;
    /// [`Error::status`] an HTTP error status), an in-process handler that
    /// panicked (its message is the source), a child that could not be
    /// started (the [`std::io::Error`] is the source). When the request had
    /// been sent, it may have run: [`Error::is_interrupted`].
    Transport,
    /// The transport is closed (the child exited, `close` was called, an
    /// HTTP session could not be renewed); later calls fail the same way.
    Closed,
    /// The request got no answer in time (it was cancelled on the server).
    Timeout,
    /// The work was cancelled before it finished: a task the client (or
    /// the server) cancelled.
    Cancelled,
    /// Refused before anything was sent: a method this transport cannot
    /// carry, a header value it cannot send.
    Refused,
    /// The server wants authorization the client could not get (feature
    /// `oauth-client`): a step of the OAuth flow failed (the message says
    /// which and where, the source why), the server still refused the new
    /// token, or it asked for more scopes more often than
    /// `OAuth::max_step_ups` allows;
    /// [`Error::status`] is the server's 401 or 403 when it was the last word.
    #[cfg_attr(
        feature = "oauth-client",
        doc = "([`OAuth::max_step_ups`](super::auth::OAuth::max_step_ups))"
    )]
    Unauthorized,
}

impl Error {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(Inner {
                kind: Kind::Other(kind),
                message: message.into(),
                status: None,
                interrupted: false,
                source: None,
            }),
        }
    }

    /// A transport failure ([`ErrorKind::Transport`]); `message` says what
    /// failed and where. For your own [`Transport`](super::Transport).
    pub fn transport(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Transport, message)
    }

    /// A transport failure ([`ErrorKind::Transport`]) after the request
    /// was sent, before its answer came: the request may or may not have
    /// run ([`is_interrupted`](Self::is_interrupted)); `message` says what
    /// failed and where. For your own [`Transport`](super::Transport): the
    /// client sends such a request again when that is safe
    /// ([`ClientOptions::retry`](super::ClientOptions::retry)).
    pub fn interrupted(message: impl Into<String>) -> Self {
        let mut e = Self::new(ErrorKind::Transport, message);
        e.inner.interrupted = true;
        e
    }

    /// The transport is closed ([`ErrorKind::Closed`]); `message` says why.
    pub fn closed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Closed, message)
    }

    /// No answer in time ([`ErrorKind::Timeout`]); `message` says to what.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Timeout, message)
    }

    /// The work was cancelled ([`ErrorKind::Cancelled`]); `message` says
    /// what.
    pub fn cancelled(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Cancelled, message)
    }

    /// No usable response ([`ErrorKind::InvalidResponse`]).
    pub fn invalid_response(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidResponse, message)
    }

    /// Refused before anything was sent ([`ErrorKind::Refused`]).
    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Refused, message)
    }

    /// An `error` member that is no JSON-RPC error object.
    /// An authorization failure ([`ErrorKind::Unauthorized`]); `message`
    /// says which step failed and where. For your own
    /// [`Authorizer`](super::auth::Authorizer) or
    /// [`TokenStore`](super::auth::TokenStore).
    #[cfg(feature = "oauth-client")]
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unauthorized, message)
    }

    pub(crate) fn error_response(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ErrorResponse, message)
    }

    /// This error, caused by `source` (what [`source`](StdError::source)
    /// returns from now on).
    pub fn with_source(mut self, source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        self.inner.source = Some(Arc::from(source.into()));
        self
    }

    /// This error, caused by the HTTP status `status`.
    #[cfg(feature = "http-client")]
    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.inner.status = Some(status);
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match &self.inner.kind {
            Kind::JsonRpc(_) => ErrorKind::JsonRpc,
            Kind::Other(kind) => *kind,
        }
    }

    /// The server's JSON-RPC error object, if this is one.
    pub fn jsonrpc_error(&self) -> Option<&ErrorObject> {
        match &self.inner.kind {
            Kind::JsonRpc(e) => Some(e),
            Kind::Other(_) => None,
        }
    }

    /// The JSON-RPC error code, if this is a server's JSON-RPC error.
    pub fn code(&self) -> Option<i64> {
        self.jsonrpc_error().map(|e| e.code)
    }

    /// The HTTP status that failed the request (a 4xx or 5xx without a
    /// JSON-RPC error in its body; 404 for a session that could not be
    /// renewed), if an HTTP status did.
    pub fn status(&self) -> Option<u16> {
        self.inner.status
    }

    /// Whether the server answered with a JSON-RPC error object
    /// ([`ErrorKind::JsonRpc`]).
    pub fn is_jsonrpc(&self) -> bool {
        self.kind() == ErrorKind::JsonRpc
    }

    /// Whether the server answered with an `error` that is no JSON-RPC
    /// error object ([`ErrorKind::ErrorResponse`]).
    pub fn is_error_response(&self) -> bool {
        self.kind() == ErrorKind::ErrorResponse
    }

    /// Whether no usable response came ([`ErrorKind::InvalidResponse`]).
    pub fn is_invalid_response(&self) -> bool {
        self.kind() == ErrorKind::InvalidResponse
    }

    /// Whether the transport failed ([`ErrorKind::Transport`]).
    pub fn is_transport(&self) -> bool {
        self.kind() == ErrorKind::Transport
    }

    /// Whether the transport is closed ([`ErrorKind::Closed`]).
    pub fn is_closed(&self) -> bool {
        self.kind() == ErrorKind::Closed
    }

    /// Whether the request timed out ([`ErrorKind::Timeout`]).
    pub fn is_timeout(&self) -> bool {
        self.kind() == ErrorKind::Timeout
    }

    /// Whether the work was cancelled ([`ErrorKind::Cancelled`]).
    pub fn is_cancelled(&self) -> bool {
        self.kind() == ErrorKind::Cancelled
    }

    /// Whether the request may or may not have run, and got no answer:
    ///
    /// * it was sent, and its connection failed before the answer came
    ///   ([`ErrorKind::Transport`], made by [`interrupted`](Self::interrupted)):
    ///   over HTTP, a POST cut before its answer, a `502`, `503` or `504`
    ///   from a proxy, an SSE stream that ended before its answer and could
    ///   not be resumed;
    /// * or the server said so ([`ErrorKind::JsonRpc`] with
    ///   `data.retryable: true`): the replica that ran it stopped before it
    ///   answered (docs/deployment.md), or a replica shutting down refused it.
    ///
    /// Send it again only if running it twice is harmless. The client has
    /// done so already, with the same request id, for requests it knows to
    /// be safe (not a `tools/call`, or a tool annotated idempotent or
    /// read-only), as often as [`ClientOptions::retry`](super::ClientOptions::retry)
    /// allows: such an error is what was left when the retries ran out.
    ///
    /// ```
    /// use claude_code_agent_mcp::client::Error;
    /// use claude_code_agent_mcp::jsonrpc::ErrorObject;
    /// use serde_json::json;
    ///
    /// let cut = Error::interrupted("HTTP POST http://mcp/: the connection broke");
    /// assert!(cut.is_interrupted() && cut.is_transport());
    /// let lost = Error::from(ErrorObject::new(-32603, "replica stopped").with_data(json!({"retryable": true})));
    /// assert!(lost.is_interrupted() && lost.is_jsonrpc());
    /// assert!(!Error::transport("could not connect").is_interrupted());
    /// ```
    pub fn is_interrupted(&self) -> bool {
        match &self.inner.kind {
            Kind::JsonRpc(e) => e
                .data
                .as_ref()
                .is_some_and(|d| d.get("retryable") == Some(&Value::Bool(true))),
            Kind::Other(_) => self.inner.interrupted,
        }
    }

    /// Whether the request was refused before anything was sent
    /// ([`ErrorKind::Refused`]).
    pub fn is_refused(&self) -> bool {
        self.kind() == ErrorKind::Refused
    }

    /// Whether authorization could not be had ([`ErrorKind::Unauthorized`]).
    pub fn is_unauthorized(&self) -> bool {
        self.kind() == ErrorKind::Unauthorized
    }

    /// A message from the server that does not decode (`what` says where it
    /// came from: "a line on the MCP server's stdout", "an SSE event from
    /// …"): says so and shows the start of the text (at most
    /// [`EXCERPT_BYTES`]); serde's error is the source.
    pub(crate) fn undecodable(what: &str, text: &[u8], error: serde_json::Error) -> Self {
        Self::invalid_response(format!(
            "{what} is not valid JSON: {}",
            crate::transport::lines::preview(text.trim_ascii(), EXCERPT_BYTES)
        ))
        .with_source(error)
    }
}

impl From<ErrorObject> for Error {
    /// The server's JSON-RPC error ([`ErrorKind::JsonRpc`]).
    fn from(e: ErrorObject) -> Self {
        Self {
            inner: Box::new(Inner {
                kind: Kind::JsonRpc(e),
                message: String::new(),
                status: None,
                interrupted: false,
                source: None,
            }),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner.kind {
            Kind::JsonRpc(e) => e.fmt(f),
            Kind::Other(_) => f.write_str(&self.inner.message),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind());
        match &self.inner.kind {
            Kind::JsonRpc(e) => d.field("jsonrpc", e),
            Kind::Other(_) => d.field("message", &self.inner.message),
        };
        if let Some(status) = self.inner.status {
            d.field("status", &status);
        }
        if self.inner.interrupted {
            d.field("interrupted", &true);
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        let source: &(dyn StdError + Send + Sync) = self.inner.source.as_deref()?;
        Some(source)
    }
}

/// The message of an in-process handler's panic: the source of the
/// [`ErrorKind::Transport`] error it becomes.
#[derive(Debug)]
pub(crate) struct Panicked(pub(crate) String);

impl fmt::Display for Panicked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for Panicked {}

/// An error and its causes on one line, for logs and reasons.
pub(crate) fn error_chain(e: &dyn StdError) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}

/// How much of a message that does not decode an error shows.
pub(crate) const EXCERPT_BYTES: usize = 200;

/// Reads the outcome of a response: its `result`, or the error it carries.
///
/// * `error` a JSON-RPC error object (an integer `code`) → [`ErrorKind::JsonRpc`];
/// * `error` any other non-null value → [`ErrorKind::ErrorResponse`]
///   showing the string itself or the value's JSON, and no code;
/// * `"error": null` (or none) beside a `result` → success;
/// * `"error": null` (or none) and no `result` → [`ErrorKind::InvalidResponse`].
pub fn response_outcome(mut response: serde_json::Map<String, Value>) -> Result<Value, Error> {
    match response.remove("error") {
        None | Some(Value::Null) => response.remove("result").ok_or_else(|| {
            Error::invalid_response("MCP invalid response: a null error and no result")
        }),
        Some(error) => Err(error_from_value(error)),
    }
}

fn error_from_value(error: Value) -> Error {
    if let Value::Object(map) = &error
        && let Some(code) = map.get("code").and_then(Value::as_i64)
    {
        let message = match map.get("message") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        let mut obj = ErrorObject::new(code, message);
        obj.data = map.get("data").cloned();
        return Error::from(obj);
    }
    let text = match error {
        Value::String(s) => s,
        other => other.to_string(),
    };
    Error::error_response(format!("MCP error response: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome(v: Value) -> Result<Value, Error> {
        response_outcome(v.as_object().unwrap().clone())
    }

    #[test]
    fn one_pointer_wide() {
        assert_eq!(size_of::<Error>(), size_of::<usize>());
        assert_eq!(size_of::<Result<(), Error>>(), size_of::<usize>());
    }

    #[test]
    fn kinds_predicates_and_accessors_agree() {
        let cases = [
            (Error::transport("t"), ErrorKind::Transport),
            (Error::closed("c"), ErrorKind::Closed),
            (Error::timeout("t"), ErrorKind::Timeout),
            (Error::invalid_response("i"), ErrorKind::InvalidResponse),
            (Error::refused("r"), ErrorKind::Refused),
            (Error::error_response("e"), ErrorKind::ErrorResponse),
            (Error::from(ErrorObject::new(-1, "m")), ErrorKind::JsonRpc),
        ];
        for (e, kind) in cases {
            assert_eq!(e.kind(), kind, "{e:?}");
            let predicates = [
                (e.is_transport(), ErrorKind::Transport),
                (e.is_closed(), ErrorKind::Closed),
                (e.is_timeout(), ErrorKind::Timeout),
                (e.is_invalid_response(), ErrorKind::InvalidResponse),
                (e.is_refused(), ErrorKind::Refused),
                (e.is_unauthorized(), ErrorKind::Unauthorized),
                (e.is_error_response(), ErrorKind::ErrorResponse),
                (e.is_jsonrpc(), ErrorKind::JsonRpc),
            ];
            for (holds, of) in predicates {
                assert_eq!(holds, of == kind, "{e:?} is_{of:?}");
            }
            assert_eq!(e.code().is_some(), kind == ErrorKind::JsonRpc);
            assert_eq!(e.status(), None);
        }
    }

    #[test]
    fn the_cause_is_the_source_not_the_display_and_clones_share_it() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = Error::transport("could not start MCP server \"x\"").with_source(io);
        assert_eq!(e.to_string(), "could not start MCP server \"x\"");
        let copy = e.clone();
        for e in [&e, &copy] {
            let io = e.source().unwrap().downcast_ref::<std::io::Error>();
            assert_eq!(io.unwrap().kind(), std::io::ErrorKind::NotFound);
        }
        assert_eq!(
            error_chain(&e),
            "could not start MCP server \"x\": no such file"
        );
        let debug = format!("{e:?}");
        assert!(
            debug.contains("Transport") && debug.contains("no such file"),
            "{debug}"
        );
        // An error nested in another is reached by downcasting.
        let outer = Error::closed("gone").with_source(e);
        let inner = outer.source().unwrap().downcast_ref::<Error>().unwrap();
        assert!(inner.is_transport());
        assert!(Error::closed("x").source().is_none());
    }

    #[cfg(feature = "http-client")]
    #[test]
    fn an_http_status_is_kept_beside_the_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        let e = Error::transport("POST failed")
            .with_source(io)
            .with_status(503);
        assert_eq!(e.status(), Some(503));
        assert!(format!("{e:?}").contains("503"));
        let outer = Error::closed("gone").with_source(e);
        let inner = outer.source().unwrap().downcast_ref::<Error>().unwrap();
        assert_eq!(inner.status(), Some(503));
    }

    #[test]
    fn odd_error_shapes() {
        let e = outcome(json!({"id":1,"error":{"code":-32602,"message":"bad","data":{"x":1}}}))
            .unwrap_err();
        assert_eq!(e.to_string(), "MCP error -32602: bad");
        assert_eq!(e.jsonrpc_error().unwrap().data, Some(json!({"x":1})));
        assert!(e.source().is_none());

        for (error, text) in [
            (json!("boom"), "MCP error response: boom"),
            (json!(42), "MCP error response: 42"),
            (json!([1, "a"]), "MCP error response: [1,\"a\"]"),
            (
                json!({"message":"no code"}),
                "MCP error response: {\"message\":\"no code\"}",
            ),
            (
                json!({"code":"x","message":"m"}),
                "MCP error response: {\"code\":\"x\",\"message\":\"m\"}",
            ),
        ] {
            let e = outcome(json!({"id":1,"error":error})).unwrap_err();
            assert!(e.is_error_response(), "{e:?}");
            assert_eq!(e.to_string(), text);
            assert_eq!(e.code(), None);
        }

        assert_eq!(
            outcome(json!({"id":1,"error":null,"result":{"a":1}})).unwrap(),
            json!({"a":1})
        );
        let e = outcome(json!({"id":1,"error":null})).unwrap_err();
        assert!(e.is_invalid_response());
        assert!(e.jsonrpc_error().is_none());
        // A null result is still a result.
        assert_eq!(outcome(json!({"id":1,"result":null})).unwrap(), Value::Null);
    }
}
