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
//! * **Server → user.** The CLI does not show MCP progress to anyone, so
//!   the bridge delivers a tool's `notifications/progress` first-hand as a
//!   [`Message::McpProgress`] into the user's message stream, naming the
//!   server, the tool and the model's `tool_use` id (it keeps them per call
//!   in flight, by progress token: [`Progress`]). Progress is advisory:
//!   when the user's queue is full it is dropped, never ending the session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::__private::{ToolCallReply, ToolCallText};
use crate::mcp::jsonrpc::{self, ErrorObject};
use crate::mcp::{RequestContext, Session};
use crate::message::{McpProgress, Message};
use crate::protocol::{
    InProcessServer, McpMessageRequest, McpMessageResponse, SdkControlRequest, SdkRequest,
};
use crate::queue::{ByteBudget, WeakMessageSender, json_size};
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

/// A tool call for one of our own servers ([`Bridge::tool_call`]).
pub(crate) struct ToolCall {
    entry: Arc<Entry>,
    call: ToolCallText,
}

impl ToolCall {
    /// The call, as the CLI sent it.
    pub(crate) fn text(&self) -> &ToolCallText {
        &self.call
    }
}

/// The servers of a bridge at one moment ([`Bridge::snapshot`]).
pub(crate) struct Snapshot(HashMap<String, Arc<Entry>>);

/// The in-process servers of one CLI session, by name.
pub(crate) struct Bridge {
    servers: RwLock<HashMap<String, Arc<Entry>>>,
    outbox: Arc<Outbox>,
    progress: Arc<Progress>,
}

impl Bridge {
    /// A bridge whose servers' notifications go to `outbox`, and their
    /// progress also to `user` (the user's message queue), if given.
    pub(crate) fn new(outbox: Arc<Outbox>, user: Option<WeakMessageSender>) -> Self {
        Self {
            servers: RwLock::new(HashMap::new()),
            outbox,
            progress: Arc::new(Progress {
                user,
                calls: Mutex::new(Vec::new()),
                next: AtomicU64::new(0),
            }),
        }
    }

    /// Whether `name` is one of the in-process servers.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(name)
    }

    /// Gives server `name` a fresh per-connection session (no log level,
    /// no calls in flight), as a new connection would have: for a
    /// reconnect, between the CLI dropping the old connection and opening
    /// the new one.
    pub(crate) fn renew_session(&self, name: &str) {
        let server = self
            .servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(|entry| entry.server.clone());
        if let Some(server) = server {
            self.insert(server);
        }
    }

    /// Adds (or replaces) a server.
    pub(crate) fn insert(&self, server: impl Into<InProcessServer>) {
        let server = server.into();
        let name = server.name().to_owned();
        let outbox = self.outbox.clone();
        let progress = self.progress.clone();
        let for_cli = name.clone();
        let session = Session::with_notifier(move |message| {
            progress.deliver(&for_cli, &message);
            outbox.push(&for_cli, message);
        });
        let entry = Arc::new(Entry { server, session });
        self.servers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name, entry);
    }

    /// The servers as they are now, for [`restore`](Self::restore).
    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot(
            self.servers
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }

    /// Puts the servers back as they were at `snapshot` (the same
    /// instances, with their sessions).
    pub(crate) fn restore(&self, snapshot: Snapshot) {
        *self.servers.write().unwrap_or_else(|e| e.into_inner()) = snapshot.0;
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

    /// A `tools/call` for one of our own [`Server`](crate::mcp::Server)s,
    /// decoded straight from the text of the JSON-RPC `message` for it:
    /// what [`call_tool`](Self::call_tool) serves. `None` for anything else
    /// (another message, another handler, a server we do not have): that
    /// goes to [`reply`](Self::reply).
    pub(crate) fn tool_call(&self, server_name: &str, message: &str) -> Option<ToolCall> {
        let entry = self
            .servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(server_name)
            .filter(|entry| entry.server.native().is_some())
            .cloned()?;
        let call = ToolCallText::from_text(message)?;
        Some(ToolCall { entry, call })
    }

    /// Serves a tool call of [`tool_call`](Self::tool_call): its JSON-RPC
    /// reply, as [`reply`](Self::reply) would have answered it.
    pub(crate) async fn call_tool(&self, call: ToolCall) -> ToolCallReply {
        let ToolCall { entry, call } = call;
        let server = entry.server.name();
        let _call = call
            .meta()
            .and_then(|meta| self.progress.track_call(server, Some(call.name()), meta));
        let ctx = RequestContext::with_session(entry.session.clone());
        let native = entry.server.native().expect("only native servers' calls");
        call.serve(native, ctx).await
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
                let _call = self.progress.track(&server_name, &message);
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

/// The tool calls in flight that may report progress, by server and
/// progress token, and where their progress goes.
pub(crate) struct Progress {
    user: Option<WeakMessageSender>,
    /// A short list (the CLI's calls in flight), scanned: cheaper than a
    /// hash map for the handful of entries it holds, and an entry is added
    /// and removed on every tool call.
    calls: Mutex<Vec<Call>>,
    /// Numbers the entries of `calls`, so that a guard removes its own.
    next: AtomicU64,
}

/// A call in flight: how its progress is recognised, and what the user is
/// told about it besides the numbers.
#[derive(Clone)]
struct Call {
    number: u64,
    server: String,
    token: Value,
    tool: Option<String>,
    tool_use_id: Option<String>,
}

/// Forgets a call when its handling ends (answered, or dropped when
/// withdrawn).
struct Tracked<'a> {
    progress: &'a Progress,
    number: u64,
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        let mut calls = self
            .progress
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(at) = calls.iter().position(|c| c.number == self.number) {
            calls.swap_remove(at);
        }
    }
}

impl Progress {
    /// Remembers a `tools/call` with a progress token until the returned
    /// guard drops.
    fn track(&self, server: &str, message: &Value) -> Option<Tracked<'_>> {
        self.user.as_ref()?;
        if message.get("method").and_then(Value::as_str) != Some("tools/call") {
            return None;
        }
        let params = message.get("params")?;
        let meta = params.get("_meta")?.as_object()?;
        self.track_call(server, params.get("name").and_then(Value::as_str), meta)
    }

    /// [`track`](Self::track) of the call of tool `tool` whose params'
    /// `_meta` is `meta`.
    fn track_call(
        &self,
        server: &str,
        tool: Option<&str>,
        meta: &serde_json::Map<String, Value>,
    ) -> Option<Tracked<'_>> {
        self.user.as_ref()?;
        let token = meta.get("progressToken")?.clone();
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let call = Call {
            number,
            server: server.to_owned(),
            token,
            tool: tool.map(str::to_owned),
            tool_use_id: meta
                .get("claudecode/toolUseId")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(call);
        Some(Tracked {
            progress: self,
            number,
        })
    }

    /// Delivers a server's `notifications/progress` to the user as a
    /// [`Message::McpProgress`]; ignores every other message.
    fn deliver(&self, server: &str, message: &Value) {
        let Some(user) = &self.user else { return };
        if message.get("method").and_then(Value::as_str) != Some("notifications/progress") {
            return;
        }
        let Some(params) = message.get("params") else {
            return;
        };
        let token = params.get("progressToken").cloned().unwrap_or(Value::Null);
        let call = self
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|c| c.server == server && c.token == token)
            .cloned();
        let (tool_name, tool_use_id) = call.map_or((None, None), |c| (c.tool, c.tool_use_id));
        let progress = McpProgress {
            server_name: Some(server.to_owned()),
            tool_name,
            tool_use_id,
            progress: params.get("progress").and_then(Value::as_f64),
            total: params.get("total").and_then(Value::as_f64),
            message: params
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
            progress_token: Some(token),
            ..McpProgress::default()
        };
        let message = Message::McpProgress(progress);
        let size = json_size(&message.to_value());
        user.offer(message, size);
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
pub(crate) async fn pump<W: tokio::io::AsyncWrite + Unpin>(
    mut outbox: OutboxReader,
    writer: LineWriter<W>,
    closed: CancellationToken,
) {
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
        let bridge = Bridge::new(outbox, None);
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

    #[tokio::test]
    async fn tool_progress_reaches_the_user_named_by_tool_and_call() {
        use crate::mcp::{Tool, ToolContext};
        use crate::queue::message_queue;
        let (outbox, mut reader) = Outbox::new(1 << 20);
        let (messages, mut inbox) = message_queue(1 << 20);
        let bridge = Bridge::new(outbox, Some(messages.downgrade()));
        let slow = Tool::new(
            "slow",
            "reports progress",
            |_args: Value, ctx: ToolContext| async move {
                ctx.progress(1.0, Some(2.0), Some("half"));
                "done"
            },
        )
        .input_schema(json!({"type": "object"}));
        bridge.insert(Server::builder("calc", "1.0.0").tool(slow).build());
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "slow", "arguments": {},
            "_meta": {"claudecode/toolUseId": "toolu_1", "progressToken": 5}}});
        let reply = bridge.reply(McpMessageRequest::new("calc", call)).await;
        assert_eq!(
            reply["mcp_response"]["result"]["content"][0]["text"],
            "done"
        );
        let closed = CancellationToken::new();
        let Some(Ok(Message::McpProgress(p))) = inbox.next(&closed).await else {
            panic!("no progress message");
        };
        assert_eq!(
            p.to_value(),
            json!({"type": "mcp_progress", "server_name": "calc", "tool_name": "slow",
                   "tool_use_id": "toolu_1", "progress_token": 5, "progress": 1,
                   "total": 2, "message": "half"})
        );
        // The CLI still gets it too, and the finished call is forgotten.
        let (_, note, _) = reader.rx.try_recv().unwrap();
        assert_eq!(note["method"], "notifications/progress");
        assert!(bridge.progress.calls.lock().unwrap().is_empty());
        // Once the reader is gone, progress is dropped, not queued.
        drop(messages);
        assert!(inbox.next(&closed).await.is_none());
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

    #[tokio::test]
    async fn a_tool_call_served_typed_answers_what_the_json_rpc_path_answers() {
        use crate::mcp::{Tool, ToolContext};
        let tools = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "adds", |v: Value| async move {
                v["a"].as_f64().unwrap_or(0.0) + v["b"].as_f64().unwrap_or(0.0)
            }))
            .tool(
                Tool::new("typed", "takes a number", |v: Value| async move {
                    v.to_string()
                })
                .input_schema(
                    json!({"type": "object", "properties": {"n": {"type": "integer"}},
                                         "required": ["n"]}),
                ),
            )
            .tool(Tool::new("boom", "panics", |_: Value| async {
                if true {
                    panic!("boom");
                }
                "never"
            }))
            .tool(Tool::new(
                "meta",
                "says its tool use id",
                |_: Value, ctx: ToolContext| async move {
                    ctx.tool_use_id().unwrap_or("none").to_owned()
                },
            ))
            .build();
        let (outbox, _reader) = Outbox::new(1 << 20);
        let bridge = Bridge::new(outbox, None);
        bridge.insert(tools);
        let meta = json!({"claudecode/toolUseId": "toolu_1", "progressToken": 3});
        let calls = [
            json!({"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": meta}),
            json!({"name": "add", "arguments": null}),
            json!({"name": "add"}),
            json!({"name": "add", "arguments": [1]}),
            json!({"name": "typed", "arguments": {"n": "x"}}),
            json!({"name": "boom", "arguments": {}}),
            json!({"name": "meta", "arguments": {}, "_meta": meta}),
            json!({"name": "nope", "arguments": {}}),
        ];
        for (n, params) in calls.into_iter().enumerate() {
            for id in [json!(n), json!(format!("s{n}"))] {
                let message = json!({"method": "tools/call", "params": params.clone(),
                                     "jsonrpc": "2.0", "id": id});
                let text = message.to_string();
                let call = bridge.tool_call("calc", &text).expect("served typed");
                let typed = serde_json::to_value(bridge.call_tool(call).await).unwrap();
                let general = bridge
                    .reply(McpMessageRequest::new("calc", message.clone()))
                    .await;
                assert_eq!(json!({"mcp_response": typed}), general, "{message}");
            }
        }
        // What the typed path does not take goes the general way.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","requestState":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}"#,
        ] {
            assert!(bridge.tool_call("calc", text).is_none(), "{text}");
        }
        assert!(
            bridge
                .tool_call(
                    "other",
                    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}"#
                )
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_notification_larger_than_the_outbox_goes_alone_and_the_outbox_recovers() {
        use tokio::io::AsyncBufReadExt;
        const LIMIT: usize = 64 * 1024;
        let (outbox, reader) = Outbox::new(LIMIT);
        let (ours, cli) = tokio::io::duplex(4096);
        let closed = CancellationToken::new();
        let pumping = tokio::spawn(pump(reader, LineWriter::new(ours), closed.clone()));
        let note = |chars: usize| {
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"data": "x".repeat(chars)}})
        };
        let mut lines = tokio::io::BufReader::new(cli).lines();
        for round in 0..3 {
            // Twice the outbox, with nothing else waiting: it goes.
            outbox.push("calc", note(2 * LIMIT));
            // The CLI reads it; the small ones after it go too.
            let line = lines.next_line().await.unwrap().unwrap();
            assert!(line.len() > 2 * LIMIT, "round {round}");
            for _ in 0..3 {
                outbox.push("calc", note(100));
                let line = lines.next_line().await.unwrap().unwrap();
                assert!(line.contains("mcp_notify_"), "round {round}");
            }
            assert_eq!(outbox.dropped(), 0, "round {round}");
        }
        // Everything written: nothing is held.
        outbox.push("calc", note(LIMIT - 200));
        lines.next_line().await.unwrap().unwrap();
        tokio::task::yield_now().await;
        assert_eq!(outbox.budget.used(), 0);
        closed.cancel();
        pumping.await.unwrap();
    }
}

#[cfg(all(test, feature = "rmcp"))]
mod rules;
