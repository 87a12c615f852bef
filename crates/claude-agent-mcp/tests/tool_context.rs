//! What a handler sees in its ToolContext: `_meta`, progress, logging.
mod common;

use claude_agent_mcp::{LogLevel, RequestContext, Server, Tool, ToolContext};
use common::*;
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("s", "1")
        .tool(Tool::raw_with_context(
            "report",
            "",
            json!({"type":"object"}),
            |_: Value, ctx: ToolContext| async move {
                let sent_progress = ctx.progress(1.0, Some(2.0), Some("half way"));
                let sent_info = ctx.log(LogLevel::Info, "info line");
                let sent_error = ctx.log(LogLevel::Error, json!({"detail": "bad"}));
                json!({
                    "toolUseId": ctx.tool_use_id(),
                    "progressToken": ctx.progress_token(),
                    "requestId": ctx.request_id(),
                    "tool": ctx.tool_name(),
                    "sent": [sent_progress, sent_info, sent_error],
                })
            },
        ))
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
