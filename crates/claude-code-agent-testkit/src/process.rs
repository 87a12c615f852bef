//! The processes of a test, read from `/proc` (Linux only): what
//! [`Harness`](crate::Harness) uses to check that no CLI process is left
//! running or unreaped.
//!
//! A CLI process of a test is found among the live descendants of the test
//! process by its environment, which names the test's own
//! `CLAUDE_CONFIG_DIR` ([`CliEnv`](crate::CliEnv) makes one per test).

#[cfg(feature = "harness")]
pub(crate) mod watch;

/// One process, as `/proc/<pid>/stat` describes it.
///
/// ```
/// use claude_code_agent_testkit::__private::process::Proc;
///
/// let me = Proc::read(std::process::id() as i32).expect("this process");
/// assert!(!me.is_dead());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Proc {
    /// The process id.
    pub pid: i32,
    /// The state letter (`R`, `S`, `Z` for a zombie, …).
    pub state: char,
    /// The parent's pid.
    pub ppid: i32,
    /// The process group.
    pub pgrp: i32,
    /// The start time (clock ticks since boot): with `pid`, names one process
    /// even when pids are reused.
    pub start_time: u64,
}

impl Proc {
    /// The process `pid`, if it exists (zombies included).
    pub fn read(pid: i32) -> Option<Proc> {
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

    /// Whether it has exited (a zombie, not reaped yet, or dead).
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}
