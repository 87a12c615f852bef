//! What a message and a tool call carry besides their JSON: the session, the
//! request's `_meta`, cancellation, progress and logging.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value, json};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::auth::AccessToken;
use super::contain::ProgressClock;
use super::outbound::ClientRequestError;
use super::round::{self, RequestName, Round, Sealing};
use super::session::{Session, Sink};
use super::watchdog::Watch;
use crate::jsonrpc;
use crate::types::{ClientCapabilities, InputRequest, LogLevel};

/// The stream a transport answers one request on (an SSE response to a
/// Streamable HTTP POST): messages tied to the request — its progress and
/// log notifications, requests to the client made while serving it — go
/// there instead of to the session's notifier.
pub trait ResponseStream: Send + Sync + 'static {
    /// Sends one message on the request's stream.
    fn send(&self, message: Value);
    /// Closes the stream early (the client reconnects to get the rest, as
    /// SSE resumability allows). Returns whether the transport did so.
    fn close(&self) -> bool {
        false
    }
}

/// The `_meta` key under which the Claude Code CLI sends the model's `tool_use` id.
pub const TOOL_USE_ID_META: &str = "claudecode/toolUseId";

/// Everything besides the message itself that [`Handler::handle`](super::Handler::handle) needs.
///
/// [`RequestContext::new`] is a context with no session: nothing can be
/// cancelled by notification and server-originated notifications go nowhere
/// (what an in-process client that talks to one server directly uses).
/// [`RequestContext::with_session`] ties the message to a connection.
#[derive(Clone, Default)]
pub struct RequestContext {
    session: Option<Session>,
    stream: Option<Arc<dyn ResponseStream>>,
    /// The transport's backstop for a tool call whose handler blocks its
    /// thread (see `watchdog.rs`).
    pub(crate) watch: Option<Arc<Watch>>,
    pub(crate) access_token: Option<Arc<AccessToken>>,
    /// Where the tasks the request makes or reads are kept, when the
    /// transport has a store of its own (replicas sharing an event store).
    pub(crate) task_store: Option<super::StoreRef>,
    /// The caller's trace context the transport received beside the
    /// message (the W3C HTTP headers), for the served request's span.
    #[cfg(feature = "opentelemetry")]
    remote: Option<Arc<crate::spans::Remote>>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("session", &self.session)
            .field("stream", &self.stream.is_some())
            .field("access_token", &self.access_token)
            .finish()
    }
}

/// What [`RequestContext::into_parts`] splits a context into.
pub(crate) struct ContextParts {
    pub(crate) session: Option<Session>,
    pub(crate) stream: Option<Arc<dyn ResponseStream>>,
    pub(crate) access_token: Option<Arc<AccessToken>>,
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
            ..Self::default()
        }
    }

    /// Ties the request to its own response stream (see [`ResponseStream`]).
    pub fn with_response_stream(mut self, stream: Arc<dyn ResponseStream>) -> Self {
        self.stream = Some(stream);
        self
    }

    /// The session, if there is one.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// The request was made with this verified access token (the
    /// Streamable HTTP server's protected resource sets it); tools read it
    /// with [`ToolContext::access_token`].
    pub fn with_access_token(mut self, token: Arc<AccessToken>) -> Self {
        self.access_token = Some(token);
        self
    }

    /// The verified access token the request was made with, if any.
    pub fn access_token(&self) -> Option<&AccessToken> {
        self.access_token.as_deref()
    }

    /// The [`Round`] of a stateless request `named` so, served in this
    /// context (its caller, its declared capabilities), with the
    /// `inputResponses` and `requestState` of its params (see
    /// [`Round::begin`]).
    pub(crate) fn begin_round(
        &self,
        sealing: &Sealing,
        named: &RequestName<'_>,
        (input_responses, request_state): (Option<Value>, Option<Value>),
    ) -> Result<Round, jsonrpc::ErrorObject> {
        let caller = self.access_token().map(round::caller).unwrap_or_default();
        let declared = self
            .session()
            .and_then(Session::client_capabilities)
            .unwrap_or_default();
        Round::begin(
            sealing,
            named,
            &caller,
            input_responses,
            request_state,
            declared,
        )
    }

    /// The request's tasks are kept in `store` (the transport's).
    #[cfg(feature = "http-server")]
    pub(crate) fn with_task_store(mut self, store: super::StoreRef) -> Self {
        self.task_store = Some(store);
        self
    }

    /// The request came with these HTTP headers: the caller's W3C trace
    /// context among them is the parent of the served request's span when
    /// its `_meta` has none (feature `opentelemetry`).
    #[cfg(feature = "http-server")]
    pub(crate) fn with_trace_headers(self, headers: &axum::http::HeaderMap) -> Self {
        #[cfg(feature = "opentelemetry")]
        return Self {
            remote: crate::trace_context::from_http(headers).map(Arc::new),
            ..self
        };
        #[cfg(not(feature = "opentelemetry"))]
        {
            let _ = headers;
            self
        }
    }

    /// The caller's trace context the transport received beside the
    /// message, if any.
    pub(crate) fn remote(&self) -> Option<&crate::spans::Remote> {
        #[cfg(feature = "opentelemetry")]
        return self.remote.as_deref();
        #[cfg(not(feature = "opentelemetry"))]
        None
    }

    pub(crate) fn into_parts(self) -> ContextParts {
        ContextParts {
            session: self.session,
            stream: self.stream,
            access_token: self.access_token,
        }
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
    /// Shared with the tool's registration: no copy per call.
    pub(crate) tool: Arc<str>,
    /// Shared: the in-process client hands every call the same `_meta`.
    pub(crate) meta: Option<Arc<Map<String, Value>>>,
    /// The call's cancellation; its token is made when asked for.
    pub(crate) cancel: Arc<Cancel>,
    pub(crate) session: Option<Session>,
    pub(crate) stream: Option<Arc<dyn ResponseStream>>,
    /// Set when the call's timeout follows its progress.
    pub(crate) clock: Option<Arc<ProgressClock>>,
    pub(crate) access_token: Option<Arc<AccessToken>>,
    /// The input the call has and asks for, at the stateless revision.
    pub(crate) round: Option<Arc<Round>>,
}

/// What a tool call's [`ToolContext`] is made of, handed to the type-erased
/// handler, which makes the context only when its handler takes one
/// (`Fn(T, ToolContext)`, see [`ToolHandler`](super::ToolHandler)): a handler
/// without one costs no context and no [`Cancel`].
pub(crate) struct CallContext<'a> {
    pub(crate) request_id: &'a Value,
    pub(crate) tool: &'a Arc<str>,
    pub(crate) meta: Option<Arc<Map<String, Value>>>,
    pub(crate) session: &'a Option<Session>,
    pub(crate) stream: Option<Arc<dyn ResponseStream>>,
    pub(crate) clock: &'a Option<Arc<ProgressClock>>,
    /// The call's cancellation: made with the context, and kept here so
    /// that the server cancels what the handler holds.
    pub(crate) cancel: &'a mut Option<Arc<Cancel>>,
    pub(crate) access_token: Option<Arc<AccessToken>>,
    pub(crate) round: Option<Arc<Round>>,
}

impl CallContext<'_> {
    /// The handler's context.
    pub(crate) fn into_tool_context(self) -> ToolContext {
        ToolContext {
            request_id: self.request_id.clone(),
            tool: Arc::clone(self.tool),
            meta: self.meta,
            cancel: Arc::clone(self.cancel.get_or_insert_default()),
            session: self.session.clone(),
            stream: self.stream,
            clock: self.clock.clone(),
            access_token: self.access_token,
            round: self.round,
        }
    }
}

/// A tool call's cancellation: a flag, and a [`CancellationToken`] made
/// only when someone asks for one — the handler
/// ([`ToolContext::cancellation_token`], [`ToolContext::cancelled`]) or the
/// server, for a call its first poll left running. Most handlers never ask,
/// and a token costs a lock at each clone and drop.
///
/// Firing sets the flag, then cancels the token if there is one; making
/// the token looks at the flag after: with a fence on both sides between
/// the write and the read, one of the two always sees the other, so a
/// token made while the call is cancelled fires too.
#[derive(Default)]
pub(crate) struct Cancel {
    cancelled: AtomicBool,
    token: OnceLock<CancellationToken>,
}

impl Cancel {
    /// Fires: the flag, and the token if it was made.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if let Some(token) = self.token.get() {
            token.cancel();
        }
    }

    /// Whether it fired (or someone cancelled the token itself).
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
            || self
                .token
                .get()
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// The token, made on the first call (cancelled if it already fired).
    pub(crate) fn token(&self) -> &CancellationToken {
        if let Some(token) = self.token.get() {
            return token;
        }
        let token = self.token.get_or_init(CancellationToken::new);
        fence(Ordering::SeqCst);
        if self.cancelled.load(Ordering::Relaxed) {
            token.cancel();
        }
        token
    }
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
        self.meta.as_deref()
    }

    /// The model's `tool_use` id (`_meta["claudecode/toolUseId"]`), when the
    /// call comes from the Claude Code CLI.
    pub fn tool_use_id(&self) -> Option<&str> {
        self.meta.as_deref()?.get(TOOL_USE_ID_META)?.as_str()
    }

    /// `_meta.progressToken` (a string or a number), if the client wants
    /// progress reports. The Claude Code CLI sends the request id.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta
            .as_deref()?
            .get("progressToken")
            .filter(|t| t.is_string() || t.is_number())
    }

    /// The call's cancellation token (made on the first call of this,
    /// [`cancelled`](Self::cancelled) or the server's own need of it).
    pub fn cancellation_token(&self) -> &CancellationToken {
        self.cancel.token()
    }

    /// Whether the call has been cancelled (or timed out).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the call is cancelled (or times out).
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.token().cancelled()
    }

    /// The session the call arrived on, if any.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// The verified OAuth access token the call was made with: set by the
    /// Streamable HTTP server when it serves a protected resource
    /// (`StreamableHttpConfig::protected_resource`), `None` otherwise. Its
    /// subject, client, scopes and claims tell the tool who is calling.
    pub fn access_token(&self) -> Option<&AccessToken> {
        self.access_token.as_deref()
    }

    /// The capabilities the client declared (in `initialize`, or in a
    /// stateless request's `_meta`); `None` when unknown (no session, or
    /// no handshake).
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        if let Some(round) = &self.round {
            return Some(round.capabilities().clone());
        }
        self.session.as_ref()?.client_capabilities()
    }

    /// Whether [`ask`](Self::ask) can get a `sampling/createMessage`
    /// (without `tools`) answered: the transport carries requests to the
    /// client, or the call may end `input_required` (stateless revision),
    /// and the client declared `sampling`.
    pub fn supports_sampling(&self) -> bool {
        self.can_ask(ClientCapabilities::sampling)
    }

    /// Whether [`ask`](Self::ask) can get a form-mode `elicitation/create`
    /// answered (see [`supports_sampling`](Self::supports_sampling)): the
    /// client declared `elicitation` (form mode).
    pub fn supports_elicitation(&self) -> bool {
        self.can_ask(ClientCapabilities::elicitation_form)
    }

    /// Whether [`ask`](Self::ask) can get `roots/list` answered.
    pub fn supports_roots(&self) -> bool {
        self.can_ask(ClientCapabilities::roots)
    }

    fn can_ask(&self, declared: fn(&ClientCapabilities) -> bool) -> bool {
        if let Some(round) = &self.round {
            return declared(round.capabilities());
        }
        self.session.as_ref().is_some_and(|session| {
            session.supports_client_requests()
                && session.client_capabilities().is_some_and(|c| declared(&c))
        })
    }

    /// Asks the client for input mid-call — an elicitation (the user), a
    /// sampling (the client's model) or its roots — and returns its answer
    /// (the client's result: `{"action":"accept","content":{…}}` for an
    /// elicitation), whatever the revision:
    ///
    /// * on a session (2025-11-25 and before, over stdio or a Streamable
    ///   HTTP session) the request goes to the client as a request of its
    ///   own ([`request`](Self::request)), and `key` is not used;
    /// * at the stateless revision (2026-07-28) the answer comes in the
    ///   request itself: when it carries one under `key` (the client's
    ///   `inputResponses`, or an earlier round's answers), it is returned;
    ///   otherwise this fails with [`ClientRequestError::InputRequired`],
    ///   and the call, whatever the handler then returns, is answered with
    ///   an `input_required` result asking for every input the handler
    ///   asked and did not have. The client answers and retries, and the
    ///   handler runs again from the top: its `ask`s return this time;
    /// * in a call run as a task (the Tasks extension) the request becomes
    ///   one of the task's `inputRequests` (the task is `input_required`
    ///   until it is answered, with `tasks/update`), and `ask` waits for
    ///   its answer, as on a session: the handler runs once (`key` is not
    ///   used; the server keys the input requests itself).
    ///
    /// So write the handler to run more than once: ask first, act after,
    /// and give each input its own `key`, the same on every run. Asks that
    /// do not depend on each other can be made at once (`futures::join!`)
    /// and take one round. Only what the client declared is asked:
    /// otherwise this fails at once with
    /// [`ClientRequestError::CapabilityNotDeclared`].
    ///
    /// ```
    /// use claude_code_agent_mcp::types::InputRequest;
    /// use claude_code_agent_mcp::{Tool, ToolContext};
    /// use serde_json::json;
    ///
    /// let greet = Tool::new("greet", "Greets the user by name", |_: (), ctx: ToolContext| async move {
    ///     let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    ///     let answer = ctx.ask("name", InputRequest::elicitation("Your name?", schema)).await?;
    ///     let name = answer["content"]["name"].as_str().unwrap_or("stranger").to_owned();
    ///     Ok::<_, claude_code_agent_mcp::server::ClientRequestError>(format!("Hello, {name}!"))
    /// });
    /// # drop(greet);
    /// ```
    pub async fn ask(&self, key: &str, request: InputRequest) -> Result<Value, ClientRequestError> {
        let (session, stream) = (self.session.as_ref(), self.stream.as_ref());
        ask_client(self.round.as_deref(), session, stream, key, request).await
    }

    /// Reports progress: sends `notifications/progress` with the request's
    /// progress token. `total` and `message` are optional.
    ///
    /// Returns whether a notification went out: nothing is sent without a
    /// progress token or without a session that has a notifier. Either way
    /// the report restarts the call's timeout when the tool (or server)
    /// asked for that ([`Tool::reset_timeout_on_progress`](super::Tool::reset_timeout_on_progress)).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        if let Some(clock) = &self.clock {
            clock.tick();
        }
        let (Some(session), Some(token)) = (&self.session, self.progress_token()) else {
            return false;
        };
        if !session.has_notifier() && self.stream.is_none() {
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
        self.emit(
            session,
            jsonrpc::notification("notifications/progress", Some(Value::Object(params))),
        );
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
        if (!session.has_notifier() && self.stream.is_none()) || level < session.log_level() {
            return false;
        }
        self.emit(
            session,
            jsonrpc::notification(
                "notifications/message",
                Some(json!({"level": level.as_str(), "logger": &*self.tool, "data": data.into()})),
            ),
        );
        true
    }

    /// Sends a request to the client — `sampling/createMessage`,
    /// `elicitation/create`, `roots/list`, … — and waits for its result.
    ///
    /// Works where the transport carries server→client requests (stdio and
    /// Streamable HTTP sessions), and in a call run as a task (the request
    /// is one of the task's `inputRequests`); elsewhere (in process, the
    /// Claude Code CLI bridge, and other requests of the stateless
    /// revision, which has no requests to the client) it fails at once with
    /// [`ClientRequestError::NotSupported`]. [`ask`](Self::ask) works on
    /// every revision.
    /// Only what the client declared is sent: a request needing a
    /// capability it did not declare fails at once with
    /// [`ClientRequestError::CapabilityNotDeclared`] (ask first with
    /// [`supports_sampling`](Self::supports_sampling) and the like).
    /// Over HTTP the request travels on this call's own SSE stream. The wait
    /// ends when the call is cancelled or times out (the future is
    /// dropped); the request, still unanswered, is then withdrawn with
    /// `notifications/cancelled`.
    ///
    /// ```
    /// use claude_code_agent_mcp::ToolContext;
    /// use claude_code_agent_mcp::server::ClientRequestError;
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let ctx = ToolContext::default(); // detached: no transport
    /// let answer = ctx.request("elicitation/create", json!({"message":"Name?"})).await;
    /// assert_eq!(answer, Err(ClientRequestError::NotSupported));
    /// # });
    /// ```
    pub async fn request(
        &self,
        method: &str,
        params: impl Into<Value>,
    ) -> Result<Value, ClientRequestError> {
        let (session, stream) = (self.session.as_ref(), self.stream.as_ref());
        request_client(session, stream, method, params.into()).await
    }

    /// Closes this call's response stream early, when the transport has one
    /// (Streamable HTTP with SSE): the client reconnects with `Last-Event-ID`
    /// and gets the rest, including the result. Returns whether it was closed.
    pub fn close_response_stream(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.close())
    }

    /// A message tied to this call: on its own stream if it has one, else
    /// through the session's notifier.
    fn emit(&self, session: &Session, message: Value) {
        match &self.stream {
            Some(stream) => stream.send(message),
            None => session.notify(message),
        }
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
            .field("access_token", &self.access_token)
            .finish()
    }
}

/// What a prompt or resource handler asks the client for input with
/// ([`PromptRequest::ask`](super::PromptRequest::ask),
/// [`ResourceRequest::ask`](super::ResourceRequest::ask)), besides its
/// session: the request's own stream, and its [`Round`] at the stateless
/// revision.
#[derive(Clone, Default)]
pub(crate) struct Asking {
    pub(crate) stream: Option<Arc<dyn ResponseStream>>,
    pub(crate) round: Option<Arc<Round>>,
}

impl Asking {
    /// [`ask_client`] on `session`.
    pub(crate) async fn ask(
        &self,
        session: Option<&Session>,
        key: &str,
        request: InputRequest,
    ) -> Result<Value, ClientRequestError> {
        let (round, stream) = (self.round.as_deref(), self.stream.as_ref());
        ask_client(round, session, stream, key, request).await
    }
}

impl fmt::Debug for Asking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Asking")
            .field("stream", &self.stream.is_some())
            .field("round", &self.round)
            .finish()
    }
}

/// A request to the client on `session`, on the request's own `stream`
/// when it has one (see [`ToolContext::request`]).
async fn request_client(
    session: Option<&Session>,
    stream: Option<&Arc<dyn ResponseStream>>,
    method: &str,
    params: Value,
) -> Result<Value, ClientRequestError> {
    let Some(session) = session else {
        return Err(ClientRequestError::NotSupported);
    };
    let sink: Option<Sink> = stream.map(|stream| {
        let stream = Arc::clone(stream);
        Arc::new(move |m: Value| stream.send(m)) as Sink
    });
    session
        .request_via(method, Some(params), sink.as_ref())
        .await
}

/// Input from the client under `key`: from the request's [`Round`] at the
/// stateless revision, else as a request on the session (see
/// [`ToolContext::ask`]).
pub(crate) async fn ask_client(
    round: Option<&Round>,
    session: Option<&Session>,
    stream: Option<&Arc<dyn ResponseStream>>,
    key: &str,
    request: InputRequest,
) -> Result<Value, ClientRequestError> {
    match round {
        Some(round) => round.ask(key, request),
        None => request_client(session, stream, &request.method, request.params).await,
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
    fn whole_numbers_are_integers() {
        assert_eq!(number(1.0).to_string(), "1");
        assert_eq!(number(0.5).to_string(), "0.5");
        assert_eq!(number(f64::NAN), Value::Null);
    }

    #[tokio::test]
    async fn a_detached_context_cannot_ask() {
        let ctx = ToolContext::default();
        assert!(!ctx.supports_elicitation());
        let asked = ctx.ask("k", InputRequest::list_roots()).await;
        assert_eq!(asked, Err(ClientRequestError::NotSupported));
    }

    #[test]
    fn detached_context_sends_nothing() {
        let ctx = ToolContext::default();
        assert!(!ctx.progress(1.0, None, None));
        assert!(!ctx.log(LogLevel::Emergency, "x"));
        assert!(ctx.tool_use_id().is_none());
    }

    #[test]
    fn a_token_made_before_or_after_the_cancel_fires() {
        // Made before: the cancel reaches it.
        let before = Cancel::default();
        let token = before.token().clone();
        assert!(!before.is_cancelled());
        before.cancel();
        assert!(token.is_cancelled() && before.is_cancelled());
        // Made after: born cancelled.
        let after = Cancel::default();
        after.cancel();
        assert!(after.is_cancelled() && after.token().is_cancelled());
        // Cancelling the token itself counts (as a session's cancel does).
        let direct = Cancel::default();
        direct.token().cancel();
        assert!(direct.is_cancelled());
        // Racing threads: whichever comes first, the token fires.
        for _ in 0..200 {
            let cancel = Arc::new(Cancel::default());
            let other = Arc::clone(&cancel);
            let firing = std::thread::spawn(move || other.cancel());
            let token = cancel.token().clone();
            firing.join().unwrap();
            assert!(token.is_cancelled());
        }
    }
}
