//! The benchmark report the fake CLI writes, latency statistics, and
//! process accounting read from `/proc`.

use serde::{Deserialize, Serialize};

/// One phase of the benchmark (serial, pipelined, one payload size).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PhaseReport {
    /// `serial`, `pipelined`, `result_1048576`, `args_1048576`, …
    pub name: String,
    /// Calls made (and answered).
    pub calls: u64,
    /// Calls in flight at once.
    pub window: u64,
    /// Size of the padding in the arguments, bytes.
    pub arg_bytes: u64,
    /// Size of the padding asked for in the result, bytes.
    pub result_bytes: u64,
    /// Wall time of the phase, seconds.
    pub wall_s: f64,
    /// Calls per second.
    pub calls_per_s: f64,
    /// Round-trip latency (our write → the matching answer read), µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Worst, µs.
    pub max_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Answers that failed the checks.
    pub errors: u64,
    /// CPU time the peer (SDK or responder) used in the phase, µs.
    pub peer_cpu_us: f64,
    /// `peer_cpu_us / calls`.
    pub peer_cpu_us_per_call: f64,
    /// CPU time the fake CLI itself used per call, µs.
    pub self_cpu_us_per_call: f64,
    /// The peer's peak RSS (VmHWM) at the end of the phase, KiB.
    #[serde(default)]
    pub peer_hwm_kb: u64,
    /// Why the phase stopped before all its calls were answered (the SDK
    /// closed the pipe, a timeout); `None` when it completed.
    #[serde(default)]
    pub failure: Option<String>,
}

impl PhaseReport {
    /// Completed with every answer good.
    pub fn ok(&self) -> bool {
        self.failure.is_none() && self.errors == 0 && self.calls > 0
    }
}

/// What `bench` writes to `params.report`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BenchReport {
    /// The phases, in order.
    pub phases: Vec<PhaseReport>,
    /// The process measured: the SDK process (our parent) or the responder (our child).
    pub peer_pid: i32,
    /// The peer's peak RSS (VmHWM) after the small-call phases, KiB.
    pub peer_hwm_kb_after_calls: u64,
    /// The peer's peak RSS at the end, KiB.
    pub peer_hwm_kb_end: u64,
    /// The fake CLI's own peak RSS, KiB.
    pub self_hwm_kb: u64,
    /// Checks that failed, if any.
    pub failures: Vec<String>,
    /// When the fake CLI's `main` started, ns since the Unix epoch.
    #[serde(default)]
    pub cli_main_ns: u64,
    /// When the fake CLI wrote the first message of the conversation
    /// (`system/init`, right after the handshake and the user message), ns
    /// since the Unix epoch.
    #[serde(default)]
    pub first_message_ns: u64,
    /// Whether every phase ran (the report is rewritten after each phase, so
    /// a run cut short leaves the phases done so far).
    #[serde(default)]
    pub complete: bool,
}

/// Latency percentiles over nanosecond samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// Median, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Worst, µs.
    pub max_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
}

impl Stats {
    /// Sorts `ns` and computes the statistics (nearest-rank percentiles).
    pub fn from_ns(ns: &mut [u64]) -> Self {
        if ns.is_empty() {
            return Self::default();
        }
        ns.sort_unstable();
        let rank = |q: f64| ns[((q * ns.len() as f64).ceil() as usize).clamp(1, ns.len()) - 1];
        let us = |n: u64| (n as f64 / 100.0).round() / 10.0;
        Stats {
            p50_us: us(rank(0.50)),
            p99_us: us(rank(0.99)),
            max_us: us(*ns.last().expect("not empty")),
            mean_us: us(ns.iter().sum::<u64>() / ns.len() as u64),
        }
    }
}

/// CPU time used by a process so far, in µs: the sum over its live threads
/// of `/proc/<pid>/task/*/schedstat` (nanosecond precision) when available,
/// else `utime + stime` from `/proc/<pid>/stat` (clock-tick precision).
pub fn cpu_us(pid: i32) -> Option<f64> {
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        let mut total: u64 = 0;
        let mut any = false;
        for entry in dir.flatten() {
            let path = entry.path().join("schedstat");
            if let Ok(s) = std::fs::read_to_string(path)
                && let Some(ns) = s
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
            {
                total += ns;
                any = true;
            }
        }
        if any {
            return Some(total as f64 / 1000.0);
        }
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesized command name; utime and stime are 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some((utime + stime) as f64 * 1e6 / hz)
}

/// A `kB` field of `/proc/<pid>/status` (`VmHWM`, `VmRSS`, …).
pub fn status_kb(pid: i32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}
