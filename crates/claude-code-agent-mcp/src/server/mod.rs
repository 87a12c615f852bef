//! The in-process MCP server.
//!
//! A [`Server`] holds tools and answers JSON-RPC messages through one entry
//! point, [`Server::handle`] (also [`Handler::handle`]), whatever the
//! transport: the Claude Code CLI's `mcp_message` bridge, stdio, HTTP, or an
//! in-process client.
//!
//! ```
//! use claude_code_agent_mcp::{RequestContext, Server, Tool};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: f64, b: f64 }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = Server::builder("calc", "1.0.0")
//!     .tool(Tool::new("add", "Add two numbers", |x: Add| async move { x.a + x.b }))
//!     .build();
//!
//! let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
//!                   "params":{"name":"add","arguments":{"a":2,"b":3}}});
//! let reply = server.handle(call, RequestContext::new()).await.unwrap();
//! assert_eq!(reply, json!({"jsonrpc":"2.0","id":2,
//!     "result":{"content":[{"type":"text","text":"5"}],"isError":false}}));
//!
//! // Notifications get no reply.
//! let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
//! assert_eq!(server.handle(note, RequestContext::new()).await, None);
//! # });
//! ```
//!
//! # Protocol choices
//!
//! * **Unknown tool**: a JSON-RPC error `-32601` whose message names the
//!   tool (as the reference bridges do; the MCP specification's example
//!   uses `-32602`). Either way the Claude Code CLI shows the message to the
//!   model as a failed tool call.
//! * **Cancelled call** (`notifications/cancelled`, or [`Session::cancel`]):
//!   the call's [`CancellationToken`](tokio_util::sync::CancellationToken)
//!   is cancelled and its handler future dropped at once, and the request is
//!   still answered, with an `isError` result saying it was cancelled. The
//!   specification says a receiver *should not* reply to a cancelled
//!   request, but transports here answer each request exactly once (the CLI
//!   bridge must answer every control request) and the CLI ignores the late
//!   answer.
//! * **Tool failures** (invalid arguments, a panic, a timeout, `Err` from the
//!   handler) are `isError` results, which the model can read and act on;
//!   JSON-RPC errors are kept for protocol faults (`-32600` invalid message,
//!   `-32601` unknown method or tool, `-32602` malformed params, `-32603`
//!   internal failure).
//! * **Failures of the server itself are `-32603`**: a resource, template,
//!   prompt or completion handler that panics (even before returning its
//!   future) or outlives the server's tool timeout, anything else that
//!   panics while a message is handled. `handle` never panics, and every
//!   request gets exactly one reply.
//! * **`tools/list`** pages hold [`limits::DEFAULT_PAGE_SIZE`] (1000) tools
//!   unless [`ServerBuilder::page_size`] says otherwise; `nextCursor` is opaque.
//! * **The envelope is strict**: `"jsonrpc"` must be `"2.0"` and an id a
//!   number or a string; anything else with a `method` is answered `-32600`
//!   (with its id when usable, else `null`) — a message with `"id": null` is
//!   an invalid request, not a notification. Replies always carry
//!   `"jsonrpc":"2.0"`. Responses are never answered.
//! * **Batches** (a JSON array of messages) are served only on a session
//!   that negotiated 2025-03-26, the one revision whose receivers must
//!   accept them (at most [`limits::MAX_BATCH_LEN`] messages, answered as
//!   one array; `initialize` may not be batched); other sessions get
//!   `-32600`.
//! * **Requests to the client** go only to clients that declared the
//!   capability they need ([`ToolContext::request`]); one still unanswered
//!   when its tool call ends is withdrawn with `notifications/cancelled`.
//!
//! Calls run concurrently: `handle` holds no lock across an await, so a
//! transport that runs each message in its own task never sees a slow tool
//! delay `ping` or another call. Tool calls need a Tokio runtime with the
//! time driver (for the timeout).

mod auth;
mod builder;
mod call;
pub(crate) mod cap;
mod catalog;
mod completion;
pub(crate) mod contain;
mod context;
mod dispatch;
mod handler;
mod json_schema;
pub mod limits;
mod outbound;
mod prompt;
mod request_state;
mod resource;
mod result;
mod round;
mod schema;
mod session;
mod skill;
pub mod stateless;
mod stdio;
mod task_store;
mod tasks;
mod tool;
mod validate;
pub(crate) mod watchdog;
#[cfg(feature = "http-server")]
pub(crate) mod watched;

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

/// Moved to [`crate::types`]; kept here too.
pub use crate::types::LogLevel;
pub use auth::AccessToken;
pub use builder::ServerBuilder;
pub(crate) use call::{Call, Served, ToolCall};
// For the SDK's bridge (`__private`): no promise.
#[doc(hidden)]
pub use call::{ToolCallReply, ToolCallText};
pub use catalog::RESOURCE_NOT_FOUND;
pub use completion::{CompletionRef, CompletionRequest, MAX_COMPLETION_VALUES};
pub(crate) use contain::panic_message;
pub use context::{RequestContext, ResponseStream, TOOL_USE_ID_META, ToolContext};
pub use handler::ToolHandler;
pub use outbound::{ClientRequestError, DEFAULT_CLIENT_REQUEST_TIMEOUT};
pub use prompt::{
    IntoPromptResult, Prompt, PromptRequest, assistant as prompt_assistant, user as prompt_user,
};
pub use request_state::{
    DEFAULT_REQUEST_STATE_TTL, KeyTooShort, MAX_INPUT_ROUNDS, MAX_REQUEST_STATE_BYTES,
    MIN_REQUEST_STATE_KEY_BYTES, RequestStateKey,
};
pub use resource::{IntoContents, Resource, ResourceRequest, ResourceTemplate};
pub use result::{IntoToolResult, Json, RawResult};
pub use schema::tool_schema_for;
pub use session::Session;
pub use skill::Skill;
#[cfg(test)]
pub(crate) use stdio::serve as serve_lines_within;
pub use stdio::{
    SERVE_MAX_HELD_BYTES, SERVE_MAX_LINE_BYTES, SERVE_MAX_REQUESTS_IN_FLIGHT, ServeOptions,
    serve_lines, serve_lines_with, serve_stdio, serve_stdio_with,
};
pub(crate) use task_store::StoreRef;
pub use task_store::{MemoryTaskStore, StoreError, StoreFuture, StoredTask, TaskStore};
pub use tool::{CLI_MAX_RESULT_SIZE_CHARS, MAX_RESULT_SIZE_CHARS_META, TaskSupport, Tool};

use crate::jsonrpc;
use crate::types::ToolInfo;
pub(crate) use session::SessionInner;

const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// Anything that answers JSON-RPC messages: our [`Server`], or a user's own type.
///
/// Transports are written against this trait, so they can serve a [`Server`]
/// or any other implementation.
pub trait Handler: Send + Sync + 'static {
    /// Answers one message: `Some(reply)` for a request, `None` for a
    /// notification or a response. `ctx` ties the message to its connection.
    fn handle(&self, message: Value, ctx: RequestContext) -> BoxFuture<'_, Option<Value>>;

    /// The tool `name` as `tools/list` describes it, when the handler can
    /// say without a request (a [`Server`] can). Transports use it where
    /// they need a tool's schema outside a call: the Streamable HTTP
    /// server checks `Mcp-Param-*` headers against the tool's
    /// `x-mcp-header` annotations (stateless revision). The default,
    /// `None`, means "cannot say": those headers then go unchecked.
    fn tool_info(&self, name: &str) -> Option<ToolInfo> {
        let _ = name;
        None
    }
}

/// An MCP server with tools. Cheap to clone (clones share everything).
///
/// Build one with [`Server::builder`], answer messages with
/// [`Server::handle`]. Tools can be added and removed while it serves; every
/// live session that went through `initialize` is then sent
/// `notifications/tools/list_changed`. See the [module docs](self) for the
/// protocol choices.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use claude_code_agent_mcp::{RequestContext, Server, Session, Tool};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = Server::builder("clock", "0.1.0").build();
///
/// // A connection whose server-originated messages we collect.
/// let outbox = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&outbox);
/// let session = Session::with_notifier(move |m| sink.lock().unwrap().push(m));
/// let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize",
///                   "params":{"protocolVersion":"2025-06-18","capabilities":{}}});
/// let reply = server.handle(init, RequestContext::with_session(session.clone())).await.unwrap();
/// assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
///
/// // Adding a tool while serving tells the session.
/// server.add_tool(Tool::new("now", "The time", |_: ()| async { "12:00" }));
/// assert_eq!(outbox.lock().unwrap()[0]["method"], "notifications/tools/list_changed");
/// # });
/// ```
#[derive(Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

pub(crate) struct ServerInner {
    name: String,
    version: String,
    instructions: Option<String>,
    tools: catalog::Registry<Arc<Registered>>,
    /// Sessions that completed `initialize`, held weakly.
    sessions: Mutex<Vec<Weak<SessionInner>>>,
    tool_timeout: Duration,
    /// Tools' timeouts follow their progress up to this cap (unless a tool
    /// says otherwise).
    progress_cap: Option<Duration>,
    max_result_chars: usize,
    page_size: usize,
    catalog: catalog::Catalog,
    /// What a stateless `tools/call` result gets (`stateless::decorate_call`).
    decoration: stateless::Decoration,
    /// How the `requestState` of multi round-trip requests is sealed.
    sealing: round::Sealing,
    /// The extensions declared (`capabilities.extensions`).
    extensions: serde_json::Map<String, Value>,
    /// The tasks it runs and keeps (the Tasks extension).
    tasks: tasks::Tasks,
}

/// A tool as the server holds it, with its `tools/list` entry serialized once.
pub(crate) struct Registered {
    tool: Tool,
    listing: Value,
    /// The tool's name, shared with each call's [`ToolContext`].
    name: Arc<str>,
}

impl Registered {
    fn new(tool: Tool) -> Self {
        let listing = serde_json::to_value(&tool.info).unwrap_or(Value::Null);
        let name = Arc::from(tool.info.name.as_str());
        Self {
            tool,
            listing,
            name,
        }
    }
}

impl Server {
    /// Starts building a server with this name and version (its `serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name.into(), version.into())
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The server's version.
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    /// The `instructions` sent in the `initialize` result, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// The tool timeout in force for tools that set none themselves.
    pub fn tool_timeout(&self) -> Duration {
        self.inner.tool_timeout
    }

    /// Answers one JSON-RPC message; `None` for a notification or a response.
    ///
    /// Every reply carries `"jsonrpc":"2.0"` and the request's id exactly as
    /// it was sent. Safe to call concurrently; see the [module docs](self).
    ///
    /// ```
    /// use claude_code_agent_mcp::{RequestContext, Server};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = Server::builder("calc", "1.0.0").build();
    /// let ctx = RequestContext::new();
    ///
    /// let pong = server.handle(json!({"jsonrpc":"2.0","id":"x7","method":"ping"}), ctx.clone()).await;
    /// assert_eq!(pong, Some(json!({"jsonrpc":"2.0","id":"x7","result":{}})));
    ///
    /// let unknown = server.handle(json!({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}), ctx).await.unwrap();
    /// assert_eq!(unknown["error"]["code"], -32601);
    /// # });
    /// ```
    pub async fn handle(&self, message: Value, ctx: RequestContext) -> Option<Value> {
        contain::answer(message, |message| {
            dispatch::handle(&self.inner, message, ctx)
        })
        .await
    }

    /// `tools/call` as the in-process client asks for it: the typed
    /// call that [`handle`](Self::handle) decodes a `tools/call` request
    /// into, served by the same code (validation, the timeout, panic
    /// capture, cancellation — drop the call, or cancel through the
    /// session —, the cap, the stateless revision's `_meta` and result
    /// fields), its answer typed. Started at once, the handler polled once
    /// with `cx`: most calls are answered then ([`Call::Done`]); the rest
    /// run in the future handed back.
    pub(crate) fn start_call<'a>(
        &'a self,
        call: ToolCall<'_>,
        served: Served,
        cx: &mut std::task::Context<'_>,
    ) -> Call<'a> {
        call::start_in_span(&self.inner, call, served, cx)
    }

    /// The context a stateless request carrying `meta` is served in (its
    /// `_meta` checked): what a caller that sends the same `_meta` with
    /// every call makes once ([`Served::Stateless`]).
    pub(crate) fn stateless_context(
        meta: &serde_json::Map<String, Value>,
        ctx: RequestContext,
    ) -> Result<RequestContext, jsonrpc::ErrorObject> {
        stateless::checked_context(Some(meta), ctx)
    }

    /// Adds a tool, or replaces the one with the same name (keeping its
    /// place in the list), and tells every initialized session that the
    /// list changed.
    pub fn add_tool(&self, tool: Tool) {
        let registered = Arc::new(Registered::new(tool));
        let name = registered.tool.info.name.clone();
        self.inner.tools.write().insert(name, registered);
        self.inner.notify_list_changed(TOOLS_LIST_CHANGED);
    }

    /// Removes a tool; if there was one, tells every initialized session
    /// that the list changed. Returns whether there was one.
    /// Calls already running finish normally.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.tools.write().shift_remove(name).is_some();
        if removed {
            self.inner.notify_list_changed(TOOLS_LIST_CHANGED);
        }
        removed
    }

    /// The names of the tools, in list order.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tools.read().keys().cloned().collect()
    }

    /// The tool `name` as `tools/list` describes it, if there is one.
    pub fn tool_info(&self, name: &str) -> Option<ToolInfo> {
        self.inner.tool(name).map(|r| r.tool.info.clone())
    }

    /// The tools as `tools/list` describes them, in list order.
    pub fn tools(&self) -> Vec<ToolInfo> {
        self.inner
            .tools
            .read()
            .values()
            .map(|r| r.tool.info.clone())
            .collect()
    }
}

/// Answers `message` with `handler`, whatever the handler does: a panic
/// (even before it returns its future) or a request answered with nothing
/// becomes a `-32603` reply, so every request gets exactly one. What every
/// transport calls instead of [`Handler::handle`].
pub(crate) async fn answer(
    handler: &dyn Handler,
    message: Value,
    ctx: RequestContext,
) -> Option<Value> {
    contain::answer(message, |message| handler.handle(message, ctx)).await
}

impl Handler for Server {
    fn handle(&self, message: Value, ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
        Box::pin(Server::handle(self, message, ctx))
    }

    fn tool_info(&self, name: &str) -> Option<ToolInfo> {
        Server::tool_info(self, name)
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.name)
            .field("version", &self.inner.version)
            .field("tools", &self.tool_names())
            .field("tool_timeout", &self.inner.tool_timeout)
            .field("max_result_chars", &self.inner.max_result_chars)
            .finish_non_exhaustive()
    }
}

impl ServerInner {
    fn tool(&self, name: &str) -> Option<Arc<Registered>> {
        self.tools.read().get(name).cloned()
    }

    /// Remembers `session` (weakly) for `list_changed` notifications. O(log
    /// n) amortized, so that opening a session costs the same beside 10 or
    /// 10,000 others (a session registers at `initialize` and again at
    /// `notifications/initialized`): ended sessions and repeats are swept
    /// out only when the list is about to grow, so each sweep pays for the
    /// pushes since the last one, and the list stays within twice the live
    /// sessions.
    fn register_session(&self, session: &Session) {
        let weak = session.downgrade();
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.len() == sessions.capacity() {
            sweep(&mut sessions);
        }
        sessions.push(weak);
    }

    /// The initialized sessions still alive (each once). Collected first, so
    /// notifiers run without the lock held.
    fn live_sessions(&self) -> Vec<Session> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sweep(&mut sessions);
        sessions
            .iter()
            .filter_map(Weak::upgrade)
            .map(Session::from_inner)
            .collect()
    }

    /// Agrees to tell `session` (a `subscriptions/listen`) of the tasks
    /// among `ids` that run here and are its caller's (`ctx`): those ids.
    fn watch_tasks(&self, session: &Session, ids: &[String], ctx: &RequestContext) -> Vec<String> {
        self.tasks
            .watch(session, ids, tasks::principal(ctx).as_deref())
    }

    fn notify_list_changed(&self, method: &str) {
        for session in self.live_sessions() {
            session.notify(jsonrpc::notification(method, None));
        }
    }
}

/// Drops ended sessions and repeats from a list of registered sessions.
fn sweep(sessions: &mut Vec<Weak<SessionInner>>) {
    sessions.retain(|s| s.strong_count() > 0);
    sessions.sort_unstable_by_key(|s| s.as_ptr() as usize);
    sessions.dedup_by(|a, b| Weak::ptr_eq(a, b));
}
