//! The CLI process: exit status, graceful shutdown with escalation, and
//! kill-on-drop for its whole process group.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::LineWriter;
use super::stderr::StderrDrain;
use crate::error::Error;

/// How long ending the CLI waits at each step (closing stdin, then SIGTERM,
/// then SIGKILL); set with [`Options::shutdown_timeouts`](crate::Options::shutdown_timeouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// After closing stdin, before SIGTERM (default 5 s). The CLI finishes
    /// the turn in progress and exits on its own in this time.
    pub after_stdin_close: Duration,
    /// After SIGTERM, before SIGKILL (default 5 s).
    pub after_sigterm: Duration,
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        ShutdownTimeouts {
            after_stdin_close: Duration::from_secs(5),
            after_sigterm: Duration::from_secs(5),
        }
    }
}

/// How long a straggler of the group (a process the CLI started and left
/// behind) gets between SIGTERM and SIGKILL, at most.
const STRAGGLER_GRACE: Duration = Duration::from_secs(1);
/// How long `shutdown` waits for stderr to reach EOF after the exit.
const STDERR_GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(10);

/// Owns the CLI process, which leads its own process group.
///
/// The process is reaped by a dedicated thread as soon as it exits, whether
/// or not a Tokio runtime is still running, so it never stays a zombie.
/// Dropping the handle while the process (or anything else in its group)
/// may still run sends SIGKILL to the group, synchronously; it needs no
/// runtime. Prefer [`shutdown`](Self::shutdown) for a graceful end.
pub(crate) struct ChildHandle {
    pid: u32,
    exit: watch::Receiver<Option<ExitStatus>>,
    stdin: Option<LineWriter>,
    stderr: Option<StderrDrain>,
    /// Set once the group was seen without live members after the exit.
    group_clean: AtomicBool,
}

impl std::fmt::Debug for ChildHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildHandle")
            .field("pid", &self.pid)
            .field("exit", &*self.exit.borrow())
            .finish_non_exhaustive()
    }
}

impl ChildHandle {
    /// Takes ownership of a freshly spawned group leader and starts its
    /// reaper thread. On failure the group is killed and the child reaped.
    pub(super) fn start(mut child: std::process::Child, pid: u32) -> std::io::Result<Self> {
        let (tx, exit) = watch::channel(None);
        let spawned = std::thread::Builder::new()
            .name(format!("claude-cli-reaper-{pid}"))
            .stack_size(64 * 1024)
            .spawn(move || {
                let status = match child.wait() {
                    Ok(status) => status,
                    Err(err) => {
                        // Only if someone else reaped it (SIGCHLD ignored, or
                        // a `waitpid(-1)` elsewhere in the process).
                        tracing::error!(pid, error = %err, "could not wait for the CLI; its exit status is unknown");
                        unknown_status()
                    }
                };
                tracing::debug!(pid, %status, "the CLI exited");
                tx.send_replace(Some(status));
            });
        if let Err(err) = spawned {
            // The closure, and with it the `Child`, is gone: kill and reap by
            // hand. The blocking wait is fine: the child is being killed.
            let pid = pid as libc::pid_t;
            // SAFETY: plain syscalls on the process we just started.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
                let mut status = 0;
                while libc::waitpid(pid, &mut status, 0) == -1
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                }
            }
            return Err(err);
        }
        Ok(ChildHandle {
            pid,
            exit,
            stdin: None,
            stderr: None,
            group_clean: AtomicBool::new(false),
        })
    }

    /// Adds the stdin writer (closed by `shutdown`) and the stderr drain.
    pub(super) fn attach(mut self, stdin: LineWriter, stderr: StderrDrain) -> Self {
        self.stdin = Some(stdin);
        self.stderr = Some(stderr);
        self
    }

    /// The CLI's process id, which is also its process group id.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// The exit status, if the CLI has exited (it is reaped already).
    pub(crate) fn try_exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits for the CLI to exit, without doing anything to make it exit.
    /// Cancellation-safe.
    pub(crate) async fn wait(&self) -> ExitStatus {
        let mut rx = self.exit.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(status) => status.expect("checked by wait_for"),
            // The reaper thread always sends before it ends.
            Err(_) => unknown_status(),
        }
    }

    /// Sends `signal` to the whole process group.
    pub(crate) fn signal_group(&self, signal: i32) -> std::io::Result<()> {
        // SAFETY: a plain syscall.
        if unsafe { libc::kill(-(self.pid as libc::pid_t), signal) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// Sends SIGKILL to the whole group now (synchronous, no runtime
    /// needed). The reaper thread collects the exit status.
    pub(crate) fn kill(&self) {
        let _ = self.signal_group(libc::SIGKILL);
        if self.try_exit_status().is_none() {
            // In case the CLI moved itself to another group.
            // SAFETY: a plain syscall; the leader is not reaped yet.
            unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
        }
    }

    /// Kills the group synchronously unless the CLI has exited and its group
    /// was seen empty: what dropping the handle does, for owners that must
    /// act before the last reference goes.
    pub(crate) fn kill_unless_clean(&self) {
        let running = self.try_exit_status().is_none();
        if running {
            tracing::debug!(pid = self.pid, "killing the CLI's process group");
        }
        if running || !self.group_clean.load(Ordering::Acquire) {
            // Synchronous; the reaper thread collects the leader.
            self.kill();
        }
    }

    /// Ends the CLI gracefully and returns its exit status:
    /// close stdin and wait `after_stdin_close`; then SIGTERM the group and
    /// wait `after_sigterm`; then SIGKILL. Afterwards, any process left in
    /// the group gets SIGTERM and, after at most a second, SIGKILL; and
    /// stderr is given a moment to reach EOF so [`stderr_tail`] is complete.
    ///
    /// The process is always reaped. Safe to call again (returns the same
    /// status at once).
    ///
    /// [`stderr_tail`]: Self::stderr_tail
    pub(crate) async fn shutdown(&self, timeouts: ShutdownTimeouts) -> ExitStatus {
        let status = match self.try_exit_status() {
            Some(status) => status,
            None => self.stop(timeouts).await,
        };
        if let Some(stdin) = &self.stdin {
            // Exited already: a pending write fails fast with EPIPE.
            let _ = tokio::time::timeout(STDERR_GRACE, stdin.close()).await;
        }
        self.clean_group(timeouts.after_sigterm.min(STRAGGLER_GRACE))
            .await;
        if let Some(stderr) = &self.stderr {
            stderr.wait_finished(STDERR_GRACE).await;
        }
        status
    }

    async fn stop(&self, timeouts: ShutdownTimeouts) -> ExitStatus {
        let deadline = Instant::now() + timeouts.after_stdin_close;
        if let Some(stdin) = &self.stdin {
            // Bounded: a writer blocked on a full pipe holds the lock.
            let _ = tokio::time::timeout_at(deadline, stdin.close()).await;
        }
        if let Ok(status) = tokio::time::timeout_at(deadline, self.wait()).await {
            return status;
        }
        tracing::debug!(
            pid = self.pid,
            "the CLI did not exit after stdin was closed; sending SIGTERM"
        );
        let _ = self.signal_group(libc::SIGTERM);
        if let Ok(status) = tokio::time::timeout(timeouts.after_sigterm, self.wait()).await {
            return status;
        }
        tracing::warn!(pid = self.pid, "the CLI ignored SIGTERM; sending SIGKILL");
        self.kill();
        self.wait().await
    }

    /// After the leader exited: make sure nothing of its group survives.
    async fn clean_group(&self, grace: Duration) {
        let pgid = self.pid as libc::pid_t;
        if !group_has_live_members(pgid) {
            self.group_clean.store(true, Ordering::Release);
            return;
        }
        tracing::debug!(
            pgid,
            "processes the CLI started outlived it; terminating them"
        );
        let _ = self.signal_group(libc::SIGTERM);
        if poll_until_clean(pgid, grace).await {
            self.group_clean.store(true, Ordering::Release);
            return;
        }
        tracing::warn!(
            pgid,
            "processes the CLI started ignored SIGTERM; sending SIGKILL"
        );
        let _ = self.signal_group(libc::SIGKILL);
        if poll_until_clean(pgid, STRAGGLER_GRACE).await {
            self.group_clean.store(true, Ordering::Release);
        }
    }

    /// The last part of what the CLI wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> String {
        self.stderr
            .as_ref()
            .map(StderrDrain::tail)
            .unwrap_or_default()
    }

    /// Builds [`Error::CliExited`] after the CLI closed its stdout: waits up
    /// to `grace` for the exit status and for stderr to reach EOF, then
    /// reports code, signal (both `None` if it has not exited) and the
    /// stderr tail.
    pub(crate) async fn exit_error(&self, grace: Duration) -> Error {
        let deadline = Instant::now() + grace;
        let status = tokio::time::timeout_at(deadline, self.wait()).await.ok();
        if let Some(stderr) = &self.stderr {
            let left = deadline.saturating_duration_since(Instant::now());
            stderr
                .wait_finished(left.max(Duration::from_millis(50)))
                .await;
        }
        Error::CliExited {
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            stderr_tail: self.stderr_tail(),
        }
    }
}

impl Drop for ChildHandle {
    fn drop(&mut self) {
        self.kill_unless_clean();
    }
}

/// Neither a code nor a signal: what we report when the status was lost.
fn unknown_status() -> ExitStatus {
    // 0x7f is a "stopped" wait status: `code()` and `signal()` are both None.
    ExitStatus::from_raw(0x7f)
}

async fn poll_until_clean(pgid: libc::pid_t, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if !group_has_live_members(pgid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether any process of group `pgid` is still running (zombies that wait
/// for their new parent to reap them do not count).
pub(crate) fn group_has_live_members(pgid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence.
    if unsafe { libc::kill(-pgid, 0) } != 0 {
        return std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    }
    // `kill` counts zombies; look closer where we can.
    any_member_runs(pgid)
}

/// Whether a member of the existing group `pgid` is not a zombie (`/proc`).
#[cfg(target_os = "linux")]
fn any_member_runs(pgid: libc::pid_t) -> bool {
    match group_members(pgid) {
        Ok(members) => members.iter().any(|p| !p.is_dead()),
        Err(_) => true,
    }
}

/// Without `/proc` (macOS) every member counts as running: an orphaned
/// zombie is reaped by launchd within moments, which the callers' polling
/// waits out.
#[cfg(not(target_os = "linux"))]
fn any_member_runs(_pgid: libc::pid_t) -> bool {
    true
}

/// One line of `/proc/<pid>/stat`, the fields we need (Linux; elsewhere only
/// the tests' helpers, which are Linux-only, would use it).
#[cfg(any(target_os = "linux", test))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub pid: libc::pid_t,
    pub state: char,
    pub ppid: libc::pid_t,
    pub pgrp: libc::pid_t,
}

#[cfg(any(target_os = "linux", test))]
impl ProcStat {
    /// A zombie or a dead task: no longer runs.
    pub(crate) fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Reads `/proc/<pid>/stat`; `None` if there is no such process.
#[cfg(any(target_os = "linux", test))]
pub(crate) fn proc_stat(pid: libc::pid_t) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `comm` is in parentheses and may contain anything: split after the last `)`.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        state,
        ppid,
        pgrp,
    })
}

/// All processes (zombies included) whose process group is `pgid`.
#[cfg(target_os = "linux")]
pub(crate) fn group_members(pgid: libc::pid_t) -> std::io::Result<Vec<ProcStat>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Some(stat) = proc_stat(pid)
            && stat.pgrp == pgid
        {
            out.push(stat);
        }
    }
    Ok(out)
}
