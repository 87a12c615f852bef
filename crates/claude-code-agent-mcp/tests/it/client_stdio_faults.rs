//! The stdio client against a server (`support/dying_server.py`) that
//! answers the handshake and then dies in the middle of a call: it exits,
//! is killed, writes garbage and half a line first, or leaves processes
//! behind that hold its stdout open. The call fails at once (not at its
//! timeout) with a `Closed` error saying how the server ended; the child
//! is reaped while the client still exists; later calls fail fast; and
//! once the client is gone no task of its is left on the runtime. And
//! what the server writes that does not decode: a string cut mid-emoji is
//! read as U+FFFD; an answer that is not JSON fails its call at once,
//! saying so; a line that shows no id is named when the server ends.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, McpClient, StdioOptions, StdioTransport,
};
use claude_code_agent_testkit::tasks::Baseline;
use serde_json::json;

const SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/support/dying_server.py"
);

/// The server's stderr lines.
type Lines = Arc<Mutex<Vec<String>>>;

/// A client of a fresh server (request timeout 30 s: no failure here may
/// wait for it); its pid and stderr.
async fn connect() -> (McpClient, u32, Lines) {
    let stderr = Lines::default();
    let sink = Arc::clone(&stderr);
    let options = StdioOptions::new("python3")
        .arg(SERVER)
        .on_stderr(move |l| sink.lock().unwrap().push(l.to_owned()));
    let transport = StdioTransport::spawn(options).unwrap();
    let pid = transport.pid();
    let options = ClientOptions::new("faults", "1")
        .request_timeout(Duration::from_secs(30))
        .handshake(HandshakeMode::Initialize);
    let client = McpClient::connect(transport, options).await.unwrap();
    let ok = client.call_tool("ok", json!({})).await.unwrap();
    assert_eq!(ok.text_content(), "ok");
    (client, pid, stderr)
}

/// Runs `f`, failing the test if it takes 5 s; returns its output and how long it took.
async fn bounded<T>(f: impl Future<Output = T>) -> (T, Duration) {
    let started = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(5), f)
        .await
        .expect("the call hung");
    (out, started.elapsed())
}

/// Calls `tool`, which kills the server: the call must fail promptly with
/// `Closed`; returns the message.
/// serde's reason an error gives as its source.
fn serde_reason(e: &claude_code_agent_mcp::client::Error) -> String {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<serde_json::Error>())
        .unwrap_or_else(|| panic!("no serde_json source: {e:?}"))
        .to_string()
}

async fn dies(client: &McpClient, tool: &str) -> String {
    let (result, took) = bounded(client.call_tool(tool, json!({}))).await;
    let e = result.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    e.to_string()
}

/// Whether `pid` is gone (`zombie_ok`: or a zombie, for a process some
/// other parent reaps).
fn gone(pid: u32, zombie_ok: bool) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            zombie_ok
                && stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
        }
    }
}

async fn wait_gone(pid: u32, zombie_ok: bool) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !gone(pid, zombie_ok) {
        assert!(Instant::now() < deadline, "process {pid} is still there");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// After the server died: it is reaped (not a zombie) though the client
/// lives, the client says it is not alive, and calls fail fast, saying why.
async fn dead_and_reaped(client: &McpClient, pid: u32, why: &str) {
    wait_gone(pid, false).await;
    assert!(!client.is_alive());
    let (result, took) = bounded(client.call_tool("ok", json!({}))).await;
    let e = result.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    assert!(e.to_string().contains(why), "{e}");
    assert!(took < Duration::from_millis(100), "{took:?}");
}

#[tokio::test]
async fn a_server_exiting_mid_call_fails_it_at_once_and_is_reaped() {
    let tasks = Baseline::now();
    let (client, pid, _) = connect().await;
    assert!(tasks.exceeded(), "a live client has tasks");
    let text = dies(&client, "exit").await;
    assert!(
        text.contains("the MCP server exited (exit status: 3)"),
        "{text}"
    );
    assert!(text.contains("its stderr ended with: giving up"), "{text}");
    dead_and_reaped(&client, pid, "exit status: 3").await;
    drop(client);
    tasks.settled("exit mid-call").await;
}

#[tokio::test]
async fn a_server_killed_mid_call_fails_it_at_once_and_close_is_quick() {
    let tasks = Baseline::now();
    let (client, pid, _) = connect().await;
    let text = dies(&client, "kill").await;
    assert!(text.contains("the MCP server exited (signal: 9"), "{text}");
    dead_and_reaped(&client, pid, "signal: 9").await;
    let (closed, took) = bounded(client.close()).await;
    closed.unwrap();
    assert!(took < Duration::from_millis(500), "{took:?}");
    drop(client);
    tasks.settled("killed mid-call").await;
}

#[tokio::test]
async fn garbage_invalid_utf8_and_a_cut_line_before_dying() {
    let tasks = Baseline::now();
    let (client, pid, _) = connect().await;
    // The non-JSON lines are skipped; the response cut in half is not taken.
    let text = dies(&client, "garbage").await;
    assert!(
        text.contains("the MCP server exited (exit status: 0)"),
        "{text}"
    );
    assert!(
        text.contains("its last message was cut off (")
            && text.contains(" bytes with no line end, not JSON)"),
        "{text}"
    );
    dead_and_reaped(&client, pid, "cut off").await;
    drop(client);
    tasks.settled("garbage").await;
}

#[tokio::test]
async fn leftovers_holding_stdout_do_not_keep_the_call_waiting() {
    let tasks = Baseline::now();
    let (client, pid, stderr) = connect().await;
    let text = dies(&client, "leftovers").await;
    assert!(
        text.contains(
            "the MCP server exited (exit status: 0), but a process it left behind holds its stdout open"
        ),
        "{text}"
    );
    let helpers: Vec<u32> = stderr
        .lock()
        .unwrap()
        .iter()
        .find_map(|l| l.strip_prefix("helpers "))
        .expect("the server named its helpers")
        .split(' ')
        .map(|p| p.parse().unwrap())
        .collect();
    let [inside, outside] = helpers[..] else {
        panic!("{helpers:?}")
    };
    // The helper in the server's group died with it; the one that left
    // the group is out of reach, but no longer holds anything up.
    wait_gone(inside, true).await;
    dead_and_reaped(&client, pid, "holds its stdout open").await;
    drop(client);
    tasks.settled("leftovers").await;
    assert!(!gone(outside, true));
    // SAFETY: a plain kill of the helper this test had started.
    unsafe { libc::kill(outside as i32, libc::SIGKILL) };
}

#[tokio::test]
async fn a_string_cut_mid_emoji_is_read_as_the_replacement_character() {
    let (client, _, _) = connect().await;
    let (result, _) = bounded(client.call_tool("cut", json!({}))).await;
    assert_eq!(result.unwrap().text_content(), "ab\u{FFFD}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn an_answer_that_is_not_json_fails_its_call_at_once_saying_so() {
    let tasks = Baseline::now();
    let (client, pid, _) = connect().await;
    let (result, took) = bounded(client.call_tool("broken", json!({}))).await;
    let e = result.unwrap_err();
    assert!(e.is_invalid_response(), "{e:?}");
    let text = e.to_string();
    assert!(
        text.starts_with("a line on the MCP server's stdout is not valid JSON: "),
        "{text}"
    );
    assert!(serde_reason(&e).starts_with("invalid escape"), "{e:?}");
    assert!(
        text.ends_with(r#""text":"\q"}]}}"#),
        "the line is shown: {text}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // The server goes on; the line without an id is named when it ends.
    assert_eq!(
        client
            .call_tool("ok", json!({}))
            .await
            .unwrap()
            .text_content(),
        "ok"
    );
    let (result, took) = bounded(client.call_tool("exit", json!({}))).await;
    let e = result.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    let text = e.to_string();
    assert!(
        text.contains(
            "before that it wrote 1 line that could not be read (the last is the source)"
        ),
        "{text}"
    );
    let line = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<claude_code_agent_mcp::client::Error>())
        .unwrap_or_else(|| panic!("no source: {e:?}"));
    assert_eq!(
        line.to_string(),
        "a line on the MCP server's stdout is not valid JSON: not json at all"
    );
    assert!(
        serde_reason(line).starts_with("expected ident at line 1 column 2"),
        "{line:?}"
    );
    dead_and_reaped(&client, pid, "exit status: 3").await;
    drop(client);
    tasks.settled("broken").await;
}
