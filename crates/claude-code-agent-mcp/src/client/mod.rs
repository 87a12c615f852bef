//! The MCP client: a [`McpClient`] over any [`Transport`].
//!
//! * [`InProcessTransport`] calls a [`Handler`](crate::Handler) (our
//!   [`Server`](crate::Server) or your own type) directly, with no
//!   serialization;
//! * [`StdioTransport`] spawns a server process and speaks NDJSON over its
//!   stdin/stdout;
//! * `HttpTransport` (feature `http-client`, on by default) speaks Streamable HTTP.
#![cfg_attr(feature = "http-client", doc = "  ([`HttpTransport`])")]
//!
//! The client does the handshake (`server/discover` for servers of the
//! 2026-07-28 revision, else `initialize` + `notifications/initialized`),
//! correlates responses with requests, applies a timeout to each request
//! (one that progress restarts, up to a cap, when asked:
//! [`RequestOptions::reset_timeout_on_progress`]), sends a request whose
//! answer was lost with its connection again when that is safe (not a
//! `tools/call`, or a tool annotated idempotent or read-only: [`RetryPolicy`]),
//! sends `notifications/cancelled` for a request whose future is dropped, answers
//! the server's own requests (`ping`; `sampling/createMessage`,
//! `elicitation/create` and `roots/list` through handlers you install,
//! otherwise -32601), and hands the server's notifications to a callback and
//! to [`McpClient::notifications`] streams. With a server of the stateless
//! revision, [`McpClient::listen`] opens a `subscriptions/listen` stream.
//!
//! The guide `docs/mcp-client.md` in the repository walks through all of it.
//!
//! Errors: see [`Error`] — a server's JSON-RPC error is always
//! distinguishable from a failure on this side ([`Error::kind`]), and the
//! cause of a failure (an I/O or HTTP error, a panic) is its
//! [`source`](std::error::Error::source).
//!
//! ```
//! use claude_code_agent_mcp::client::McpClient;
//! use claude_code_agent_mcp::{Server, Tool};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: f64, b: f64 }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = Server::builder("calc", "1.0.0")
//!     .tool(Tool::new("add", "Add two numbers", |x: Add| async move { x.a + x.b }))
//!     .build();
//! let client = McpClient::in_process(server).await?;
//! assert_eq!(client.server_info().unwrap().name, "calc");
//!
//! let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
//! assert_eq!(result.text_content(), "5");
//!
//! let err = client.send_request("nope/nope", None).await.unwrap_err();
//! assert_eq!(err.code(), Some(-32601));
//! # Ok::<(), claude_code_agent_mcp::client::Error>(())
//! # }).unwrap();
//! ```

mod answer;
mod api;
#[cfg(feature = "oauth-client")]
pub mod auth;
#[cfg(feature = "http-client")]
mod body;
#[cfg(test)]
mod budget_liveness;
mod deadline;
mod engine;
mod error;
mod handshake;
pub(crate) mod headers;
#[cfg(feature = "http-client")]
pub(crate) mod http;
mod in_process;
mod input;
mod notify;
mod options;
mod stdio;
mod subscription;
mod tasks;
mod transport;

use std::sync::Arc;

use serde_json::{Map, Value};

pub use crate::transport::DEFAULT_MAX_LINE_BYTES;
pub use crate::transport::{
    DEFAULT_STDERR_TAIL_BYTES, ShutdownTimeouts, StderrCallback, StdioOptions,
};
#[cfg(feature = "http-client")]
pub(crate) use error::response_outcome;
pub use error::{Error, ErrorKind};
#[cfg(feature = "http-client")]
pub use http::{DEFAULT_MAX_MESSAGE_BYTES, HttpOptions, HttpTransport};
pub use in_process::InProcessTransport;
pub use input::MAX_INPUT_ROUNDS;
pub use notify::{NotificationStream, ServerNotification};
pub use options::{
    CLIENT_MAX_HELD_BYTES, ClientOptions, DEFAULT_DISCOVER_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
    HandshakeMode, NotificationHandler, RequestHandler, RequestOptions, RetryPolicy,
};
pub use stdio::StdioTransport;
pub use subscription::Subscription;
pub use tasks::DEFAULT_TASK_POLL_INTERVAL;
pub use transport::{Inbox, SendOptions, Transport, TransportEvent};

use crate::spans::Peer;
use crate::types::Implementation;
use engine::Inner;
pub use engine::NOTIFICATION_BUFFER;

/// What the handshake learned about the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerState {
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// The server's name and version (`server/discover` may not say).
    pub server_info: Option<Implementation>,
    /// What the server offers.
    pub capabilities: Map<String, Value>,
    /// How to use this server, if it said.
    pub instructions: Option<String>,
    /// Whether the stateless revision (2026-07-28) is in use.
    pub stateless: bool,
}

/// An MCP client connected to one server. Cheap to clone; clones share the
/// connection. Dropping the last clone drops the transport (a stdio child
/// is killed); [`close`](Self::close) shuts down gracefully.
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
}

impl McpClient {
    /// Connects over `transport` and performs the handshake.
    pub async fn connect(transport: impl Transport, options: ClientOptions) -> Result<Self, Error> {
        // In process to our Server, tool calls skip JSON-RPC.
        let any = &transport as &dyn std::any::Any;
        let direct = any
            .downcast_ref::<InProcessTransport>()
            .filter(|t| t.is_direct())
            .cloned();
        let peer = peer_of(any);
        Self::start(Arc::new(transport), options, direct, peer).await
    }

    /// [`connect`](Self::connect) with a shared transport.
    pub async fn connect_arc(
        transport: Arc<dyn Transport>,
        options: ClientOptions,
    ) -> Result<Self, Error> {
        Self::start(transport, options, None, Peer::default()).await
    }

    async fn start(
        transport: Arc<dyn Transport>,
        options: ClientOptions,
        direct: Option<InProcessTransport>,
        peer: Peer,
    ) -> Result<Self, Error> {
        let inner = Inner::start(transport, options, direct, peer)?;
        let state = match handshake::handshake(&inner).await {
            Ok(state) => state,
            Err(e) => {
                let _ = inner.transport.close().await;
                inner.shut(Error::closed("the handshake failed"));
                return Err(e);
            }
        };
        let _ = inner.server.set(state);
        Ok(Self { inner })
    }

    /// What the handshake learned.
    pub fn server_state(&self) -> &ServerState {
        self.inner
            .server
            .get()
            .expect("a connected client has done its handshake")
    }

    /// The server's name and version (absent when `server/discover` did not say).
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server_state().server_info.as_ref()
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> &Map<String, Value> {
        &self.server_state().capabilities
    }

    /// The MCP extensions the server declared (`capabilities.extensions`),
    /// known or not, with their settings. One this client declared too
    /// ([`ClientOptions::extension`]) is in use.
    pub fn server_extensions(&self) -> crate::types::Extensions {
        crate::types::Extensions::of(self.server_capabilities())
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> &str {
        &self.server_state().protocol_version
    }

    /// The server's instructions, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.server_state().instructions.as_deref()
    }

    /// The capabilities this client declared.
    pub fn client_capabilities(&self) -> &Value {
        &self.inner.capabilities
    }

    /// Whether the transport can still carry messages and the client is not closed.
    pub fn is_alive(&self) -> bool {
        !self.inner.is_closed() && self.inner.transport.is_alive()
    }

    /// How many times this client has sent a request again because its
    /// answer was lost with its connection ([`RetryPolicy`]).
    pub fn retries(&self) -> u64 {
        self.inner.retried()
    }

    /// A stream of every notification the server sends from now on.
    pub fn notifications(&self) -> NotificationStream {
        NotificationStream::new(self.inner.subscribe())
    }

    /// Closes the transport (a stdio child is shut down, an HTTP session
    /// deleted); requests still waiting fail with an [`ErrorKind::Closed`] error.
    pub async fn close(&self) -> Result<(), Error> {
        let result = self.inner.transport.close().await;
        self.inner.shut(Error::closed("the client was closed"));
        result
    }

    /// Sends a request and returns its `result`.
    ///
    /// Dropping the returned future before it completes sends
    /// `notifications/cancelled` for the request.
    pub async fn send_request(&self, method: &str, params: Option<Value>) -> Result<Value, Error> {
        self.inner
            .request(method, params, RequestOptions::new())
            .await
    }

    /// [`send_request`](Self::send_request) with options (timeout, `_meta`, …).
    pub async fn send_request_with(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        self.inner.request(method, params, options).await
    }

    /// Sends a notification; fails with an [`ErrorKind::Timeout`] error if the
    /// transport cannot deliver it within the client's request timeout.
    pub async fn send_notification(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), Error> {
        self.inner.notify(method, params).await
    }
}

/// Where a transport of ours goes, as the client's spans say
/// (`spans::Peer`); nothing for a transport of the user's own.
fn peer_of(transport: &dyn std::any::Any) -> Peer {
    if transport.is::<InProcessTransport>() {
        return Peer {
            transport: Some("in_process"),
            ..Peer::default()
        };
    }
    if transport.is::<StdioTransport>() {
        return Peer {
            transport: Some("stdio"),
            network: Some("pipe"),
            ..Peer::default()
        };
    }
    #[cfg(feature = "http-client")]
    if let Some(http) = transport.downcast_ref::<HttpTransport>() {
        let (address, port) = http.host_and_port();
        return Peer {
            transport: Some("http"),
            network: Some("tcp"),
            address,
            port,
        };
    }
    Peer::default()
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.inner.server.get())
            .field("alive", &self.is_alive())
            .finish_non_exhaustive()
    }
}
