//! rmcp servers served through this crate's [`Handler`] (feature `rmcp`).
//!
//! [rmcp](https://docs.rs/rmcp), the official Rust MCP SDK, writes servers
//! as a [`ServerHandler`](rmcp::ServerHandler), usually with its
//! `#[tool_router]` / `#[tool]` macros. [`RmcpServer`] makes any of them a
//! [`Handler`], so every transport of this crate serves it — stdio,
//! Streamable HTTP, the in-process client — and so does the Claude Agent
//! SDK's bridge, in process.
//!
//! This crate does not re-export rmcp: depend on it yourself, at a version
//! this crate's requirement allows (3.11 or a later 3.x), with the
//! features your server uses (`server`, `macros`):
//!
//! ```toml
//! [dependencies]
//! claude-code-agent-mcp = { version = "0.1", features = ["rmcp"] }
//! rmcp = { version = "3.11", features = ["server", "macros"] }
//! ```
//!
//! ```
//! use claude_code_agent_mcp::rmcp_server::RmcpServer;
//! use claude_code_agent_mcp::{Handler, RequestContext, Session};
//! use rmcp::ServerHandler;
//! use serde_json::json;
//!
//! #[derive(Clone)]
//! struct Quiet;
//! impl ServerHandler for Quiet {}
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = RmcpServer::new(Quiet);
//! let ctx = RequestContext::with_session(Session::new());
//! let init = json!({"jsonrpc":"2.0","id":"i","method":"initialize","params":{
//!     "protocolVersion":"2025-06-18","capabilities":{},
//!     "clientInfo":{"name":"doc","version":"1"}}});
//! let reply = server.handle(init, ctx.clone()).await.unwrap();
//! assert_eq!(reply["id"], "i");
//! assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
//! let pong = server.handle(json!({"jsonrpc":"2.0","id":2,"method":"ping"}), ctx).await;
//! assert_eq!(pong, Some(json!({"jsonrpc":"2.0","id":2,"result":{}})));
//! # });
//! ```
//!
//! # How it is served, and why so
//!
//! rmcp has no public way to call a handler outside its own service loop
//! (a handler's `RequestContext` needs a `Peer`, which only the loop
//! makes). So each connection (each [`Session`]; one shared link for
//! contexts without one) gets a real rmcp service loop, fed through an
//! in-memory channel of typed messages: no bytes, no framing. The loop does
//! what rmcp does for any transport — the `initialize` handshake and its
//! version negotiation (the client's version is echoed when the server
//! speaks it), `ping`, `-32601` for unknown methods, progress and logging
//! through its `Peer` — and what it writes comes back to the session's
//! notifier (or the request's own response stream), like a native
//! server's notifications.
//!
//! What rmcp does not guarantee, the adapter does:
//!
//! * **Every request is answered exactly once.** A handler panic is caught
//!   inside the loop (an rmcp request task would otherwise die without an
//!   answer): `tools/call` becomes an `isError` result, anything else a
//!   `-32603` error. A service that stops fails its requests with `-32603`.
//! * **A timeout**, [`ServerBuilder::tool_timeout`](crate::ServerBuilder::tool_timeout)'s
//!   default ([`limits::TOOL_TIMEOUT_ENV`],
//!   else 60 s) unless [`RmcpServer::tool_timeout`] sets one; the handler's
//!   cancellation token fires and its future is dropped. With
//!   [`RmcpServer::reset_timeout_on_progress`], each progress notification
//!   the handler sends for a request restarts its timeout, up to a cap
//!   (as [`ServerBuilder::reset_timeout_on_progress`](crate::ServerBuilder::reset_timeout_on_progress)).
//! * **Cancellation is answered.** rmcp drops the answer of a request the
//!   client cancelled; the adapter answers it (`isError`, "cancelled") as
//!   a native server does.
//! * **The result size cap** of native servers
//!   ([`limits::DEFAULT_MAX_RESULT_CHARS`]).
//! * **Ids as sent.** Requests reach the loop under ids of the adapter's
//!   own, so any id the client uses is answered with that id.
//! * **The access token.** On a protected resource (Streamable HTTP with
//!   OAuth), each request's verified [`AccessToken`](crate::server::AccessToken)
//!   is in the rmcp handler's `RequestContext::extensions`
//!   (`context.extensions.get::<AccessToken>()`, or the macros'
//!   `Extension<AccessToken>` parameter), as native tools have it from
//!   [`ToolContext::access_token`](crate::server::ToolContext::access_token).
//! * A repeated `initialize` (the Claude Code CLI reconnecting) starts a
//!   fresh service for the session, so it is negotiated like the first.
//!
//! Notifications never get a reply. The session's end ends its service.

mod guard;
mod link;

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::server::{Handler, RequestContext, Session, SessionInner, cap, limits};
use crate::types::CallToolResult;
use guard::Limits;
use link::{Link, Start};

/// An rmcp [`ServerHandler`](rmcp::ServerHandler) as a [`Handler`].
///
/// Cheap to clone; clones share the handler and its connections.
#[derive(Clone)]
pub struct RmcpServer {
    shared: Arc<Shared>,
}

struct Shared {
    starter: Arc<dyn Start>,
    limits: Limits,
    max_result_chars: usize,
    /// One link per session, held until the session is gone.
    links: Mutex<Vec<(Weak<SessionInner>, Arc<Link>)>>,
    /// The link of contexts without a session.
    detached: Mutex<Option<Arc<Link>>>,
    /// Cancelled when the last clone goes: ends the detached link.
    dropped: CancellationToken,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}

impl std::fmt::Debug for RmcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmcpServer")
            .field("tool_timeout", &self.shared.limits.timeout)
            .field("progress_cap", &self.shared.limits.progress_cap)
            .field("max_result_chars", &self.shared.max_result_chars)
            .finish_non_exhaustive()
    }
}

impl RmcpServer {
    /// Serves `handler` (any rmcp `ServerHandler`, including a
    /// `#[tool_router]` server).
    pub fn new<H: rmcp::ServerHandler>(handler: H) -> Self {
        Self::with_parts(
            Arc::new(Arc::new(handler)),
            Limits {
                timeout: limits::timeout_from_env(),
                progress_cap: None,
            },
            limits::DEFAULT_MAX_RESULT_CHARS,
        )
    }

    fn with_parts(starter: Arc<dyn Start>, limits: Limits, max_result_chars: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                starter,
                limits,
                max_result_chars,
                links: Mutex::new(Vec::new()),
                detached: Mutex::new(None),
                dropped: CancellationToken::new(),
            }),
        }
    }

    /// How long one request may run before it is stopped (`tools/call`:
    /// an `isError` result; others: `-32603`). Set it before serving:
    /// the server returned starts with no connection.
    pub fn tool_timeout(self, timeout: Duration) -> Self {
        let limits = Limits {
            timeout,
            ..self.shared.limits
        };
        let cap = self.shared.max_result_chars;
        Self::with_parts(Arc::clone(&self.shared.starter), limits, cap)
    }

    /// Lets progress keep requests alive: each progress notification the
    /// handler sends for a request (through its `Peer`, with the request's
    /// progress token) restarts the request's timeout, up to `max_total`
    /// after it started. By default the timeout is fixed. Set it before
    /// serving, like [`tool_timeout`](Self::tool_timeout).
    pub fn reset_timeout_on_progress(self, max_total: Duration) -> Self {
        let limits = Limits {
            progress_cap: Some(max_total),
            ..self.shared.limits
        };
        let cap = self.shared.max_result_chars;
        Self::with_parts(Arc::clone(&self.shared.starter), limits, cap)
    }

    /// The cap on the text of one tool result, in characters (see
    /// [`ServerBuilder::max_result_chars`](crate::ServerBuilder::max_result_chars)).
    pub fn max_result_chars(self, chars: usize) -> Self {
        let limits = self.shared.limits;
        Self::with_parts(Arc::clone(&self.shared.starter), limits, chars)
    }

    /// The timeout in force.
    pub fn timeout(&self) -> Duration {
        self.shared.limits.timeout
    }

    /// The link of this context's connection; a new one when there is none,
    /// the old one's service stopped, or `fresh` (an `initialize`).
    fn link(&self, session: Option<&Session>, fresh: bool) -> Arc<Link> {
        let shared = &self.shared;
        let start = |weak: Option<Weak<SessionInner>>, ended: &CancellationToken| {
            Link::start(&*shared.starter, weak, ended.child_token(), shared.limits)
        };
        let Some(session) = session else {
            let mut detached = shared
                .detached
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(link) = detached.as_ref().filter(|l| !fresh && !l.is_closed()) {
                return Arc::clone(link);
            }
            let link = start(None, &shared.dropped);
            *detached = Some(Arc::clone(&link));
            return link;
        };
        let weak = session.downgrade();
        let mut links = shared.links.lock().unwrap_or_else(PoisonError::into_inner);
        links.retain(|(w, _)| w.strong_count() > 0);
        if let Some(i) = links.iter().position(|(w, _)| Weak::ptr_eq(w, &weak)) {
            if !fresh && !links[i].1.is_closed() {
                return Arc::clone(&links[i].1);
            }
            links.swap_remove(i);
        }
        let link = start(Some(weak.clone()), &session.ended());
        links.push((weak, Arc::clone(&link)));
        link
    }

    /// The live link of this context's connection, if there is one.
    fn existing_link(&self, session: Option<&Session>) -> Option<Arc<Link>> {
        let shared = &self.shared;
        let found = match session {
            None => shared
                .detached
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            Some(session) => {
                let weak = session.downgrade();
                let links = shared.links.lock().unwrap_or_else(PoisonError::into_inner);
                links
                    .iter()
                    .find(|(w, _)| Weak::ptr_eq(w, &weak))
                    .map(|(_, l)| Arc::clone(l))
            }
        };
        found.filter(|l| !l.is_closed())
    }

    async fn serve(&self, message: Value, ctx: RequestContext) -> Option<Value> {
        let kind = jsonrpc::kind(&message);
        let Value::Object(map) = message else {
            return Some(invalid(
                &Value::Null,
                "a JSON-RPC message must be an object",
            ));
        };
        let parts = ctx.into_parts();
        let (session, stream, access_token) = (parts.session, parts.stream, parts.access_token);
        if kind != jsonrpc::Kind::Request {
            if kind == jsonrpc::Kind::Invalid {
                let id = map.get("id").cloned().unwrap_or(Value::Null);
                return Some(invalid(
                    &id,
                    "neither a request, a notification nor a response",
                ));
            }
            // A notification or a response: forwarded, never answered.
            if let Some(link) = self.existing_link(session.as_ref()) {
                link.send_other(map);
            }
            return None;
        }
        let client_id = map.get("id").cloned().unwrap_or(Value::Null);
        if RequestId::from_value(&client_id).is_none() {
            return Some(invalid(
                &Value::Null,
                "a request id must be a number or a string",
            ));
        }
        let Some(method) = map.get("method").and_then(Value::as_str).map(str::to_owned) else {
            return Some(invalid(&client_id, "\"method\" must be a string"));
        };
        let tool = (method == "tools/call").then(|| {
            map.get("params")
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        });
        let link = self.link(session.as_ref(), method == "initialize");
        let reply =
            match link.send_request(map, client_id.clone(), tool.clone(), stream, access_token) {
                Ok(pending) => pending.answer().await,
                Err(error) => Some(jsonrpc::error_response(&client_id, error)),
            };
        let mut reply =
            reply.unwrap_or_else(|| jsonrpc::error_response(&client_id, link::stopped()));
        if let Some(tool) = &tool {
            cap_result(&mut reply, self.shared.max_result_chars, tool);
        }
        Some(reply)
    }
}

impl Handler for RmcpServer {
    fn handle(&self, message: Value, ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
        Box::pin(self.serve(message, ctx))
    }
}

fn invalid(id: &Value, message: &str) -> Value {
    jsonrpc::error_response(id, ErrorObject::invalid_request(message))
}

/// Caps a `tools/call` result at `limit` characters, as a native server
/// does (`server/cap.rs`: the whole result, whatever its parts). rmcp's
/// output schemas are not known here, so losing `structuredContent` to the
/// cap does not turn the result into an error.
fn cap_result(reply: &mut Value, limit: usize, tool: &str) {
    let Some(result) = reply.get_mut("result") else {
        return;
    };
    // Fast path: a result whose whole JSON fits has fewer characters.
    if cap::json_fits(result, limit) {
        return;
    }
    if let Ok(mut capped) = serde_json::from_value::<CallToolResult>(result.take()) {
        cap::cap_result(&mut capped, limit, tool, false);
        *result = capped.into_value();
    }
}
