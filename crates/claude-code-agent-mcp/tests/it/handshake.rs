//! `initialize` and `ping`.

use crate::support::*;
use claude_code_agent_mcp::types::{LATEST_SESSION_PROTOCOL_VERSION, SESSION_PROTOCOL_VERSIONS};
use claude_code_agent_mcp::{RequestContext, Server};
use serde_json::json;

fn server() -> Server {
    Server::builder("calc", "1.2.3").build()
}

#[tokio::test]
async fn initialize_echoes_every_supported_protocol_version() {
    let server = server();
    for version in SESSION_PROTOCOL_VERSIONS {
        let reply = ask(&server, cli_initialize(0, version)).await;
        assert_eq!(result(&reply)["protocolVersion"], *version);
    }
}

#[tokio::test]
async fn initialize_answers_latest_for_unknown_or_missing_version() {
    let server = server();
    for params in [
        json!({"protocolVersion":"1999-01-01","capabilities":{}}),
        // The stateless revision has no `initialize`.
        json!({"protocolVersion":"2026-07-28","capabilities":{}}),
        json!({"protocolVersion":42}),
        json!({}),
    ] {
        let reply = ask(&server, req(0, "initialize", params.clone())).await;
        assert_eq!(
            result(&reply)["protocolVersion"],
            LATEST_SESSION_PROTOCOL_VERSION,
            "{params}"
        );
    }
    let bare = ask(
        &server,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize"}),
    )
    .await;
    assert_eq!(
        result(&bare)["protocolVersion"],
        LATEST_SESSION_PROTOCOL_VERSION
    );
}

#[tokio::test]
async fn initialize_reports_server_info_and_tool_capability() {
    let reply = ask(&server(), cli_initialize(0, "2025-11-25")).await;
    let r = result(&reply);
    assert_eq!(r["serverInfo"], json!({"name":"calc","version":"1.2.3"}));
    assert_eq!(r["capabilities"]["tools"], json!({"listChanged": true}));
    assert!(r.get("instructions").is_none(), "{r}");
}

#[tokio::test]
async fn initialize_includes_instructions_when_set() {
    let server = Server::builder("calc", "1")
        .instructions("Use add for sums.")
        .build();
    let reply = ask(&server, cli_initialize(0, "2025-11-25")).await;
    assert_eq!(result(&reply)["instructions"], "Use add for sums.");
}

#[tokio::test]
async fn repeated_initialize_is_answered_the_same_way() {
    let server = server();
    let (session, _) = recording_session();
    let ctx = || RequestContext::with_session(session.clone());
    let first = server
        .handle(cli_initialize(0, "2025-06-18"), ctx())
        .await
        .unwrap();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(server.handle(note, ctx()).await, None);
    // The CLI reconnects: ids restart at 0.
    let second = server
        .handle(cli_initialize(0, "2025-06-18"), ctx())
        .await
        .unwrap();
    assert_eq!(first, second);
    assert_eq!(second["id"], 0);
    assert!(session.is_initialized());
}

#[tokio::test]
async fn ping_answers_an_empty_object() {
    let reply = ask(
        &server(),
        json!({"jsonrpc":"2.0","id":"p1","method":"ping"}),
    )
    .await;
    assert_eq!(reply, json!({"jsonrpc":"2.0","id":"p1","result":{}}));
    // Even before initialize, and with params.
    let reply = ask(&server(), req(9, "ping", json!({"_meta":{}}))).await;
    assert_eq!(result(&reply), &json!({}));
}
