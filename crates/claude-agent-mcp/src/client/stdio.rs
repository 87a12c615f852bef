//! The stdio transport: a child process speaking NDJSON on stdin/stdout.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio::sync::mpsc;

use super::ClientError;
use super::lines::{DEFAULT_MAX_LINE_BYTES, Line, LineReader, id_from_head};
use super::transport::{Inbox, SendOptions, Transport};

/// Gets each line the server writes to stderr.
pub type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

const STDERR_TAIL_LINES: usize = 8;

/// How to start a stdio server.
///
/// ```
/// use std::time::Duration;
/// use claude_agent_mcp::client::StdioOptions;
///
/// let options = StdioOptions::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("LOG_LEVEL", "debug")
///     .max_line_bytes(16 << 20)
///     .shutdown_timeout(Duration::from_secs(2));
/// # drop(options);
/// ```
#[derive(Clone)]
pub struct StdioOptions {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_remove: Vec<OsString>,
    cwd: Option<PathBuf>,
    max_line_bytes: usize,
    shutdown_timeout: Duration,
    on_stderr: Option<StderrCallback>,
}

impl StdioOptions {
    /// Runs `program` (looked up on `PATH`).
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cwd: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            shutdown_timeout: Duration::from_secs(2),
            on_stderr: None,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child (it inherits the rest).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Removes an inherited environment variable.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env_remove.push(key.into());
        self
    }

    /// The child's working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The cap on one stdout line (default [`DEFAULT_MAX_LINE_BYTES`]); a
    /// longer line is skipped with an error (its request, when its id can
    /// be read, fails) and reading goes on.
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line_bytes = max;
        self
    }

    /// How long each shutdown step waits: after closing stdin, then after
    /// SIGTERM, before SIGKILL (default 2 s).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Also hands each stderr line to `f` (it always goes to `tracing`).
    pub fn on_stderr(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stderr = Some(Arc::new(f));
        self
    }
}

impl fmt::Debug for StdioOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioOptions")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("max_line_bytes", &self.max_line_bytes)
            .finish_non_exhaustive()
    }
}

/// A server process spoken to over its stdin and stdout (NDJSON).
///
/// The child runs in its own process group. [`close`](Transport::close)
/// shuts it down gracefully (close stdin, wait; SIGTERM the group, wait;
/// SIGKILL) and reaps it; dropping the transport kills the group at once
/// (synchronously, with `killpg`). stderr is drained to `tracing` (target
/// `claude_agent_mcp::client::stdio`) and to an optional callback.
/// Non-JSON stdout lines are skipped with a warning.
pub struct StdioTransport {
    options: StdioOptions,
    pgid: i32,
    child: Mutex<Option<Child>>,
    pipes: Mutex<Option<(ChildStdout, ChildStderr)>>,
    writer: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    writer_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl StdioTransport {
    /// Starts the process. Needs a Tokio runtime.
    pub fn spawn(options: StdioOptions) -> Result<Self, ClientError> {
        let mut cmd = Command::new(&options.program);
        cmd.args(&options.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for key in &options.env_remove {
            cmd.env_remove(key);
        }
        for (k, v) in &options.env {
            cmd.env(k, v);
        }
        if let Some(cwd) = &options.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|e| {
            ClientError::Transport(format!(
                "could not start MCP server {:?}: {e}",
                options.program
            ))
        })?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or_else(|| ClientError::transport("the MCP server process has no pid"))?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(mut stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(ClientError::transport(
                "the MCP server process has no pipes",
            ));
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        // The writer owns stdin: whole lines only, so a dropped send never
        // leaves half a message; when every sender is gone stdin closes.
        let writer_task = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if let Err(e) = stdin.write_all(&line).await {
                    tracing::debug!(error = %e, "MCP stdio: writing to the server failed");
                    break;
                }
                if rx.is_empty() && stdin.flush().await.is_err() {
                    break;
                }
            }
            let _ = stdin.shutdown().await;
        });
        Ok(Self {
            options,
            pgid,
            child: Mutex::new(Some(child)),
            pipes: Mutex::new(Some((stdout, stderr))),
            writer: Mutex::new(Some(tx)),
            writer_task: Mutex::new(Some(writer_task)),
            stderr_tail: Arc::new(Mutex::new(VecDeque::new())),
        })
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pgid.unsigned_abs()
    }

    fn killpg(&self, signal: i32) {
        // SAFETY: killpg has no memory-safety preconditions; the group is
        // the one our child leads (process_group(0)).
        unsafe {
            libc::killpg(self.pgid, signal);
        }
    }

    async fn wait_exit(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if !self.child_running() {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn child_running(&self) -> bool {
        match lock(&self.child).as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => false,
        }
    }
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioTransport")
            .field("program", &self.options.program)
            .field("pid", &self.pgid)
            .finish_non_exhaustive()
    }
}

async fn read_stdout(
    stdout: ChildStdout,
    max: usize,
    inbox: Inbox,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, stdout), max);
    let reason = loop {
        match lines.next_line().await {
            Ok(Some(Line::Text(line))) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(&line) {
                    Ok(message) => inbox.deliver(message),
                    Err(e) => tracing::warn!(
                        error = %e,
                        line = %String::from_utf8_lossy(&line[..line.len().min(200)]),
                        "MCP stdio: skipping a line that is not JSON"
                    ),
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
            Ok(None) => break "the MCP server closed its stdout".to_owned(),
            Err(e) => break format!("reading from the MCP server failed: {e}"),
        }
    };
    let tail: Vec<String> = lock(&tail).iter().cloned().collect();
    if tail.is_empty() {
        inbox.closed(reason);
    } else {
        inbox.closed(format!(
            "{reason}; its stderr ended with: {}",
            tail.join(" | ")
        ));
    }
}

async fn read_stderr(
    stderr: ChildStderr,
    max: usize,
    on: Option<StderrCallback>,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = LineReader::new(BufReader::new(stderr), max);
    while let Ok(Some(line)) = lines.next_line().await {
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
}

impl Transport for StdioTransport {
    fn start(&self, inbox: Inbox) -> Result<(), ClientError> {
        let (stdout, stderr) = lock(&self.pipes)
            .take()
            .ok_or_else(|| ClientError::transport("the stdio transport was already started"))?;
        let max = self.options.max_line_bytes;
        tokio::spawn(read_stderr(
            stderr,
            max,
            self.options.on_stderr.clone(),
            self.stderr_tail.clone(),
        ));
        tokio::spawn(read_stdout(stdout, max, inbox, self.stderr_tail.clone()));
        Ok(())
    }

    fn send(
        &self,
        message: Value,
        _options: SendOptions,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        let result = (|| {
            let mut line = serde_json::to_vec(&message).map_err(|e| {
                ClientError::transport(format!("could not serialize a message: {e}"))
            })?;
            line.push(b'\n');
            let writer = lock(&self.writer);
            let tx = writer
                .as_ref()
                .ok_or_else(|| ClientError::Closed("the stdio transport is closed".into()))?;
            tx.send(line)
                .map_err(|_| ClientError::Closed("the MCP server's stdin is closed".into()))
        })();
        Box::pin(futures::future::ready(result))
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            // 1. Close stdin (after what was queued) and give it time to exit.
            lock(&self.writer).take();
            let writer = lock(&self.writer_task).take();
            if let Some(writer) = writer {
                let _ = tokio::time::timeout(self.options.shutdown_timeout, writer).await;
            }
            let t = self.options.shutdown_timeout;
            if !self.wait_exit(t).await {
                // 2. SIGTERM the group, 3. SIGKILL it.
                self.killpg(libc::SIGTERM);
                if !self.wait_exit(t).await {
                    self.killpg(libc::SIGKILL);
                }
            }
            // Whatever the leader left in its group goes too.
            self.killpg(libc::SIGKILL);
            let child = lock(&self.child).take();
            if let Some(mut child) = child {
                let _ = child.wait().await;
            }
            Ok(())
        })
    }

    fn is_alive(&self) -> bool {
        lock(&self.writer).is_some() && self.child_running()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        let running = lock(&self.child)
            .as_mut()
            .map(|c| matches!(c.try_wait(), Ok(None)));
        if running == Some(true) {
            self.killpg(libc::SIGKILL);
            if let Some(mut child) = lock(&self.child).take() {
                // Reaped now if it is already gone; else Tokio reaps the orphan.
                let _ = child.try_wait();
            }
        }
    }
}
