//! Per-connection state: calls in flight, the log level, and where the
//! server's own notifications go.

use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::outbound::{self, ClientRequestError, DEFAULT_CLIENT_REQUEST_TIMEOUT, Requests};
use crate::jsonrpc::{self, RequestId};
use crate::transport::RegisterError;
use crate::types::{ClientCapabilities, LogLevel};

type Notifier = dyn Fn(Value) + Send + Sync;

/// Where messages tied to one request go (its own response stream, over HTTP).
pub(crate) type Sink = std::sync::Arc<dyn Fn(Value) + Send + Sync>;

/// One client connection to a server: the state that lives between messages.
///
/// A transport keeps one `Session` per connection (for the Claude Code CLI
/// bridge: one per server per CLI process) and passes it with every message
/// through [`RequestContext::with_session`](super::RequestContext::with_session).
/// The session
///
/// * keeps the calls in flight by request id, so a
///   `notifications/cancelled` (or [`Session::cancel`]) ends the right one;
/// * delivers what the server sends on its own — `notifications/tools/list_changed`,
///   `notifications/progress`, `notifications/message` — to the notifier
///   given to [`Session::with_notifier`], as complete JSON-RPC messages;
/// * remembers what `initialize` settled — the protocol revision and the
///   capabilities the client declared —, the level set by
///   `logging/setLevel` and the resources the client subscribed to;
/// * when the transport allows it ([`Session::set_client_requests`]), sends
///   requests to the client ([`Session::request`]) — only those its declared
///   capabilities allow — and routes the client's answers back; a request
///   still unanswered when its waiter gives up is withdrawn with
///   `notifications/cancelled`.
///
/// Cloning is cheap and clones share state. Servers hold sessions weakly:
/// when the transport drops its last clone, the server forgets it.
#[derive(Clone)]
pub struct Session {
    pub(crate) inner: Arc<SessionInner>,
}

pub(crate) struct SessionInner {
    notifier: Option<Box<Notifier>>,
    /// Ours: requests to the client waiting for its answer. Theirs: the
    /// client's calls in flight, each with the token that cancels it.
    requests: Requests,
    /// The cancels asked for lately (see [`Session::begin_call`]).
    cancels: RecentCancels,
    /// The number of our next request to the client (`srv-<n>`).
    next_request: AtomicU64,
    initialized: AtomicBool,
    log_level: AtomicU8,
    client_requests: AtomicBool,
    subscriptions: Mutex<BTreeSet<String>>,
    negotiated: Mutex<Negotiated>,
    /// Cancelled when the last clone of the session is dropped: what a
    /// handler that keeps state per connection (the rmcp adapter's service
    /// tasks) ends with.
    ended: CancellationToken,
    /// For a session made for one request of the stateless revision: the
    /// connection's session, where its call is recorded, so that the
    /// client's `notifications/cancelled` (on the connection) finds it.
    connection: Option<Session>,
}

impl Drop for SessionInner {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

/// What `initialize` (or a stateless request's `_meta`) settled.
#[derive(Default)]
struct Negotiated {
    protocol_version: Option<String>,
    capabilities: Option<ClientCapabilities>,
}

impl Session {
    /// A session whose server-originated notifications are discarded.
    pub fn new() -> Self {
        Self::build(None, None)
    }

    /// A session that hands every server-originated notification to `f`.
    ///
    /// `f` is called synchronously from within `handle` or a tool handler,
    /// so it should be quick: push into a channel, say.
    ///
    /// ```
    /// use claude_code_agent_mcp::Session;
    ///
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let session = Session::with_notifier(move |message| {
    ///     let _ = tx.send(message);
    /// });
    /// # drop((session, rx));
    /// ```
    pub fn with_notifier(f: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Self::build(Some(Box::new(f)), None)
    }

    /// A session for one request of the stateless revision on `connection`
    /// (if the transport keeps one): its notifications go to `f`, its
    /// call is cancelled through the connection.
    pub(crate) fn for_request(
        f: impl Fn(Value) + Send + Sync + 'static,
        connection: Option<Session>,
    ) -> Self {
        let connection = connection.map(|c| c.calls_home().clone());
        Self::build(Some(Box::new(f)), connection)
    }

    /// Where this session's calls are recorded for cancellation: the
    /// connection's session for a session made for one request, else
    /// itself.
    pub(crate) fn calls_home(&self) -> &Session {
        self.inner.connection.as_ref().unwrap_or(self)
    }

    fn build(notifier: Option<Box<Notifier>>, connection: Option<Session>) -> Self {
        Self {
            inner: Arc::new(SessionInner {
                notifier,
                requests: Requests::new(),
                cancels: RecentCancels::default(),
                next_request: AtomicU64::new(0),
                initialized: AtomicBool::new(false),
                log_level: AtomicU8::new(LogLevel::Debug as u8),
                client_requests: AtomicBool::new(false),
                subscriptions: Mutex::new(BTreeSet::new()),
                negotiated: Mutex::new(Negotiated::default()),
                ended: CancellationToken::new(),
                connection,
            }),
        }
    }

    /// Cancels the call in flight with this request id (a number or a
    /// string, as the client sent it). Returns whether there was one.
    ///
    /// The call's [`CancellationToken`] is cancelled, its handler future
    /// dropped, and its request answered with an `isError` result saying it
    /// was cancelled.
    pub fn cancel(&self, request_id: &Value) -> bool {
        self.cancel_noted(request_id, false)
    }

    /// [`cancel`](Self::cancel) for the client's `notifications/cancelled`:
    /// a cancel that finds no call is also remembered for a call that
    /// starts shortly after ([`cancelled_before_start`](Self::cancelled_before_start)):
    /// the cancel may have overtaken its request.
    pub(crate) fn cancel_from_client(&self, request_id: &Value) -> bool {
        self.cancel_noted(request_id, true)
    }

    fn cancel_noted(&self, request_id: &Value, early: bool) -> bool {
        let Some(id) = RequestId::from_value(request_id) else {
            return false;
        };
        // A session made for one request records its call on the connection.
        let home = self.calls_home();
        // Noted before looking: a call recorded after the look finds it.
        let n = home.inner.cancels.note(&id, early);
        let token = home
            .inner
            .requests
            .with_theirs(&id, CancellationToken::clone);
        match token {
            Some(token) => {
                home.inner.cancels.found(n);
                token.cancel();
                true
            }
            // Remembered for a while if `early`: the call may not have
            // started yet.
            None => false,
        }
    }

    /// Cancels every call in flight, as [`cancel`](Self::cancel) does one;
    /// returns how many there were. Transports call this when the session
    /// ends (an HTTP `DELETE`, an expired session, the server stopping).
    pub fn cancel_all(&self) -> usize {
        let mut tokens = Vec::new();
        self.inner
            .requests
            .for_each_theirs(|_, token| tokens.push(token.clone()));
        for token in &tokens {
            token.cancel();
        }
        tokens.len()
    }

    /// How many `tools/call` requests of this session are running.
    pub fn in_flight(&self) -> usize {
        self.inner.requests.theirs_len()
    }

    /// Whether this session has been through `initialize`.
    pub fn is_initialized(&self) -> bool {
        self.inner.initialized.load(Ordering::Acquire)
    }

    /// The lowest level `notifications/message` currently forwards (set by
    /// the client's `logging/setLevel`; everything until then).
    pub fn log_level(&self) -> LogLevel {
        LogLevel::from_index(self.inner.log_level.load(Ordering::Relaxed))
    }

    /// Lets [`Session::request`] send requests to the client through the
    /// notifier. A transport that delivers the client's responses back to
    /// [`Handler::handle`](super::Handler::handle) with this session (stdio,
    /// Streamable HTTP) turns this on; without it requests fail with
    /// [`ClientRequestError::NotSupported`].
    pub fn set_client_requests(&self, enabled: bool) {
        self.inner.client_requests.store(enabled, Ordering::Release);
    }

    /// Whether requests to the client can be sent on this session.
    pub fn supports_client_requests(&self) -> bool {
        self.inner.client_requests.load(Ordering::Acquire) && self.has_notifier()
    }

    /// The capabilities the client declared in `initialize` (for a
    /// stateless request: in its `_meta`); `None` before that.
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.negotiated().capabilities.clone()
    }

    /// The protocol revision `initialize` settled on (for a stateless
    /// request: the one its `_meta` names); `None` before that.
    pub fn protocol_version(&self) -> Option<String> {
        self.negotiated().protocol_version.clone()
    }

    /// Remembers what `initialize` (or a stateless request) settled.
    pub(crate) fn set_negotiated(&self, protocol_version: &str, capabilities: ClientCapabilities) {
        let mut negotiated = self.negotiated();
        negotiated.protocol_version = Some(protocol_version.to_owned());
        negotiated.capabilities = Some(capabilities);
    }

    fn negotiated(&self) -> std::sync::MutexGuard<'_, Negotiated> {
        self.inner
            .negotiated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a request to the client (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`, …) and waits for its result,
    /// at most [`DEFAULT_CLIENT_REQUEST_TIMEOUT`].
    ///
    /// Only what the client declared is sent: a request needing a
    /// capability its `initialize` did not declare (`sampling`,
    /// `sampling.tools` for one with `tools`, `elicitation` — `.url` for URL
    /// mode —, `roots`) fails at once with
    /// [`ClientRequestError::CapabilityNotDeclared`], and so does every such
    /// request before `initialize`. Methods that need no capability (`ping`,
    /// and methods this crate does not know) are sent.
    ///
    /// If the wait ends without an answer — it times out, or the future is
    /// dropped (the tool call was cancelled or timed out) — the request is
    /// withdrawn with `notifications/cancelled`, so the client stops working
    /// on it.
    ///
    /// ```
    /// use claude_code_agent_mcp::Session;
    /// use claude_code_agent_mcp::server::ClientRequestError;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // A session without a way back to the client.
    /// let session = Session::new();
    /// let err = session.request("roots/list", None).await.unwrap_err();
    /// assert_eq!(err, ClientRequestError::NotSupported);
    /// # });
    /// ```
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ClientRequestError> {
        self.request_via(method, params, None).await
    }

    /// [`Session::request`], sending the request through `sink` when given
    /// (the stream of the request being served) instead of the notifier.
    pub(crate) async fn request_via(
        &self,
        method: &str,
        params: Option<Value>,
        sink: Option<&Sink>,
    ) -> Result<Value, ClientRequestError> {
        if !self.supports_client_requests() {
            return Err(ClientRequestError::NotSupported);
        }
        let missing = {
            let negotiated = self.negotiated();
            let declared = negotiated.capabilities.as_ref();
            let empty = ClientCapabilities::default();
            declared
                .unwrap_or(&empty)
                .missing_for(method, params.as_ref().unwrap_or(&Value::Null))
        };
        if let Some(capability) = missing {
            return Err(ClientRequestError::CapabilityNotDeclared {
                method: method.to_owned(),
                capability: capability.to_owned(),
            });
        }
        let n = self.inner.next_request.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(format!("srv-{n}"));
        let (tx, rx) = oneshot::channel();
        if self.inner.requests.register_ours(id.clone(), tx).is_err() {
            return Err(ClientRequestError::Closed);
        }
        // The request, and its withdrawal if it ends unanswered, go the same way.
        let send = |message: Value| match sink {
            Some(sink) => sink(message),
            None => self.notify(message),
        };
        send(jsonrpc::request(&id, method, params));
        let requests = &self.inner.requests;
        outbound::wait(requests, id, rx, DEFAULT_CLIENT_REQUEST_TIMEOUT, send).await
    }

    /// Routes a response from the client to the request waiting for it;
    /// returns whether one was.
    pub(crate) fn resolve_response(
        &self,
        id: &Value,
        message: &serde_json::Map<String, Value>,
    ) -> bool {
        let waiter =
            RequestId::from_value(id).and_then(|id| self.inner.requests.complete_ours(&id));
        match waiter {
            Some(tx) => tx.send(outbound::answer_of(message)).is_ok(),
            None => false,
        }
    }

    /// How many requests to the client wait for their answer (for the
    /// HTTP server's replicas).
    #[cfg(feature = "http-server")]
    pub(crate) fn waiting_on_client(&self) -> usize {
        self.inner.requests.ours_len()
    }

    /// Ends the requests to the client waiting now with `error()` (no
    /// withdrawal goes to the client: it cannot be reached); new ones may
    /// still be sent. How many there were.
    #[cfg(feature = "http-server")]
    pub(crate) fn fail_requests(&self, error: impl Fn() -> ClientRequestError) -> usize {
        let mut ids = Vec::new();
        self.inner
            .requests
            .for_each_ours(|id, _| ids.push(id.clone()));
        let mut failed = 0;
        for waiter in ids
            .iter()
            .filter_map(|id| self.inner.requests.complete_ours(id))
        {
            let _ = waiter.send(Err(error()));
            failed += 1;
        }
        failed
    }

    /// Ends the session's requests to the client: those waiting fail with
    /// [`ClientRequestError::Closed`], and no new ones are sent. Transports
    /// call this when the connection ends.
    pub fn close(&self) {
        self.set_client_requests(false);
        // Dropping the waiters fails them with `Closed`.
        drop(self.inner.requests.close_ours());
    }

    /// The resource URIs the client subscribed to (`resources/subscribe`).
    pub fn subscriptions(&self) -> Vec<String> {
        self.subs().iter().cloned().collect()
    }

    pub(crate) fn subscribe(&self, uri: &str) {
        self.subs().insert(uri.to_owned());
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.subs().remove(uri);
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.subs().contains(uri)
    }

    fn subs(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.inner
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands a server-originated message to the notifier (if any).
    pub(crate) fn notify(&self, message: Value) {
        if let Some(notifier) = &self.inner.notifier {
            notifier(message);
        }
    }

    pub(crate) fn has_notifier(&self) -> bool {
        self.inner.notifier.is_some()
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        self.inner.log_level.store(level as u8, Ordering::Relaxed);
    }

    pub(crate) fn mark_initialized(&self) {
        self.inner.initialized.store(true, Ordering::Release);
    }

    /// A token cancelled when the session ends (its last clone dropped).
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn ended(&self) -> CancellationToken {
        self.inner.ended.clone()
    }

    pub(crate) fn downgrade(&self) -> Weak<SessionInner> {
        Arc::downgrade(&self.inner)
    }

    pub(crate) fn from_inner(inner: Arc<SessionInner>) -> Self {
        Self { inner }
    }

    /// Where the cancels noted so far end: what a call about to start
    /// passes to [`begin_call`](Self::begin_call) once it is still running.
    pub(crate) fn cancel_mark(&self) -> u64 {
        self.inner.cancels.mark()
    }

    /// Whether the client cancelled the request `id` before it started: a
    /// cancel that found no call in flight, at most [`EARLY_CANCEL_KEPT`]
    /// ago (a cancel races its request over HTTP, where they come on two
    /// connections, and over stdio, where the request waits for its task).
    pub(crate) fn cancelled_before_start(&self, id: &Value) -> bool {
        self.inner.cancels.mark() > 0
            && RequestId::from_value(id).is_some_and(|id| self.inner.cancels.early(&id))
    }

    /// Records a call in flight; the returned guard forgets it when
    /// dropped. A second call with the id of one still in flight is not
    /// recorded (the client broke the protocol; the first keeps its slot,
    /// the second runs but cannot be cancelled by id).
    ///
    /// A call is recorded only once its handler did not finish on its first
    /// poll; `mark` ([`cancel_mark`](Self::cancel_mark)) was taken before
    /// that poll. A cancel of `id` asked for since `mark` cancels `token`:
    /// [`cancel`](Self::cancel) notes the id before it looks in the table,
    /// and this looks at the notes after recording, both under locks, so
    /// either the cancel finds the call or the call finds the cancel.
    pub(crate) fn begin_call(
        &self,
        id: RequestId,
        token: CancellationToken,
        mark: u64,
    ) -> CallRegistration {
        let registered = match self
            .inner
            .requests
            .register_theirs(id.clone(), token.clone())
        {
            Ok(()) => true,
            Err(RegisterError::Duplicate(_)) => {
                tracing::debug!(%id, "a call reuses the id of one still in flight");
                false
            }
            Err(_) => false,
        };
        if self.inner.cancels.since(mark, &id) {
            token.cancel();
        }
        CallRegistration {
            session: self.clone(),
            id: registered.then_some(id),
        }
    }
}

/// The request ids of the last [`RECENT_CANCELS`] cancels, numbered: how a
/// call that was not yet in the table when its cancel came finds it.
#[derive(Default)]
struct RecentCancels {
    /// The number of the last cancel noted.
    count: AtomicU64,
    recent: Mutex<VecDeque<Noted>>,
}

/// One cancel, as [`RecentCancels`] keeps it.
struct Noted {
    n: u64,
    id: RequestId,
    at: Instant,
    /// It came from the client and found no call in flight: it tells a
    /// call with its id that starts shortly after that it was cancelled.
    early: bool,
}

/// How long a cancel that found no call is remembered for a call that
/// starts after it (a client reuses a request id only once its request is
/// done, so a cancel this recent that found nothing is for a request on
/// its way).
pub(crate) const EARLY_CANCEL_KEPT: std::time::Duration = std::time::Duration::from_secs(2);

/// How many cancels a session remembers: far more than can arrive while
/// one handler is polled once (a call whose cancel was pushed out by more
/// runs on, as a cancel that came before the call does).
const RECENT_CANCELS: usize = 64;

impl RecentCancels {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Noted>> {
        self.recent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes a cancel of `id` (from the client, if `early`); its number.
    fn note(&self, id: &RequestId, early: bool) -> u64 {
        let mut recent = self.lock();
        let n = self.count.load(Ordering::Relaxed) + 1;
        if recent.len() == RECENT_CANCELS {
            recent.pop_front();
        }
        recent.push_back(Noted {
            n,
            id: id.clone(),
            at: Instant::now(),
            early,
        });
        self.count.store(n, Ordering::Release);
        n
    }

    /// Cancel `n` found its call.
    fn found(&self, n: u64) {
        if let Some(noted) = self.lock().iter_mut().rev().find(|c| c.n == n) {
            noted.early = false;
        }
    }

    /// Whether a cancel of `id` that found no call was noted lately.
    fn early(&self, id: &RequestId) -> bool {
        self.lock()
            .iter()
            .rev()
            .take_while(|c| c.at.elapsed() < EARLY_CANCEL_KEPT)
            .any(|c| c.early && &c.id == id)
    }

    fn mark(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// Whether a cancel of `id` was noted after `mark`.
    fn since(&self, mark: u64, id: &RequestId) -> bool {
        if self.count.load(Ordering::Acquire) == mark {
            return false;
        }
        self.lock()
            .iter()
            .rev()
            .take_while(|c| c.n > mark)
            .any(|c| &c.id == id)
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("initialized", &self.is_initialized())
            .field("in_flight", &self.in_flight())
            .field("notifier", &self.has_notifier())
            .finish()
    }
}

/// Removes a call from its session's table of requests in flight when
/// dropped (if it was recorded).
pub(crate) struct CallRegistration {
    session: Session,
    id: Option<RequestId>,
}

impl Drop for CallRegistration {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            self.session.inner.requests.complete_theirs(id);
        }
    }
}
