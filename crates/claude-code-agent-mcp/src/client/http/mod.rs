//! The Streamable HTTP transport (feature `http-client`): [`HttpTransport`].

mod authorize;
mod get;
mod session;
mod sse;
mod stream;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::oneshot;

use super::Error;
use super::error::error_chain;
use super::transport::{Inbox, SendOptions, Transport};
use crate::transport::mcp_headers::PARAM_HEADER_PREFIX;
use crate::transport::mcp_headers::encode_header_value;
use crate::types::PROTOCOL_VERSION_META;
pub use sse::{SseEvent, SseEventTooLarge, SseParser};

/// The default cap on one message the HTTP transport receives (an SSE
/// event, a JSON body): 64 MiB, the same as the stdio transport's line cap
/// ([`DEFAULT_MAX_LINE_BYTES`](super::DEFAULT_MAX_LINE_BYTES)).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = crate::transport::DEFAULT_MAX_LINE_BYTES;

const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// How to reach a Streamable HTTP server.
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::client::HttpOptions;
///
/// let options = HttpOptions::new("http://127.0.0.1:3001/mcp")
///     .bearer_token("secret")
///     .header("X-Tenant", "acme")
///     .connect_timeout(Duration::from_secs(5))
///     .get_stream(false)
///     .max_message_bytes(16 << 20);
/// # drop(options);
/// ```
#[derive(Debug, Clone)]
pub struct HttpOptions {
    url: String,
    headers: Vec<(String, String)>,
    connect_timeout: Duration,
    request_timeout: Option<Duration>,
    get_stream: bool,
    max_reconnects: u32,
    max_message_bytes: usize,
    #[cfg(feature = "oauth-client")]
    oauth: Option<super::auth::OAuth>,
}

impl HttpOptions {
    /// The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: None,
            get_stream: true,
            max_reconnects: 5,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            #[cfg(feature = "oauth-client")]
            oauth: None,
        }
    }

    /// Authorizes with OAuth 2.1 when the server asks (feature
    /// `oauth-client`): a `401` starts the flow of [`auth`](super::auth),
    /// and every request then carries the access token. In place of a
    /// [`bearer_token`](Self::bearer_token).
    #[cfg(feature = "oauth-client")]
    pub fn oauth(mut self, oauth: super::auth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// A header sent with every HTTP request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// `Authorization: Bearer <token>`.
    pub fn bearer_token(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// How long connecting may take (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long the server may take to start answering one POST (status
    /// and headers); streams then run as long as the request's own timeout
    /// allows. Default: none besides the request's.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Whether to open the standalone GET SSE stream once a session is
    /// initialized (default: yes). Servers send what is tied to no request
    /// there — `list_changed`, `resources/updated`, log messages outside a
    /// call (the TypeScript SDK's server sends them nowhere else); without
    /// it they are lost. A server that offers no stream answers 405 and
    /// the client carries on without one; a stream that breaks is reopened
    /// (with `Last-Event-ID`) up to [`max_reconnects`](Self::max_reconnects)
    /// times in a row. Never opened at the stateless 2026-07-28 revision,
    /// which has `subscriptions/listen` instead
    /// ([`McpClient::listen`](super::McpClient::listen)).
    pub fn get_stream(mut self, open: bool) -> Self {
        self.get_stream = open;
        self
    }

    /// How many times a stream cut before its response is resumed (default 5).
    pub fn max_reconnects(mut self, n: u32) -> Self {
        self.max_reconnects = n;
        self
    }

    /// The cap on one message from the server (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`], 64 MiB): one SSE event's data plus the
    /// line being read, or one JSON (or error) body. Memory stays bounded by
    /// it: a body whose `Content-Length` is over it is refused unread, and
    /// anything else is refused as soon as it crosses it. A breach fails the
    /// request it answers with an
    /// [`ErrorKind::InvalidResponse`](super::ErrorKind::InvalidResponse) error (`… exceeds
    /// the message cap of N bytes …`); other requests and later ones are
    /// unaffected. On the standalone GET stream an event over the cap is
    /// skipped with an error in the log.
    pub fn max_message_bytes(mut self, max: usize) -> Self {
        self.max_message_bytes = max;
        self
    }
}

/// A Streamable HTTP connection to one MCP endpoint (feature `http-client`).
///
/// Every message is POSTed to the endpoint with
/// `Accept: application/json, text/event-stream`; the answer is a JSON body,
/// an SSE stream (responses interleaved with the server's notifications and
/// requests), or `202 Accepted` for notifications and responses. The
/// `Mcp-Session-Id` the server assigns is kept, sent with every message, and
/// the session DELETEd on close; once the session is initialized, a GET
/// opens the standalone SSE stream for what the server sends outside any
/// request (see [`HttpOptions::get_stream`]); `MCP-Protocol-Version` goes with every
/// message after the handshake. At the 2026-07-28 revision requests also
/// carry `Mcp-Method` and `Mcp-Name` (the tool or prompt name, the resource
/// URI) and the `Mcp-Param-<Name>` headers the client mirrors from tool
/// arguments annotated with `x-mcp-header`. A stream that ends before the
/// response is resumed with GET and `Last-Event-ID` after the server's
/// `retry:` delay.
///
/// A server that answers 404 to the session (it restarted, the session
/// expired or was deleted) gets a new session: the client sends its
/// `initialize` again (the answer must keep the negotiated revision) and
/// `notifications/initialized`, then the message that met the 404, once.
/// Concurrent messages share one new session. If no new session can be
/// had, or the new one answers 404 too, the transport closes:
/// [`is_alive`](Transport::is_alive) turns false and every waiting and
/// later call fails at once with an [`ErrorKind::Closed`](super::ErrorKind::Closed)
/// error saying why (with status 404, and the cause as its source). A
/// message whose answer was streaming when the session ended (resuming the
/// stream got 404) is not sent again — the old session may have acted on
/// it — and fails with an [`ErrorKind::Transport`](super::ErrorKind::Transport)
/// error saying so. An HTTP error status without a JSON-RPC error in its
/// body fails the request with a transport error whose
/// [`status`](super::Error::status) it is; a request that fails in
/// reqwest has the `reqwest::Error` as its [`source`](std::error::Error::source).
/// A request that may have reached the server and whose answer was lost —
/// the connection failed after connecting, a `502`, `503` or `504` (what a
/// proxy answers when its upstream is gone), a stream that could not be
/// resumed, the session lost mid-answer — fails with an error for which
/// [`is_interrupted`](super::Error::is_interrupted) is true: the client
/// sends it again when that is safe ([`RetryPolicy`](super::RetryPolicy)).
///
/// What the server sends is capped, so a hostile or broken server cannot
/// make the client buffer without bound: one SSE event (its data plus the
/// line being read) and one JSON body (or error body) may not exceed
/// [`HttpOptions::max_message_bytes`] (default
/// [`DEFAULT_MAX_MESSAGE_BYTES`], 64 MiB, the stdio line cap). A breach
/// fails only the request whose answer it was, with
/// an [`ErrorKind::InvalidResponse`](super::ErrorKind::InvalidResponse)
/// error naming the cap and the size seen, and
/// the connection is dropped without reading on; the client stays usable.
pub struct HttpTransport {
    pub(crate) shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) http: reqwest::Client,
    pub(crate) options: HttpOptions,
    pub(crate) base_headers: HeaderMap,
    pub(crate) session_id: Mutex<Option<String>>,
    pub(crate) protocol_version: Mutex<Option<String>>,
    pub(crate) inbox: OnceLock<Inbox>,
    pub(crate) closed: AtomicBool,
    /// Why the transport closed on its own (a session it could not renew):
    /// what every later message fails with.
    pub(crate) closed_reason: Mutex<Option<Error>>,
    /// The `initialize` request as first sent, to start a new session with.
    pub(crate) init_message: Mutex<Option<Value>>,
    /// Held while a new session is being started (one at a time).
    pub(crate) renewing: tokio::sync::Mutex<()>,
    /// Told when a new session started (the GET stream reopens at once).
    pub(crate) new_session: tokio::sync::Notify,
    pub(crate) get_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The OAuth flow of [`HttpOptions::oauth`].
    #[cfg(feature = "oauth-client")]
    pub(crate) auth: Option<super::auth::Auth>,
}

impl Shared {
    /// The error of a message sent after the transport closed.
    pub(crate) fn closed_error(&self) -> Error {
        lock(&self.closed_reason)
            .clone()
            .unwrap_or_else(|| Error::closed("the HTTP transport is closed"))
    }
}

/// How long opening a session waits for the standalone GET stream to be
/// answered (status and headers) before it goes on without it.
const GET_STREAM_OPEN_WAIT: Duration = Duration::from_secs(5);

/// Opens the standalone GET stream (when [`HttpOptions::get_stream`] is on
/// and it is not running), for the session of the moment. The receiver, when
/// a stream was started, fires once the server has answered its first GET
/// (or the attempt failed).
pub(crate) fn start_get_stream(shared: &Arc<Shared>) -> Option<oneshot::Receiver<()>> {
    if !shared.options.get_stream || shared.closed.load(Ordering::Acquire) {
        return None;
    }
    let mut task = lock(&shared.get_task);
    if task.as_ref().is_some_and(|t| !t.is_finished()) {
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let (answered, receiver) = oneshot::channel();
    *task = Some(runtime.spawn(get::get_stream(Arc::clone(shared), answered)));
    Some(receiver)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), Error> {
    let n = HeaderName::from_bytes(name.as_bytes())
        .map_err(|e| Error::refused(format!("invalid header name {name:?}")).with_source(e))?;
    let v = HeaderValue::from_str(value)
        .map_err(|e| Error::refused(format!("invalid value for header {name}")).with_source(e))?;
    Ok((n, v))
}

impl HttpTransport {
    /// A transport to `options`' endpoint (nothing is sent yet).
    pub fn new(options: HttpOptions) -> Result<Self, Error> {
        let mut base_headers = HeaderMap::new();
        for (k, v) in &options.headers {
            let (n, v) = header(k, v)?;
            base_headers.append(n, v);
        }
        let http = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .build()
            .map_err(|e| Error::transport("could not build the HTTP client").with_source(e))?;
        #[cfg(feature = "oauth-client")]
        let auth = match &options.oauth {
            Some(oauth) => Some(super::auth::Auth::new(oauth.clone(), &options.url)?),
            None => None,
        };
        Ok(Self {
            shared: Arc::new(Shared {
                http,
                options,
                base_headers,
                session_id: Mutex::new(None),
                protocol_version: Mutex::new(None),
                inbox: OnceLock::new(),
                closed: AtomicBool::new(false),
                closed_reason: Mutex::new(None),
                init_message: Mutex::new(None),
                renewing: tokio::sync::Mutex::new(()),
                new_session: tokio::sync::Notify::new(),
                get_task: Mutex::new(None),
                #[cfg(feature = "oauth-client")]
                auth,
            }),
        })
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.shared.session_id).clone()
    }

    /// The server's host and port, from its URL (for the client's spans).
    pub(crate) fn host_and_port(&self) -> (Option<String>, Option<u16>) {
        match reqwest::Url::parse(&self.shared.options.url) {
            Ok(url) => (
                url.host_str().map(str::to_owned),
                url.port_or_known_default(),
            ),
            Err(_) => (None, None),
        }
    }
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.shared.options.url)
            .field("session_id", &self.session_id())
            .finish_non_exhaustive()
    }
}

/// The headers of one POST, built (and checked) before anything is sent,
/// and the session id they carry. `initialize` opens a session: it carries
/// neither a session id nor a protocol version.
pub(crate) fn post_headers(
    shared: &Shared,
    message: &Value,
    options: &SendOptions,
) -> Result<(HeaderMap, Option<String>), Error> {
    let mut h = shared.base_headers.clone();
    h.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let opens = message.get("method").and_then(Value::as_str) == Some("initialize");
    let session = lock(&shared.session_id).clone().filter(|_| !opens);
    if let Some(id) = &session {
        let (n, v) = header(SESSION_HEADER, id)?;
        h.insert(n, v);
    }
    let meta = crate::jsonrpc::at(message, &["params", "_meta"]);
    // The request's trace context, as the W3C headers too (SEP-414 has it
    // in `_meta`; HTTP middleware and proxies read the headers).
    #[cfg(feature = "opentelemetry")]
    crate::trace_context::to_http(meta.and_then(Value::as_object), &mut h);
    let meta_version = meta
        .and_then(|m| m.get(PROTOCOL_VERSION_META))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let version = meta_version.or_else(|| lock(&shared.protocol_version).clone());
    if let Some(version) = version.filter(|_| !opens) {
        let (n, v) = header(PROTOCOL_HEADER, &version)?;
        h.insert(n, v);
    }
    if let Some(method) = message.get("method").and_then(Value::as_str) {
        let (n, v) = header("mcp-method", &encode_header_value(method))?;
        h.insert(n, v);
        let key = crate::transport::mcp_headers::name_field(method);
        if let Some(name) = key.and_then(|k| message.get("params")?.get(k)?.as_str()) {
            let (n, v) = header("mcp-name", &encode_header_value(name))?;
            h.insert(n, v);
        }
    }
    for (name, value) in &options.header_params {
        let (n, v) = header(
            &format!("{PARAM_HEADER_PREFIX}{name}"),
            &encode_header_value(value),
        )?;
        h.insert(n, v);
    }
    Ok((h, session))
}

impl Transport for HttpTransport {
    fn start(&self, inbox: Inbox) -> Result<(), Error> {
        self.shared
            .inbox
            .set(inbox)
            .map_err(|_| Error::transport("the HTTP transport was already started"))
    }

    fn send(&self, message: Value, options: SendOptions) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            let shared = &self.shared;
            if shared.closed.load(Ordering::Acquire) {
                return Err(shared.closed_error());
            }
            let method = message.get("method").and_then(Value::as_str);
            if method == Some("initialize") {
                *lock(&shared.init_message) = Some(message.clone());
            }
            let initialized = method == Some("notifications/initialized");
            session::post(shared, message, &options).await?;
            if initialized && let Some(answered) = start_get_stream(shared) {
                // The session is open: listen for what it sends on its own,
                // and wait until the server has the stream. A server sends
                // what belongs to no request (the TypeScript SDK's: even a
                // tool's elicitation) only to a stream that exists; before
                // this wait, a call made right after `connect` could have
                // its server request sent nowhere.
                let _ = tokio::time::timeout(GET_STREAM_OPEN_WAIT, answered).await;
            }
            Ok(())
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            if self.shared.closed.swap(true, Ordering::AcqRel) {
                return Ok(());
            }
            if let Some(task) = lock(&self.shared.get_task).take() {
                task.abort();
            }
            let session = lock(&self.shared.session_id).take();
            if let Some(session) = session {
                let mut h = self.shared.base_headers.clone();
                let (n, v) = header(SESSION_HEADER, &session)?;
                h.insert(n, v);
                if let Some(version) = lock(&self.shared.protocol_version).clone() {
                    let (n, v) = header(PROTOCOL_HEADER, &version)?;
                    h.insert(n, v);
                }
                authorize::add_token(&self.shared, "DELETE", &mut h).await?;
                let delete = self.shared.http.delete(&self.shared.options.url).headers(h);
                match tokio::time::timeout(Duration::from_secs(5), delete.send()).await {
                    Ok(Ok(r)) => tracing::debug!(status = %r.status(), "MCP HTTP: session deleted"),
                    Ok(Err(e)) => {
                        tracing::debug!(error = %error_chain(&e), "MCP HTTP: DELETE failed")
                    }
                    Err(_) => tracing::debug!("MCP HTTP: DELETE timed out"),
                }
            }
            Ok(())
        })
    }

    fn is_alive(&self) -> bool {
        !self.shared.closed.load(Ordering::Acquire)
    }

    fn mirrors_header_params(&self) -> bool {
        true
    }

    fn resends_lost_requests(&self) -> bool {
        true
    }

    fn set_protocol_version(&self, version: &str) {
        *lock(&self.shared.protocol_version) = Some(version.to_owned());
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.shared.get_task).take() {
            task.abort();
        }
    }
}
