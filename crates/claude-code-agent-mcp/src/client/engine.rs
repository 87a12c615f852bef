//! The engine under [`McpClient`](super::McpClient): ids, the
//! [`RequestTable`] of our requests waiting for their response and of the
//! server's requests we are answering, incoming dispatch, and
//! cancellation of abandoned requests.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Duration;

use futures::future::{AbortHandle, Abortable};
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

mod direct;

use super::answer::Answer;
use super::deadline::{self, Limits, ProgressWatch, fmt_duration};
use super::error::{error_chain, response_outcome};
use super::in_process::InProcessTransport;
use super::notify::{Heard, Unread};
use super::options::{ClientOptions, RequestOptions};
use super::transport::{Inbox, SendOptions, Transport, TransportEvent};
use super::{Error, ServerNotification, ServerState};
use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::spans::{self, Peer};
use crate::transport::budget::{Budget, Charge};
use crate::transport::mcp_headers::ParamHeaders;
use crate::transport::{RegisterError, RequestTable};
use crate::types::{
    CLIENT_CAPABILITIES_META, CLIENT_INFO_META, PROTOCOL_VERSION_META, SUBSCRIPTION_ID_META,
};

type Reply = Result<Answer, Error>;

/// The most a message the client sends on its own may take.
const BACKGROUND_SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// How many notifications wait for the slowest
/// [`NotificationStream`](super::NotificationStream); past this it loses
/// the oldest ones.
pub const NOTIFICATION_BUFFER: usize = 1024;

/// One of our requests waiting for its answer.
struct Waiter {
    /// The reply, and its bytes charged to the budget until the caller
    /// takes it.
    reply: oneshot::Sender<(Reply, Option<Charge>)>,
    /// Set when progress restarts the request's timeout.
    progress: Option<ProgressWatch>,
}

impl Waiter {
    fn answer(self, reply: Reply) {
        let _ = self.reply.send((reply, None));
    }

    fn answer_charged(self, reply: Reply, charge: Option<Charge>) {
        let _ = self.reply.send((reply, charge));
    }
}

pub(crate) struct Inner {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) options: ClientOptions,
    pub(crate) capabilities: Value,
    /// Ours: the waiter of each request sent. Theirs: the task answering
    /// each server request, to abort it on `notifications/cancelled`.
    requests: RequestTable<RequestId, Waiter, AbortHandle>,
    next_id: AtomicU64,
    closed: AtomicBool,
    /// Why the client closed (the first reason given): what later calls
    /// fail with.
    pub(crate) closed_reason: Mutex<Option<Error>>,
    pub(crate) server: OnceLock<ServerState>,
    /// `_meta` every request carries at the stateless revision.
    pub(crate) stateless_meta: OnceLock<Arc<Map<String, Value>>>,
    /// The in-process transport to a [`Server`](crate::Server), when that
    /// is what the client is connected to: `tools/call` then goes straight
    /// to the server ([`InProcessTransport::start_call`]).
    pub(crate) direct: Option<InProcessTransport>,
    /// Cancelled when the client closes: what a direct call in flight
    /// fails on (the others fail through the request table).
    pub(crate) closing: CancellationToken,
    /// Where the requests go, as their spans say.
    peer: Peer,
    /// Where [`McpClient::notifications`](super::McpClient::notifications)
    /// streams subscribe; `None` once closed (the streams end).
    notifications: Mutex<Option<broadcast::Sender<Heard>>>,
    /// What the client holds for its caller (responses and notifications
    /// not yet taken), within `options.max_held_bytes`.
    pub(crate) budget: Arc<Budget>,
    /// The notifications some stream has not read yet, oldest first (the
    /// first to go when the budget is passed); dead entries are skipped.
    unread: Mutex<VecDeque<Weak<Unread>>>,
    /// `x-mcp-header` annotations by tool (HTTP only), fetched once.
    pub(crate) header_maps: Mutex<Option<Arc<HashMap<String, ParamHeaders>>>>,
    /// Whether each tool of the listings read is safe to call twice
    /// (annotated idempotent or read-only): a call of one may be retried.
    tool_hints: Mutex<HashMap<String, bool>>,
    /// How many requests were sent again ([`RetryPolicy`](super::RetryPolicy)).
    retried: AtomicU64,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Inner {
    /// Builds the client state and starts the transport's delivery into it.
    pub(crate) fn start(
        transport: Arc<dyn Transport>,
        options: ClientOptions,
        direct: Option<InProcessTransport>,
        peer: Peer,
    ) -> Result<Arc<Self>, Error> {
        let options_budget = options.max_held_bytes;
        let inner = Arc::new(Self {
            peer,
            capabilities: options.capabilities(),
            transport,
            options,
            requests: RequestTable::new(),
            next_id: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            closed_reason: Mutex::new(None),
            server: OnceLock::new(),
            stateless_meta: OnceLock::new(),
            direct,
            closing: CancellationToken::new(),
            notifications: Mutex::new(Some(broadcast::channel(NOTIFICATION_BUFFER).0)),
            budget: Budget::new(options_budget),
            unread: Mutex::new(VecDeque::new()),
            header_maps: Mutex::new(None),
            tool_hints: Mutex::new(HashMap::new()),
            retried: AtomicU64::new(0),
        });
        let weak = Arc::downgrade(&inner);
        let inbox = Inbox::with_budget(
            move |event, bytes| {
                if let Some(inner) = weak.upgrade() {
                    inner.on_event(event, bytes);
                }
            },
            Arc::clone(&inner.budget),
        );
        inner.transport.start(inbox)?;
        Ok(inner)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The error of a call on a closed client: why it closed.
    pub(crate) fn closed_error(&self) -> Error {
        lock(&self.closed_reason)
            .clone()
            .unwrap_or_else(|| Error::closed("the client is closed"))
    }

    /// How long a message the client sends on its own (an answer to the
    /// server, a cancellation) may take: a stalled server must not keep
    /// its task, and with it the transport, alive.
    fn background_send_timeout(&self) -> Duration {
        self.options.request_timeout.min(BACKGROUND_SEND_TIMEOUT)
    }

    /// From now on every request carries the stateless `_meta`.
    pub(crate) fn set_stateless(&self, version: &str) {
        let mut meta = Map::new();
        meta.insert(PROTOCOL_VERSION_META.into(), version.into());
        meta.insert(
            CLIENT_INFO_META.into(),
            serde_json::to_value(&self.options.client_info).unwrap_or(Value::Null),
        );
        meta.insert(CLIENT_CAPABILITIES_META.into(), self.capabilities.clone());
        let meta = Arc::new(meta);
        if let Some(direct) = &self.direct {
            direct.prepare_stateless(&meta);
        }
        let _ = self.stateless_meta.set(meta);
    }

    /// Whether the client speaks the stateless revision (every request
    /// carries its `_meta`; results may ask for input).
    pub(crate) fn is_stateless(&self) -> bool {
        self.stateless_meta.get().is_some()
    }

    /// Whether the client can answer a server's questions (it has an
    /// elicitation, sampling or roots handler).
    pub(crate) fn answers_input(&self) -> bool {
        let options = &self.options;
        options.elicitation.is_some() || options.sampling.is_some() || options.roots.is_some()
    }

    /// The stateless `_meta` for `version` (used by the discover probe).
    pub(crate) fn stateless_meta_for(&self, version: &str) -> Value {
        json!({
            PROTOCOL_VERSION_META: version,
            CLIENT_INFO_META: self.options.client_info,
            CLIENT_CAPABILITIES_META: self.capabilities,
        })
    }

    /// The id of the next request.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a request and waits for its outcome.
    ///
    /// If this future is dropped before the response (or times out), the
    /// server is sent `notifications/cancelled` for it.
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        self.request_with_id(self.next_id(), method, params, options)
            .await
    }

    /// [`request`](Self::request) with an id from [`next_id`](Self::next_id).
    pub(crate) async fn request_with_id(
        self: &Arc<Self>,
        id: RequestId,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        self.exchange(id, method, params, options)
            .await?
            .into_value()
    }

    /// [`request`](Self::request), with the result as it came (to be
    /// decoded straight into a type: [`Answer::decode`]).
    pub(crate) async fn request_answer(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Answer, Error> {
        self.exchange(self.next_id(), method, params, options).await
    }

    /// Notes which of `tools` (from a `tools/list`) are safe to call twice.
    pub(crate) fn note_tools(&self, tools: &[crate::types::ToolInfo]) {
        let mut hints = lock(&self.tool_hints);
        for tool in tools {
            let a = tool.annotations.as_ref();
            let safe = a
                .is_some_and(|a| a.idempotent_hint == Some(true) || a.read_only_hint == Some(true));
            hints.insert(tool.name.clone(), safe);
        }
    }

    /// Whether a request of `method` with `params` may be sent twice: it is
    /// no `tools/call`, or calls a tool listed as idempotent or read-only.
    fn repeatable(&self, method: &str, params: Option<&Value>) -> bool {
        if method != "tools/call" {
            return true;
        }
        let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        tool.is_some_and(|t| lock(&self.tool_hints).get(t) == Some(&true))
    }

    /// How many requests were sent again after an interruption.
    pub(crate) fn retried(&self) -> u64 {
        self.retried.load(Ordering::Relaxed)
    }

    /// Registers the waiter of request `id`; its receiver.
    fn register(
        &self,
        id: &RequestId,
        progress: Option<&ProgressWatch>,
    ) -> Result<oneshot::Receiver<(Reply, Option<Charge>)>, Error> {
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter {
            reply: tx,
            progress: progress.map(|p| ProgressWatch {
                token: p.token.clone(),
                seen: Arc::clone(&p.seen),
            }),
        };
        match self.requests.register_ours(id.clone(), waiter) {
            Ok(()) => Ok(rx),
            Err(RegisterError::Closed(_) | RegisterError::Duplicate(_)) => Err(self.closed_error()),
        }
    }

    /// The span of the request `id` to `target` (`spans::client`).
    pub(crate) fn span(&self, target: spans::Target<'_>, id: &RequestId) -> Span {
        let server = self.server.get();
        spans::client(
            target,
            id,
            &self.peer,
            server
                .and_then(|s| s.server_info.as_ref())
                .map(|info| info.name.as_str()),
            server.map(|s| s.protocol_version.as_str()),
        )
    }

    /// Sends a request and waits for its answer, in the request's span.
    async fn exchange(
        self: &Arc<Self>,
        id: RequestId,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Answer, Error> {
        let tool_call = method == "tools/call";
        let span = self.span(spans::Target::of(method, params.as_ref()), &id);
        if span.is_disabled() {
            return self.exchange_in(&span, id, method, params, options).await;
        }
        let outcome = self
            .exchange_in(&span, id, method, params, options)
            .instrument(span.clone())
            .await;
        match &outcome {
            Ok(answer) if tool_call && answer.is_tool_error() => {
                spans::outcome(&span, spans::Outcome::ToolError);
            }
            Ok(_) => spans::outcome(&span, spans::Outcome::Ok),
            Err(error) => failed(&span, error),
        }
        outcome
    }

    async fn exchange_in(
        self: &Arc<Self>,
        span: &Span,
        id: RequestId,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Answer, Error> {
        if self.is_closed() {
            return Err(self.closed_error());
        }
        let policy = self.options.retry;
        let repeatable = policy.retries() > 0
            && !options.unbounded
            && self.transport.resends_lost_requests()
            && self.repeatable(method, params.as_ref());
        let limits = Limits {
            timeout: options.timeout.unwrap_or(self.options.request_timeout),
            cap: options.max_total_timeout,
            reset_on_progress: options.reset_timeout_on_progress,
        };
        let mut meta = options.meta;
        let progress = options.reset_timeout_on_progress.then(|| {
            let meta = meta.get_or_insert_with(Map::new);
            let token = meta
                .entry("progressToken")
                .or_insert_with(|| id.to_value())
                .clone();
            ProgressWatch::new(token)
        });
        let seen = progress.as_ref().map(|p| Arc::clone(&p.seen));
        let params = self.with_meta(params, meta);
        // The request's trace context goes with it (a `traceparent` the
        // caller put in `_meta` wins).
        #[cfg(feature = "opentelemetry")]
        let params = {
            let mut params = params;
            crate::trace_context::inject(span, &mut params);
            params
        };
        #[cfg(not(feature = "opentelemetry"))]
        let _ = span;
        let rx = self.register(&id, progress.as_ref())?;
        let mut guard = Abandon {
            inner: self,
            id: id.clone(),
            sent: false,
            reason: "the request was abandoned",
        };
        let message = jsonrpc::request(&id, method, params);
        let mut send = options.send;
        send.others_in_flight = self.requests.ours_len() > 1;
        let sent = &mut guard.sent;
        let key = &id;
        let exchange = async move {
            *sent = true;
            let mut rx = rx;
            let mut retries = 0;
            loop {
                if !repeatable {
                    return self.attempt(message, send, rx).await;
                }
                // Kept to be sent again as it is: same id, same session.
                let outcome = self.attempt(message.clone(), send.clone(), rx).await;
                match outcome {
                    Err(e) if e.is_interrupted() && retries < policy.retries() => {
                        self.requests.complete_ours(key);
                        retries += 1;
                        self.retried.fetch_add(1, Ordering::Relaxed);
                        let wait = policy.delay(retries);
                        tracing::info!(id = %key, %method, retry = retries, ?wait, error = %error_chain(&e),
                            "MCP client: a request's answer was lost with its connection; sending it again");
                        tokio::time::sleep(wait).await;
                        rx = self.register(key, progress.as_ref())?;
                    }
                    other => return other,
                }
            }
        };
        let outcome = if options.unbounded {
            Ok(exchange.await)
        } else {
            deadline::within(exchange, limits, seen.as_deref()).await
        };
        match outcome {
            Ok(outcome) => {
                // Answered, or failed on this side: nothing to cancel.
                if outcome.is_err() {
                    self.requests.complete_ours(&id);
                }
                guard.sent = false;
                outcome
            }
            Err(expired) => {
                guard.reason = "timeout";
                Err(limits.error(method, expired))
            }
        }
    }

    /// Sends one request (its waiter is registered: `rx`) and waits for
    /// its outcome.
    async fn attempt(
        &self,
        message: Value,
        send: SendOptions,
        mut rx: oneshot::Receiver<(Reply, Option<Charge>)>,
    ) -> Reply {
        // Taken: the reply's bytes are the caller's now (the charge is
        // dropped with the tuple).
        let taken = |got: Result<(Reply, Option<Charge>), _>| match got {
            Ok((reply, _charge)) => reply,
            Err(_) => Err(Error::closed("the transport closed")),
        };
        // The answer may come (or the client close) before the send is
        // over: a stream that carries a subscription never ends.
        tokio::select! {
            biased;
            reply = &mut rx => return taken(reply),
            sent = self.transport.send(message, send) => sent?,
        }
        taken(rx.await)
    }

    /// Sends a notification, within the client's request timeout (over
    /// HTTP a stalled server would otherwise hold it, and the handshake
    /// that sends `notifications/initialized`, forever).
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        if self.is_closed() {
            return Err(self.closed_error());
        }
        let message = jsonrpc::notification(method, params);
        let timeout = self.options.request_timeout;
        let send = self.transport.send(message, SendOptions::default());
        tokio::time::timeout(timeout, send)
            .await
            .unwrap_or_else(|_| {
                Err(Error::timeout(format!(
                    "notification {method} timed out after {}",
                    fmt_duration(timeout)
                )))
            })
    }

    fn with_meta(&self, params: Option<Value>, meta: Option<Map<String, Value>>) -> Option<Value> {
        let stateless = self.stateless_meta.get();
        if meta.is_none() && stateless.is_none() {
            return params;
        }
        let mut params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            // Not an object: leave it for the server to judge.
            Some(other) => return Some(other),
        };
        let slot = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(slot) = slot {
            for (k, v) in stateless.into_iter().flat_map(|m| m.iter()) {
                slot.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in meta.into_iter().flatten() {
                slot.insert(k, v);
            }
        }
        Some(Value::Object(params))
    }

    /// A new subscription to the server's notifications (`None` once the
    /// client is closed).
    pub(crate) fn subscribe(&self) -> Option<broadcast::Receiver<Heard>> {
        lock(&self.notifications)
            .as_ref()
            .map(broadcast::Sender::subscribe)
    }

    /// Marks the client closed: waiting requests fail with `why` (an
    /// [`Error::closed`]), the server's requests being answered are
    /// dropped, streams end.
    pub(crate) fn shut(&self, why: Error) {
        lock(&self.closed_reason).get_or_insert_with(|| why.clone());
        self.closed.store(true, Ordering::Release);
        self.closing.cancel();
        let (ours, theirs) = self.requests.close();
        for waiter in ours {
            waiter.answer(Err(why.clone()));
        }
        for task in theirs {
            task.abort();
        }
        lock(&self.notifications).take();
    }

    /// Charges `bytes` (what a message took on the wire, 0 when unknown).
    fn charge(&self, bytes: usize) -> Option<Charge> {
        (bytes > 0).then(|| self.budget.charge(bytes))
    }

    fn on_event(self: &Arc<Self>, event: TransportEvent, bytes: usize) {
        match event {
            TransportEvent::Closed(why) => {
                tracing::debug!(reason = %error_chain(&why), "MCP transport closed");
                self.shut(why);
            }
            TransportEvent::Failed { id, error } => {
                if let Some(waiter) = request_key(&id).and_then(|k| self.requests.complete_ours(&k))
                {
                    waiter.answer(Err(error));
                }
            }
            TransportEvent::Result { id, result } => {
                match request_key(&id).and_then(|k| self.requests.complete_ours(&k)) {
                    Some(waiter) => {
                        waiter.answer_charged(Ok(Answer::Text(result)), self.charge(bytes));
                    }
                    None => tracing::debug!(%id, "MCP client: response to no waiting request"),
                }
            }
            TransportEvent::Message(Value::Object(map)) => self.on_message(map, bytes),
            TransportEvent::Message(Value::Array(batch)) => {
                let each = bytes / batch.len().max(1);
                for message in batch {
                    self.on_event(TransportEvent::Message(message), each);
                }
            }
            TransportEvent::Message(other) => {
                tracing::warn!(message = %other, "MCP client: ignoring a message that is not an object");
            }
        }
    }

    fn on_message(self: &Arc<Self>, mut map: Map<String, Value>, bytes: usize) {
        let id = map.get("id").filter(|id| !id.is_null()).cloned();
        let method = match map.remove("method") {
            Some(Value::String(method)) => method,
            Some(other) => {
                tracing::warn!(method = %other, "MCP client: ignoring a message whose method is no string");
                return;
            }
            None => {
                let key = id.as_ref().and_then(request_key);
                let waiting = key.and_then(|k| self.requests.complete_ours(&k));
                match waiting {
                    Some(waiter) => waiter.answer_charged(
                        response_outcome(map).map(Answer::Value),
                        self.charge(bytes),
                    ),
                    None => tracing::debug!(?id, "MCP client: response to no waiting request"),
                }
                return;
            }
        };
        let params = map.remove("params");
        match id {
            Some(id) => self.answer(id, method, params),
            None => self.on_notification(&method, params, bytes),
        }
    }

    fn on_notification(&self, method: &str, params: Option<Value>, bytes: usize) {
        if method == "notifications/progress"
            && let Some(token) = params.as_ref().and_then(|p| p.get("progressToken"))
        {
            self.progressed(token);
        }
        if method == "notifications/cancelled"
            && let Some(id) = params.as_ref().and_then(|p| p.get("requestId"))
            && let Some(task) =
                RequestId::from_value(id).and_then(|k| self.requests.complete_theirs(&k))
        {
            task.abort();
        }
        let subscription = params
            .as_ref()
            .and_then(|p| p.get("_meta")?.get(SUBSCRIPTION_ID_META))
            .cloned();
        let note = ServerNotification::parse(method, params);
        if matches!(note, ServerNotification::ToolListChanged) {
            *lock(&self.header_maps) = None;
            lock(&self.tool_hints).clear();
        }
        if let Some(f) = &self.options.on_notification {
            f(note.clone());
        }
        // Never waits: a subscriber that lags loses the oldest (see
        // `NotificationStream`); with no subscriber nothing is kept.
        let sent = lock(&self.notifications).as_ref().and_then(|tx| {
            let unread = Unread::new(note, self.charge(bytes));
            let heard = Heard {
                subscription,
                note: Arc::clone(&unread),
            };
            tx.send(heard).ok().map(|_| unread)
        });
        if let Some(unread) = sent {
            self.keep_unread(&unread);
        }
    }

    /// Notes `unread` as waiting for a stream; while the budget is passed,
    /// the oldest unread notifications go (their streams count them as
    /// missed).
    fn keep_unread(&self, unread: &Arc<Unread>) {
        let mut queue = lock(&self.unread);
        while queue.front().is_some_and(|w| w.strong_count() == 0) {
            queue.pop_front();
        }
        queue.push_back(Arc::downgrade(unread));
        while self.budget.is_over() {
            let Some(oldest) = queue.pop_front() else {
                break;
            };
            if let Some(oldest) = oldest.upgrade() {
                oldest.evict();
            }
        }
    }

    /// Tells the request whose progress token this is (if its timeout
    /// restarts on progress) that it made progress.
    fn progressed(&self, token: &Value) {
        let watching = |w: &Waiter| {
            w.progress
                .as_ref()
                .filter(|p| &p.token == token)
                .map(|p| Arc::clone(&p.seen))
        };
        // Our default token is the request's id; a token of the caller's
        // own is looked for among the requests in flight.
        let seen = request_key(token)
            .and_then(|id| self.requests.with_ours(&id, watching).flatten())
            .or_else(|| {
                let mut found = None;
                self.requests.for_each_ours(|_, w| {
                    found = found.take().or_else(|| watching(w));
                });
                found
            });
        if let Some(seen) = seen {
            seen.notify_one();
        }
    }

    /// Answers a server→client request in its own task.
    fn answer(self: &Arc<Self>, id: Value, method: String, params: Option<Value>) {
        let handler = match method.as_str() {
            "sampling/createMessage" => self.options.sampling.clone(),
            "elicitation/create" => self.options.elicitation.clone(),
            "roots/list" => self.options.roots.clone(),
            _ => None,
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(%method, "MCP client: no Tokio runtime to answer a server request");
            return;
        };
        let key = RequestId::from_value(&id);
        let (abort, registration) = AbortHandle::new_pair();
        if let Some(key) = &key {
            match self.requests.register_theirs(key.clone(), abort) {
                Ok(()) => {}
                Err(RegisterError::Duplicate(_)) => {
                    tracing::warn!(%key, %method, "MCP client: the server reused the id of a request still being answered; ignoring it");
                    return;
                }
                Err(RegisterError::Closed(_)) => return,
            }
        }
        let weak: Weak<Self> = Arc::downgrade(self);
        let answer = async move {
            let outcome = match (method.as_str(), handler) {
                ("ping", _) => Ok(json!({})),
                (_, Some(handler)) => handler(params.unwrap_or_else(|| json!({}))).await,
                (method, None) => Err(ErrorObject::method_not_found(method)),
            };
            let reply = match outcome {
                Ok(result) => jsonrpc::response(&id, result),
                Err(error) => jsonrpc::error_response(&id, error),
            };
            let Some(inner) = weak.upgrade() else { return };
            if let Some(key) = &key
                && inner.requests.complete_theirs(key).is_none()
            {
                return; // withdrawn (cancelled, or the client closed)
            }
            let send = inner.transport.send(reply, SendOptions::default());
            match tokio::time::timeout(inner.background_send_timeout(), send).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::warn!(error = %error_chain(&e), "MCP client: could not answer a server request")
                }
                Err(_) => tracing::warn!("MCP client: answering a server request timed out"),
            }
        };
        runtime.spawn(Abortable::new(answer, registration));
    }
}

/// Records on `span` a request that failed with `error`: the server's
/// JSON-RPC error, or no answer (`error.type` is the [`ErrorKind`](super::ErrorKind)).
pub(crate) fn failed(span: &Span, error: &Error) {
    if span.is_disabled() {
        return;
    }
    if let Some(e) = error.jsonrpc_error() {
        let outcome = spans::Outcome::Error {
            code: e.code,
            message: &e.message,
        };
        return spans::outcome(span, outcome);
    }
    let kind = format!("{:?}", error.kind());
    let message = error.to_string();
    spans::outcome(
        span,
        spans::Outcome::Failed {
            kind: &kind,
            message: &message,
        },
    );
}

/// Cleans up a request whose future ended without its response: forgets
/// it and, if it reached the transport, tells the server to stop.
struct Abandon<'a> {
    inner: &'a Arc<Inner>,
    id: RequestId,
    sent: bool,
    reason: &'static str,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if !self.sent {
            return;
        }
        let was_waiting = self.inner.requests.complete_ours(&self.id).is_some();
        if !was_waiting || self.inner.is_closed() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let inner = Arc::clone(self.inner);
        let params = json!({"requestId": self.id.to_value(), "reason": self.reason});
        runtime.spawn(async move {
            let notify = inner.notify("notifications/cancelled", Some(params));
            match tokio::time::timeout(inner.background_send_timeout(), notify).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(error = %error_chain(&e), "MCP client: could not send notifications/cancelled")
                }
                Err(_) => tracing::debug!("MCP client: notifications/cancelled timed out"),
            }
        });
    }
}

/// Our ids are numbers; a peer may echo one as a string.
fn request_key(id: &Value) -> Option<RequestId> {
    match id {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
    .map(RequestId::from)
}
