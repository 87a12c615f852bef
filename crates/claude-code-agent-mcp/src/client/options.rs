//! How a client is set up: its identity, timeouts, handshake, and the
//! handlers for what the server asks or says.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::ServerNotification;
use super::transport::SendOptions;
use crate::jsonrpc::ErrorObject;
use crate::types::{Implementation, LATEST_SESSION_PROTOCOL_VERSION};

/// The default per-request timeout.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the `server/discover` probe may take before the client falls
/// back to `initialize`.
pub const DEFAULT_DISCOVER_TIMEOUT: Duration = Duration::from_secs(10);

/// Answers one kind of server→client request: gets its `params`, returns
/// its `result` or a JSON-RPC error.
pub type RequestHandler =
    Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, ErrorObject>> + Send + Sync>;

/// Gets every notification the server sends.
pub type NotificationHandler = Arc<dyn Fn(ServerNotification) + Send + Sync>;

/// Which handshake the client performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HandshakeMode {
    /// `server/discover` first; if the server answers it with an error (or
    /// not at all, within the discover timeout) or does not offer the
    /// stateless revision, `initialize` + `notifications/initialized`.
    #[default]
    Auto,
    /// Only `initialize` + `notifications/initialized` (2025-11-25 and before).
    Initialize,
    /// Only `server/discover` (2026-07-28); fails when the server does not speak it.
    Discover,
}

/// The default byte budget of a client for one server (64 MiB): see
/// [`ClientOptions::max_held_bytes`].
pub const CLIENT_MAX_HELD_BYTES: usize = 64 * 1024 * 1024;

/// Options of a [`McpClient`](super::McpClient).
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::client::{ClientOptions, HandshakeMode};
/// use serde_json::json;
///
/// let options = ClientOptions::new("my-app", "1.0.0")
///     .request_timeout(Duration::from_secs(30))
///     .handshake(HandshakeMode::Initialize)
///     .on_roots_list(|_params| async { Ok(json!({"roots": []})) });
/// # drop(options);
/// ```
#[derive(Clone)]
pub struct ClientOptions {
    pub(crate) client_info: Implementation,
    pub(crate) protocol_version: String,
    pub(crate) handshake: HandshakeMode,
    pub(crate) request_timeout: Duration,
    pub(crate) discover_timeout: Duration,
    pub(crate) sampling: Option<RequestHandler>,
    pub(crate) elicitation: Option<RequestHandler>,
    pub(crate) roots: Option<RequestHandler>,
    pub(crate) on_notification: Option<NotificationHandler>,
    pub(crate) experimental: Option<Map<String, Value>>,
    pub(crate) extensions: Map<String, Value>,
    pub(crate) max_held_bytes: usize,
    pub(crate) retry: RetryPolicy,
}

impl ClientOptions {
    /// A client called `name` at `version` (its `clientInfo`), with the
    /// default timeout, the [`HandshakeMode::Auto`] handshake, and no
    /// handlers.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            client_info: Implementation::new(name, version),
            protocol_version: LATEST_SESSION_PROTOCOL_VERSION.to_owned(),
            handshake: HandshakeMode::Auto,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            discover_timeout: DEFAULT_DISCOVER_TIMEOUT,
            sampling: None,
            elicitation: None,
            roots: None,
            on_notification: None,
            experimental: None,
            extensions: Map::new(),
            max_held_bytes: CLIENT_MAX_HELD_BYTES,
            retry: RetryPolicy::new(),
        }
    }

    /// When and how often a request whose connection failed before its
    /// answer is sent again (default [`RetryPolicy::new`]: up to 3 times,
    /// within about 1.4 s; [`RetryPolicy::none`]: never). See
    /// [`RetryPolicy`] for which requests are safe to send again.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Caps the bytes the client holds for its caller (default
    /// [`CLIENT_MAX_HELD_BYTES`], 64 MiB):
    /// responses that arrived and whose caller has not taken them yet,
    /// and notifications a [`NotificationStream`](super::NotificationStream)
    /// or [`Subscription`](super::Subscription) has not read, each counted
    /// at its size on the wire. At the cap the oldest unread notifications
    /// go (the streams count them as missed: the client never waits for a
    /// stream), and a transport that reads from the server reads no more
    /// until callers have taken enough of their responses (backpressure:
    /// the server waits, nothing is dropped). A response larger than the
    /// whole budget is still delivered: reading resumes once its caller has
    /// taken it, and nothing of it stays counted.
    pub fn max_held_bytes(mut self, bytes: usize) -> Self {
        self.max_held_bytes = bytes.max(1);
        self
    }

    /// The timeout of every request that sets none itself.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the `server/discover` probe may take ([`HandshakeMode::Auto`]).
    pub fn discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// Which handshake to perform.
    pub fn handshake(mut self, mode: HandshakeMode) -> Self {
        self.handshake = mode;
        self
    }

    /// The revision offered in `initialize` (default: the newest this crate speaks).
    pub fn protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = version.into();
        self
    }

    /// Answers `sampling/createMessage`; declares the `sampling` capability.
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.sampling = Some(boxed(f));
        self
    }

    /// Answers `elicitation/create`; declares the `elicitation` capability.
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.elicitation = Some(boxed(f));
        self
    }

    /// Answers `roots/list`; declares the `roots` capability.
    pub fn on_roots_list<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.roots = Some(boxed(f));
        self
    }

    /// Called with every notification the server sends (progress, log
    /// messages, list changes, …), synchronously and in order: keep it quick.
    pub fn on_notification(
        mut self,
        f: impl Fn(ServerNotification) + Send + Sync + 'static,
    ) -> Self {
        self.on_notification = Some(Arc::new(f));
        self
    }

    /// Declares `experimental` client capabilities.
    pub fn experimental_capabilities(mut self, capabilities: Map<String, Value>) -> Self {
        self.experimental = Some(capabilities);
        self
    }

    /// Declares an MCP extension (SEP-2133) in the client's capabilities
    /// (`capabilities.extensions`, in `initialize` or every stateless
    /// request's `_meta`): its identifier (`vendor-prefix/name`) and
    /// settings (a JSON object; `json!({})` for none). What the server
    /// declared is [`McpClient::server_extensions`](super::McpClient::server_extensions).
    ///
    /// ```
    /// use claude_code_agent_mcp::client::ClientOptions;
    /// use claude_code_agent_mcp::types::apps;
    ///
    /// let options = ClientOptions::new("host", "1.0").extension(apps::APPS_EXTENSION, apps::client_settings());
    /// assert_eq!(options.capabilities()["extensions"]["io.modelcontextprotocol/ui"]["mimeTypes"][0],
    ///            "text/html;profile=mcp-app");
    /// ```
    ///
    /// # Panics
    ///
    /// When `id` has no vendor prefix and name, or `settings` is not an object.
    pub fn extension(mut self, id: &str, settings: Value) -> Self {
        let settings = crate::types::checked_extension(id, settings);
        self.extensions
            .insert(id.to_owned(), Value::Object(settings));
        self
    }

    /// The capabilities this client declares: only those it has handlers for.
    pub fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        if self.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.elicitation.is_some() {
            caps.insert("elicitation".into(), json!({"form": {}}));
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({"listChanged": true}));
        }
        if let Some(experimental) = &self.experimental {
            caps.insert("experimental".into(), Value::Object(experimental.clone()));
        }
        if !self.extensions.is_empty() {
            caps.insert("extensions".into(), Value::Object(self.extensions.clone()));
        }
        Value::Object(caps)
    }
}

fn boxed<F, Fut>(f: F) -> RequestHandler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(f(params)))
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("client_info", &self.client_info)
            .field("protocol_version", &self.protocol_version)
            .field("handshake", &self.handshake)
            .field("request_timeout", &self.request_timeout)
            .field("retry", &self.retry)
            .field("capabilities", &self.capabilities())
            .finish_non_exhaustive()
    }
}

/// When a client sends a request again ([`ClientOptions::retry`]): a
/// request whose answer was lost with its connection
/// ([`Error::is_interrupted`](super::Error::is_interrupted): over HTTP, a
/// POST cut before its answer, a `502`–`504` from a proxy, a stream that
/// could not be resumed, or the server's error saying the replica that ran
/// it stopped) is sent again when that is safe:
///
/// * it is not a `tools/call` (listing, reading, `ping`, `initialize`, …);
/// * or it calls a tool that the server annotated idempotent
///   (`idempotentHint`) or read-only (`readOnlyHint`) in a `tools/list`
///   this client has read ([`McpClient::list_tools`](super::McpClient::list_tools),
///   [`list_tools_page`](super::McpClient::list_tools_page); over HTTP the
///   client lists the tools before its first call anyway). The hints are
///   forgotten when the server says its tools changed, until they are
///   listed again.
///
/// Any other call fails with the error, which says that the call may or
/// may not have run: match it with
/// [`Error::is_interrupted`](super::Error::is_interrupted), and repeat it
/// yourself only if that is harmless.
///
/// The request goes again with the same JSON-RPC id (it is the same
/// request, not a new one) on the same session: behind a load balancer
/// whose replicas share an event store, the replica it reaches takes the
/// session over (docs/deployment.md). Between attempts the client waits,
/// from `initial` doubling up to `max`, each wait drawn between half and
/// all of it (so that many clients cut at once do not come back at once).
/// Retries are bounded by their number and by the request's own timeout,
/// which covers every attempt. A request that reports no interruption, a
/// timeout, a server's other errors, a closed client: never retried.
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::client::{ClientOptions, RetryPolicy};
///
/// let options = ClientOptions::new("my-app", "1.0.0")
///     .retry(RetryPolicy::new().max_retries(5).backoff(Duration::from_millis(50), Duration::from_secs(1)));
/// let never = ClientOptions::new("my-app", "1.0.0").retry(RetryPolicy::none());
/// # drop((options, never));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_retries: u32,
    initial: Duration,
    max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl RetryPolicy {
    /// Up to 3 retries, waiting 100–200 ms before the first, 200–400 ms
    /// before the second, 400–800 ms before the third.
    pub const fn new() -> Self {
        Self {
            max_retries: 3,
            initial: Duration::from_millis(200),
            max: Duration::from_secs(2),
        }
    }

    /// Never sends a request again.
    pub const fn none() -> Self {
        Self::new().max_retries(0)
    }

    /// How many times one request may be sent again (0: never).
    pub const fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// The wait before the first retry (`initial`), doubled for each next
    /// one up to `max`; each wait is drawn between half and all of it.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial = initial;
        self.max = max.max(initial);
        self
    }

    /// How many times one request may be sent again.
    pub(crate) fn retries(&self) -> u32 {
        self.max_retries
    }

    /// The wait before retry `n` (1 for the first).
    pub(crate) fn delay(&self, n: u32) -> Duration {
        let doubled = self
            .initial
            .saturating_mul(1u32 << n.saturating_sub(1).min(20))
            .min(self.max);
        let mut bytes = [0u8; 2];
        let draw = match getrandom::fill(&mut bytes) {
            Ok(()) => f64::from(u16::from_le_bytes(bytes)) / f64::from(u16::MAX),
            Err(_) => 1.0,
        };
        doubled.mul_f64(0.5 + draw / 2.0)
    }
}

/// Options of one request: a timeout overriding the client's (and whether
/// progress restarts it), `_meta`, and what the transport may use
/// (mirrored header parameters).
///
/// A call that reports progress can outlive its timeout, up to a cap (the
/// TypeScript SDK's `resetTimeoutOnProgress` and `maxTotalTimeout`):
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::client::RequestOptions;
///
/// // Fails after 30 s without progress, and after 10 minutes in any case.
/// let options = RequestOptions::new()
///     .timeout(Duration::from_secs(30))
///     .reset_timeout_on_progress(true)
///     .max_total_timeout(Duration::from_secs(600));
/// # drop(options);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) reset_timeout_on_progress: bool,
    pub(crate) max_total_timeout: Option<Duration>,
    /// No timeout at all (`subscriptions/listen`, which lasts until dropped).
    pub(crate) unbounded: bool,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) send: SendOptions,
}

impl RequestOptions {
    /// No options: the client's timeout, no `_meta`.
    pub fn new() -> Self {
        Self::default()
    }

    /// This request's timeout (default: the client's
    /// [`request_timeout`](ClientOptions::request_timeout)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Restarts the timeout each time the server reports progress on this
    /// request (`notifications/progress` carrying its progress token), so
    /// the request fails only after a whole timeout without progress, or at
    /// [`max_total_timeout`](Self::max_total_timeout). Off by default.
    ///
    /// Progress needs a progress token: without one set by
    /// [`progress_token`](Self::progress_token), the request's own id is
    /// sent as its token (as the TypeScript SDK does).
    pub fn reset_timeout_on_progress(mut self, reset: bool) -> Self {
        self.reset_timeout_on_progress = reset;
        self
    }

    /// The most this request may take, progress or not (default: no cap
    /// besides the timeout). Only matters with
    /// [`reset_timeout_on_progress`](Self::reset_timeout_on_progress); the
    /// request then fails with an [`ErrorKind::Timeout`](super::ErrorKind::Timeout) error
    /// saying the cap was reached.
    pub fn max_total_timeout(mut self, cap: Duration) -> Self {
        self.max_total_timeout = Some(cap);
        self
    }

    /// Adds `params._meta` entries.
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }

    /// Asks for progress notifications with this token (`_meta.progressToken`).
    pub fn progress_token(self, token: impl Into<Value>) -> Self {
        self.meta("progressToken", token.into())
    }

    /// Transport options (header parameters; only HTTP uses them).
    pub fn send_options(mut self, options: SendOptions) -> Self {
        self.send = options;
        self
    }
}
