//! What a handler sees in its ToolContext: `_meta`, progress, logging.

use crate::support::*;
use claude_code_agent_mcp::{Json, LogLevel, RequestContext, Server, Tool, ToolContext};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("s", "1")
        .tool(
            Tool::new("report", "", |_: Value, ctx: ToolContext| async move {
                let sent_progress = ctx.progress(1.0, Some(2.0), Some("half way"));
                let sent_info = ctx.log(LogLevel::Info, "info line");
                let sent_error = ctx.log(LogLevel::Error, json!({"detail": "bad"}));
                Json(json!({
                    "toolUseId": ctx.tool_use_id(),
                    "progressToken": ctx.progress_token(),
                    "requestId": ctx.request_id(),
                    "tool": ctx.tool_name(),
                    "sent": [sent_progress, sent_info, sent_error],
                }))
            })
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

fn cli_call(id: i64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"report","arguments":{},
        "_meta":{"claudecode/toolUseId":"toolu_1","progressToken":id}}})
}

#[tokio::test]
async fn meta_accessors_and_notifications_go_through_the_session() {
    let server = server();
    let (session, seen) = recording_session();
    let reply = server
        .handle(cli_call(2), RequestContext::with_session(session))
        .await
        .unwrap();
    let seen_by_tool: Value = serde_json::from_str(&text(result(&reply))).unwrap();
    assert_eq!(
        seen_by_tool,
        json!({"toolUseId":"toolu_1","progressToken":2,"requestId":2,"tool":"report","sent":[true,true,true]})
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1,"total":2,"message":"half way"}}),
            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"report","data":"info line"}}),
            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"report","data":{"detail":"bad"}}}),
        ]
    );
}

#[tokio::test]
async fn set_level_filters_log_messages() {
    let server = server();
    let (session, seen) = recording_session();
    let ctx = RequestContext::with_session(session.clone());
    let reply = server
        .handle(
            req(1, "logging/setLevel", json!({"level":"warning"})),
            ctx.clone(),
        )
        .await
        .unwrap();
    assert_eq!(result(&reply), &json!({}));
    assert_eq!(session.log_level(), LogLevel::Warning);
    server.handle(cli_call(2), ctx).await.unwrap();
    let seen = seen.lock().unwrap();
    let levels: Vec<&str> = seen
        .iter()
        .filter_map(|m| m["params"]["level"].as_str())
        .collect();
    assert_eq!(levels, ["error"]);
}

#[tokio::test]
async fn without_session_or_token_nothing_is_sent() {
    let server = server();
    let reply = ask(&server, call(3, "report", json!({}))).await;
    let seen_by_tool: Value = serde_json::from_str(&text(result(&reply))).unwrap();
    assert_eq!(seen_by_tool["sent"], json!([false, false, false]));
    assert_eq!(seen_by_tool["toolUseId"], Value::Null);

    // A session but no progress token: logs go out, progress does not.
    let (session, seen) = recording_session();
    server
        .handle(
            call(4, "report", json!({})),
            RequestContext::with_session(session),
        )
        .await;
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(methods, ["notifications/message", "notifications/message"]);
}

/// A tool that reports what it can ask of the client.
fn caps_server() -> Server {
    Server::builder("s", "1")
        .tool(Tool::new("caps", "", |_: Value, ctx: ToolContext| async move {
                Json(json!({
                    "declared": ctx.client_capabilities().map(|c| Value::Object(c.as_map().clone())),
                    "sampling": ctx.supports_sampling(),
                    "elicitation": ctx.supports_elicitation(),
                    "roots": ctx.supports_roots(),
                }))
            }).input_schema(json!({"type":"object"})))
        .build()
}

async fn caps_seen(server: &Server, ctx: RequestContext, call: Value) -> Value {
    let reply = server.handle(call, ctx).await.unwrap();
    serde_json::from_str(&text(result(&reply))).unwrap()
}

#[tokio::test]
async fn a_tool_can_ask_what_the_client_supports() {
    let server = caps_server();
    let declared = json!({"sampling":{},"roots":{"listChanged":true}});
    let init = req(
        0,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":declared}),
    );

    // A transport that carries requests to the client (stdio, HTTP).
    let (session, _) = recording_session();
    session.set_client_requests(true);
    let ctx = RequestContext::with_session(session.clone());
    server.handle(init.clone(), ctx.clone()).await.unwrap();
    assert_eq!(session.protocol_version().as_deref(), Some("2025-11-25"));
    assert_eq!(
        caps_seen(&server, ctx, call(1, "caps", json!({}))).await,
        json!({"declared":declared,"sampling":true,"elicitation":false,"roots":true})
    );

    // One that does not (the CLI bridge): declared, but nothing can be asked.
    let (session, _) = recording_session();
    let ctx = RequestContext::with_session(session);
    server.handle(init, ctx.clone()).await.unwrap();
    assert_eq!(
        caps_seen(&server, ctx, call(2, "caps", json!({}))).await,
        json!({"declared":declared,"sampling":false,"elicitation":false,"roots":false})
    );

    // No handshake: nothing known.
    assert_eq!(
        caps_seen(&server, RequestContext::new(), call(3, "caps", json!({}))).await,
        json!({"declared":null,"sampling":false,"elicitation":false,"roots":false})
    );

    // Stateless (2026-07-28): the request's _meta declares them.
    let stateless = json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{
        "name":"caps","arguments":{},"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}});
    let seen = caps_seen(&server, RequestContext::new(), stateless).await;
    assert_eq!(seen["declared"], json!({"elicitation":{}}));
}
