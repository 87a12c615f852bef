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
    /// The memory step (`http-load --marginal`), by server.
    pub memory: Vec<Option<Step>>,
    /// Its `warm, sessions, calls`.
    pub memory_shape: [usize; 3],
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
            let load_args = [
                "--sessions".to_owned(),
                n.to_string(),
                "--extra".into(),
                extra(n).to_string(),
                "--seconds".into(),
                args.scale_seconds.to_string(),
                "--open-max-s".into(),
                args.scale_open_max_s.to_string(),
            ];
            let result = one_step(&server.cmd, load, &load_args, pin);
            let slot = steps
                .entry(n)
                .or_insert_with(|| vec![None; args.scale_servers.len()]);
            slot[i] = report(
                result,
                errors,
                &format!("{} at {n} sessions", server.name),
                |v| {
                    format!(
                        "{} calls/s, open {}/s",
                        fmt_num(num(v, "calls_per_s")),
                        fmt_num(num(v, "fill_rate"))
                    )
                },
            );
        }
    }
    // What one more used session costs: `calls` calls on each of
    // `sessions` sessions opened after `warm` used ones.
    let [warm, sessions, calls] = args.scale_memory;
    let mut memory = Vec::new();
    for server in &args.scale_servers {
        eprint!(
            "http memory: {sessions} sessions × {calls} calls, {:<8} ",
            server.name
        );
        let load_args = [
            "--marginal".to_owned(),
            warm.to_string(),
            "--sessions".into(),
            sessions.to_string(),
            "--calls-per-session".into(),
            calls.to_string(),
            "--open-max-s".into(),
            args.scale_open_max_s.to_string(),
        ];
        let result = one_step(&server.cmd, load, &load_args, pin);
        memory.push(report(
            result,
            errors,
            &format!("{} memory step", server.name),
            |v| {
                format!(
                    "{:.2} KB per used session",
                    num(v, "marginal_bytes_per_session") / 1e3
                )
            },
        ));
    }
    eprintln!(
        "http scale: {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    Some(Scale {
        steps,
        memory,
        memory_shape: args.scale_memory,
        pinned: pin,
    })
}

/// Starts `server` (pinned to core 0), runs `http-load` on it (core 1) with
/// `load_args`, stops it: what `http-load` printed.
fn one_step(
    server: &[String],
    load: &String,
    load_args: &[String],
    pin: bool,
) -> Result<Value, String> {
    let t = Instant::now();
    let (mut child, url) = spawn_for_url(pinned(0, server, pin), server)?;
    let out = pinned(1, std::slice::from_ref(load), pin)
        .args(["--url", &url, "--pid", &child.id().to_string()])
        .args(load_args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output();
    let _ = child.kill();
    let _ = child.wait();
    let out = out.map_err(|e| format!("cannot run {load}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Value = serde_json::from_str(text.trim())
        .map_err(|e| format!("http-load printed {text:?}: {e}"))?;
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Err(e.to_owned());
    }
    v["step_seconds"] = t.elapsed().as_secs_f64().into();
    Ok(v)
}

/// Says how a step went (on stderr; a failure joins `errors` as `what`).
fn report(
    result: Result<Value, String>,
    errors: &mut Vec<String>,
    what: &str,
    summary: impl Fn(&Value) -> String,
) -> Option<Step> {
    match result {
        Ok(v) => {
            eprintln!("ok in {:.1} s: {}", num(&v, "step_seconds"), summary(&v));
            Some(v)
        }
        Err(e) => {
            eprintln!("FAILED: {e}");
            let first: String = e.chars().take(300).collect();
            errors.push(format!("http scale {what}: {first}"));
            None
        }
    }
}

pub fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// A metric: its label, how to read it, whether more is better.
#[derive(Clone, Copy)]
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

/// A table line: `what`, each server's value, then how far ours (the first)
/// is ahead of each other one (> 1× = ahead).
fn line(what: String, vals: &[Option<f64>], more_is_better: bool) -> Vec<String> {
    let mut line = vec![what];
    line.extend(vals.iter().map(|v| v.map_or("—".into(), fmt_num)));
    for other in vals.iter().skip(1) {
        line.push(match (vals[0], other) {
            (Some(a), Some(b)) if a > 0.0 && *b > 0.0 => {
                let r = if more_is_better { a / b } else { b / a };
                format!("{r:.2}×")
            }
            _ => "—".into(),
        });
    }
    line
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
        let mut lines: Vec<Vec<String>> = self
            .cells()
            .into_iter()
            .map(|(m, n, vals)| line(format!("{}: {n}", m.label), &vals, m.more_is_better))
            .collect();
        let [_, sessions, calls] = self.memory_shape;
        let vals: Vec<Option<f64>> = self
            .memory
            .iter()
            .map(|r| {
                r.as_ref()
                    .map(|v| num(v, "marginal_bytes_per_session") / 1e3)
            })
            .collect();
        if vals.iter().any(Option::is_some) {
            let what =
                format!("KB per used session ({calls} calls each; growth over {sessions} more)");
            lines.push(line(what, &vals, false));
        }
        Table { header, lines }
    }

    /// Each metric at each N: every server's value.
    fn cells(&self) -> Vec<(Metric, usize, Vec<Option<f64>>)> {
        let mut out = Vec::new();
        for m in metrics() {
            for (n, results) in &self.steps {
                let vals = results
                    .iter()
                    .map(|r| r.as_ref().and_then(m.read))
                    .collect();
                out.push((m, *n, vals));
            }
        }
        out
    }

    /// The cells where ours (the first server) is behind another: "metric at
    /// N: ours vs theirs".
    pub fn behind(&self, names: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for (m, n, vals) in self.cells() {
            let Some(ours) = vals[0] else { continue };
            for (i, other) in vals.iter().enumerate().skip(1) {
                let Some(theirs) = *other else { continue };
                let worse = if m.more_is_better {
                    ours < theirs
                } else {
                    ours > theirs
                };
                if worse {
                    out.push(format!(
                        "{} at {n}: {} vs {} {}",
                        m.label,
                        fmt_num(ours),
                        names[i],
                        fmt_num(theirs)
                    ));
                }
            }
        }
        out
    }

    /// How many (metric, N, other server) points compare ours with another.
    pub fn points(&self) -> usize {
        let pairs: usize = self.steps.values().map(|v| v.len().saturating_sub(1)).sum();
        pairs * metrics().len()
    }

    /// A figure of ours (the first server) at `n` sessions.
    pub fn ours(&self, n: usize, key: &str) -> Option<f64> {
        let v = self.steps.get(&n)?.first()?.as_ref()?;
        v.get(key).and_then(Value::as_f64)
    }
}
