//! The stdio server process's life: a reaper that waits for it (so it
//! never lingers as a zombie) and kills what it left in its process group,
//! and the tasks that read its stdout and stderr until it is gone.

use std::collections::VecDeque;
use std::pin::pin;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::io::BufReader;
use tokio::process::{Child, ChildStderr, ChildStdout};
use tokio::sync::{oneshot, watch};

use super::ClientError;
use super::lines::{Line, LineReader, id_from_head};
use super::transport::Inbox;

/// Gets each line the server writes to stderr.
pub(crate) type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// How many stderr lines are kept to explain an exit.
const STDERR_TAIL_LINES: usize = 8;

/// How long the pipes are still read after the server exited: its last
/// output is drained, but a process it left outside its group (a `setsid`
/// helper that inherited the pipes) cannot keep the readers, or a request,
/// waiting.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);

/// How long, after stdout ended, the reader waits for the exit status and
/// the last stderr lines to explain why (only a server that closes stdout
/// and goes on running waits it out).
const EXPLAIN_WAIT: Duration = Duration::from_millis(500);

/// The last stderr lines, shared by the stderr reader and the explanation.
pub(crate) type StderrTail = Arc<Mutex<VecDeque<String>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the server process is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildState {
    Running,
    /// Exited and reaped (the status, unless waiting for it failed).
    Exited(Option<ExitStatus>),
}

impl ChildState {
    pub(crate) fn is_running(self) -> bool {
        self == Self::Running
    }
}

/// Waits for `child` in a task of its own: it is reaped as soon as it
/// exits, and its process group `pgid` is killed right then, so nothing it
/// started outlives it (and nothing holds its pipes open).
pub(crate) fn spawn_reaper(mut child: Child, pgid: i32) -> watch::Receiver<ChildState> {
    let (tx, rx) = watch::channel(ChildState::Running);
    tokio::spawn(async move {
        let status = child.wait().await.ok();
        // Right after the reap, before the group id can be reused.
        killpg(pgid, libc::SIGKILL);
        tx.send_replace(ChildState::Exited(status));
    });
    rx
}

/// Sends `signal` to the process group `pgid`.
pub(crate) fn killpg(pgid: i32, signal: i32) {
    // SAFETY: killpg has no memory-safety preconditions; the group is the
    // one our child leads (process_group(0)).
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Resolves [`DRAIN_AFTER_EXIT`] after the server exited.
async fn drained(mut state: watch::Receiver<ChildState>) {
    // An error means the reaper is gone (the runtime is shutting down).
    let _ = state.wait_for(|s| !s.is_running()).await;
    tokio::time::sleep(DRAIN_AFTER_EXIT).await;
}

/// Why stdout reading stopped.
enum End {
    Eof,
    HeldOpen,
    Failed(std::io::Error),
}

/// Delivers each JSON line of stdout until it ends (or the server exited
/// and the pipe stays open), then says the transport closed, and why.
pub(crate) async fn read_stdout(
    stdout: ChildStdout,
    max: usize,
    inbox: Inbox,
    tail: StderrTail,
    mut state: watch::Receiver<ChildState>,
    stderr_done: oneshot::Receiver<()>,
) {
    let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, stdout), max);
    let mut gone = pin!(drained(state.clone()));
    let mut unparsed_at_end = None;
    let end = loop {
        let next = tokio::select! {
            next = lines.next_line() => next,
            () = &mut gone => break End::HeldOpen,
        };
        match next {
            Ok(Some(Line::Text(line))) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(&line) {
                    Ok(message) => inbox.deliver(message),
                    Err(e) => {
                        tracing::warn!(
                            error = %e,
                            line = %String::from_utf8_lossy(&line[..line.len().min(200)]),
                            "MCP stdio: skipping a line that is not JSON"
                        );
                        if lines.ended_mid_line() {
                            unparsed_at_end = Some(line.len());
                        }
                    }
                }
            }
            Ok(Some(Line::TooLong { len, head })) => {
                let message = format!(
                    "MCP stdio: a message of {len} bytes exceeds the line cap of {max} bytes and was skipped"
                );
                tracing::error!("{message}");
                if let Some(id) = id_from_head(&head) {
                    inbox.fail(id, ClientError::InvalidResponse(message));
                }
            }
            Ok(None) => break End::Eof,
            Err(e) => break End::Failed(e),
        }
    };
    drop(lines);
    // The exit status and the last stderr lines, if they come soon.
    let _ = tokio::time::timeout(EXPLAIN_WAIT, async {
        let _ = stderr_done.await;
        let _ = state.wait_for(|s| !s.is_running()).await;
    })
    .await;
    let exited = match *state.borrow() {
        ChildState::Running => None,
        ChildState::Exited(Some(status)) => Some(format!("the MCP server exited ({status})")),
        ChildState::Exited(None) => Some("the MCP server exited".to_owned()),
    };
    let mut reason = match (end, exited) {
        (End::Eof, Some(exited)) => exited,
        (End::Eof, None) => "the MCP server closed its stdout".to_owned(),
        (End::HeldOpen, exited) => format!(
            "{}, but a process it left behind holds its stdout open",
            exited.as_deref().unwrap_or("the MCP server exited")
        ),
        (End::Failed(e), exited) => {
            let mut r = format!("reading from the MCP server failed: {e}");
            if let Some(exited) = exited {
                r = format!("{r}; {exited}");
            }
            r
        }
    };
    if let Some(len) = unparsed_at_end {
        reason.push_str(&format!(
            "; its last message was cut off ({len} bytes with no line end, not JSON)"
        ));
    }
    let tail: Vec<String> = lock(&tail).iter().cloned().collect();
    if !tail.is_empty() {
        reason.push_str(&format!("; its stderr ended with: {}", tail.join(" | ")));
    }
    inbox.closed(reason);
}

/// Hands each stderr line to `tracing`, `on` and the tail, until stderr
/// ends (or the server exited and the pipe stays open); drops `done` then.
pub(crate) async fn read_stderr(
    stderr: ChildStderr,
    max: usize,
    on: Option<StderrCallback>,
    tail: StderrTail,
    state: watch::Receiver<ChildState>,
    done: oneshot::Sender<()>,
) {
    let mut lines = LineReader::new(BufReader::new(stderr), max);
    let mut gone = pin!(drained(state));
    loop {
        let line = tokio::select! {
            line = lines.next_line() => line,
            () = &mut gone => break,
        };
        let Ok(Some(line)) = line else { break };
        let text = match line {
            Line::Text(t) => String::from_utf8_lossy(&t).into_owned(),
            Line::TooLong { len, .. } => format!("<a stderr line of {len} bytes>"),
        };
        tracing::debug!(target: "claude_agent_mcp::client::stdio", "server stderr: {text}");
        if let Some(f) = &on {
            f(&text);
        }
        let mut tail = lock(&tail);
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(text);
    }
    drop(done);
}
