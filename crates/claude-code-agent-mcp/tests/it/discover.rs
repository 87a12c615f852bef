//! The stateless revision (2026-07-28) through `Server::handle`:
//! `server/discover`, the per-request `_meta`, removed methods, result
//! decoration, log filtering and `subscriptions/listen`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use claude_code_agent_mcp::server::stateless::{HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION};
use claude_code_agent_mcp::types::{
    LATEST_PROTOCOL_VERSION, SERVER_INFO_META, SESSION_PROTOCOL_VERSIONS, SUBSCRIPTION_ID_META,
    SUPPORTED_PROTOCOL_VERSIONS,
};
use claude_code_agent_mcp::{LogLevel, RequestContext, Server, Session, Tool, ToolContext};
use serde_json::{Value, json};

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn server() -> Server {
    Server::builder("disco", "2.0")
        .instructions("Use it well")
        .tool(
            Tool::new(
                "chatty",
                "logs at info and at error",
                |_: Value, ctx: ToolContext| async move {
                    ctx.log(LogLevel::Info, "info line");
                    ctx.log(LogLevel::Error, "error line");
                    "ok"
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap()
}

async fn call(server: &Server, method: &str, params: Value) -> Value {
    let msg = json!({"jsonrpc":"2.0","id":7,"method":method,"params":params});
    server.handle(msg, RequestContext::new()).await.unwrap()
}

#[tokio::test]
async fn discover_describes_the_server() {
    let reply = call(&server(), "server/discover", json!({"_meta": meta()})).await;
    let r = &reply["result"];
    // Every revision, oldest first; the newest is the stateless one.
    assert_eq!(r["supportedVersions"], json!(SUPPORTED_PROTOCOL_VERSIONS));
    assert_eq!(LATEST_PROTOCOL_VERSION, "2026-07-28");
    assert_eq!(
        SUPPORTED_PROTOCOL_VERSIONS.last(),
        Some(&LATEST_PROTOCOL_VERSION)
    );
    assert_eq!(
        SUPPORTED_PROTOCOL_VERSIONS[..SESSION_PROTOCOL_VERSIONS.len()],
        *SESSION_PROTOCOL_VERSIONS
    );
    assert_eq!(r["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(r["serverInfo"]["name"], "disco");
    assert_eq!(r["_meta"][SERVER_INFO_META]["version"], "2.0");
    assert_eq!(r["instructions"], "Use it well");
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["ttlMs"], 0);
    assert_eq!(r["cacheScope"], "private");
}

#[tokio::test]
async fn stateless_requests_need_no_initialize_but_valid_meta() {
    let s = server();
    let listed = call(&s, "tools/list", json!({"_meta": meta()})).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "chatty");
    assert_eq!(listed["result"]["resultType"], "complete");
    assert!(listed["result"]["ttlMs"].is_number());

    let missing = call(&s, "server/discover", json!({})).await;
    assert_eq!(missing["error"]["code"], -32602);
    let mut no_caps = meta();
    no_caps
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let r = call(&s, "tools/list", json!({"_meta": no_caps})).await;
    assert_eq!(r["error"]["code"], -32602);

    let mut future = meta();
    future["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = call(&s, "tools/list", json!({"_meta": future})).await;
    assert_eq!(r["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_ne!(HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION);
}

#[tokio::test]
async fn removed_methods_are_not_found_but_stay_for_sessions() {
    let s = server();
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let r = call(&s, method, json!({"_meta": meta()})).await;
        assert_eq!(r["error"]["code"], -32601, "{method}");
    }
    // Without the stateless _meta, the session-based revisions still work.
    let pong = call(&s, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    let init = call(
        &s,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{}}),
    )
    .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert!(init["result"].get("resultType").is_none());
}

#[tokio::test]
async fn logs_go_out_only_at_the_requested_level() {
    let s = server();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let session = Session::with_notifier(move |m| sink.lock().unwrap().push(m));
    let call_with = |meta: Value| {
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
               "params":{"name":"chatty","arguments":{},"_meta":meta}})
    };
    let r = s
        .handle(
            call_with(meta()),
            RequestContext::with_session(session.clone()),
        )
        .await
        .unwrap();
    assert_eq!(r["result"]["content"][0]["text"], "ok");
    assert_eq!(r["result"]["resultType"], "complete");
    assert!(seen.lock().unwrap().is_empty(), "no logLevel, no logs");

    let mut with_level = meta();
    with_level["io.modelcontextprotocol/logLevel"] = json!("warning");
    s.handle(call_with(with_level), RequestContext::with_session(session))
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["params"]["data"], "error line");
}

#[tokio::test]
async fn listen_acknowledges_then_forwards_what_was_asked_for() {
    let s = server();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let session = Session::with_notifier(move |m| {
        let _ = tx.send(m);
    });
    let listen = json!({"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen",
        "params":{"_meta": meta(), "notifications":{"toolsListChanged":true,"promptsListChanged":true}}});
    let task = {
        let s = s.clone();
        tokio::spawn(async move {
            s.handle(listen, RequestContext::with_session(session))
                .await
        })
    };
    let ack = next(&mut rx).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID_META], "sub-1");
    // No prompts on this server: only the tools part is accepted.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );

    s.add_tool(
        Tool::new("new", "new", |_: Value| async { "x" }).input_schema(json!({"type":"object"})),
    );
    let changed = next(&mut rx).await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"][SUBSCRIPTION_ID_META], "sub-1");

    // Ending the listen request (the transport dropping it) unsubscribes.
    task.abort();
    let _ = task.await;
    s.add_tool(
        Tool::new("newer", "newer", |_: Value| async { "y" })
            .input_schema(json!({"type":"object"})),
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(rx.try_recv().is_err());
}
