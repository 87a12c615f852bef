//! An rmcp server served through this crate's `Handler` (`RmcpServer`), called
//! by our client in process: its timeout follows progress when
//! `reset_timeout_on_progress` is set — a call that keeps reporting progress
//! outlives the base timeout and still stops at the cap — and is fixed
//! otherwise; its tools get the request's access token.

use std::sync::Arc;
use std::time::{Duration, Instant};

use claude_code_agent_mcp::client::{McpClient, RequestOptions};
use claude_code_agent_mcp::rmcp_server::RmcpServer;
use claude_code_agent_mcp::server::AccessToken;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    ProgressNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_millis(400);
const CAP: Duration = Duration::from_secs(2);
const TICK: Duration = Duration::from_millis(100);

/// `crawl {"ticks": n}`: reports progress every 100 ms, `n` times (forever
/// when `n` is absent), then answers; without a progress token it only waits.
struct Crawler;

impl ServerHandler for Crawler {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let ticks = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("ticks"))
            .and_then(|t| t.as_u64())
            .unwrap_or(u64::MAX);
        let token = context.meta.get_progress_token();
        for tick in 0..ticks {
            tokio::time::sleep(TICK).await;
            if let Some(token) = &token {
                let progress = ProgressNotificationParam::new(token.clone(), tick as f64);
                let _ = context.peer.notify_progress(progress).await;
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("{ticks} ticks"))]).into())
    }
}

async fn client(server: RmcpServer) -> McpClient {
    McpClient::in_process(server).await.unwrap()
}

fn text(result: &claude_code_agent_mcp::types::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("")
}

/// The client waits longer than the server's cap, so what ends each call
/// is the server.
fn patient() -> RequestOptions {
    RequestOptions::new()
        .timeout(Duration::from_secs(30))
        .progress_token("p")
}

#[tokio::test]
async fn a_call_that_reports_progress_outlives_the_timeout_and_stops_at_the_cap() {
    let server = RmcpServer::new(Crawler)
        .tool_timeout(TIMEOUT)
        .reset_timeout_on_progress(CAP);
    let client = client(server).await;

    // 8 ticks of 100 ms: twice the timeout, well under the cap.
    let started = Instant::now();
    let done = client
        .call_tool_with("crawl", json!({"ticks": 8}), patient())
        .await
        .unwrap();
    assert!(!done.is_error, "{done:?}");
    assert_eq!(text(&done), "8 ticks");
    assert!(started.elapsed() >= Duration::from_millis(800));

    // Progress forever: stopped at the cap, and the result says so.
    let started = Instant::now();
    let capped = client
        .call_tool_with("crawl", json!({}), patient())
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(capped.is_error, "{capped:?}");
    assert!(
        text(&capped).contains("reached its cap of 2s"),
        "{}",
        text(&capped)
    );
    assert!(
        took >= CAP && took < CAP + Duration::from_secs(3),
        "{took:?}"
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn without_progress_or_without_the_option_the_timeout_is_fixed() {
    // The option set, but the call carries no progress token: nothing can
    // restart its timeout.
    let server = RmcpServer::new(Crawler)
        .tool_timeout(TIMEOUT)
        .reset_timeout_on_progress(CAP);
    let client = client(server).await;
    let quiet = client
        .call_tool_with(
            "crawl",
            json!({"ticks": 8}),
            RequestOptions::new().timeout(Duration::from_secs(30)),
        )
        .await
        .unwrap();
    assert!(quiet.is_error, "{quiet:?}");
    assert!(
        text(&quiet).contains("timed out after 400ms"),
        "{}",
        text(&quiet)
    );
    client.close().await.unwrap();

    // Progress reported, but the server keeps its fixed timeout.
    let client = self::client(RmcpServer::new(Crawler).tool_timeout(TIMEOUT)).await;
    let fixed = client
        .call_tool_with("crawl", json!({"ticks": 8}), patient())
        .await
        .unwrap();
    assert!(fixed.is_error, "{fixed:?}");
    assert!(
        text(&fixed).contains("timed out after 400ms"),
        "{}",
        text(&fixed)
    );
    client.close().await.unwrap();
}

/// `whoami`: the subject of the request's access token, `nobody` without one.
struct Whoami;

impl ServerHandler for Whoami {
    async fn call_tool(
        &self,
        _: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let token = context.extensions.get::<AccessToken>();
        let who = token.and_then(AccessToken::subject).unwrap_or("nobody");
        Ok(CallToolResult::success(vec![ContentBlock::text(who)]).into())
    }
}

#[tokio::test]
async fn an_rmcp_tool_gets_the_request_s_access_token() {
    use claude_code_agent_mcp::{Handler, Session};
    let server = RmcpServer::new(Whoami);
    let session = Session::new();
    let ctx = || claude_code_agent_mcp::RequestContext::with_session(session.clone());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    server.handle(init, ctx()).await.unwrap();
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}})
    };
    let alice = AccessToken::from_claims(json!({"sub": "alice"}).as_object().unwrap().clone());
    let reply = server
        .handle(call(2), ctx().with_access_token(Arc::new(alice)))
        .await
        .unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "alice", "{reply}");
    let reply = server.handle(call(3), ctx()).await.unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "nobody", "{reply}");
}
