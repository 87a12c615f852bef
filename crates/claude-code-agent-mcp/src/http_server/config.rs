//! [`StreamableHttpConfig`]: the endpoint, its security checks and limits.

use std::sync::Arc;
use std::time::Duration;

use super::auth::ProtectedResource;
use super::store::{EventStore, SharedStore};
use crate::server::{RequestContext, StoreRef, TaskStore};

/// The default byte budget of one session of the Streamable HTTP server
/// (16 MiB): see [`StreamableHttpConfig::max_held_bytes`].
pub const HTTP_MAX_HELD_BYTES: usize = 16 * 1024 * 1024;

/// When a request is answered with an SSE stream instead of one JSON body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ResponseMode {
    /// SSE for `tools/call` (so its progress and log notifications, and its
    /// requests to the client, travel before the result); JSON otherwise.
    #[default]
    Auto,
    /// Always one JSON body (notifications then go on the GET stream).
    Json,
    /// SSE for every request but `initialize`.
    Sse,
}

/// How a [`StreamableHttpService`](super::StreamableHttpService) behaves.
///
/// The defaults are safe for a server on the local machine: only `Host`
/// and `Origin` values naming `localhost`, `127.0.0.1` or `[::1]` are
/// accepted (DNS-rebinding protection), bodies are capped at 4 MiB, at
/// most 1024 sessions live at once and a session idle for 30 minutes ends.
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::http_server::{ResponseMode, StreamableHttpConfig};
///
/// let config = StreamableHttpConfig::default()
///     .path("/mcp")
///     .bearer_token("s3cret")
///     .allow_host("mcp.internal.example")
///     .allow_origin("https://app.example")
///     .max_body_bytes(1 << 20)
///     .session_idle_timeout(Duration::from_secs(600))
///     .response_mode(ResponseMode::Auto);
/// assert_eq!(config.endpoint(), "/mcp");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamableHttpConfig {
    pub(crate) path: String,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) check_host: bool,
    pub(crate) bearer_token: Option<String>,
    pub(crate) protected_resource: Option<ProtectedResource>,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_sessions: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) response_mode: ResponseMode,
    pub(crate) retry: Option<Duration>,
    pub(crate) keep_alive: Duration,
    pub(crate) events_per_stream: usize,
    pub(crate) replay_bytes: usize,
    pub(crate) max_held_bytes: usize,
    pub(crate) request_read_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) drain_timeout: Duration,
    pub(crate) event_store: Option<SharedStore>,
    pub(crate) store_timeout: Duration,
    pub(crate) session_id_prefix: String,
}

impl Default for StreamableHttpConfig {
    fn default() -> Self {
        Self {
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            allowed_origins: Vec::new(),
            check_host: true,
            bearer_token: None,
            protected_resource: None,
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 1024,
            idle_timeout: Duration::from_secs(30 * 60),
            response_mode: ResponseMode::Auto,
            retry: Some(Duration::from_millis(1000)),
            keep_alive: Duration::from_secs(15),
            events_per_stream: 1024,
            replay_bytes: 256 * 1024,
            max_held_bytes: HTTP_MAX_HELD_BYTES,
            request_read_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(30),
            event_store: None,
            store_timeout: Duration::from_secs(2),
            session_id_prefix: String::new(),
        }
    }
}

impl StreamableHttpConfig {
    /// The default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// The endpoint's path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The endpoint's path.
    pub fn endpoint(&self) -> &str {
        &self.path
    }

    /// Also accepts this host name in `Host` and `Origin` (any port);
    /// IPv6 literals in brackets, e.g. `[::1]`.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into().to_ascii_lowercase());
        self
    }

    /// Also accepts this exact `Origin` (`scheme://host[:port]`).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins
            .push(origin.into().to_ascii_lowercase());
        self
    }

    /// Turns the `Host`/`Origin` checks off — only behind a proxy that does
    /// its own checking.
    pub fn disable_dns_rebinding_protection(mut self) -> Self {
        self.check_host = false;
        self
    }

    /// Requires `Authorization: Bearer <token>` on every request (401 with
    /// `WWW-Authenticate` otherwise). Ignored with a
    /// [`protected_resource`](Self::protected_resource), whose verifier
    /// checks tokens instead ([`StaticToken`](super::StaticToken) is this
    /// check as a verifier).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Serves the endpoint as an OAuth protected resource (MCP
    /// Authorization): every request's access token is checked by the
    /// resource's verifier, its scopes against the resource's required and
    /// per-tool scopes, and its RFC 9728 metadata is served at
    /// `/.well-known/oauth-protected-resource` and the path-aware
    /// `/.well-known/oauth-protected-resource/<path>`. See
    /// [`ProtectedResource`]. Replaces [`bearer_token`](Self::bearer_token).
    pub fn protected_resource(mut self, resource: ProtectedResource) -> Self {
        let url = resource.resource();
        if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains('#') {
            tracing::warn!(
                resource = url,
                "a protected resource's URL should be the absolute http(s) URL of the MCP \
                 endpoint, without a fragment: its metadata URL is derived from it"
            );
        }
        self.protected_resource = Some(resource);
        self
    }

    /// Caps a request body (default 4 MiB); larger ones get 413.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Caps the live sessions (default 1024); an `initialize` beyond it gets
    /// 503 after idle sessions are reaped.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions.max(1);
        self
    }

    /// Ends a session after this long without a request and without an open
    /// stream (default 30 minutes).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// When requests are answered with SSE (default [`ResponseMode::Auto`]).
    pub fn response_mode(mut self, mode: ResponseMode) -> Self {
        self.response_mode = mode;
        self
    }

    /// The `retry` sent in the priming event of each SSE stream (default
    /// 1 s): how long a client waits before reconnecting; `None` sends none.
    pub fn sse_retry(mut self, retry: Option<Duration>) -> Self {
        self.retry = retry;
        self
    }

    /// How often an idle SSE stream gets a comment line (default 15 s), so
    /// a vanished client is noticed.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every.max(Duration::from_millis(10));
        self
    }

    /// How many events of each stream are kept for replay after a
    /// reconnection with `Last-Event-ID` (default 1024).
    pub fn events_per_stream(mut self, events: usize) -> Self {
        self.events_per_stream = events.max(1);
        self
    }

    /// Caps the bytes of SSE events each session keeps for replay after a
    /// reconnection with `Last-Event-ID` (default 256 KiB; each event counts
    /// its size plus 32 bytes). Past it the oldest streams' events go first;
    /// an event larger than the whole budget is sent but not kept. Events
    /// are kept only while a client may still ask for them: a stream whose
    /// response carried every event to its end is forgotten at once, so a
    /// session whose clients read their answers keeps nothing of its calls.
    pub fn replay_bytes(mut self, bytes: usize) -> Self {
        self.replay_bytes = bytes;
        self
    }

    /// Caps the bytes each session holds for a client that does not read
    /// (default [`HTTP_MAX_HELD_BYTES`], 16 MiB): JSON answers and SSE
    /// events not yet taken by the client's connections, plus what the
    /// session's running requests reserve for their answers (what answers
    /// of the same kind held lately, at most half the budget each). At the
    /// cap the session's next request is taken only once its client has
    /// read enough (backpressure: the request waits, nothing is dropped;
    /// a request whose answers are small goes ahead of a large one that
    /// waits), and an SSE response whose unread events pass the cap is
    /// ended early, its events kept for the client to resume from with
    /// `Last-Event-ID`. An answer larger than the whole budget is served
    /// in full and held until read; once the client has read everything
    /// the budget is empty again, whatever the sizes were. What is kept
    /// for replay or for a GET stream is bounded by
    /// [`replay_bytes`](Self::replay_bytes), apart from this budget; what
    /// the operating system buffers for each connection comes on top.
    pub fn max_held_bytes(mut self, bytes: usize) -> Self {
        self.max_held_bytes = bytes.max(1);
        self
    }

    /// How long a client may take to send a request's headers, and again its
    /// body (default 30 s). A connection that stalls in its headers is
    /// closed; a body that does not arrive in time gets 408. Enforced by
    /// [`serve`](super::StreamableHttpService::serve) and
    /// [`serve_with_shutdown`](super::StreamableHttpService::serve_with_shutdown)
    /// (headers) and by the endpoint itself (bodies, so also when you mount
    /// the [`router`](super::StreamableHttpService::router) in your own server).
    pub fn request_read_timeout(mut self, timeout: Duration) -> Self {
        self.request_read_timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// How long [`serve_with_shutdown`](super::StreamableHttpService::serve_with_shutdown)
    /// waits, once asked to stop, for connections to finish what they are
    /// doing before it closes them (default 5 s). Sessions end at once:
    /// their streams close and their running calls are cancelled.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The deadline of a graceful shutdown
    /// ([`serve_with_drain`](super::StreamableHttpService::serve_with_drain),
    /// [`drain`](super::StreamableHttpService::drain)): how long, once asked
    /// to stop, the service waits for the calls it is running to finish
    /// and their answers to go out (default 30 s). Keep it below the time
    /// your orchestrator gives a process between SIGTERM and SIGKILL.
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// `ctx`, with this service's event store as the store of the tasks
    /// its requests make and read (none without a store: the server keeps
    /// them).
    pub(crate) fn with_task_store(&self, ctx: RequestContext) -> RequestContext {
        match &self.event_store {
            Some(store) => {
                let store: Arc<dyn TaskStore> = Arc::clone(&store.0) as Arc<dyn TaskStore>;
                ctx.with_task_store(StoreRef {
                    store,
                    timeout: self.store_timeout,
                })
            }
            None => ctx,
        }
    }

    /// Shares sessions and SSE streams with the other replicas given the
    /// same store, behind a load balancer (docs/deployment.md): a replica
    /// takes over a session it never saw, and a client whose replica died
    /// resumes its streams with `Last-Event-ID` through any other, getting
    /// every event it missed once; a request whose replica died before
    /// answering gets an error saying so, which the client may retry. Each
    /// event is stored before it goes out (the cost per event is in
    /// docs/performance.md). See [`EventStore`](super::EventStore).
    ///
    /// The tasks of the server it serves (the Tasks extension) are kept
    /// there too, so that any replica answers `tasks/get` and
    /// `tasks/cancel` for a task another one runs.
    pub fn event_store(mut self, store: impl EventStore) -> Self {
        self.event_store = Some(SharedStore(Arc::new(store)));
        self
    }

    /// How long a request waits for the event store (default 2 s): past
    /// it, a request that needs the store fails with 503, and events go
    /// out unstored.
    pub fn store_timeout(mut self, timeout: Duration) -> Self {
        self.store_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Starts the id of every session this service opens with `prefix`
    /// (default: none; ids are otherwise 32 random hex digits). Give each
    /// replica its own prefix, and a load balancer that cannot learn which
    /// replica answered an `initialize` (nginx without the commercial
    /// `sticky`) routes each request of a session to the replica that
    /// opened it by its `Mcp-Session-Id` alone (docs/deployment.md).
    ///
    /// # Panics
    ///
    /// If `prefix` is longer than 64 bytes or holds anything but visible
    /// ASCII (`!` to `~`), which is all a session id may hold.
    pub fn session_id_prefix(mut self, prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        assert!(
            prefix.len() <= 64 && prefix.bytes().all(|b| b.is_ascii_graphic()),
            "StreamableHttpConfig::session_id_prefix: {prefix:?} is not at most 64 visible ASCII \
             characters (`!` to `~`), as a session id must be"
        );
        self.session_id_prefix = prefix;
        self
    }
}
