//! The benchmark report the fake CLI writes (and the bench driver reads), and
//! latency statistics.

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
