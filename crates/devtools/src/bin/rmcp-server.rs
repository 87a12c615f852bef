//! An MCP server on rmcp (the official Rust MCP SDK, from crates.io) that
//! our MCP client's tests run (`tests/interop_rmcp.rs` of the MCP crate):
//! results, a tool error, a protocol error, progress, a call that waits to
//! be cancelled, and a tool list that grows.
//!
//! `rmcp-server stdio` serves on stdin/stdout; `rmcp-server http <port>`
//! serves Streamable HTTP on `127.0.0.1:<port>/mcp` (port 0: any free one),
//! with `TCP_NODELAY` on every connection (axum's default leaves Nagle on,
//! which costs a small request/response exchange ~40 ms of delayed ACK);
//! it prints `listening on <url>` on stderr. The HTTP benchmark of
//! `bench-driver` runs it too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::handler::server::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, RequestMetaObject};
use rmcp::{
    ErrorData, Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router,
};
use tokio_util::sync::CancellationToken;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: f64,
    b: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
    ms: u64,
}

/// State shared by every connection of the process.
#[derive(Clone, Default)]
struct Peer0 {
    grown: Arc<AtomicBool>,
    cancelled: Arc<AtomicUsize>,
}

#[tool_router(router = base_router)]
impl Peer0 {
    #[tool(description = "Add a and b")]
    async fn add(&self, Parameters(p): Parameters<Pair>) -> String {
        (p.a + p.b).to_string()
    }

    #[tool(description = "Always fails, as a tool error")]
    async fn fail(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("always fails")])
    }

    #[tool(description = "Always refuses, as a JSON-RPC error")]
    async fn reject(&self) -> Result<String, ErrorData> {
        Err(ErrorData::invalid_params("rejected on purpose", None))
    }

    #[tool(description = "Reports progress each step, then answers")]
    async fn slow(
        &self,
        Parameters(s): Parameters<Steps>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> String {
        let token = meta.get_progress_token();
        for step in 1..=s.steps {
            tokio::time::sleep(Duration::from_millis(s.ms)).await;
            if let Some(token) = &token {
                let progress = ProgressNotificationParam::new(token.clone(), f64::from(step))
                    .with_total(f64::from(s.steps));
                let _ = peer.notify_progress(progress).await;
            }
        }
        format!("done after {} steps", s.steps)
    }

    #[tool(description = "Waits until cancelled (at most 60 s)")]
    async fn wait(&self, ct: CancellationToken) -> String {
        tokio::select! {
            () = ct.cancelled() => {
                self.cancelled.fetch_add(1, Ordering::SeqCst);
                "cancelled".into()
            }
            () = tokio::time::sleep(Duration::from_secs(60)) => "not cancelled".into(),
        }
    }

    #[tool(description = "How many calls of wait were cancelled")]
    async fn cancelled(&self) -> String {
        self.cancelled.load(Ordering::SeqCst).to_string()
    }

    #[tool(description = "Adds the tool extra, and says the list changed")]
    async fn grow(&self, peer: Peer<RoleServer>) -> String {
        self.grown.store(true, Ordering::SeqCst);
        let _ = peer.notify_tool_list_changed().await;
        "grown".into()
    }
}

#[tool_router(router = extra_router)]
impl Peer0 {
    #[tool(description = "There once grow was called")]
    async fn extra(&self) -> String {
        "extra".into()
    }
}

impl Peer0 {
    fn router(&self) -> ToolRouter<Self> {
        if self.grown.load(Ordering::SeqCst) {
            Self::base_router() + Self::extra_router()
        } else {
            Self::base_router()
        }
    }
}

#[tool_handler(router = self.router(), name = "rmcp-peer", version = "1.0.0")]
impl ServerHandler for Peer0 {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let peer = Peer0::default();
    match args.first().map(String::as_str) {
        Some("stdio") => {
            let running = peer.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        Some("http") => {
            use rmcp::transport::streamable_http_server::{
                StreamableHttpServerConfig, StreamableHttpService,
                session::local::LocalSessionManager,
            };
            let port: u16 = args.get(1).ok_or("http needs a port")?.parse()?;
            let service = StreamableHttpService::new(
                move || Ok(peer.clone()),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            use axum::serve::ListenerExt;
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app).await?;
        }
        _ => return Err("usage: rmcp-server stdio | rmcp-server http <port>".into()),
    }
    Ok(())
}
