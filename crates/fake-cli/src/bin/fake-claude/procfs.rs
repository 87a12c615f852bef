//! Process accounting read from `/proc` (Linux): the benchmark's CPU time and
//! peak RSS of the subject.

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
