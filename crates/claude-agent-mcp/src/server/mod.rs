//! The in-process MCP server. (Skeleton: being filled in.)
#![allow(missing_docs, dead_code, unused_variables)]

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

/// Anything that answers JSON-RPC messages: our [`Server`], or a user's own type.
pub trait Handler: Send + Sync + 'static {
    /// Answers one message; `None` for a notification.
    fn handle(&self, message: Value, ctx: RequestContext) -> BoxFuture<'_, Option<Value>>;
}

#[derive(Clone)]
pub struct Session {}
impl Session {
    pub fn new() -> Self {
        Self {}
    }
    pub fn with_notifier(f: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Self {}
    }
}
impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Clone, Default)]
pub struct RequestContext {}
impl RequestContext {
    pub fn new() -> Self {
        Self {}
    }
    pub fn with_session(session: Session) -> Self {
        Self {}
    }
}

pub struct ToolContext {}
pub struct Json<T>(pub T);
pub trait ToolResult {}

pub struct Tool {}

#[derive(Clone)]
pub struct Server {
    inner: Arc<()>,
}
pub struct ServerBuilder {}
impl Server {
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {}
    }
    pub fn name(&self) -> &str {
        ""
    }
    pub async fn handle(&self, message: Value, ctx: RequestContext) -> Option<Value> {
        None
    }
}
impl ServerBuilder {
    pub fn tool(self, tool: Tool) -> Self {
        self
    }
    pub fn build(self) -> Server {
        Server {
            inner: Arc::new(()),
        }
    }
}
