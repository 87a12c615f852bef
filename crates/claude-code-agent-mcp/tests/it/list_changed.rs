//! Adding or removing a tool while serving tells initialized sessions.

use crate::support::*;
use claude_code_agent_mcp::{RequestContext, Server, Tool};
use serde_json::{Value, json};

fn tool(name: &str) -> Tool {
    Tool::new(name, "", |_: Value| async {}).input_schema(json!({"type":"object"}))
}

fn list_changed() -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
}

#[tokio::test]
async fn add_and_remove_notify_initialized_sessions() {
    let server = Server::builder("s", "1").tool(tool("a")).build();
    let (initialized, seen) = recording_session();
    let (fresh, fresh_seen) = recording_session();
    server
        .handle(
            cli_initialize(0, "2025-11-25"),
            RequestContext::with_session(initialized.clone()),
        )
        .await;
    // `fresh` only pings: it never initialized.
    server
        .handle(
            req(0, "ping", json!({})),
            RequestContext::with_session(fresh.clone()),
        )
        .await;

    server.add_tool(tool("b"));
    assert_eq!(*seen.lock().unwrap(), vec![list_changed()]);

    assert!(server.remove_tool("a"));
    assert!(!server.remove_tool("a"), "already gone: no notification");
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert!(fresh_seen.lock().unwrap().is_empty());

    let reply = ask(&server, req(5, "tools/list", json!({}))).await;
    assert_eq!(result(&reply)["tools"][0]["name"], "b");
    assert_eq!(result(&reply)["tools"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn replacing_a_tool_keeps_its_place_and_reinitializing_does_not_duplicate() {
    let server = Server::builder("s", "1")
        .tool(tool("a"))
        .tool(tool("b"))
        .build();
    let (session, seen) = recording_session();
    for _ in 0..3 {
        server
            .handle(
                cli_initialize(0, "2025-11-25"),
                RequestContext::with_session(session.clone()),
            )
            .await;
    }
    server.add_tool(
        Tool::new("a", "replaced", |_: Value| async {}).input_schema(json!({"type":"object"})),
    );
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "one notification per session"
    );
    assert_eq!(server.tool_names(), ["a", "b"]);
    assert_eq!(server.tools()[0].description.as_deref(), Some("replaced"));
}

#[tokio::test]
async fn dropped_sessions_are_forgotten() {
    let server = Server::builder("s", "1").build();
    let (session, seen) = recording_session();
    server
        .handle(
            cli_initialize(0, "2025-11-25"),
            RequestContext::with_session(session.clone()),
        )
        .await;
    drop(session);
    server.add_tool(tool("late"));
    assert!(
        seen.lock().unwrap().is_empty(),
        "a dropped session hears nothing"
    );
    assert_eq!(server.tool_names(), ["late"]);
}
