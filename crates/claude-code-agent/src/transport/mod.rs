//! Finding the Claude Code CLI and starting it, on the MCP crate's
//! transport layer ([`claude_code_agent_mcp::__private::transport`]): the one NDJSON
//! reader and writer, and the one process-group type with its orphan
//! policy.
//!
//! Layout:
//! * [`discover`] — [`find_cli`]: where the CLI executable is.
//! * [`spawn`](fn@spawn) — maps a [`SpawnConfig`] onto
//!   [`StdioOptions`] and starts the CLI; hands back a [`Process`] whose
//!   parts speak this crate's [`Error`]: a [`LineReader`] of JSON objects,
//!   a [`LineWriter`] and a [`ChildHandle`].

mod discover;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use claude_code_agent_mcp::__private::transport::{
    self as mcp, Line, Parsed, SendError, StdioOptions,
};
use serde::Serialize;
#[cfg(test)]
use serde::de::DeserializeOwned;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::time::Instant;

pub use claude_code_agent_mcp::__private::transport::{ShutdownTimeouts, StderrCallback};
pub use discover::find_cli;

use crate::error::{Error, Result};
use crate::message::{SkipReason, SkippedLine};

/// Default cap on one stdout line: 256 MiB (the CLI's own per-line cap on
/// its input is 268 435 456 characters).
pub(crate) const DEFAULT_MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// How much of a skipped line goes into the warning.
const PREVIEW: usize = 200;

/// Everything needed to start the CLI process.
#[derive(Clone)]
pub(crate) struct SpawnConfig {
    /// The executable (usually from [`find_cli`]).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables set on top of the inherited environment (applied after
    /// `env_remove`, so setting wins over removing).
    pub env: Vec<(OsString, OsString)>,
    /// Inherited variables to remove.
    pub env_remove: Vec<OsString>,
    /// Working directory; `None` inherits ours.
    pub cwd: Option<PathBuf>,
    /// Longest accepted stdout line, in bytes, without the newline.
    pub max_line_bytes: usize,
    /// Called with every stderr line.
    pub stderr_callback: Option<StderrCallback>,
    /// How many bytes of stderr to keep for [`ChildHandle`]'s tail.
    pub stderr_tail_bytes: usize,
}

impl SpawnConfig {
    /// A configuration with no arguments, the inherited environment and
    /// working directory, and the default limits.
    pub(crate) fn new(program: impl Into<PathBuf>) -> Self {
        SpawnConfig {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cwd: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            stderr_callback: None,
            stderr_tail_bytes: mcp::DEFAULT_STDERR_TAIL_BYTES,
        }
    }

    fn options(&self) -> StdioOptions {
        let mut options = StdioOptions::new(&self.program)
            .args(&self.args)
            .max_line_bytes(self.max_line_bytes)
            .stderr_callback(self.stderr_callback.clone())
            .stderr_tail_bytes(self.stderr_tail_bytes);
        for key in &self.env_remove {
            options = options.env_remove(key);
        }
        for (key, value) in &self.env {
            options = options.env(key, value);
        }
        if let Some(cwd) = &self.cwd {
            options = options.cwd(cwd);
        }
        options
    }
}

impl std::fmt::Debug for SpawnConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.options().fmt(f)
    }
}

/// A running CLI: its stdout, its stdin, and the process itself.
///
/// The three parts can be moved to different tasks. Dropping the
/// [`ChildHandle`] kills the whole process group. The child handle keeps a
/// clone of the writer (to close stdin during a shutdown), so dropping
/// `writer` does not close the CLI's stdin: shut the child down.
#[derive(Debug)]
pub(crate) struct Process {
    /// NDJSON from the CLI's stdout.
    pub reader: LineReader,
    /// NDJSON to the CLI's stdin (cheap to clone; frames never interleave).
    pub writer: LineWriter,
    /// The process: exit status, stderr tail, shutdown, kill on drop.
    pub child: ChildHandle,
}

/// Starts the CLI as the leader of a new process group with all three
/// standard streams piped.
///
/// Must be called from within a Tokio runtime. Fails with [`Error::Spawn`]
/// naming the program when the process cannot be started (missing program
/// or working directory, not executable, no runtime, out of threads).
pub(crate) fn spawn(config: SpawnConfig) -> Result<Process> {
    let mcp::Process {
        reader,
        writer,
        group,
    } = mcp::spawn(&config.options()).map_err(|source| Error::Spawn {
        program: config.program.clone(),
        source,
    })?;
    tracing::debug!(pid = group.pid(), program = %config.program.display(), "spawned the Claude Code CLI");
    Ok(Process {
        reader: LineReader { inner: reader },
        writer: LineWriter { inner: writer },
        child: ChildHandle(group),
    })
}

/// One line the [`LineReader`] read: a value, or the report of a line it
/// had to skip (nothing the CLI writes is an error).
#[derive(Debug)]
pub(crate) enum Read<T> {
    /// The line's value.
    Value(T),
    /// A line that may have been a message, skipped; reading goes on.
    Skipped(SkippedLine),
}

/// Reads the CLI's stdout as newline-delimited JSON objects: the shared
/// [`mcp::LineReader`] with the CLI's policy. What the CLI writes is never
/// an error; only failing to read is.
///
/// * A line over the cap is one [`Read::Skipped`] ([`SkipReason::TooLong`]).
/// * Blank lines and lines that do not start with `{` (diagnostics such as
///   `[SandboxDebug] …`, garbage, a JSON array) are skipped with a
///   `tracing::warn!`: they are not messages.
/// * A line that starts with `{` but does not parse (truncated JSON,
///   invalid UTF-8 in a string, a number no `f64` holds such as `1e999`)
///   and a JSON object that does not fit the type asked for are each one
///   [`Read::Skipped`] ([`SkipReason::Invalid`]): a message was lost, and
///   the user is told.
/// * A last line cut short by the end of input is returned like any other;
///   [`ended_mid_line`](LineReader::ended_mid_line) says so (the session's
///   end decides whether the user is told).
/// * A read error is returned once ([`Error::Io`]), then the stream ends.
#[derive(Debug)]
pub(crate) struct LineReader<R = ChildStdout> {
    inner: mcp::LineReader<R>,
}

impl<R: tokio::io::AsyncRead + Unpin> LineReader<R> {
    /// Reads objects from `inner`, accepting lines of up to `max_line_bytes`.
    #[cfg(test)]
    pub(crate) fn new(inner: R, max_line_bytes: usize) -> Self {
        Self {
            inner: mcp::LineReader::new(inner, max_line_bytes),
        }
    }

    /// Whether the input ended inside a line: the last line returned had
    /// no `\n` (the CLI died while writing it).
    pub(crate) fn ended_mid_line(&self) -> bool {
        self.inner.ended_mid_line()
    }

    /// The next JSON object as a [`serde_json::Value`]; `None` at the end.
    #[cfg(test)]
    pub(crate) async fn next_line(&mut self) -> Option<Result<Read<serde_json::Value>>> {
        self.next_line_or(|| {}).await
    }

    /// [`next_line`](Self::next_line), calling `before_wait` whenever it
    /// is about to wait for the CLI to write (no whole line is buffered).
    #[cfg(test)]
    pub(crate) async fn next_line_or(
        &mut self,
        before_wait: impl FnMut(),
    ) -> Option<Result<Read<serde_json::Value>>> {
        self.next_decoded_or(before_wait, mcp::parse_object).await
    }

    /// The next JSON object, deserialized straight from the read buffer
    /// into `T`; `None` at the end.
    #[cfg(test)]
    pub(crate) async fn next_json<T: DeserializeOwned>(&mut self) -> Option<Result<Read<T>>> {
        self.next_decoded_or(|| {}, |line| mcp::parse_object::<T>(line))
            .await
    }

    /// The next line that `decode` makes something of, under the policy
    /// above, calling `before_wait` whenever it is about to wait for the
    /// CLI to write (no whole line is buffered): the session's reader lets
    /// the answers to the lines it read go there. `decode` is
    /// [`mcp::parse_object`] or one with its contract (the session's
    /// decodes its hot line straight into a typed request).
    pub(crate) async fn next_decoded_or<T>(
        &mut self,
        mut before_wait: impl FnMut(),
        mut decode: impl FnMut(&[u8]) -> Parsed<T>,
    ) -> Option<Result<Read<T>>> {
        let limit = self.inner.max_line_bytes();
        loop {
            if !self.inner.line_ready() {
                before_wait();
            }
            let line = match self.inner.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(e) => return Some(Err(Error::Io(e))),
            };
            let line = match line {
                Line::Text(line) => line,
                Line::TooLong { len, head } => {
                    tracing::warn!(
                        limit,
                        len,
                        "skipping a line from the CLI longer than the limit: {}",
                        mcp::lines::preview(head.trim_ascii(), PREVIEW),
                    );
                    let reason = SkipReason::TooLong { limit };
                    return Some(Ok(Read::Skipped(SkippedLine::new(reason, head, len))));
                }
            };
            match decode(line) {
                Parsed::Blank => {}
                Parsed::Value(value) => return Some(Ok(Read::Value(value))),
                // Starts like a message but does not parse (serde calls a
                // number out of range a syntax error, like truncated JSON),
                // or does not fit the type asked for.
                Parsed::Invalid(Some(e)) | Parsed::Mismatch(e) => {
                    tracing::warn!(
                        len = line.len(),
                        "skipping a line from the CLI that starts as a JSON object but does not \
                         parse ({e}): {}",
                        mcp::lines::preview(line.trim_ascii(), PREVIEW),
                    );
                    let reason = SkipReason::Invalid(std::sync::Arc::new(e));
                    return Some(Ok(Read::Skipped(SkippedLine::new(
                        reason,
                        line,
                        line.len(),
                    ))));
                }
                Parsed::Invalid(None) => {
                    tracing::warn!(
                        len = line.len(),
                        "skipping a line from the CLI that is not a JSON object: {}",
                        mcp::lines::preview(line.trim_ascii(), PREVIEW),
                    );
                }
            }
        }
    }
}

/// Writes newline-delimited JSON to the CLI's stdin: the shared
/// [`mcp::LineWriter`] (whole frames, never interleaved, never torn, even
/// when a send is cancelled; concurrent sends share writes), speaking
/// this crate's [`Error`]: [`Error::Json`] for a value that does not
/// serialize, [`Error::Io`] for a failed write (`EPIPE`: the CLI exited),
/// after which every send is [`Error::Closed`].
#[derive(Debug)]
pub(crate) struct LineWriter<W = ChildStdin> {
    inner: mcp::LineWriter<W>,
}

impl<W> Clone for LineWriter<W> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

fn send_error(e: SendError) -> Error {
    match e {
        SendError::Serialize(e) => Error::Json(e),
        SendError::Io(e) => Error::Io(e),
        SendError::Invalid(why) => {
            Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, why))
        }
        _ => Error::Closed,
    }
}

impl<W: tokio::io::AsyncWrite + Unpin> LineWriter<W> {
    /// Writes frames to `io`.
    #[cfg(test)]
    pub(crate) fn new(io: W) -> Self {
        Self {
            inner: mcp::LineWriter::new(io),
        }
    }

    /// Serializes `value` as one line of JSON and sends it.
    pub(crate) async fn send<T: Serialize + ?Sized>(&self, value: &T) -> Result<()> {
        self.inner.send(value).await.map_err(send_error)
    }

    /// Queues `value` without writing it or waiting (see
    /// [`mcp::LineWriter::queue`]); the caller flushes with
    /// [`flush_queued`](Self::flush_queued). `Ok(false)`, nothing queued,
    /// when the buffer is full: send instead.
    pub(crate) fn queue<T: Serialize + ?Sized>(&self, value: &T) -> Result<bool> {
        match self.inner.queue(value) {
            Ok(()) => Ok(true),
            Err(SendError::Full) => Ok(false),
            Err(e) => Err(send_error(e)),
        }
    }

    /// Writes what [`queue`](Self::queue) left, never waiting (see
    /// [`mcp::LineWriter::flush_queued`]).
    pub(crate) fn flush_queued(&self)
    where
        W: Send + 'static,
    {
        self.inner.flush_queued();
    }

    /// Writes what is queued, then closes the pipe (the CLI sees EOF on
    /// stdin). Idempotent. (The session closes stdin through
    /// [`ProcessGroup::shutdown`](mcp::ProcessGroup::shutdown).)
    #[cfg(test)]
    pub(crate) async fn close(&self) -> Result<()> {
        self.inner.close().await.map_err(send_error)
    }

    /// Whether the writer is closed (by `close` or after a failed write).
    #[cfg(test)]
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// The CLI process: the shared [`mcp::ProcessGroup`] (exit status,
/// graceful [`shutdown`](mcp::ProcessGroup::shutdown), stderr tail, kill
/// on drop), plus [`exit_error`](Self::exit_error).
#[derive(Debug)]
pub(crate) struct ChildHandle(mcp::ProcessGroup);

impl std::ops::Deref for ChildHandle {
    type Target = mcp::ProcessGroup;

    fn deref(&self) -> &mcp::ProcessGroup {
        &self.0
    }
}

impl ChildHandle {
    /// Builds [`Error::CliExited`] after the CLI closed its stdout: waits up
    /// to `grace` for the exit status and for stderr to end, then reports
    /// code, signal (both `None` if it has not exited) and the stderr tail.
    pub(crate) async fn exit_error(&self, grace: Duration) -> Error {
        let deadline = Instant::now() + grace;
        let status = tokio::time::timeout_at(deadline, self.wait()).await.ok();
        let left = deadline.saturating_duration_since(Instant::now());
        self.stderr_finished(left.max(Duration::from_millis(50)))
            .await;
        Error::CliExited {
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| mcp::process::exit_signal(&s)),
            stderr_tail: self.stderr_tail(),
        }
    }
}
