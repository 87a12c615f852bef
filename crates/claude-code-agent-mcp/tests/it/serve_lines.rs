//! Serving over NDJSON (`serve_lines`, what `serve_stdio` runs) facing bad
//! input: garbage, a line over the cap, blank lines, a truncated last line,
//! input that ends while a call runs, a string cut mid-emoji, a request that
//! does not decode but shows its id, a handler that blocks its thread.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{call, error_code, req, result, text};
use claude_code_agent_mcp::server::{SERVE_MAX_LINE_BYTES, serve_lines};
use claude_code_agent_mcp::{Server, Tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

fn server() -> Server {
    Server::builder("lines", "1")
        .tool(
            Tool::new("nap", "sleeps `ms`", |v: Value| async move {
                let ms = v["ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                format!("slept {ms}")
            })
            .input_schema(json!({"type":"object","properties":{"ms":{"type":"integer"}}})),
        )
        .tool(
            Tool::new(
                "stuck",
                "blocks its thread for `ms`",
                |v: Value| async move {
                    let ms = v["ms"].as_u64().unwrap_or(0);
                    // What a handler must not do (see docs/mcp-servers.md).
                    std::thread::sleep(Duration::from_millis(ms));
                    format!("blocked {ms}")
                },
            )
            .input_schema(json!({"type":"object","properties":{"ms":{"type":"integer"}}}))
            .timeout(Duration::from_millis(300)),
        )
        .tool(
            Tool::new("echo", "says `text` back", |v: Value| async move {
                v["text"].as_str().unwrap_or_default().to_owned()
            })
            .input_schema(json!({"type":"object","properties":{"text":{"type":"string"}}})),
        )
        .build()
}

/// A served connection: what the test writes, what the server answers, and
/// the serving task.
struct Served {
    input: DuplexStream,
    output: tokio::io::Lines<BufReader<DuplexStream>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

fn serve() -> Served {
    let (input, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, output) = tokio::io::duplex(1 << 20);
    let task = tokio::spawn(serve_lines(Arc::new(server()), server_in, server_out));
    Served {
        input,
        output: BufReader::new(output).lines(),
        task,
    }
}

impl Served {
    async fn send(&mut self, line: &[u8]) {
        self.input.write_all(line).await.unwrap();
    }

    async fn reply(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.output.next_line())
            .await
            .expect("a reply within 10 s")
            .unwrap()
            .expect("a reply, not the end");
        serde_json::from_str(&line).unwrap()
    }

    /// Closes the input; the server answers what it has and returns.
    async fn end(mut self) -> Vec<Value> {
        self.input.shutdown().await.unwrap();
        drop(self.input);
        let mut rest = Vec::new();
        while let Some(line) = self.output.next_line().await.unwrap() {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("serving ends with its input")
            .unwrap()
            .unwrap();
        rest
    }
}

fn line(message: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap();
    bytes.push(b'\n');
    bytes
}

#[tokio::test]
async fn garbage_and_blank_lines_get_parse_errors_or_nothing_and_serving_goes_on() {
    let mut s = serve();
    s.send(b"\n   \n{not json\n").await;
    let reply = s.reply().await;
    assert_eq!(error_code(&reply), -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null);
    s.send(b"\xff\xfe\n").await;
    assert_eq!(error_code(&s.reply().await), -32700);
    s.send(&line(&req(1, "ping", json!({})))).await;
    let reply = s.reply().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(result(&reply), &json!({}));
    assert!(s.end().await.is_empty());
}

#[tokio::test]
async fn a_line_over_the_cap_gets_an_invalid_request_and_the_next_one_is_served() {
    let mut s = serve();
    let writer = {
        let mut big = vec![b'x'; SERVE_MAX_LINE_BYTES + 1];
        big.push(b'\n');
        big.extend(line(&req(2, "ping", json!({}))));
        // Written from another task while this one reads the replies.
        let mut input = std::mem::replace(&mut s.input, tokio::io::duplex(1).0);
        tokio::spawn(async move {
            input.write_all(&big).await.unwrap();
            input
        })
    };
    let reply = s.reply().await;
    assert_eq!(error_code(&reply), -32600, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("cap of {SERVE_MAX_LINE_BYTES} bytes")),
        "{message}"
    );
    assert_eq!(s.reply().await["id"], 2);
    s.input = writer.await.unwrap();
    assert!(s.end().await.is_empty());
}

#[tokio::test]
async fn input_ending_mid_call_still_gets_the_answer_and_a_last_line_without_newline_counts() {
    let mut s = serve();
    s.send(&line(&call(3, "nap", json!({"ms": 300})))).await;
    // A last line without its newline: still a complete message.
    s.send(&serde_json::to_vec(&req(4, "ping", json!({}))).unwrap())
        .await;
    let rest = s.end().await;
    let ids: Vec<&Value> = rest.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!(4), &json!(3)], "{rest:?}");
    assert_eq!(text(result(&rest[1])), "slept 300");
}

#[tokio::test]
async fn a_slow_call_does_not_hold_up_ping_and_cancellation_ends_it() {
    let mut s = serve();
    s.send(&line(&call(5, "nap", json!({"ms": 5000})))).await;
    s.send(&line(&req(6, "ping", json!({})))).await;
    let first = s.reply().await;
    assert_eq!(first["id"], 6, "ping first: {first}");
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":5,"reason":"test"}});
    s.send(&line(&cancel)).await;
    let rest = s.end().await;
    // The cancelled call ends at once with an `isError` result saying so
    // (a client ignores an answer to a request it cancelled).
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 5);
    assert_eq!(result(&rest[0])["isError"], true);
    assert!(text(result(&rest[0])).contains("cancelled"), "{rest:?}");
}

#[tokio::test]
async fn a_string_cut_mid_emoji_reaches_the_tool_as_the_replacement_character() {
    let mut s = serve();
    // As JSON.stringify writes "ab😀".slice(0, 3), id last as the
    // TypeScript SDK puts it.
    s.send(
        br#"{"method":"tools/call","params":{"name":"echo","arguments":{"text":"ab\ud83d"}},"jsonrpc":"2.0","id":7}"#,
    )
    .await;
    s.send(b"\n").await;
    let reply = s.reply().await;
    assert_eq!(reply["id"], 7, "{reply}");
    assert_eq!(text(result(&reply)), "ab\u{FFFD}");
    assert!(s.end().await.is_empty());
}

#[tokio::test]
async fn a_request_that_does_not_decode_is_answered_with_its_id() {
    let mut s = serve();
    s.send(b"{\"method\":\"tools/call\",\"params\":{\"x\":\"\\q\"},\"jsonrpc\":\"2.0\",\"id\":\"r-8\"}\n")
        .await;
    let reply = s.reply().await;
    assert_eq!(error_code(&reply), -32700, "{reply}");
    assert_eq!(reply["id"], "r-8", "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid escape"),
        "{reply}"
    );
    // A response's id is the server's own: not used for the complaint.
    s.send(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"x\":NaN}}\n")
        .await;
    let reply = s.reply().await;
    assert_eq!(error_code(&reply), -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert!(s.end().await.is_empty());
}

/// A handler that blocks its thread past its timeout: the caller gets the
/// timeout answer on time (the watchdog, on the other worker thread), other
/// calls are served meanwhile, and when the thread is free again its late
/// answer is dropped: each request answered once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_blocks_its_thread_times_out_on_time_and_is_answered_once() {
    let mut s = serve();
    let start = std::time::Instant::now();
    s.send(&line(&call(1, "stuck", json!({"ms": 2500})))).await;
    s.send(&line(&call(2, "echo", json!({"text": "meanwhile"}))))
        .await;
    let first = s.reply().await;
    assert_eq!(first["id"], 2, "{first}");
    assert_eq!(text(result(&first)), "meanwhile");
    let timed_out = s.reply().await;
    let waited = start.elapsed();
    assert_eq!(timed_out["id"], 1, "{timed_out}");
    assert_eq!(result(&timed_out)["isError"], true);
    let said = text(result(&timed_out));
    assert!(
        said.contains("\"stuck\" timed out after 300ms and was stopped"),
        "{said}"
    );
    // The timeout (300 ms) and the watchdog's grace (100 ms), well before
    // the thread is free (2.5 s).
    assert!(waited < Duration::from_millis(1500), "{waited:?}");
    // Once the thread is free, nothing more comes for id 1.
    tokio::time::sleep(
        Duration::from_millis(2500).saturating_sub(start.elapsed()) + Duration::from_millis(300),
    )
    .await;
    s.send(&line(&req(3, "ping", json!({})))).await;
    assert_eq!(s.reply().await["id"], 3);
    assert!(s.end().await.is_empty());
}
