//! Serving over NDJSON with a small byte budget (`serve_lines_with`), so
//! that only a few requests run at once: while the next request waits for
//! room, the server still reads the client's answers to its own requests
//! (here `sampling/createMessage` from every tool call). Before, reading
//! stopped at that request, the answers the running calls waited for were
//! never read, and every call hung until its request to the client timed
//! out (300 s).

use std::sync::Arc;
use std::time::Duration;

use crate::support::wire::{call, initialize_request, text};
use claude_code_agent_mcp::server::{ServeOptions, serve_lines_with};
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn server() -> Server {
    Server::builder("admission", "1")
        .tool(
            Tool::new(
                "sample",
                "asks the client for a completion",
                |_: Value, ctx: ToolContext| async move {
                    let params = json!({"messages":[],"maxTokens":1});
                    match ctx.request("sampling/createMessage", params).await {
                        Ok(r) => format!("answered: {}", r["model"]),
                        Err(e) => format!("failed: {e}"),
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

#[tokio::test]
async fn calls_waiting_on_the_client_do_not_stop_the_server_reading_its_answers() {
    // 16 KiB: an estimate of 4 KiB per running call lets 4 run at once.
    let options = ServeOptions::new().max_held_bytes(16 * 1024);
    let (mut input, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, output) = tokio::io::duplex(1 << 20);
    let task = tokio::spawn(serve_lines_with(
        Arc::new(server()),
        server_in,
        server_out,
        options,
    ));
    let mut output = BufReader::new(output).lines();
    let mut send = async |m: &Value| input.write_all(format!("{m}\n").as_bytes()).await.unwrap();
    send(&initialize_request("2025-11-25", json!({"sampling":{}}))).await;
    send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await;
    const CALLS: usize = 16;
    for i in 0..CALLS {
        send(&call(i, "sample", json!({}))).await;
    }
    let mut answered = Vec::new();
    let served = tokio::time::timeout(Duration::from_secs(20), async {
        while answered.len() < CALLS {
            let line = output.next_line().await.unwrap().expect("a message");
            let m: Value = serde_json::from_str(&line).unwrap();
            if m["method"] == "sampling/createMessage" {
                let model = format!("m{}", m["id"]);
                send(&json!({"jsonrpc":"2.0","id":m["id"],"result":{
                    "model":model,"role":"assistant","content":{"type":"text","text":"hi"}}}))
                .await;
            } else if m["id"] != "init" {
                answered.push(m);
            }
        }
    })
    .await;
    assert!(
        served.is_ok(),
        "the server stopped reading: {} of {CALLS} calls answered",
        answered.len()
    );
    let mut ids: Vec<u64> = answered.iter().map(|m| m["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..CALLS as u64).collect::<Vec<_>>());
    for m in &answered {
        assert!(text(m).starts_with("answered: \"m"), "{m}");
    }
    input.shutdown().await.unwrap();
    drop(input);
    while let Ok(Some(_)) = output.next_line().await {}
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_call_cancelled_while_it_waits_for_room_never_runs() {
    let options = ServeOptions::new().max_held_bytes(16 * 1024);
    let (mut input, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, output) = tokio::io::duplex(1 << 20);
    let task = tokio::spawn(serve_lines_with(
        Arc::new(server()),
        server_in,
        server_out,
        options,
    ));
    let mut output = BufReader::new(output).lines();
    let mut recv = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), output.next_line())
            .await
            .expect("a message in time")
            .unwrap()
            .expect("a message");
        serde_json::from_str(&line).unwrap()
    };
    let mut lines = String::new();
    for m in [
        initialize_request("2025-11-25", json!({"sampling":{}})),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ] {
        lines.push_str(&format!("{m}\n"));
    }
    for i in 0..4 {
        lines.push_str(&format!("{}\n", call(i, "sample", json!({}))));
    }
    input.write_all(lines.as_bytes()).await.unwrap();
    assert_eq!(recv().await["id"], "init");
    // The four that fit run and wait on the client.
    let mut requests = Vec::new();
    for _ in 0..4 {
        let m = recv().await;
        assert_eq!(m["method"], "sampling/createMessage", "{m}");
        requests.push(m["id"].clone());
    }
    // The fifth waits for room; cancelled, it is dropped.
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}});
    input
        .write_all(format!("{}\n{cancel}\n", call(9, "sample", json!({}))).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    for id in requests {
        let answer = json!({"jsonrpc":"2.0","id":id,"result":{
            "model":"m","role":"assistant","content":{"type":"text","text":"hi"}}});
        input
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(recv().await);
    }
    input.shutdown().await.unwrap();
    drop(input);
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        let mut rest = Vec::new();
        while let Ok(Some(line)) = output.next_line().await {
            rest.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        rest
    })
    .await
    .expect("serving ends: the cancelled call did not run");
    seen.extend(rest);
    let mut ids: Vec<u64> = seen.iter().map(|m| m["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 3], "{seen:?}");
    task.await.unwrap().unwrap();
}
