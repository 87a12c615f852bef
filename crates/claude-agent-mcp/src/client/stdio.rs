//! The stdio transport: a child process speaking NDJSON on stdin/stdout.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStderr, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot, watch};

use super::ClientError;
use super::lines::DEFAULT_MAX_LINE_BYTES;
use super::stdio_child::{
    ChildState, StderrCallback, StderrTail, killpg, read_stderr, read_stdout, spawn_reaper,
};
use super::transport::{Inbox, SendOptions, Transport};

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
/// SIGKILL); dropping the transport kills the group at once
/// (synchronously, with `killpg`). The child is reaped as soon as it exits,
/// whatever the client is doing, and what it left in its group is killed
/// then. If it dies, waiting requests fail at once with
/// [`ClientError::Closed`] saying how it exited (and what its stderr last
/// said), and so does every later request. stderr is drained to `tracing`
/// (target `claude_agent_mcp::client::stdio`) and to an optional callback.
/// Non-JSON stdout lines (invalid UTF-8 included) are skipped with a warning.
pub struct StdioTransport {
    options: StdioOptions,
    pgid: i32,
    state: watch::Receiver<ChildState>,
    pipes: Mutex<Option<(ChildStdout, ChildStderr)>>,
    writer: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    writer_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    stderr_tail: StderrTail,
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
        let state = spawn_reaper(child, pgid);
        let (Some(mut stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            killpg(pgid, libc::SIGKILL);
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
            state,
            pipes: Mutex::new(Some((stdout, stderr))),
            writer: Mutex::new(Some(tx)),
            writer_task: Mutex::new(Some(writer_task)),
            stderr_tail: StderrTail::default(),
        })
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pgid.unsigned_abs()
    }

    fn killpg(&self, signal: i32) {
        killpg(self.pgid, signal);
    }

    /// Whether the child exited (and was reaped) within `timeout`.
    async fn wait_exit(&self, timeout: Duration) -> bool {
        let mut state = self.state.clone();
        // An error means the reaper is gone: nothing left to wait for.
        tokio::time::timeout(timeout, state.wait_for(|s| !s.is_running()))
            .await
            .is_ok()
    }

    fn child_running(&self) -> bool {
        self.state.borrow().is_running()
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

impl Transport for StdioTransport {
    fn start(&self, inbox: Inbox) -> Result<(), ClientError> {
        let (stdout, stderr) = lock(&self.pipes)
            .take()
            .ok_or_else(|| ClientError::transport("the stdio transport was already started"))?;
        let max = self.options.max_line_bytes;
        let (stderr_done, stderr_done_rx) = oneshot::channel();
        tokio::spawn(read_stderr(
            stderr,
            max,
            self.options.on_stderr.clone(),
            self.stderr_tail.clone(),
            self.state.clone(),
            stderr_done,
        ));
        tokio::spawn(read_stdout(
            stdout,
            max,
            inbox,
            self.stderr_tail.clone(),
            self.state.clone(),
            stderr_done_rx,
        ));
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
                // 2. SIGTERM the group, 3. SIGKILL it; the reaper then
                // reaps the child and kills whatever is left in its group.
                self.killpg(libc::SIGTERM);
                if !self.wait_exit(t).await {
                    self.killpg(libc::SIGKILL);
                    self.wait_exit(t).await;
                }
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
        // The reaper reaps it (and the readers end with the pipes).
        if self.child_running() {
            self.killpg(libc::SIGKILL);
        }
    }
}
