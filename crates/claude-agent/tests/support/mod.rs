//! Shared helpers for the tests that drive the real, pinned Claude Code CLI
//! against the testkit's mock model.
//!
//! Every test gets its own [`Harness`]: a mock model, a temporary
//! `CLAUDE_CONFIG_DIR` and working folder, and a watcher that records every
//! process of the test (found among the live descendants of the test process
//! by its `CLAUDE_CONFIG_DIR`), so [`Harness::finish`] can assert that none
//! of them is left running or unreaped.
#![allow(dead_code)] // each test file uses a different part

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use claude_agent::message::{ResultMessage, ToolResultBlock, ToolUseBlock};
use claude_agent::{ContentBlock, Message, Options};
use claude_agent_testkit::{CliEnv, MockModel, MockModelBuilder, Turn};

/// The most any one test may take.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(90);

/// How long processes get to disappear once a test is done with them.
const SETTLE: Duration = Duration::from_secs(10);

/// Runs a test body under [`TEST_TIMEOUT`].
pub async fn with_timeout<F: Future>(body: F) -> F::Output {
    match tokio::time::timeout(TEST_TIMEOUT, body).await {
        Ok(out) => out,
        Err(_) => panic!("the test did not finish within {TEST_TIMEOUT:?}"),
    }
}

/// A mock model, an isolated CLI environment, and a process watcher.
pub struct Harness {
    pub mock: MockModel,
    pub env: CliEnv,
    pub cli: PathBuf,
    pub stderr: Arc<Mutex<Vec<String>>>,
    watch: ProcWatch,
}

impl Harness {
    /// Starts the mock and prepares the environment.
    pub async fn start(mock: MockModelBuilder) -> Self {
        Self::start_with_env(mock, &[]).await
    }

    /// Like [`start`](Self::start), with extra environment variables for the CLI.
    pub async fn start_with_env(mock: MockModelBuilder, vars: &[(&str, &str)]) -> Self {
        let cli = claude_agent_testkit::cli::pinned_cli_async().await.expect(
            "the pinned Claude Code CLI (set CLAUDE_AGENT_TEST_CLI or let the testkit install it)",
        );
        let mock = mock.start().await;
        let mut env = CliEnv::for_mock(&mock).expect("temporary folders");
        for (k, v) in vars {
            env = env.set(*k, *v);
        }
        let watch = ProcWatch::start(env.config_dir().to_string_lossy().into_owned());
        Harness {
            mock,
            env,
            cli,
            stderr: Arc::new(Mutex::new(Vec::new())),
            watch,
        }
    }

    /// Options that run the pinned CLI in this environment, against the mock.
    pub fn options(&self) -> Options {
        let mut options = Options::new().cli_path(&self.cli).cwd(self.env.work_dir());
        for (k, v) in self.env.vars() {
            options = options.env(k, v);
        }
        let sink = self.stderr.clone();
        options.stderr(move |line| sink.lock().unwrap().push(line.to_owned()))
    }

    /// What the CLI wrote to stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// The live CLI processes of this test (descendants of the test process
    /// whose environment names this test's config folder).
    pub fn live_cli_pids(&self) -> Vec<i32> {
        self.watch.sample();
        ours(&self.watch.config_dir)
            .into_iter()
            .filter(|p| !p.is_dead())
            .map(|p| p.pid)
            .collect()
    }

    /// Waits until exactly one CLI process of this test runs and returns it.
    pub async fn wait_for_cli_pid(&self) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let pids = self.live_cli_pids();
            if pids.len() == 1 {
                return pids[0];
            }
            assert!(
                Instant::now() < deadline,
                "expected one live CLI process, found {pids:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Asserts that no process of this test is left: none of the CLI
    /// processes seen is alive or a zombie, and nothing lives in their
    /// process groups. Waits up to a few seconds for them to go.
    ///
    /// Then stops the mock model and asserts that no task is left on the
    /// test's runtime: the test must have ended (or dropped) its sessions.
    pub async fn finish(self) {
        let seen_any = self.watch.stop_and_check().await;
        assert!(seen_any, "the process watcher never saw a CLI process");
        self.mock.shutdown();
        claude_agent_testkit::tasks::assert_none_left(Duration::from_secs(5)).await;
    }
}

// ---------------------------------------------------------------------------
// Processes

/// The fields of `/proc/<pid>/stat` the checks need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub start_time: u64,
}

impl Proc {
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

pub fn proc_stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    Some(Proc {
        pid,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

pub fn all_procs() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_stat)
        .collect()
}

/// Every descendant of the test process (zombies included), by `ppid`.
pub fn descendants() -> Vec<Proc> {
    let me = std::process::id() as i32;
    let procs = all_procs();
    let mut found: BTreeSet<i32> = BTreeSet::from([me]);
    loop {
        let before = found.len();
        for p in &procs {
            if found.contains(&p.ppid) {
                found.insert(p.pid);
            }
        }
        if found.len() == before {
            break;
        }
    }
    procs
        .into_iter()
        .filter(|p| p.pid != me && found.contains(&p.pid))
        .collect()
}

fn environ_has(pid: i32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|kv| kv == entry.as_bytes()))
        .unwrap_or(false)
}

/// Descendants whose environment names `config_dir` (zombies have no
/// environment and are not found here; see [`ProcWatch`]).
///
/// A process's status is read again once its environment matched: the first
/// read may predate its `exec` (and the `setpgid` just before it), when it
/// was still a copy of the test in the test's own process group.
fn ours(config_dir: &str) -> Vec<Proc> {
    let entry = format!("CLAUDE_CONFIG_DIR={config_dir}");
    descendants()
        .into_iter()
        .filter(|p| environ_has(p.pid, &entry))
        .filter_map(|p| proc_stat(p.pid).filter(|now| now.start_time == p.start_time))
        .collect()
}

/// Records, in the background, every process of one test.
struct ProcWatch {
    config_dir: String,
    seen: Arc<Mutex<BTreeMap<i32, Proc>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProcWatch {
    fn start(config_dir: String) -> Self {
        let seen = Arc::new(Mutex::new(BTreeMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop, dir) = (seen.clone(), stop.clone(), config_dir.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    record(&seen, &dir);
                    std::thread::sleep(Duration::from_millis(25));
                }
            })
        };
        ProcWatch {
            config_dir,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn sample(&self) {
        record(&self.seen, &self.config_dir);
    }

    /// Stops watching and waits for every recorded process to be gone.
    /// Returns whether any process was seen at all.
    async fn stop_and_check(mut self) -> bool {
        self.sample();
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let seen: Vec<Proc> = self.seen.lock().unwrap().values().copied().collect();
        // SAFETY: a plain syscall.
        let own_group = unsafe { libc::getpgrp() };
        let shared: Vec<&Proc> = seen.iter().filter(|p| p.pgrp == own_group).collect();
        assert!(
            shared.is_empty(),
            "CLI processes in the test's own process group {own_group}: {shared:?}"
        );
        let deadline = Instant::now() + SETTLE;
        loop {
            let left = leftovers(&seen, &self.config_dir);
            if left.is_empty() {
                return !seen.is_empty();
            }
            if Instant::now() >= deadline {
                panic!("CLI processes left behind after {SETTLE:?}: {left:?} (seen: {seen:?})");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for ProcWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn record(seen: &Mutex<BTreeMap<i32, Proc>>, config_dir: &str) {
    let found = ours(config_dir);
    let mut seen = seen.lock().unwrap();
    for p in found {
        seen.entry(p.pid).or_insert(p);
    }
}

/// What is left of the processes in `seen`: the same process (pid and start
/// time) still present, live or zombie; any live member of their process
/// groups; any live descendant still naming the config folder.
fn leftovers(seen: &[Proc], config_dir: &str) -> Vec<Proc> {
    let mut left = Vec::new();
    for p in seen {
        if let Some(now) = proc_stat(p.pid)
            && now.start_time == p.start_time
        {
            left.push(now);
        }
    }
    // SAFETY: a plain syscall.
    let own_group = unsafe { libc::getpgrp() };
    // The test's own group holds the test and its runner: never a leftover.
    let groups: BTreeSet<i32> = seen
        .iter()
        .map(|p| p.pgrp)
        .filter(|g| *g != own_group)
        .collect();
    for p in all_procs() {
        if groups.contains(&p.pgrp) && !p.is_dead() && !left.iter().any(|l| l.pid == p.pid) {
            left.push(p);
        }
    }
    for p in ours(config_dir) {
        if !left.iter().any(|l| l.pid == p.pid) {
            left.push(p);
        }
    }
    left
}

/// Sends `signal` to one process.
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: a plain syscall.
    let r = unsafe { libc::kill(pid, signal) };
    assert_eq!(r, 0, "kill({pid}, {signal}) failed");
}

// ---------------------------------------------------------------------------
// Messages

/// The `tool_use` blocks of the assistant messages.
pub fn tool_uses(messages: &[Message]) -> Vec<ToolUseBlock> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.content().to_vec()),
            _ => None,
        })
        .flatten()
        .filter_map(|b| match b {
            ContentBlock::ToolUse(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// The `tool_result` blocks of the user messages.
pub fn tool_results(messages: &[Message]) -> Vec<ToolResultBlock> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(u.tool_results().cloned().collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The text of a `tool_result` block.
pub fn result_text(block: &ToolResultBlock) -> String {
    block.content.as_ref().map(|c| c.text()).unwrap_or_default()
}

/// The `result` messages.
pub fn results(messages: &[Message]) -> Vec<ResultMessage> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Result(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The text of every assistant message, joined.
pub fn assistant_text(messages: &[Message]) -> String {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.text()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drains a message stream: the messages, and the error that ended it, if any.
pub async fn drain<S>(stream: S) -> (Vec<Message>, Option<claude_agent::Error>)
where
    S: futures::Stream<Item = claude_agent::Result<Message>>,
{
    use futures::StreamExt;
    let mut stream = std::pin::pin!(stream);
    let mut messages = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(m) => messages.push(m),
            Err(e) => {
                // A stream ends after a fatal error; make sure it does.
                let next = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
                assert!(
                    matches!(next, Ok(None)),
                    "the stream went on after the error {e}: {next:?}"
                );
                return (messages, Some(e));
            }
        }
    }
    (messages, None)
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
    pub fn started(&self) -> usize {
        *self.started.borrow()
    }

    pub fn cancelled(&self) -> usize {
        *self.cancelled.borrow()
    }

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
pub fn slow_tool(name: &str, runs_for: Duration) -> (claude_agent::mcp::Tool, SlowProbe) {
    let probe = SlowProbe {
        started: tokio::sync::watch::channel(0).0,
        cancelled: tokio::sync::watch::channel(0).0,
        finished: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
    };
    let p = probe.clone();
    let tool = claude_agent::mcp::Tool::raw_with_context(
        name,
        "Takes its time",
        serde_json::json!({"type": "object"}),
        move |_args, ctx: claude_agent::mcp::ToolContext| {
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
    );
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
