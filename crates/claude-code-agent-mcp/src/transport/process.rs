//! Child processes spoken to over their stdin and stdout: an MCP stdio
//! server, or the Claude Code CLI.
//!
//! [`spawn`] starts the program as the leader of a new process group, with
//! all three standard streams piped, and hands back a [`Process`]: a
//! [`LineReader`] on its stdout, a [`LineWriter`] on its stdin, and the
//! [`ProcessGroup`] that owns it.
//!
//! # The orphan policy
//!
//! One policy for every child, whoever started it:
//!
//! * The child leads its own process group, so whatever it starts (MCP
//!   servers, shells) is in the group and gets the group's signals.
//! * A dedicated **reaper thread** waits for the leader, so it is reaped
//!   the moment it exits — with or without a Tokio runtime, whatever its
//!   owner is doing.
//! * Right after the leader exits, the reaper deals with what it left in
//!   its group: SIGTERM, at most [`STRAGGLER_GRACE`] to go, then SIGKILL.
//!   Processes that left the group on purpose (`setsid`) are out of reach;
//!   they cannot hold anything up either, since stderr is drained for only
//!   [`DRAIN_AFTER_EXIT`] after that, and readers of stdout are expected to
//!   give up after the same delay (the stdio client does).
//! * [`ProcessGroup::shutdown`] ends the child gracefully: close stdin and
//!   wait; SIGTERM the group and wait; SIGKILL it.
//! * Dropping the [`ProcessGroup`] while the leader (or anything else in
//!   the group) may still run sends SIGKILL to the group at once,
//!   synchronously: no runtime needed, so a drop during a panic or after
//!   the runtime is gone leaves nothing behind.
//! * If the host process is killed with SIGKILL nothing runs, but the child
//!   sees EOF on its stdin and (if it is well behaved) exits by itself.
//!
//! On Windows the group is a Job Object that kills its processes when its
//! last handle closes (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, which also
//! covers a host that was killed). Windows has no SIGTERM for it: where
//! the policy says SIGTERM or SIGKILL, the whole job is ended
//! (`TerminateJobObject`). stderr is read to its end (no early stop).

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::watch;
use tokio::time::Instant;

use super::lines::{LineReader, LineWriter};

mod options;
mod stderr;
#[cfg(unix)]
#[path = "process/unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "process/windows.rs"]
mod sys;
#[cfg(all(test, unix))]
mod tests;

#[cfg(unix)]
pub use sys::{ProcStat, group_has_live_members, proc_stat};

pub use options::{DEFAULT_STDERR_TAIL_BYTES, StdioOptions};
use stderr::StderrDrain;

/// Gets each line a child writes to its stderr, as lossy UTF-8 without the
/// line end; a line longer than 64 KiB arrives in pieces of 64 KiB.
///
/// It runs on the child's stderr thread, not on a Tokio worker, so a slow
/// callback cannot stall the runtime — but it does delay the draining of
/// stderr, which eventually stalls the child: keep it quick. A panic in it
/// is caught and logged.
pub type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// How long a process the leader left in its group gets between SIGTERM
/// and SIGKILL.
pub const STRAGGLER_GRACE: Duration = Duration::from_secs(1);

/// How long stderr is still drained after the leader exited and its group
/// was dealt with (a process outside the group may hold the pipe open).
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);

/// How long [`ProcessGroup::shutdown`] waits for stderr to end after the
/// exit, so the tail is complete.
const STDERR_GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(10);

/// How long [`ProcessGroup::shutdown`] waits at each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// After closing stdin, before SIGTERM (default 5 s). A well-behaved
    /// child finishes what it is doing and exits in this time.
    pub after_stdin_close: Duration,
    /// After SIGTERM, before SIGKILL (default 5 s).
    pub after_sigterm: Duration,
}

impl ShutdownTimeouts {
    /// The same timeout for both steps.
    pub const fn both(timeout: Duration) -> Self {
        Self {
            after_stdin_close: timeout,
            after_sigterm: timeout,
        }
    }
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        Self::both(Duration::from_secs(5))
    }
}

/// A running child: its stdout, its stdin, and the process group.
///
/// The parts can move to different tasks. Dropping the group kills it.
/// The group keeps a clone of the writer (to close stdin during
/// [`ProcessGroup::shutdown`]), so dropping `writer` does not close the
/// child's stdin: call [`LineWriter::close`] or
/// [`ProcessGroup::shutdown`].
#[derive(Debug)]
pub struct Process {
    /// NDJSON from the child's stdout.
    pub reader: LineReader<ChildStdout>,
    /// NDJSON to the child's stdin (cheap to clone; frames never interleave).
    pub writer: LineWriter<ChildStdin>,
    /// The process group: exit status, stderr tail, shutdown, kill on drop.
    pub group: ProcessGroup,
}

/// Starts `options.program` as the leader of a new process group with all
/// three standard streams piped; stderr is drained on a thread of its own
/// into a bounded tail, `tracing` and the options' callback.
///
/// Must be called from within a Tokio runtime (the pipes are registered
/// with its reactor). Fails when the working directory does not exist
/// (saying so) or the program cannot be started.
pub fn spawn(options: &StdioOptions) -> std::io::Result<Process> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(std::io::Error::other(
            "a child process must be started from within a Tokio runtime",
        ));
    }
    if let Some(cwd) = &options.cwd
        && !cwd.is_dir()
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("working directory {} does not exist", cwd.display()),
        ));
    }
    #[cfg(unix)]
    sys::warn_if_sigpipe_is_fatal();

    let mut cmd = std::process::Command::new(&options.program);
    cmd.args(&options.args);
    for key in &options.env_remove {
        cmd.env_remove(key);
    }
    for (key, value) in &options.env {
        cmd.env(key, value);
    }
    if let Some(cwd) = &options.cwd {
        cmd.current_dir(cwd);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    sys::configure(&mut cmd);

    let (stop_stderr, stderr_stop) = stderr::stop_pipe()?;
    let mut child = cmd.spawn()?;
    let pid = child.id();
    tracing::debug!(pid, program = ?options.program, "spawned a child process");
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("all three streams are piped");
    };
    // From here on every failure kills and reaps what was started: the
    // group does on drop.
    let mut group = ProcessGroup::start(child, pid, stop_stderr)?;
    let stdin = ChildStdin::from_std(stdin)?;
    let stdout = ChildStdout::from_std(stdout)?;
    let writer = LineWriter::new(stdin);
    group.watch.stderr = Some(StderrDrain::start(
        stderr,
        stderr_stop,
        pid,
        options.on_stderr.clone(),
        options.stderr_tail_bytes,
    )?);
    group.stdin = Some(writer.clone());
    Ok(Process {
        reader: LineReader::new(stdout, options.max_line_bytes),
        writer,
        group,
    })
}

/// What the reaper has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Reaped {
    /// The leader's exit status, once it exited (and was reaped).
    status: Option<ExitStatus>,
    /// The reaper is done with the group (after the exit).
    settled: bool,
    /// …and saw it without live members.
    clean: bool,
}

/// Owns a child that leads its own process group; see the
/// [orphan policy](self#the-orphan-policy). Dereferences to its
/// [`ProcessWatch`] (exit status, stderr).
pub struct ProcessGroup {
    watch: ProcessWatch,
    /// The process group (Unix) or Job Object (Windows), shared with the
    /// reaper thread.
    group: Arc<sys::Group>,
    stdin: Option<LineWriter<ChildStdin>>,
}

/// What can be known about a child without owning it: its exit status and
/// its stderr. Cheap to clone; it does not keep the child alive.
#[derive(Clone)]
pub struct ProcessWatch {
    pid: u32,
    reaped: watch::Receiver<Reaped>,
    stderr: Option<StderrDrain>,
}

impl std::fmt::Debug for ProcessGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.watch.fmt(f)
    }
}

impl std::fmt::Debug for ProcessWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessGroup")
            .field("pid", &self.pid)
            .field("status", &self.try_exit_status())
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for ProcessGroup {
    type Target = ProcessWatch;

    fn deref(&self) -> &ProcessWatch {
        &self.watch
    }
}

impl ProcessGroup {
    /// Takes a freshly spawned group leader and starts its reaper thread,
    /// which also closes `stop_stderr` once stderr need no longer be read.
    /// On failure the group is killed and the child reaped.
    fn start(
        mut child: std::process::Child,
        pid: u32,
        stop_stderr: stderr::StopTx,
    ) -> std::io::Result<Self> {
        let group = match sys::Group::new(&child) {
            Ok(group) => Arc::new(group),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let (tx, reaped) = watch::channel(Reaped::default());
        let reaper_group = Arc::clone(&group);
        let spawned = std::thread::Builder::new()
            .name(format!("reaper-{pid}"))
            .stack_size(64 * 1024)
            .spawn(move || {
                let status = child.wait().unwrap_or_else(|e| {
                    // Only if someone else reaped it (SIGCHLD ignored, or a
                    // `waitpid(-1)` elsewhere in the process).
                    tracing::error!(pid, error = %e, "could not wait for a child; its exit status is unknown");
                    unknown_status()
                });
                tracing::debug!(pid, %status, "a child process exited");
                tx.send_modify(|r| r.status = Some(status));
                let clean = settle(&reaper_group, pid);
                tx.send_modify(|r| {
                    r.settled = true;
                    r.clean = clean;
                });
                std::thread::sleep(DRAIN_AFTER_EXIT);
                stop_stderr.stop();
            });
        if let Err(e) = spawned {
            // The closure, and with it the `Child`, is gone: kill and reap
            // by hand.
            group.kill_and_reap();
            return Err(e);
        }
        Ok(Self {
            watch: ProcessWatch {
                pid,
                reaped,
                stderr: None,
            },
            group,
            stdin: None,
        })
    }

    /// A watch on this child, for tasks that must not own it.
    pub fn watch(&self) -> ProcessWatch {
        self.watch.clone()
    }

    /// Sends `signal` to the whole process group.
    #[cfg(unix)]
    pub fn signal(&self, signal: i32) -> std::io::Result<()> {
        self.group.signal(signal)
    }

    /// Kills the whole group now — SIGKILL to the process group; on
    /// Windows, the end of its Job Object — synchronously, no runtime
    /// needed; the reaper collects the exit status.
    pub fn kill(&self) {
        self.group.kill();
        if self.is_running() {
            // In case the leader moved itself to another group.
            self.group.kill_leader();
        }
    }

    /// Kills the group synchronously unless the leader exited and the
    /// reaper saw its group empty: what dropping the group does, for owners
    /// that must act before the last reference goes.
    pub fn kill_unless_clean(&self) {
        let r = *self.reaped.borrow();
        if r.status.is_none() {
            tracing::debug!(pid = self.pid, "killing a child's process group");
        }
        if r.status.is_none() || !r.clean {
            self.kill();
        }
    }

    /// Ends the child gracefully and returns its exit status: close stdin
    /// and wait `after_stdin_close`; SIGTERM the group and wait
    /// `after_sigterm`; SIGKILL. Then waits (boundedly) for the reaper to
    /// settle the group and for stderr to end, so
    /// [`stderr_tail`](ProcessWatch::stderr_tail) is complete.
    ///
    /// The child is always reaped. Safe to call again (returns the same
    /// status at once).
    pub async fn shutdown(&self, timeouts: ShutdownTimeouts) -> ExitStatus {
        let status = match self.try_exit_status() {
            Some(status) => status,
            None => self.stop(timeouts).await,
        };
        if let Some(stdin) = &self.stdin {
            // Exited already: a pending write fails fast with EPIPE.
            let _ = tokio::time::timeout(STDERR_GRACE, stdin.close()).await;
        }
        let settle = STRAGGLER_GRACE * 2 + Duration::from_secs(1);
        let _ = tokio::time::timeout(settle, self.wait_settled()).await;
        self.stderr_finished(STDERR_GRACE).await;
        status
    }

    async fn stop(&self, timeouts: ShutdownTimeouts) -> ExitStatus {
        let deadline = Instant::now() + timeouts.after_stdin_close;
        if let Some(stdin) = &self.stdin {
            // Bounded: a writer blocked on a full pipe holds it.
            let _ = tokio::time::timeout_at(deadline, stdin.close()).await;
        }
        if let Ok(status) = tokio::time::timeout_at(deadline, self.wait()).await {
            return status;
        }
        tracing::debug!(
            pid = self.pid,
            "a child did not exit after stdin was closed; sending SIGTERM"
        );
        self.group.terminate();
        if let Ok(status) = tokio::time::timeout(timeouts.after_sigterm, self.wait()).await {
            return status;
        }
        tracing::warn!(pid = self.pid, "a child ignored SIGTERM; sending SIGKILL");
        self.kill();
        self.wait().await
    }
}

impl ProcessWatch {
    /// The leader's process id, which is also the group's id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The exit status, if the leader has exited (it is reaped already).
    pub fn try_exit_status(&self) -> Option<ExitStatus> {
        self.reaped.borrow().status
    }

    /// Whether the leader is still running.
    pub fn is_running(&self) -> bool {
        self.try_exit_status().is_none()
    }

    /// Waits for the leader to exit, without doing anything to make it
    /// exit. Cancellation-safe.
    pub async fn wait(&self) -> ExitStatus {
        let mut rx = self.reaped.clone();
        match rx.wait_for(|r| r.status.is_some()).await {
            Ok(r) => r.status.unwrap_or_else(unknown_status),
            // The reaper thread always sends before it ends.
            Err(_) => unknown_status(),
        }
    }

    /// Waits until the leader exited and the reaper dealt with what it
    /// left in its group (at most [`STRAGGLER_GRACE`] twice after the exit).
    pub async fn wait_settled(&self) {
        let mut rx = self.reaped.clone();
        let _ = rx.wait_for(|r| r.settled).await;
    }

    /// The last part of what the child wrote to stderr (at most the
    /// configured number of bytes), as text.
    pub fn stderr_tail(&self) -> String {
        self.stderr
            .as_ref()
            .map(StderrDrain::tail)
            .unwrap_or_default()
    }

    /// Waits up to `timeout` for stderr to be drained to its end; returns
    /// whether it was.
    pub async fn stderr_finished(&self, timeout: Duration) -> bool {
        match &self.stderr {
            Some(stderr) => stderr.wait_finished(timeout).await,
            None => true,
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill_unless_clean();
    }
}

/// After the leader exited: terminate whatever is left of its group, kill
/// it after [`STRAGGLER_GRACE`]. Returns whether the group was seen empty.
fn settle(group: &sys::Group, pid: u32) -> bool {
    if !group.has_live_members() {
        return true;
    }
    tracing::debug!(
        pid,
        "processes a child started outlived it; terminating them"
    );
    group.terminate();
    if wait_until_clean(group, STRAGGLER_GRACE) {
        return true;
    }
    tracing::warn!(
        pid,
        "processes a child started ignored SIGTERM; sending SIGKILL"
    );
    group.kill();
    wait_until_clean(group, STRAGGLER_GRACE)
}

fn wait_until_clean(group: &sys::Group, within: Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    loop {
        if !group.has_live_members() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// The signal that ended a process, if one did (never on Windows).
pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    sys::exit_signal(status)
}

/// Neither a code nor a signal (Unix), or exit code -1 (Windows): what is
/// reported when the status was lost.
fn unknown_status() -> ExitStatus {
    sys::unknown_status()
}
