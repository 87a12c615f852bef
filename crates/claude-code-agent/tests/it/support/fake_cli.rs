//! Shared support for the fault tests against the fake CLI (`crates/fake-cli`).

use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use claude_code_agent::mcp::{Server, Tool, ToolContext};
use claude_code_agent::{Error, Message, Options, Result};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A fake CLI run: the options pointing the SDK at it, and its pid file.
pub struct Fake {
    pub options: Options,
    pid_file: PathBuf,
}

/// Options that run `fake-claude` with `scenario` and `params`.
pub fn fake(scenario: &str, mut params: Value) -> Fake {
    let bin = claude_code_agent_fake_cli::binary().expect("build fake-claude");
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let pid_file = std::env::temp_dir().join(format!(
        "fake-claude-{}-{}.pid",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&pid_file);
    params["pid_file"] = json!(pid_file);
    let options = Options::new()
        .cli_path(bin)
        .env("FAKE_CLAUDE_SCENARIO", scenario)
        .env("FAKE_CLAUDE_PARAMS", params.to_string());
    Fake { options, pid_file }
}

impl Fake {
    /// The fake CLI's pid (it writes it first thing).
    pub fn pid(&self) -> i32 {
        std::fs::read_to_string(&self.pid_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .expect("the fake CLI wrote its pid")
    }

    /// Asserts the fake CLI is gone and reaped (no `/proc/<pid>` entry,
    /// not even a zombie) and that no task is left on the test's runtime,
    /// each within 5 s.
    pub async fn assert_gone(&self) {
        self.assert_process_gone().await;
        claude_code_agent_testkit::tasks::assert_none_left(Duration::from_secs(5)).await;
    }

    /// Asserts the fake CLI is gone and reaped within 5 s.
    pub async fn assert_process_gone(&self) {
        let pid = self.pid();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            match stat {
                Err(_) => break,
                Ok(s) if Instant::now() > deadline => {
                    panic!("the fake CLI (pid {pid}) is still there: {s}")
                }
                Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        let _ = std::fs::remove_file(&self.pid_file);
    }
}

/// Runs `f`, failing the test if it takes longer than `secs`.
pub async fn bounded<F: Future>(secs: u64, f: F) -> F::Output {
    match tokio::time::timeout(Duration::from_secs(secs), f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {secs} s"),
    }
}

/// Collects a whole stream.
pub async fn collect(stream: impl Stream<Item = Result<Message>>) -> Vec<Result<Message>> {
    let mut stream = std::pin::pin!(stream);
    let mut out = Vec::new();
    while let Some(m) = stream.next().await {
        out.push(m);
    }
    out
}

/// The last `result` of a transcript, asserting the fake CLI's checks passed.
pub fn final_result(messages: &[Result<Message>]) -> claude_code_agent::ResultMessage {
    let r = messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Ok(Message::Result(r)) => Some(r.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result in {messages:?}"));
    assert!(!r.is_error, "the fake CLI's checks failed: {:?}", r.result);
    r
}

/// Errors in a transcript.
pub fn errors(messages: &[Result<Message>]) -> Vec<&Error> {
    messages.iter().filter_map(|m| m.as_ref().err()).collect()
}

/// A server `calc` with `add` (instant), `slow` (sleeps `ms`, or until
/// cancelled) and `wait` (hands its cancellation token to `tokens`, then
/// waits for cancellation).
pub fn calc_server(
    tokens: Option<tokio::sync::mpsc::UnboundedSender<CancellationToken>>,
) -> Server {
    let add = Tool::new("add", "Add a and b", |v: Value| async move {
        format!(
            "sum={}",
            v["a"].as_f64().unwrap_or(0.0) + v["b"].as_f64().unwrap_or(0.0)
        )
    })
    .input_schema(
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
    );
    let slow = Tool::new(
        "slow",
        "Sleep ms milliseconds",
        |v: Value, ctx: ToolContext| async move {
            let ms = v["ms"].as_u64().unwrap_or(1000);
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => format!("slept {ms} ms"),
                () = ctx.cancelled() => "cancelled".to_owned(),
            }
        },
    )
    .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}}));
    let wait = Tool::new(
        "wait",
        "Wait until cancelled",
        move |_: Value, ctx: ToolContext| {
            if let Some(tx) = &tokens {
                let _ = tx.send(ctx.cancellation_token().clone());
            }
            async move {
                ctx.cancelled().await;
                "cancelled".to_owned()
            }
        },
    )
    .input_schema(json!({"type": "object"}));
    Server::builder("calc", "1.0.0")
        .tool(add)
        .tool(slow)
        .tool(wait)
        .build()
}
