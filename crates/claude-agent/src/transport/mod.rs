//! The process transport: finding the Claude Code CLI, spawning it, NDJSON
//! framing both ways, draining stderr, and process hygiene.
//!
//! Layout:
//! * [`discover`] — [`find_cli`]: where the CLI executable is.
//! * [`spawn`](fn@spawn) — starts the CLI in its own process group and hands back a
//!   [`Process`]: a [`LineReader`] on its stdout, a [`LineWriter`] on its
//!   stdin, and a [`ChildHandle`] that owns the process.
//! * `stderr` — a dedicated thread drains stderr into a bounded tail ring,
//!   `tracing::debug!` and an optional per-line callback.
//! * `child` — exit status (reaped by a dedicated thread, no runtime needed),
//!   graceful shutdown with escalation, and kill-on-drop for the whole group.
//!
//! Process hygiene guarantees: the CLI runs as the leader of a new process
//! group, so the processes it starts (MCP servers, shells) get the signals
//! too; every path (graceful shutdown, error, drop mid-stream, unwinding
//! panic, dropping outside any runtime) ends with the group killed and the
//! CLI reaped. Processes that leave the group on purpose (`setsid`) cannot be
//! tracked. If the host process is killed with SIGKILL, nothing runs, but the
//! CLI then sees EOF on its stdin and exits by itself.
// The session layer is the consumer; until every item is used there, the
// unused ones must not fail `-D warnings`.

mod child;
mod discover;
mod reader;
mod stderr;
mod writer;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

pub(crate) use child::ChildHandle;
pub use child::ShutdownTimeouts;
pub use discover::find_cli;
pub(crate) use reader::LineReader;
pub(crate) use writer::LineWriter;

use crate::error::{Error, Result};

/// A callback that receives every line the CLI writes to its stderr.
///
/// Lines are decoded as lossy UTF-8, without the line terminator; very long
/// lines arrive in pieces of at most 64 KiB. The callback runs on the
/// transport's stderr thread, not on a Tokio worker, so a slow callback
/// cannot stall the runtime — but it does delay the draining of stderr,
/// which eventually stalls the CLI; keep it quick. A panic in the callback
/// is caught and logged.
pub type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// Default cap on one stdout line: 256 MiB (the CLI's own per-line cap on
/// its input is 268 435 456 characters).
pub(crate) const DEFAULT_MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// Default size of the stderr tail kept for error messages.
pub(crate) const DEFAULT_STDERR_TAIL_BYTES: usize = 64 * 1024;

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
    /// How many bytes of stderr to keep for [`ChildHandle::stderr_tail`].
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
            stderr_tail_bytes: DEFAULT_STDERR_TAIL_BYTES,
        }
    }
}

impl std::fmt::Debug for SpawnConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnConfig")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env)
            .field("env_remove", &self.env_remove)
            .field("cwd", &self.cwd)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("stderr_callback", &self.stderr_callback.is_some())
            .field("stderr_tail_bytes", &self.stderr_tail_bytes)
            .finish()
    }
}

/// A running CLI: its stdout, its stdin, and the process itself.
///
/// The three parts can be moved to different tasks. Dropping the
/// [`ChildHandle`] kills the whole process group.
///
/// The child handle keeps a clone of the writer (to close stdin during
/// [`ChildHandle::shutdown`]), so dropping `writer` does not close the CLI's
/// stdin: call [`LineWriter::close`] or [`ChildHandle::shutdown`].
///
/// The reader reaches EOF only when every process holding the stdout pipe
/// is gone (a grandchild may inherit it), so watch [`ChildHandle::wait`]
/// as well when the exit matters.
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
/// Must be called from within a Tokio runtime (the pipes are registered with
/// its reactor). Fails with [`Error::Spawn`] naming the program when the
/// process cannot be started (missing program or working directory, not
/// executable, no runtime, out of threads).
pub(crate) fn spawn(config: SpawnConfig) -> Result<Process> {
    let program = config.program.clone();
    let spawn_err = |source: std::io::Error| Error::Spawn {
        program: program.clone(),
        source,
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(spawn_err(std::io::Error::other(
            "the CLI must be started from within a Tokio runtime",
        )));
    }
    if let Some(cwd) = &config.cwd
        && !cwd.is_dir()
    {
        return Err(spawn_err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("working directory {} does not exist", cwd.display()),
        )));
    }
    warn_if_sigpipe_is_fatal();

    let mut cmd = std::process::Command::new(&config.program);
    cmd.args(&config.args);
    for key in &config.env_remove {
        cmd.env_remove(key);
    }
    for (key, value) in &config.env {
        cmd.env(key, value);
    }
    if let Some(cwd) = &config.cwd {
        cmd.current_dir(cwd);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);

    let mut child = cmd.spawn().map_err(spawn_err)?;
    let pid = child.id();
    tracing::debug!(pid, program = %config.program.display(), "spawned the Claude Code CLI");

    // From here on every failure must kill and reap what was started.
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let handle = match ChildHandle::start(child, pid) {
        Ok(handle) => handle,
        Err(e) => return Err(spawn_err(e)),
    };
    // `handle` kills and reaps the group if anything below fails.
    let stdin = tokio::process::ChildStdin::from_std(stdin).map_err(spawn_err)?;
    let stdout = tokio::process::ChildStdout::from_std(stdout).map_err(spawn_err)?;
    let writer = LineWriter::new(stdin);
    let stderr = stderr::StderrDrain::start(
        stderr,
        pid,
        config.stderr_callback.clone(),
        config.stderr_tail_bytes,
    )
    .map_err(spawn_err)?;
    let child = handle.attach(writer.clone(), stderr);
    Ok(Process {
        reader: LineReader::new(stdout, config.max_line_bytes),
        writer,
        child,
    })
}

/// Rust programs ignore SIGPIPE, so writing to a CLI that has exited gives
/// `EPIPE`. A non-Rust host (FFI) may not; then such a write would kill the
/// whole process. Say so once.
fn warn_if_sigpipe_is_fatal() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: querying (not changing) a signal disposition with a zeroed
        // `sigaction` as the output buffer.
        let fatal = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_DFL
        };
        if fatal {
            tracing::warn!(
                "SIGPIPE has its default (fatal) disposition in this process; writing to a CLI \
                 that has exited will kill the process. Ignore SIGPIPE (signal(SIGPIPE, SIG_IGN))."
            );
        }
    });
}
