//! The stdio transport against our own demo server (and a few shell
//! wrappers around it): NDJSON, the line cap, non-JSON lines, stderr,
//! process groups and shutdown.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::peers;
use claude_code_agent_mcp::client::{
    ClientOptions, Error, HandshakeMode, Inbox, McpClient, StdioOptions, StdioTransport, Transport,
};
use serde_json::json;

fn options() -> ClientOptions {
    ClientOptions::new("stdio-test", "1")
        .request_timeout(Duration::from_secs(20))
        // These exercise the session-based revisions (ping, logging/setLevel).
        .handshake(HandshakeMode::Initialize)
}

/// A shell wrapper: `sh -c "<script>; exec <server>"`.
fn wrapped(script: &str) -> StdioOptions {
    let server = peers::stdio_server();
    StdioOptions::new("sh")
        .arg("-c")
        .arg(format!("{script}; exec \"$0\""))
        .arg(server)
}

/// Whether a process is gone or a zombie awaiting its reaper.
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
    }
}

async fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn calls_over_stdio_and_close_reaps_the_child() {
    let transport = StdioTransport::spawn(StdioOptions::new(peers::stdio_server())).unwrap();
    let pid = transport.pid();
    let client = McpClient::connect(transport, options()).await.unwrap();
    assert_eq!(client.server_info().unwrap().name, "calc");
    assert_eq!(
        client
            .call_tool("add", json!({"a":20,"b":22}))
            .await
            .unwrap()
            .text_content(),
        "42"
    );
    assert!(client.is_alive());
    client.close().await.unwrap();
    assert!(!client.is_alive());
    assert!(
        std::fs::metadata(format!("/proc/{pid}")).is_err(),
        "the child was not reaped"
    );
    assert!(client.ping().await.unwrap_err().is_closed());
}

#[tokio::test]
async fn dropping_the_client_kills_the_process_group() {
    let transport = StdioTransport::spawn(wrapped("sleep 300 & echo started >&2")).unwrap();
    let pid = transport.pid();
    let client = McpClient::connect(transport, options()).await.unwrap();
    client.ping().await.unwrap();
    // The `sleep` shares the group; find it through /proc.
    let members: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit(')')
                        .next()?
                        .split_whitespace()
                        .nth(2)?
                        .parse::<u32>()
                        .ok()
                })
                == Some(pid)
        })
        .collect();
    assert!(
        members.len() >= 2,
        "expected the server and its sleep in group {pid}: {members:?}"
    );
    drop(client);
    for member in members {
        assert!(
            wait_gone(member).await,
            "process {member} of the group survived the drop"
        );
    }
}

#[tokio::test]
async fn lines_over_the_cap_fail_their_request_and_reading_goes_on() {
    let transport =
        StdioTransport::spawn(StdioOptions::new(peers::stdio_server()).max_line_bytes(10_000))
            .unwrap();
    let client = McpClient::connect(transport, options()).await.unwrap();
    let ok = client.call_tool("big", json!({"n": 5_000})).await.unwrap();
    assert_eq!(ok.text_content().len(), 5_000);
    let e = client
        .call_tool("big", json!({"n": 50_000}))
        .await
        .unwrap_err();
    assert!(e.is_invalid_response(), "{e:?}");
    assert!(
        e.to_string()
            .contains("exceeds the line cap of 10000 bytes"),
        "{e}"
    );
    assert_eq!(
        client
            .call_tool("add", json!({"a":1,"b":2}))
            .await
            .unwrap()
            .text_content(),
        "3"
    );
    // Big lines under a generous cap are fine.
    let transport = StdioTransport::spawn(StdioOptions::new(peers::stdio_server())).unwrap();
    let client = McpClient::connect(transport, options()).await.unwrap();
    let big = client
        .call_tool("big", json!({"n": 3_000_000}))
        .await
        .unwrap();
    assert_eq!(big.text_content().len(), 3_000_000);
}

#[tokio::test]
async fn non_json_lines_are_skipped_and_stderr_is_drained() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    let opts = wrapped("echo 'this is not json'; echo '{broken'; echo to-stderr >&2")
        .on_stderr(move |l| sink.lock().unwrap().push(l.to_owned()));
    let client = McpClient::connect(StdioTransport::spawn(opts).unwrap(), options())
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("add", json!({"a":1,"b":1}))
            .await
            .unwrap()
            .text_content(),
        "2"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines.lock().unwrap().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(*lines.lock().unwrap(), ["to-stderr"]);
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_dying_server_fails_waiting_requests_and_is_no_longer_alive() {
    // The server answers the handshake, then is killed in the middle of a call.
    let transport = StdioTransport::spawn(StdioOptions::new(peers::stdio_server())).unwrap();
    // This test's own server (other tests of this binary run theirs).
    let pid = transport.pid() as i32;
    let client = McpClient::connect(transport, options()).await.unwrap();
    let slow = client.call_tool("slow", json!({"steps":1,"ms":10_000}));
    let killer = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        // SAFETY: plain kill of our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    };
    let (result, ()) = tokio::join!(slow, killer);
    let e = result.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while client.is_alive() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!client.is_alive());
}

#[tokio::test]
async fn close_escalates_to_sigterm_then_sigkill() {
    // Ignores stdin closing and SIGTERM: only SIGKILL ends it.
    let opts = StdioOptions::new("sh")
        .arg("-c")
        .arg("trap '' TERM; while :; do sleep 0.05; done")
        .shutdown_timeout(Duration::from_millis(200));
    let transport = StdioTransport::spawn(opts).unwrap();
    transport.start(Inbox::new(|_| {})).unwrap();
    let pid = transport.pid();
    assert!(transport.is_alive());
    let started = Instant::now();
    transport.close().await.unwrap();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(!transport.is_alive());
    assert!(std::fs::metadata(format!("/proc/{pid}")).is_err());
}

/// A server that answers its first `server/discover` after the probe has
/// timed out, and from then on serves only the stateless revision: it
/// refuses `initialize` with `-32022`, offering 2026-07-28 (the Python SDK's
/// stdio server does this when it starts slowly).
const SLOW_DISCOVER_SERVER: &str = r#"
import json, sys, time
first = True
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "server/discover":
        if first:
            first = False
            time.sleep(1.0)
        r = {"supportedVersions": ["2026-07-28"], "capabilities": {},
             "serverInfo": {"name": "slow", "version": "1"}}
        out = {"jsonrpc": "2.0", "id": m["id"], "result": r}
    elif m["method"] == "initialize":
        e = {"code": -32022, "message": "serving 2026-07-28 on this connection",
             "data": {"supported": ["2026-07-28"], "requested": m["params"]["protocolVersion"]}}
        out = {"jsonrpc": "2.0", "id": m["id"], "error": e}
    else:
        out = {"jsonrpc": "2.0", "id": m["id"], "result": {}}
    print(json.dumps(out), flush=True)
"#;

#[tokio::test]
async fn a_probe_answered_late_then_a_refused_initialize_goes_back_to_discover() {
    let transport = StdioTransport::spawn(
        StdioOptions::new("python3")
            .arg("-c")
            .arg(SLOW_DISCOVER_SERVER),
    )
    .unwrap();
    let options = ClientOptions::new("stdio-test", "1")
        .request_timeout(Duration::from_secs(20))
        .discover_timeout(Duration::from_millis(200));
    let client = McpClient::connect(transport, options).await.unwrap();
    assert!(client.server_state().stateless);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().unwrap().name, "slow");
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_missing_program_is_a_transport_error_caused_by_the_io_error() {
    let e: Error = StdioTransport::spawn(StdioOptions::new("/nonexistent/mcp-server")).unwrap_err();
    assert!(e.is_transport(), "{e:?}");
    assert!(e.to_string().contains("/nonexistent/mcp-server"), "{e}");
    // The spawn's own error, kind and all, is the source.
    let io = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .unwrap_or_else(|| panic!("no io::Error source: {e:?}"));
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(e.jsonrpc_error().is_none() && e.status().is_none());
}
