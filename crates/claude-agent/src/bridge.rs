//! The bridge: in-process MCP servers answering the CLI's `mcp_message`
//! control requests (docs/protocol.md §5).
//!
//! The CLI runs one MCP client per in-process server whose transport is the
//! control channel. Every JSON-RPC message for a server arrives as a
//! `control_request` of subtype `mcp_message`; the bridge hands it to the
//! server's [`handle`](crate::mcp::Server::handle) and wraps the reply as
//! `{"mcp_response": <JSON-RPC reply>}`. Notifications (and JSON-RPC responses
//! the CLI sends to a server) are acknowledged with an empty JSON-RPC result:
//! a control error there would make the CLI drop the server.
//!
//! Each server keeps one [`mcp::Session`](crate::mcp::Session) for its CLI
//! connection, so `notifications/cancelled` reaches the call it names, and the
//! server's own notifications (`tools/list_changed`, progress, logging) go back
//! to the CLI as SDK→CLI `mcp_message` requests.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::{Value, json};

use crate::mcp::jsonrpc::{self, ErrorObject};
use crate::mcp::{RequestContext, Server, Session};

/// Sends one server-originated JSON-RPC message to the CLI.
pub(crate) type ServerNotifier = Arc<dyn Fn(&str, Value) + Send + Sync>;

struct Entry {
    server: Server,
    session: Session,
}

/// The in-process servers of one CLI session, by name.
pub(crate) struct Bridge {
    servers: RwLock<HashMap<String, Arc<Entry>>>,
    notifier: ServerNotifier,
}

impl Bridge {
    pub(crate) fn new(notifier: ServerNotifier) -> Self {
        Self {
            servers: RwLock::new(HashMap::new()),
            notifier,
        }
    }

    /// Adds (or replaces) a server.
    pub(crate) fn insert(&self, server: Server) {
        let name = server.name().to_owned();
        let notifier = self.notifier.clone();
        let for_cli = name.clone();
        let session = Session::with_notifier(move |message| notifier(&for_cli, message));
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

    /// Answers one `mcp_message`: returns the JSON-RPC reply (for a
    /// notification or response: the acknowledgement) that goes into the
    /// control response as `mcp_response`.
    pub(crate) async fn handle(&self, server_name: &str, message: Value) -> Value {
        let entry = self
            .servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(server_name)
            .cloned();
        let is_request = jsonrpc::kind(&message) == jsonrpc::Kind::Request;
        let reply = match entry {
            Some(entry) => {
                let ctx = RequestContext::with_session(entry.session.clone());
                entry.server.handle(message, ctx).await
            }
            None if is_request => {
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
        reply.unwrap_or_else(ack)
    }
}

/// The acknowledgement of a notification: an empty JSON-RPC result.
fn ack() -> Value {
    json!({ "jsonrpc": "2.0", "result": {} })
}
