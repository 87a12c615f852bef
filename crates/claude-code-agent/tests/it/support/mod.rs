//! What the integration tests share: `fake_cli` for the fault tests with
//! the fake CLI, `captures` for the recorded transcripts, `child` for a test
//! that must be alone in its process, `repo` for the tests of the
//! repository itself, and here the helpers of the tests that drive the
//! real, pinned Claude Code CLI against the testkit's mock model.
//!
//! Every test gets its own [`Harness`] (from the testkit): a mock model, a
//! temporary `CLAUDE_CONFIG_DIR` and working folder, and a watcher that
//! records every process of the test, so [`Harness::finish`] can assert that
//! none of them is left running or unreaped. What is here is particular to
//! these tests: a time limit, tools that report on their calls, a turn that
//! echoes tool results.

pub mod captures;
pub mod child;
pub mod fake_cli;
#[cfg(feature = "redis")]
pub mod redis;
pub mod repo;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

// The testkit's harness, process reader and transcript helpers, as a prelude
// of these tests.
pub use claude_code_agent_testkit::__private::process::Proc;
pub use claude_code_agent_testkit::Harness;
use claude_code_agent_testkit::Turn;
pub use claude_code_agent_testkit::transcript::{
    drain, result_text, results, tool_results, tool_uses,
};

/// The most any one test may take: a guard against hangs, not a measure
/// (`cli_large`'s 10 MiB round trip took 80–89 s of a 90 s budget in a
/// debug build on a loaded 2-core machine).
pub const TEST_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs a test body under [`TEST_TIMEOUT`].
pub async fn with_timeout<F: Future>(body: F) -> F::Output {
    match tokio::time::timeout(TEST_TIMEOUT, body).await {
        Ok(out) => out,
        Err(_) => panic!("the test did not finish within {TEST_TIMEOUT:?}"),
    }
}

/// Sends `signal` to one process.
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: a plain syscall.
    let r = unsafe { libc::kill(pid, signal) };
    assert_eq!(r, 0, "kill({pid}, {signal}) failed");
}

/// Waits until `pid` is gone and reaped (no `/proc` entry, not even a
/// zombie), failing after 5 s.
pub async fn assert_gone(pid: i32) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while let Some(p) = Proc::read(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the CLI is still there: {p:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Two numbers, for the calculator tools of the tests.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Operands {
    pub a: f64,
    pub b: f64,
}

/// Watches the calls of a slow tool: how many started, how many saw their
/// cancellation token fire, how many ran to the end.
#[derive(Clone)]
pub struct SlowProbe {
    started: tokio::sync::watch::Sender<usize>,
    cancelled: tokio::sync::watch::Sender<usize>,
    finished: Arc<std::sync::atomic::AtomicUsize>,
}

impl SlowProbe {
    /// How many calls ran to the end.
    pub fn finished(&self) -> usize {
        self.finished.load(Ordering::SeqCst)
    }

    /// Waits until `n` calls have started.
    pub async fn wait_started(&self, n: usize) {
        let mut rx = self.started.subscribe();
        rx.wait_for(|c| *c >= n).await.expect("probe alive");
    }

    /// Waits up to `within` for `n` calls to see their cancellation.
    pub async fn wait_cancelled(&self, n: usize, within: Duration) -> bool {
        let mut rx = self.cancelled.subscribe();
        tokio::time::timeout(within, rx.wait_for(|c| *c >= n))
            .await
            .is_ok()
    }
}

/// A tool `name` that runs for `runs_for` (then answers "finished"),
/// reporting to the returned probe; a task watches each call's cancellation
/// token, so a cancellation is seen even when the handler future is dropped.
pub fn slow_tool(name: &str, runs_for: Duration) -> (claude_code_agent::mcp::Tool, SlowProbe) {
    let probe = SlowProbe {
        started: tokio::sync::watch::channel(0).0,
        cancelled: tokio::sync::watch::channel(0).0,
        finished: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
    };
    let p = probe.clone();
    let tool = claude_code_agent::mcp::Tool::new(
        name,
        "Takes its time",
        move |_: serde_json::Value, ctx: claude_code_agent::mcp::ToolContext| {
            let p = p.clone();
            async move {
                let token = ctx.cancellation_token().clone();
                let watcher = p.clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    watcher.cancelled.send_modify(|c| *c += 1);
                });
                p.started.send_modify(|c| *c += 1);
                tokio::select! {
                    () = ctx.cancelled() => "cancelled".to_owned(),
                    () = tokio::time::sleep(runs_for) => {
                        p.finished.fetch_add(1, Ordering::SeqCst);
                        "finished".to_owned()
                    }
                }
            }
        },
    )
    .input_schema(serde_json::json!({"type": "object"}));
    (tool, probe)
}

/// A model turn that answers with the text of every tool result it was sent:
/// `results: <first> | <second> …`.
pub fn echo_results() -> Turn {
    Turn::dynamic(|req| {
        let texts: Vec<String> = req.tool_results().iter().map(|r| r.text()).collect();
        Turn::text(format!("results: {}", texts.join(" | ")))
    })
}

/// The status of MCP server `name`, if the CLI lists it.
pub async fn server_status(
    client: &claude_code_agent::Control,
    name: &str,
) -> Option<claude_code_agent::protocol::McpServerStatus> {
    let status = client.mcp_status().await.expect("mcp_status");
    status.mcp_servers.into_iter().find(|s| s.name == name)
}

/// Waits (up to 20 s) for MCP server `name` to be in `state`. The CLI
/// leaves out in-process servers still in their handshake.
pub async fn wait_for_server(
    client: &claude_code_agent::Control,
    name: &str,
    state: claude_code_agent::protocol::McpServerState,
) -> claude_code_agent::protocol::McpServerStatus {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let status = server_status(client, name).await;
        if let Some(s) = &status
            && s.status == state
        {
            return status.unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{name} never became {state:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One turn of `client`: sends `prompt`, reads to the result, checks that
/// it is not an error, returns the messages.
pub async fn client_turn(
    client: &claude_code_agent::Client,
    prompt: &str,
) -> Vec<claude_code_agent::Message> {
    client.query(prompt).await.unwrap();
    let (messages, error) = drain(client.receive_response()).await;
    assert!(error.is_none(), "{error:?}");
    let result = results(&messages).pop().expect("a result");
    assert!(!result.is_error, "{result:?}");
    messages
}

/// The path of this package's example `name`, next to this test binary,
/// built (with this test's `http-server` feature) if it is not there.
pub fn example(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join("examples").join(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-p", "claude-code-agent", "--example", name])
            .args(cfg!(feature = "http-server").then_some("--features=http-server"))
            .status()
            .unwrap();
        assert!(status.success(), "building the {name} example failed");
    }
    path
}

/// A child process killed and reaped when dropped.
#[cfg(feature = "http-server")]
pub struct Reaped(pub std::process::Child);

#[cfg(feature = "http-server")]
impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The calculator example serving Streamable HTTP on a free port of
/// 127.0.0.1 (`extra` arguments after `--http 127.0.0.1:0`): the process,
/// and the URL it said it listens on (`http://127.0.0.1:PORT/mcp`).
#[cfg(feature = "http-server")]
pub fn http_calculator(extra: &[&str]) -> (Reaped, String) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(example("calculator"))
        .args(["--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let child = Reaped(child);
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the calculator said {line:?}"))
        .to_owned();
    (child, url)
}
