//! The [`Transport`] trait: how a [`McpClient`](super::McpClient) reaches a server.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Error;
use super::answer::response_text;
use crate::transport::budget::Budget;

/// Something that arrived from the server side of a transport.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TransportEvent {
    /// A JSON-RPC message: a response, a notification or a request.
    Message(Value),
    /// The response to the request with this id arrived but is unusable
    /// (over the line cap, say): that request fails with this error.
    Failed {
        /// The request's id, as the response carried it.
        id: Value,
        /// Why.
        error: Error,
    },
    /// A successful response whose `result` is still the JSON text it
    /// arrived in ([`Inbox::deliver_text`]): the client decodes it once,
    /// straight into the type the request wants.
    Result {
        /// The request's id.
        id: Value,
        /// The text of the response's `result`.
        result: Box<RawValue>,
    },
    /// The transport ended (the child exited, the stream closed): an
    /// [`ErrorKind::Closed`](super::ErrorKind::Closed) error saying why,
    /// with its cause. Requests still waiting, and every later one, fail
    /// with it.
    Closed(Error),
}

/// Where a transport delivers what arrives: every incoming message, in order.
///
/// The client correlates responses with its requests; the transport only
/// moves messages. Delivery is synchronous and quick (the client never
/// blocks in it), so a transport may deliver from inside
/// [`Transport::send`] — the in-process transport delivers the reply
/// there, with no task switch and no serialization.
///
/// A transport that reads from a peer awaits [`ready`](Self::ready) before
/// reading the next message: the client's byte budget
/// ([`ClientOptions::max_held_bytes`](super::ClientOptions::max_held_bytes))
/// then holds the server back when callers do not take their responses.
#[derive(Clone)]
pub struct Inbox {
    /// Every event, with the bytes its message took on the wire (0 when
    /// unknown).
    sink: Arc<dyn Fn(TransportEvent, usize) + Send + Sync>,
    budget: Option<Arc<Budget>>,
}

impl Inbox {
    /// An inbox that hands every event to `f`.
    pub fn new(f: impl Fn(TransportEvent) + Send + Sync + 'static) -> Self {
        Self {
            sink: Arc::new(move |event, _| f(event)),
            budget: None,
        }
    }

    /// The client's inbox: events with their sizes, charged to `budget`.
    pub(crate) fn with_budget(
        f: impl Fn(TransportEvent, usize) + Send + Sync + 'static,
        budget: Arc<Budget>,
    ) -> Self {
        Self {
            sink: Arc::new(f),
            budget: Some(budget),
        }
    }

    /// Waits until the client has room for more: what it holds for its
    /// callers (responses not yet taken, notifications not yet read) is
    /// within its byte budget. At once for an inbox made with
    /// [`new`](Self::new).
    pub async fn ready(&self) {
        if let Some(budget) = &self.budget {
            budget.room().await;
        }
    }

    /// Delivers one incoming JSON-RPC message.
    pub fn deliver(&self, message: Value) {
        (self.sink)(TransportEvent::Message(message), 0);
    }

    /// [`deliver`](Self::deliver) of a message that took `bytes` on the
    /// wire (what the client's budget counts it at).
    pub(crate) fn deliver_sized(&self, message: Value, bytes: usize) {
        (self.sink)(TransportEvent::Message(message), bytes);
    }

    /// Delivers one JSON-RPC message given as its JSON text (an NDJSON
    /// line, say): what [`deliver`](Self::deliver) of the parsed value
    /// does, for less. A successful response's `result` is not parsed
    /// here but kept as text, and decoded once, into the type the request
    /// wants (a [`CallToolResult`](crate::types::CallToolResult), say);
    /// anything else is parsed into a [`Value`] and delivered. Lone
    /// surrogate escapes decode to U+FFFD.
    /// Text that is not JSON is the parser's error, and nothing is
    /// delivered.
    pub fn deliver_text(&self, text: &[u8]) -> Result<(), serde_json::Error> {
        if let Some((id, result)) = response_text(text) {
            let event = TransportEvent::Result {
                id: id.into(),
                result,
            };
            (self.sink)(event, text.len());
            return Ok(());
        }
        self.deliver_sized(crate::transport::json::from_slice(text)?, text.len());
        Ok(())
    }

    /// Fails the request with this id (its response was unusable).
    pub fn fail(&self, id: Value, error: Error) {
        (self.sink)(TransportEvent::Failed { id, error }, 0);
    }

    /// Says the transport ended, and why (an [`Error::closed`] of `reason`).
    pub fn closed(&self, reason: impl Into<String>) {
        self.closed_with(Error::closed(reason));
    }

    /// Says the transport ended with `error`, what requests still waiting
    /// and later ones fail with: an [`Error::closed`], with its cause
    /// ([`Error::with_source`]).
    pub fn closed_with(&self, error: Error) {
        (self.sink)(TransportEvent::Closed(error), 0);
    }
}

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Inbox")
    }
}

/// Per-message options a transport may use or ignore.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SendOptions {
    /// `Mcp-Param-<Name>` headers (name without the prefix, value) that
    /// mirror tool arguments annotated with `x-mcp-header`. Only the HTTP
    /// transport sends them; the others ignore them.
    pub header_params: Vec<(String, String)>,
    /// Other requests of the client are waiting for their answers, so more
    /// messages may follow at once (their callers, woken by one read, send
    /// their next requests together): a transport may hold this one back
    /// briefly to send it with them (stdio writes them with one `write`).
    /// When `false`, nothing else is waiting: send it at once.
    pub others_in_flight: bool,
}

impl SendOptions {
    /// No options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a mirrored header parameter.
    pub fn header_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.header_params.push((name.into(), value.into()));
        self
    }
}

/// A way to reach an MCP server: sends JSON-RPC messages, delivers what
/// comes back to an [`Inbox`].
///
/// Messages are [`serde_json::Value`]s; a transport that needs text
/// serializes them itself (the in-process one never does). Requests and
/// responses are correlated by the client, not the transport: `send` only
/// has to get the message to the server, and everything the server says —
/// responses, notifications, requests — goes to the inbox.
///
/// Implementations: [`InProcessTransport`](super::InProcessTransport),
/// [`StdioTransport`](super::StdioTransport) and, with the `http-client`
/// feature, `HttpTransport`.
#[cfg_attr(
    feature = "http-client",
    doc = "([`HttpTransport`](super::HttpTransport))"
)]
pub trait Transport: Send + Sync + 'static {
    /// Called once, before the first `send`, with where incoming messages go.
    fn start(&self, inbox: Inbox) -> Result<(), Error>;

    /// Sends one message (a request, a notification, or a response to a
    /// server's request). A failure here fails the request it carried.
    fn send(&self, message: Value, options: SendOptions) -> BoxFuture<'_, Result<(), Error>>;

    /// Closes the transport; waiting requests fail with an
    /// [`ErrorKind::Closed`](super::ErrorKind::Closed) error.
    fn close(&self) -> BoxFuture<'_, Result<(), Error>>;

    /// Whether the transport can still carry messages.
    fn is_alive(&self) -> bool;

    /// Whether tool arguments annotated with `x-mcp-header` should be
    /// mirrored into headers (only HTTP does; the client then fetches and
    /// caches the tool list to know which arguments).
    fn mirrors_header_params(&self) -> bool {
        false
    }

    /// Told the negotiated protocol version after the handshake (HTTP sends
    /// it as `MCP-Protocol-Version`).
    fn set_protocol_version(&self, _version: &str) {}

    /// Whether a request whose answer this transport lost (an error with
    /// [`is_interrupted`](super::Error::is_interrupted)) may be sent again,
    /// as the client's [`RetryPolicy`](super::RetryPolicy) allows: HTTP,
    /// where another replica can take the session over. The client keeps a
    /// copy of a request only for a transport that says so.
    fn resends_lost_requests(&self) -> bool {
        false
    }
}
