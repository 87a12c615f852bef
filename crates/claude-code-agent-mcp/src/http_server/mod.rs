//! Serving any [`Handler`] (such as a [`Server`]) over MCP's Streamable HTTP
//! transport (revision 2025-11-25). Feature `http-server`, on by default.
//!
//! One endpoint (default `/mcp`):
//!
//! * **POST** carries one JSON-RPC message. `initialize` creates a session
//!   and answers with its `Mcp-Session-Id` (128 random bits); every later
//!   message must carry it (400 without, 404 for an unknown or ended one).
//!   Requests are answered with `application/json`, or with a
//!   `text/event-stream` that carries the request's progress and log
//!   notifications and its requests to the client before the result (by
//!   default for `tools/call`; see [`ResponseMode`]). Notifications and
//!   responses get 202 with no body.
//! * **POST of the stateless revision (2026-07-28)** — no `Mcp-Session-Id`,
//!   and an `MCP-Protocol-Version` that is no session-based revision (or the
//!   stateless `_meta` in the body, or `server/discover`): served without a
//!   session. `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
//!   `Mcp-Param-*` headers of `x-mcp-header` arguments (plain, or
//!   `=?base64?…?=`) must match the body, else 400 with `-32020`; `-32601`
//!   is 404; `_meta`, version (`-32022`) and capability (`-32021`) errors are
//!   400. The reply is one JSON body unless notifications come first (then
//!   SSE); `subscriptions/listen` streams until the client disconnects.
//! * **GET** opens the session's stream for messages not tied to a request
//!   (`list_changed`, resource updates, requests to the client); with
//!   `Last-Event-ID` it resumes a stream instead, replaying what came after.
//!   Every SSE stream of a 2025-11-25 session starts with a priming event
//!   (an id and a `retry` delay).
//! * **DELETE** ends the session (200).
//!
//! Stopping: [`StreamableHttpService::serve_with_drain`] stops gracefully
//! (no new session, the calls running finish, within a deadline: what a
//! replica does on SIGTERM); `serve_with_shutdown` ends every session at
//! once.
//!
//! Secure by default: `Host` and `Origin` must name the local machine
//! (403 otherwise; DNS-rebinding protection), an optional bearer token
//! (401 with `WWW-Authenticate`), bodies over the cap get 413, an
//! unsupported `MCP-Protocol-Version` 400 (absent means 2025-03-26), a
//! malformed body a JSON-RPC `-32700`/`-32600` error. Sessions are capped
//! and expire when idle. See [`StreamableHttpConfig`].
//!
//! MCP Authorization: with a [`ProtectedResource`], every request needs an
//! OAuth access token its [`TokenVerifier`] accepts (401 or 403 with RFC
//! 6750 challenges otherwise), tools see the verified
//! [`AccessToken`](crate::AccessToken), and the RFC 9728 metadata is served under
//! `/.well-known/oauth-protected-resource`. JWTs and token introspection
//! need the feature `oauth-server`.
//!
//! ```no_run
//! use claude_code_agent_mcp::{Server, Tool};
//! use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
//!
//! # async fn run() -> std::io::Result<()> {
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: f64, b: f64 }
//! let server = Server::builder("calc", "1.0.0")
//!     .tool(Tool::new("add", "Add two numbers", |x: Add| async move { x.a + x.b }))
//!     .build();
//!
//! // Mount it in your own axum router…
//! let mcp = StreamableHttpService::new(server.clone(), StreamableHttpConfig::default());
//! let app = axum::Router::new().merge(mcp.router());
//! # drop(app);
//! // …or serve it on its own.
//! claude_code_agent_mcp::http_server::serve_http(server, "127.0.0.1:8080").await
//! # }
//! ```

// Checks return the HTTP response that refuses a request as their error:
// built at most once per request, so its size does not matter.
#![allow(clippy::result_large_err)]

mod auth;
mod config;
mod conn;
mod drain;
mod guard;
mod handlers;
mod hub;
mod replica;
mod sessions;
mod stateless;
pub(crate) mod store;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{any, get};
use tokio::net::{TcpListener, ToSocketAddrs};

#[cfg(feature = "oauth-server")]
pub use auth::{IntrospectionVerifier, JwtAlgorithm, JwtVerifier, KeyError, VerificationKey};
pub use auth::{ProtectedResource, StaticToken, TokenVerifier, VerifyError};
pub use config::{HTTP_MAX_HELD_BYTES, ResponseMode, StreamableHttpConfig};
pub use guard::ASSUMED_PROTOCOL_VERSION;
#[cfg(feature = "redis")]
pub use store::RedisEventStore;
pub use store::{EventStore, MemoryEventStore, StoreError, StoreFuture, StoredStream, StreamWrite};

use crate::server::{Handler, Server};
use sessions::SessionTable;

/// One Streamable HTTP endpoint: the handler it serves, its
/// configuration and its sessions (the router's state).
pub(crate) struct EndpointState {
    handler: Arc<dyn Handler>,
    config: StreamableHttpConfig,
    sessions: SessionTable,
    /// Whether it drains, and the requests running.
    drain: Arc<drain::Drain>,
    /// This replica's id (random), in the records of the sessions it holds
    /// (replica.rs).
    replica: String,
}

impl Drop for EndpointState {
    fn drop(&mut self) {
        self.sessions.clear();
    }
}

/// A [`Handler`] served over Streamable HTTP: build one, then take its
/// [`router`](Self::router) (an axum [`Router`], which is a
/// `tower::Service`) or [`serve`](Self::serve) it. Cheap to clone (clones
/// share sessions).
#[derive(Clone)]
pub struct StreamableHttpService {
    shared: Arc<EndpointState>,
}

impl StreamableHttpService {
    /// Serves `handler` with `config`.
    pub fn new(handler: impl Handler, config: StreamableHttpConfig) -> Self {
        Self {
            shared: Arc::new(EndpointState {
                handler: Arc::new(handler),
                sessions: SessionTable::new(config.idle_timeout),
                drain: drain::Drain::new(),
                replica: sessions::new_session_id(""),
                config,
            }),
        }
    }

    /// The endpoint as an axum (0.8) router, to serve or to merge into
    /// your own.
    /// With a [`ProtectedResource`], it also serves the resource's metadata
    /// at `/.well-known/oauth-protected-resource` and at the path-aware
    /// form for the endpoint's path (and for the resource URL's path, when
    /// a proxy serves the endpoint at another).
    pub fn router(&self) -> Router {
        let config = &self.shared.config;
        let mut router = Router::new().route(&config.path, any(handlers::endpoint));
        if let Some(resource) = &config.protected_resource {
            let mut paths = vec![
                auth::WELL_KNOWN.to_owned(),
                format!("{}{}", auth::WELL_KNOWN, config.path.trim_end_matches('/')),
                format!("{}{}", auth::WELL_KNOWN, resource.resource_path()),
            ];
            paths.sort();
            paths.dedup();
            for path in paths {
                router = router.route(&path, get(handlers::resource_metadata));
            }
        }
        router
            // The endpoint enforces `max_body_bytes` itself, with a deadline.
            .layer(DefaultBodyLimit::disable())
            .with_state(Arc::clone(&self.shared))
    }

    /// How many sessions are live.
    pub fn session_count(&self) -> usize {
        self.shared.sessions.len()
    }

    /// Drains the service, gracefully, for a restart or a deploy: from now
    /// on it opens no session (`initialize` gets a `503` whose JSON-RPC
    /// error carries `data.retryable: true`: nothing was done, try again
    /// elsewhere) and no GET stream; the GET streams open end (their
    /// clients reconnect, through a load balancer to another replica: with
    /// an event store, resuming with `Last-Event-ID`); the calls running go
    /// on. Returns once none runs (their answers written: stored, with an
    /// event store) or `timeout` passed: how many still run (0: all done).
    ///
    /// The sessions live on until the service is dropped (or
    /// [`serve_with_drain`](Self::serve_with_drain) ends them): requests
    /// that reach it meanwhile are served. With an event store, their
    /// records stay there, so any other replica takes each over at its
    /// next request, and a call still running when the service stops ends
    /// for its client, resuming elsewhere, with the retryable error of a
    /// replica that stopped (docs/deployment.md). Without one, they end
    /// with the process.
    ///
    /// [`serve_with_drain`](Self::serve_with_drain) does all of it; call
    /// this yourself when you serve [`router`](Self::router) on your own
    /// server: stop routing to it (close its listener), drain, then shut
    /// the server down.
    pub async fn drain(&self, timeout: std::time::Duration) -> usize {
        self.shared
            .drain
            .drain(&self.shared.sessions, timeout)
            .await
    }

    /// Serves on `listener` until the process ends (or the future is dropped,
    /// which closes every connection). Each connection is an HTTP/1.1
    /// connection with `TCP_NODELAY` whose request headers must arrive within
    /// [`request_read_timeout`](StreamableHttpConfig::request_read_timeout).
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        self.serve_with_shutdown(listener, std::future::pending())
            .await
    }

    /// Serves on `listener` until `shutdown` completes, then stops: no new
    /// connection is accepted, every session ends (its streams close, its
    /// running calls are cancelled), connections get
    /// [`shutdown_grace`](StreamableHttpConfig::shutdown_grace) to finish
    /// the exchange under way, and what is left is closed. Returns once no
    /// connection is left.
    pub async fn serve_with_shutdown(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let limits = conn::ConnLimits {
            header_read_timeout: self.shared.config.request_read_timeout,
            shutdown_grace: self.shared.config.shutdown_grace,
        };
        let sessions = &self.shared.sessions;
        let stop = conn::Stop::Now(Box::new(|| sessions.clear()));
        conn::serve(listener, self.router(), limits, shutdown, stop).await
    }

    /// Serves on `listener` until `shutdown` completes, then stops
    /// gracefully, within
    /// [`drain_timeout`](StreamableHttpConfig::drain_timeout) (30 s by
    /// default): what a replica behind a load balancer should do on
    /// SIGTERM, so that a restart or a deploy fails no call.
    ///
    /// 1. The listener closes: no new connection (a load balancer's health
    ///    check sees it, and sends the replica's sessions elsewhere: with an
    ///    event store, another replica takes each over).
    /// 2. Each connection finishes the request it is serving, and closes.
    /// 3. [`drain`](Self::drain): no new session or GET stream, the GET
    ///    streams end, and the calls running finish.
    /// 4. Once they have (and their connections closed), or at the
    ///    deadline, the sessions end (a call still running is cancelled;
    ///    with an event store its client gets the retryable error through
    ///    another replica) and the connections left are closed.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use claude_code_agent_mcp::Server;
    /// use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
    ///
    /// # async fn run(server: Server, sigterm: tokio::sync::oneshot::Receiver<()>) -> std::io::Result<()> {
    /// // `sigterm`: any future; with tokio's `signal` feature,
    /// // `async move { signal(SignalKind::terminate())?.recv().await }`.
    /// let config = StreamableHttpConfig::default().drain_timeout(Duration::from_secs(20));
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// StreamableHttpService::new(server, config)
    ///     .serve_with_drain(listener, async move { let _ = sigterm.await; })
    ///     .await
    /// # }
    /// ```
    pub async fn serve_with_drain(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let config = &self.shared.config;
        let limits = conn::ConnLimits {
            header_read_timeout: config.request_read_timeout,
            shutdown_grace: config.shutdown_grace,
        };
        let timeout = config.drain_timeout;
        let sessions = &self.shared.sessions;
        let stop = conn::Stop::Drain {
            drain: Box::pin(self.drain(timeout)),
            deadline: timeout,
            then: Box::new(|| sessions.clear()),
        };
        conn::serve(listener, self.router(), limits, shutdown, stop).await
    }
}

impl std::fmt::Debug for StreamableHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttpService")
            .field("config", &self.shared.config)
            .field("sessions", &self.session_count())
            .finish()
    }
}

/// Serves `handler` at `http://<addr>/mcp` with the default (local-only)
/// configuration until the process ends. Bind `127.0.0.1:<port>` (or port
/// 0 for any free one); another address also needs
/// [`StreamableHttpConfig::allow_host`], through [`StreamableHttpService`].
pub async fn serve_http(handler: impl Handler, addr: impl ToSocketAddrs) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    StreamableHttpService::new(handler, StreamableHttpConfig::default())
        .serve(listener)
        .await
}

impl Server {
    /// This server as a Streamable HTTP endpoint to mount in an axum router
    /// (see [`StreamableHttpService`]).
    pub fn streamable_http_router(&self, config: StreamableHttpConfig) -> Router {
        StreamableHttpService::new(self.clone(), config).router()
    }
}
