//! The bridge: in-process MCP servers over the CLI's control channel, both
//! directions of `mcp_message` (docs/protocol.md §5).
//!
//! The CLI runs one MCP client per in-process server whose transport is the
//! control channel:
//!
//! * **CLI → server.** Every JSON-RPC message for a server arrives as a
//!   `control_request` of subtype `mcp_message`. [`Bridge::reply`] hands it
//!   to the server's [`Handler::handle`](crate::mcp::Handler::handle) (a
//!   native [`Server`](crate::mcp::Server), an rmcp server, any handler) and returns the
//!   success payload `{"mcp_response": <JSON-RPC reply>}`. A message that is
//!   not a request (a notification such as `notifications/initialized` or
//!   `notifications/cancelled`, or a JSON-RPC response the CLI sends to the
//!   server) has no JSON-RPC reply, yet the CLI waits for a success answer:
//!   it gets a JSON-RPC result object without an id,
//!   `{"jsonrpc":"2.0","result":{}}` ([`McpMessageResponse::notification_ack`]).
//!   A control error there would make the CLI drop the server.
//! * **Server → CLI.** Each server keeps one [`mcp::Session`](crate::mcp::Session)
//!   for its CLI connection, so `notifications/cancelled` reaches the call it
//!   names. What the server sends on its own (`tools/list_changed`,
//!   progress, logging) is handed to the session's notifier synchronously,
//!   from inside a tool; the [`Outbox`] queues it (bounded in bytes) and
//!   [`pump`] writes it to the CLI as an SDK→CLI `mcp_message` control
//!   request with an id of its own (`mcp_notify_<n>`). The CLI acknowledges
//!   each with an empty success, which the session ignores (no one waits
//!   for it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::jsonrpc::{self, ErrorObject};
use crate::mcp::{RequestContext, Session};
use crate::protocol::{
    InProcessServer, McpMessageRequest, McpMessageResponse, SdkControlRequest, SdkRequest,
};
use crate::session::queue::{ByteBudget, json_size};
use crate::transport::LineWriter;

/// How many bytes of server notifications may wait for the CLI to read its
/// stdin. Past it, a notification is dropped and logged: they are advisory
/// (progress, log lines, `list_changed`), and a CLI this far behind is not
/// reading at all.
pub(crate) const NOTIFICATION_BUDGET: usize = 16 << 20;

struct Entry {
    server: InProcessServer,
    session: Session,
}

/// The in-process servers of one CLI session, by name.
pub(crate) struct Bridge {
    servers: RwLock<HashMap<String, Arc<Entry>>>,
    outbox: Arc<Outbox>,
}

impl Bridge {
    /// A bridge whose servers' notifications go to `outbox`.
    pub(crate) fn new(outbox: Arc<Outbox>) -> Self {
        Self {
            servers: RwLock::new(HashMap::new()),
            outbox,
        }
    }

    /// Adds (or replaces) a server.
    pub(crate) fn insert(&self, server: impl Into<InProcessServer>) {
        let server = server.into();
        let name = server.name().to_owned();
        let outbox = self.outbox.clone();
        let for_cli = name.clone();
        let session = Session::with_notifier(move |message| outbox.push(&for_cli, message));
        let entry = Arc::new(Entry { server, session });
        self.servers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name, entry);
    }

    /// Keeps only the servers named in `names`.
    pub(crate) fn retain(&self, names: &[String]) {
        self.servers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|name, _| names.contains(name));
    }

    /// The names of the servers, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }

    /// Answers one CLI→SDK `mcp_message`: the payload of the success answer,
    /// `{"mcp_response": …}`. The message is moved to the server, never
    /// copied.
    pub(crate) async fn reply(&self, request: McpMessageRequest) -> Value {
        let McpMessageRequest {
            server_name,
            message,
            ..
        } = request;
        let entry = self
            .servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&server_name)
            .cloned();
        let reply = match entry {
            Some(entry) => {
                let ctx = RequestContext::with_session(entry.session.clone());
                entry.server.handler().handle(message, ctx).await
            }
            None if jsonrpc::kind(&message) == jsonrpc::Kind::Request => {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                Some(jsonrpc::error_response(
                    &id,
                    ErrorObject::new(
                        jsonrpc::METHOD_NOT_FOUND,
                        format!("Server '{server_name}' not found"),
                    ),
                ))
            }
            None => None,
        };
        reply
            .map_or_else(
                McpMessageResponse::notification_ack,
                McpMessageResponse::new,
            )
            .into_value()
    }
}

/// Server → CLI messages waiting to be written, bounded by
/// [`NOTIFICATION_BUDGET`] bytes.
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<(String, Value, usize)>,
    budget: Arc<ByteBudget>,
    dropped: AtomicU64,
}

/// The writing end of an [`Outbox`], for [`pump`].
pub(crate) struct OutboxReader {
    rx: mpsc::UnboundedReceiver<(String, Value, usize)>,
    budget: Arc<ByteBudget>,
}

impl Outbox {
    /// An outbox holding up to `limit` bytes, and its reader.
    pub(crate) fn new(limit: usize) -> (Arc<Self>, OutboxReader) {
        let (tx, rx) = mpsc::unbounded_channel();
        let budget = Arc::new(ByteBudget::new(limit));
        let outbox = Self {
            tx,
            budget: budget.clone(),
            dropped: AtomicU64::new(0),
        };
        (Arc::new(outbox), OutboxReader { rx, budget })
    }

    /// Queues one message from `server` for the CLI; drops it (and says so)
    /// when the outbox is full.
    pub(crate) fn push(&self, server: &str, message: Value) {
        let size = json_size(&message);
        if !self.budget.try_reserve(size) {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            let method = message.get("method").and_then(|m| m.as_str());
            tracing::warn!(
                server,
                method,
                dropped,
                "the CLI is not reading its stdin: a server notification was dropped \
                 ({} bytes are already waiting)",
                self.budget.limit()
            );
            return;
        }
        if self.tx.send((server.to_owned(), message, size)).is_err() {
            self.budget.release(size);
        }
    }

    /// How many notifications were dropped because the outbox was full.
    #[cfg(test)]
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Writes the servers' messages to the CLI until the session closes.
pub(crate) async fn pump(mut outbox: OutboxReader, writer: LineWriter, closed: CancellationToken) {
    let mut n = 0u64;
    loop {
        let next = tokio::select! {
            next = outbox.rx.recv() => next,
            () = closed.cancelled() => None,
        };
        let Some((server, message, size)) = next else {
            return;
        };
        let frame = SdkControlRequest::new(
            format!("mcp_notify_{n}"),
            SdkRequest::mcp_message(server, message),
        );
        n += 1;
        let sent = tokio::select! {
            sent = writer.send(&frame) => sent,
            () = closed.cancelled() => return,
        };
        outbox.budget.release(size);
        if let Err(e) = sent {
            tracing::debug!("writing a server notification to the CLI failed: {e}");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Server;
    use serde_json::json;

    #[tokio::test]
    async fn notifications_are_acknowledged_with_a_result_without_id() {
        let (outbox, _reader) = Outbox::new(1 << 20);
        let bridge = Bridge::new(outbox);
        bridge.insert(Server::builder("calc", "1.0.0").build());
        let ack = json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}});
        let note = McpMessageRequest::new(
            "calc",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert_eq!(bridge.reply(note).await, ack);
        // A notification for a server we do not have: acknowledged too.
        let note = McpMessageRequest::new("nope", json!({"jsonrpc": "2.0", "method": "x"}));
        assert_eq!(bridge.reply(note).await, ack);
        // A request for it: a JSON-RPC error with its id.
        let req =
            McpMessageRequest::new("nope", json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
        let reply = bridge.reply(req).await;
        assert_eq!(reply["mcp_response"]["id"], 7);
        assert_eq!(reply["mcp_response"]["error"]["code"], -32601);
        let ping = McpMessageRequest::new(
            "calc",
            json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
        );
        assert_eq!(
            bridge.reply(ping).await,
            json!({"mcp_response": {"jsonrpc": "2.0", "id": "p", "result": {}}})
        );
    }

    #[test]
    fn a_full_outbox_drops_and_counts_instead_of_growing() {
        let (outbox, mut reader) = Outbox::new(1000);
        let note = || json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x".repeat(400)}});
        outbox.push("calc", note());
        outbox.push("calc", note());
        outbox.push("calc", note());
        assert_eq!(outbox.dropped(), 1);
        let (server, _, size) = reader.rx.try_recv().unwrap();
        assert_eq!(server, "calc");
        reader.budget.release(size);
        outbox.push("calc", note());
        assert_eq!(outbox.dropped(), 1);
    }
}

#[cfg(all(test, feature = "rmcp"))]
mod rules;
