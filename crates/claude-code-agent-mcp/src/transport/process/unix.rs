//! The orphan policy on POSIX: the child leads a process group of its own,
//! which is signalled as a whole.

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};

/// Makes the child the leader of a new process group.
pub(super) fn configure(cmd: &mut Command) {
    std::os::unix::process::CommandExt::process_group(cmd, 0);
}

/// The process group a freshly spawned child leads.
#[derive(Debug)]
pub(super) struct Group {
    pgid: libc::pid_t,
}

impl Group {
    pub(super) fn new(child: &Child) -> std::io::Result<Self> {
        Ok(Self {
            pgid: child.id() as libc::pid_t,
        })
    }

    /// Sends `signal` to the whole group.
    pub(super) fn signal(&self, signal: i32) -> std::io::Result<()> {
        killpg(self.pgid, signal)
    }

    /// Asks the whole group to end (SIGTERM).
    pub(super) fn terminate(&self) {
        let _ = self.signal(libc::SIGTERM);
    }

    /// Kills the whole group (SIGKILL).
    pub(super) fn kill(&self) {
        let _ = self.signal(libc::SIGKILL);
    }

    /// Kills the leader alone, in case it moved itself to another group.
    /// Only while it is not reaped (its pid is still its own).
    pub(super) fn kill_leader(&self) {
        // SAFETY: a plain syscall; the leader is not reaped yet.
        unsafe { libc::kill(self.pgid, libc::SIGKILL) };
    }

    /// Whether anything of the group still runs.
    pub(super) fn has_live_members(&self) -> bool {
        group_has_live_members(self.pgid)
    }

    /// Kills the group and reaps the leader by hand: when its reaper thread
    /// could not be started. Blocking is fine: the child is being killed.
    pub(super) fn kill_and_reap(&self) {
        self.kill();
        self.kill_leader();
        let mut status = 0;
        // SAFETY: waiting for our own, not yet reaped child.
        while unsafe { libc::waitpid(self.pgid, &mut status, 0) } == -1
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {}
    }
}

fn killpg(pgid: libc::pid_t, signal: i32) -> std::io::Result<()> {
    // SAFETY: a plain syscall on a group one of our children leads.
    if unsafe { libc::kill(-pgid, signal) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The signal that ended a process, if one did.
pub(super) fn exit_signal(status: &ExitStatus) -> Option<i32> {
    status.signal()
}

/// Neither a code nor a signal: what is reported when the status was lost.
pub(super) fn unknown_status() -> ExitStatus {
    // 0x7f is a "stopped" wait status: `code()` and `signal()` are both None.
    ExitStatus::from_raw(0x7f)
}

/// Rust programs ignore SIGPIPE, so writing to a child that has exited
/// gives `EPIPE`. A non-Rust host (FFI) may not; then such a write would
/// kill the whole process. Say so once.
pub(super) fn warn_if_sigpipe_is_fatal() {
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
                "SIGPIPE has its default (fatal) disposition in this process; writing to a child \
                 that has exited will kill the process. Ignore SIGPIPE (signal(SIGPIPE, SIG_IGN))."
            );
        }
    });
}

/// Whether any process of group `pgid` is still running (zombies waiting
/// for their new parent to reap them do not count).
#[doc(hidden)]
pub fn group_has_live_members(pgid: libc::pid_t) -> bool {
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

/// One line of `/proc/<pid>/stat`, the fields we need (Linux: without
/// `/proc`, [`proc_stat`] finds nothing).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The process id.
    pub pid: libc::pid_t,
    /// Its state letter (`R`, `S`, `Z`, …).
    pub state: char,
    /// Its parent.
    pub ppid: libc::pid_t,
    /// Its process group.
    pub pgrp: libc::pid_t,
}

impl ProcStat {
    /// A zombie or a dead task: no longer runs.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Reads `/proc/<pid>/stat`; `None` if there is no such process.
#[doc(hidden)]
pub fn proc_stat(pid: libc::pid_t) -> Option<ProcStat> {
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
fn group_members(pgid: libc::pid_t) -> std::io::Result<Vec<ProcStat>> {
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
