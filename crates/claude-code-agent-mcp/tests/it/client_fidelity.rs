//! The same cases against the demo server in process and over stdio give
//! identical results (results and errors alike).

use std::time::Duration;

use crate::support::{calc, peers};
use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, InProcessTransport, McpClient, RequestOptions, StdioOptions,
    StdioTransport,
};
use serde_json::{Value, json};

fn options() -> ClientOptions {
    ClientOptions::new("fidelity", "1")
        .request_timeout(Duration::from_secs(20))
        // These exercise the session-based revisions (ping, logging/setLevel).
        .handshake(HandshakeMode::Initialize)
}

/// Runs every case; each outcome as JSON (`{"ok":…}` or `{"err":…,"code":…}`).
async fn run_cases(client: &McpClient) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut record = |name: &str, r: Result<Value, claude_code_agent_mcp::client::Error>| {
        let v = match r {
            Ok(v) => json!({"ok": v}),
            Err(e) => json!({"err": e.to_string(), "code": e.code()}),
        };
        out.push((name.to_owned(), v));
    };
    let tools = client
        .list_tools()
        .await
        .map(|t| serde_json::to_value(t).unwrap());
    record("tools", tools);
    for (name, tool, args) in [
        ("add", "add", json!({"a":2,"b":3.5})),
        ("add-negative", "add", json!({"a":-2,"b":-3})),
        ("add-missing-arg", "add", json!({"a":2})),
        ("add-wrong-type", "add", json!({"a":"x","b":1})),
        ("divide", "divide", json!({"a":1,"b":8})),
        ("divide-by-zero", "divide", json!({"a":1,"b":0})),
        (
            "echo-unicode",
            "echo",
            json!({"text":"héllo ✓ \n\t\"quoted\""}),
        ),
        ("echo-missing", "echo", json!({})),
        ("big", "big", json!({"n":100_000})),
        ("panic", "panic", json!({})),
        ("unknown-tool", "nope", json!({})),
        ("slow", "slow", json!({"steps":2,"ms":1})),
    ] {
        let r = client.call_tool(tool, args).await.map(|r| r.into_value());
        record(name, r);
    }
    record(
        "arguments-not-object",
        client
            .send_request("tools/call", Some(json!({"name":"add","arguments":[1,2]})))
            .await,
    );
    record(
        "params-not-object",
        client.send_request("tools/list", Some(json!([1]))).await,
    );
    record(
        "unknown-method",
        client.send_request("resources/list", None).await,
    );
    record("ping", client.send_request("ping", None).await);
    record(
        "set-level",
        client
            .send_request("logging/setLevel", Some(json!({"level":"warning"})))
            .await,
    );
    record(
        "bad-level",
        client
            .send_request("logging/setLevel", Some(json!({"level":"loud"})))
            .await,
    );
    let timed_out = client
        .call_tool_with(
            "slow",
            json!({"steps":1,"ms":5_000}),
            RequestOptions::new().timeout(Duration::from_millis(50)),
        )
        .await
        .map(|r| r.into_value());
    record("timeout", timed_out);
    out
}

#[tokio::test]
async fn in_process_and_stdio_agree() {
    let in_process = McpClient::connect(InProcessTransport::new(calc::calc_server()), options())
        .await
        .unwrap();
    let stdio = McpClient::connect(
        StdioTransport::spawn(StdioOptions::new(peers::stdio_server())).unwrap(),
        options(),
    )
    .await
    .unwrap();
    assert_eq!(in_process.server_state(), stdio.server_state());
    let a = run_cases(&in_process).await;
    let b = run_cases(&stdio).await;
    assert_eq!(a.len(), b.len());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert_eq!(x, y, "case {name} differs");
    }
    // The cases mean something: spot-check a few outcomes.
    let get = |n: &str| &a.iter().find(|(k, _)| k == n).unwrap().1;
    assert_eq!(get("add")["ok"]["content"][0]["text"], "5.5");
    assert_eq!(get("divide-by-zero")["ok"]["isError"], true);
    assert_eq!(get("unknown-tool")["code"], -32601);
    assert_eq!(
        get("timeout")["err"],
        "request tools/call timed out after 50ms"
    );
    assert_eq!(get("ping")["ok"], json!({}));
    stdio.close().await.unwrap();
}
