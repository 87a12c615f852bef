//! One connection to an rmcp service: its loop fed through an in-memory
//! channel, the requests it is answering, and the pump that reads what it
//! writes.
//!
//! Requests reach the service under ids of the link's own (`1, 2, …`), so
//! whatever ids the client uses (strings, `1.5`, a number past `i64`, one
//! reused while still in flight) the service can parse them and each answer
//! finds its request. The client's id is kept with the waiter and put back
//! on the reply.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};

use futures::StreamExt;
use futures::channel::mpsc;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, JsonRpcMessage, ServerJsonRpcMessage};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::guard::{Clocks, Guarded, Limits};
use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::server::SessionInner;
use crate::server::{AccessToken, ResponseStream};
use crate::transport::RequestTable;

/// A request forwarded to the service, waiting for its answer.
pub(super) struct Waiter {
    tx: oneshot::Sender<Value>,
    /// The client's id, put back on the reply.
    pub(super) client_id: Value,
    /// `tools/call` only: the tool's name.
    pub(super) tool: Option<String>,
    /// `_meta.progressToken`: progress for this request goes to `stream`.
    progress_token: Option<Value>,
    stream: Option<Arc<dyn ResponseStream>>,
}

/// Ours: requests forwarded to the service, by the link's id. Theirs: the
/// client's id of each, mapped to the link's (for `notifications/cancelled`).
type Table = RequestTable<RequestId, Waiter, RequestId>;

/// Starts one service loop on a channel pair; implemented per handler type.
pub(super) trait Start: Send + Sync + 'static {
    fn start(
        &self,
        from_client: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
        to_client: mpsc::UnboundedSender<ServerJsonRpcMessage>,
        ended: CancellationToken,
        limits: Limits,
        clocks: Arc<Clocks>,
    );
}

impl<H: rmcp::ServerHandler> Start for Arc<H> {
    fn start(
        &self,
        from_client: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
        to_client: mpsc::UnboundedSender<ServerJsonRpcMessage>,
        ended: CancellationToken,
        limits: Limits,
        clocks: Arc<Clocks>,
    ) {
        let service = Guarded {
            inner: Arc::clone(self),
            limits,
            clocks,
        };
        tokio::spawn(async move {
            let serve = async {
                match rmcp::serve_server(service, (to_client, from_client)).await {
                    // Dropping the running service (when the link ends)
                    // cancels its loop and the requests it runs.
                    Ok(running) => {
                        let _ = running.waiting().await;
                    }
                    Err(e) => tracing::debug!("an rmcp service ended before serving: {e}"),
                }
            };
            tokio::select! {
                () = serve => {}
                () = ended.cancelled() => {}
            }
        });
    }
}

/// One connection: a live service loop and its requests in flight.
pub(super) struct Link {
    to_service: mpsc::UnboundedSender<ClientJsonRpcMessage>,
    table: Arc<Table>,
    next_id: AtomicI64,
    /// Ends the service and the pump: the session ended or the link was replaced.
    ended: CancellationToken,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

impl Link {
    /// Starts a service and the pump that routes what it writes: answers to
    /// their waiters, the rest to `session` (or to a request's stream).
    pub(super) fn start(
        starter: &dyn Start,
        session: Option<Weak<SessionInner>>,
        ended: CancellationToken,
        limits: Limits,
    ) -> Arc<Self> {
        let (to_service, from_client) = mpsc::unbounded();
        let (to_client, from_service) = mpsc::unbounded();
        let table = Arc::new(Table::new());
        let clocks = Arc::new(Clocks::default());
        starter.start(
            from_client,
            to_client,
            ended.clone(),
            limits,
            Arc::clone(&clocks),
        );
        tokio::spawn(pump(
            from_service,
            Arc::clone(&table),
            clocks,
            session,
            ended.clone(),
        ));
        Arc::new(Self {
            to_service,
            table,
            next_id: AtomicI64::new(1),
            ended,
        })
    }

    /// Whether the service is gone (its loop ended); a new link is needed.
    pub(super) fn is_closed(&self) -> bool {
        self.table.is_closed() || self.to_service.is_closed()
    }

    /// Forwards one request under an id of the link's own and registers its
    /// waiter. `Err` is the error to answer with at once.
    pub(super) fn send_request(
        &self,
        mut message: Map<String, Value>,
        client_id: Value,
        tool: Option<String>,
        stream: Option<Arc<dyn ResponseStream>>,
        access_token: Option<Arc<AccessToken>>,
    ) -> Result<Pending<'_>, ErrorObject> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        message.insert("id".into(), id.to_value());
        let progress_token = message
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("progressToken"))
            .cloned();
        let mut parsed: ClientJsonRpcMessage = serde_json::from_value(Value::Object(message))
            .map_err(|e| ErrorObject::invalid_params(format!("malformed request: {e}")))?;
        // The request's verified access token, where rmcp hands a handler
        // what its transport knows: `RequestContext::extensions`.
        if let (JsonRpcMessage::Request(request), Some(token)) = (&mut parsed, access_token) {
            request
                .request
                .extensions_mut()
                .insert(AccessToken::clone(&token));
        }
        let (tx, rx) = oneshot::channel();
        let client_key = RequestId::from_value(&client_id);
        let waiter = Waiter {
            tx,
            client_id,
            tool,
            progress_token,
            stream,
        };
        if self.table.register_ours(id.clone(), waiter).is_err() {
            return Err(stopped());
        }
        // A client id reused while in flight: that call cannot be cancelled by id.
        let cancellable =
            client_key.filter(|key| self.table.register_theirs(key.clone(), id.clone()).is_ok());
        let pending = Pending {
            link: self,
            id,
            client_key: cancellable,
            rx,
        };
        if self.to_service.unbounded_send(parsed).is_err() {
            return Err(stopped());
        }
        Ok(pending)
    }

    /// Forwards a notification or a response from the client. A
    /// `notifications/cancelled` naming a request in flight also answers
    /// it at once (rmcp drops the answer of a cancelled request, and every
    /// request here is answered exactly once).
    pub(super) fn send_other(&self, mut message: Map<String, Value>) {
        if message.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            let client_id = message
                .get("params")
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value);
            let Some(ours) = client_id.and_then(|id| self.table.complete_theirs(&id)) else {
                return;
            };
            if let Some(waiter) = self.table.complete_ours(&ours) {
                let reply = cancelled_reply(&waiter);
                let _ = waiter.tx.send(reply);
            }
            if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
                params.insert("requestId".into(), ours.to_value());
            }
        }
        match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(message)) {
            Ok(parsed) => {
                let _ = self.to_service.unbounded_send(parsed);
            }
            Err(e) => tracing::debug!("a message the rmcp service cannot read was dropped: {e}"),
        }
    }

    /// Tells the service a request is no longer wanted (its caller gave up).
    fn cancel(&self, ours: &RequestId) {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": ours.to_value(), "reason": "the caller stopped waiting"}});
        if let Ok(parsed) = serde_json::from_value::<ClientJsonRpcMessage>(note) {
            let _ = self.to_service.unbounded_send(parsed);
        }
    }
}

/// A request in flight; dropping it before the answer withdraws the request.
pub(super) struct Pending<'a> {
    link: &'a Link,
    id: RequestId,
    client_key: Option<RequestId>,
    rx: oneshot::Receiver<Value>,
}

impl Pending<'_> {
    /// The service's answer, with the client's id; `None` if the service
    /// stopped first.
    pub(super) async fn answer(mut self) -> Option<Value> {
        (&mut self.rx).await.ok()
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(key) = &self.client_key {
            self.link.table.complete_theirs(key);
        }
        if self.link.table.complete_ours(&self.id).is_some() {
            // Not answered: the caller gave up (or the link failed to send).
            self.link.cancel(&self.id);
        }
    }
}

/// The error of a request the service stopped before answering.
pub(super) fn stopped() -> ErrorObject {
    ErrorObject::internal("the rmcp server stopped before answering")
}

fn cancelled_reply(waiter: &Waiter) -> Value {
    match &waiter.tool {
        Some(tool) => jsonrpc::response(
            &waiter.client_id,
            crate::types::CallToolResult::error(format!(
                "Tool \"{tool}\" was cancelled by the client"
            ))
            .into_value(),
        ),
        None => jsonrpc::error_response(
            &waiter.client_id,
            ErrorObject::internal("the request was cancelled by the client"),
        ),
    }
}

/// Routes what the service writes until it stops or the link ends; then
/// closes the table, so every waiter left fails at once.
async fn pump(
    mut from_service: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    table: Arc<Table>,
    clocks: Arc<Clocks>,
    session: Option<Weak<SessionInner>>,
    ended: CancellationToken,
) {
    loop {
        let message = tokio::select! {
            message = from_service.next() => message,
            () = ended.cancelled() => None,
        };
        let Some(message) = message else { break };
        let value = match serde_json::to_value(&message) {
            Ok(value) => value,
            Err(e) => {
                tracing::warn!("an rmcp message could not be encoded: {e}");
                continue;
            }
        };
        route(value, &table, &clocks, session.as_ref());
    }
    drop(table.close());
}

fn route(mut value: Value, table: &Table, clocks: &Clocks, session: Option<&Weak<SessionInner>>) {
    if jsonrpc::kind(&value) == jsonrpc::Kind::Response {
        let id = value.get("id").and_then(RequestId::from_value);
        if let Some(waiter) = id.and_then(|id| table.complete_ours(&id)) {
            value["id"] = waiter.client_id.clone();
            let _ = waiter.tx.send(value);
        }
        return;
    }
    // Progress for a request answered on a stream of its own goes there.
    let token = (value.get("method").and_then(Value::as_str) == Some("notifications/progress"))
        .then(|| {
            value
                .get("params")
                .and_then(|p| p.get("progressToken"))
                .cloned()
        })
        .flatten();
    if let Some(token) = token {
        // The request that made progress lives longer (with a progress cap).
        clocks.tick(&token.to_string());
        let mut stream = None;
        table.for_each_ours(|_, waiter| {
            if waiter.progress_token.as_ref() == Some(&token) {
                stream = waiter.stream.clone();
            }
        });
        if let Some(stream) = stream {
            stream.send(value);
            return;
        }
    }
    if let Some(session) = session.and_then(Weak::upgrade) {
        crate::server::Session::from_inner(session).notify(value);
    }
}
