//! The HTTP scale benchmark: Streamable HTTP servers (ours, the official
//! TypeScript SDK's, rmcp's) at 1 to 10,000 sessions, each on one pinned
//! core, driven by `http-load` (a raw HTTP/1.1 load generator, none of them)
//! on the other. A fresh server process per step; the steps interleave the
//! servers so that drift in machine load hits all alike.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

use crate::args::Args;
use crate::clients::spawn_for_url;
use crate::stats::fmt_num;
use crate::table::Table;

/// One step's figures for one server (what `http-load` printed).
pub type Step = Value;

/// Results by session count, then by server (in `--scale-server` order).
pub struct Scale {
    pub steps: BTreeMap<usize, Vec<Option<Step>>>,
    pub pinned: bool,
}

/// `taskset -c CORE` before `cmd` when `taskset` runs here and the machine
/// has two cores or more.
fn pinned(core: usize, cmd: &[String], pin: bool) -> Command {
    if pin {
        let mut c = Command::new("taskset");
        c.args(["-c", &core.to_string()]).args(cmd);
        c
    } else {
        let mut c = Command::new(&cmd[0]);
        c.args(&cmd[1..]);
        c
    }
}

/// Extra sessions opened beside `n` live ones to time the open rate there.
fn extra(n: usize) -> usize {
    (n / 10).clamp(100, 1000)
}

pub fn scale_bench(args: &Args, errors: &mut Vec<String>) -> Option<Scale> {
    let load = args.http_load.as_ref()?;
    if args.scale_servers.is_empty() {
        return None;
    }
    let pin = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
        && Command::new("taskset")
            .args(["-c", "0", "true"])
            .status()
            .is_ok_and(|s| s.success());
    let mut steps: BTreeMap<usize, Vec<Option<Step>>> = BTreeMap::new();
    let started = Instant::now();
    for &n in &args.scale_sessions {
        for (i, server) in args.scale_servers.iter().enumerate() {
            eprint!("http scale: {:<6} sessions, {:<8} ", n, server.name);
            let t = Instant::now();
            let result = (|| {
                let (mut child, url) = spawn_for_url(pinned(0, &server.cmd, pin), &server.cmd)?;
                let out = pinned(1, std::slice::from_ref(load), pin)
                    .args(["--url", &url, "--pid", &child.id().to_string()])
                    .args([
                        "--sessions",
                        &n.to_string(),
                        "--extra",
                        &extra(n).to_string(),
                    ])
                    .args(["--seconds", &args.scale_seconds.to_string()])
                    .args(["--open-max-s", &args.scale_open_max_s.to_string()])
                    .stdin(Stdio::null())
                    .stderr(Stdio::inherit())
                    .output();
                let _ = child.kill();
                let _ = child.wait();
                let out = out.map_err(|e| format!("cannot run {load}: {e}"))?;
                let text = String::from_utf8_lossy(&out.stdout);
                let v: Value = serde_json::from_str(text.trim())
                    .map_err(|e| format!("http-load printed {text:?}: {e}"))?;
                match v.get("error").and_then(Value::as_str) {
                    Some(e) => Err(e.to_owned()),
                    None => Ok(v),
                }
            })();
            let slot = steps
                .entry(n)
                .or_insert_with(|| vec![None; args.scale_servers.len()]);
            match result {
                Ok(v) => {
                    eprintln!(
                        "ok in {:.1} s: {} calls/s, open {}/s",
                        t.elapsed().as_secs_f64(),
                        fmt_num(num(&v, "calls_per_s")),
                        fmt_num(num(&v, "fill_rate"))
                    );
                    slot[i] = Some(v);
                }
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    let first: String = e.chars().take(300).collect();
                    errors.push(format!(
                        "http scale {} at {n} sessions: {first}",
                        server.name
                    ));
                }
            }
        }
    }
    eprintln!(
        "http scale: {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    Some(Scale { steps, pinned: pin })
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// A metric: its label, how to read it, whether more is better.
struct Metric {
    label: &'static str,
    read: fn(&Value) -> Option<f64>,
    more_is_better: bool,
}

fn metrics() -> [Metric; 7] {
    fn rate(v: &Value, opened: &str, key: &str) -> Option<f64> {
        (num(v, opened) > 0.0).then(|| num(v, key))
    }
    [
        Metric {
            label: "calls/s",
            read: |v| Some(num(v, "calls_per_s")),
            more_is_better: true,
        },
        Metric {
            label: "p99 ms",
            read: |v| Some(num(v, "p99_us") / 1e3),
            more_is_better: false,
        },
        Metric {
            label: "peak RSS MB",
            read: |v| Some(num(v, "hwm_kb") / 1024.0),
            more_is_better: false,
        },
        Metric {
            label: "sessions opened/s (filling up to N)",
            read: |v| rate(v, "opened", "fill_rate"),
            more_is_better: true,
        },
        Metric {
            label: "sessions opened/s beside N idle",
            read: |v| rate(v, "idle_opened", "idle_open_rate"),
            more_is_better: true,
        },
        Metric {
            label: "sessions opened/s beside N busy",
            read: |v| rate(v, "busy_opened", "busy_open_rate"),
            more_is_better: true,
        },
        Metric {
            label: "KB per session (RSS after calls)",
            read: |v| Some(num(v, "used_bytes_per_session") / 1e3),
            more_is_better: false,
        },
    ]
}

impl Scale {
    /// One line per metric and session count: each server, then how far
    /// ours (the first) is ahead of each other one (> 1× = ahead).
    pub fn table(&self, names: &[String]) -> Table {
        let mut header = vec!["N sessions".to_owned()];
        header.extend(names.iter().cloned());
        for other in names.iter().skip(1) {
            header.push(format!("{} ahead of {other}", names[0]));
        }
        let mut lines = Vec::new();
        for m in metrics() {
            for (n, results) in &self.steps {
                let vals: Vec<Option<f64>> = results
                    .iter()
                    .map(|r| r.as_ref().and_then(m.read))
                    .collect();
                let mut line = vec![format!("{}: {n}", m.label)];
                line.extend(vals.iter().map(|v| v.map_or("—".into(), fmt_num)));
                for other in vals.iter().skip(1) {
                    line.push(match (vals[0], other) {
                        (Some(a), Some(b)) if a > 0.0 && *b > 0.0 => {
                            let r = if m.more_is_better { a / b } else { b / a };
                            format!("{r:.2}×")
                        }
                        _ => "—".into(),
                    });
                }
                lines.push(line);
            }
        }
        Table { header, lines }
    }
}
