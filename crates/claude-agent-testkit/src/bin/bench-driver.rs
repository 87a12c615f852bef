//! Runs the tool-call benchmark for several **subjects** side by side and
//! reports medians and ranges over repetitions.
//!
//! ```text
//! bench-driver --fake-cli target/release/fake-claude --reps 5 --out docs/performance.md \
//!   --subject 'rust-sdk|sdk|target/release/examples/bench_sdk' \
//!   --subject 'echo-floor|responder|target/release/echo-responder'
//! ```
//!
//! A subject is `name|kind|command`:
//!
//! * kind `sdk`: the command is an SDK program that starts the CLI itself;
//!   it gets `FAKE_CLAUDE_PATH` (the fake CLI, to use as its CLI path) and
//!   the fake CLI's `FAKE_CLAUDE_SCENARIO`/`FAKE_CLAUDE_PARAMS`, which its CLI
//!   inherits. It must declare an in-process server `bench` with a tool `add`
//!   (`{"a","b","pad"?,"reply_bytes"?}` → text `sum=…` + `reply_bytes` × `x`).
//! * kind `responder`: the fake CLI is started here and spawns the command
//!   itself, talking to it over its stdin/stdout (the echo floor).
//!
//! Either way the fake CLI is the one timing every round trip, and it reads
//! the subject's CPU time and peak RSS from `/proc`. Repetitions interleave
//! the subjects (A B A B …) so that drift in machine load hits all alike.
//! `--params` adds to the `bench` scenario's parameters (e.g. smaller counts).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use claude_agent_testkit::fake_cli::report::{BenchReport, PhaseReport};
use claude_agent_testkit::fake_cli::{CLI_VERSION, PARAMS_ENV, RESPONDER_ENV, SCENARIO_ENV};
use serde_json::{Value, json};

struct Subject {
    name: String,
    kind: String,
    cmd: Vec<String>,
}

struct Args {
    fake_cli: PathBuf,
    reps: usize,
    out: Option<PathBuf>,
    params: Value,
    subjects: Vec<Subject>,
    timeout: Duration,
}

fn usage() -> ! {
    eprintln!(
        "usage: bench-driver --fake-cli PATH [--reps N] [--out FILE.md] [--params JSON] \
         [--timeout-s N] --subject 'name|sdk|cmd args' [--subject …]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        fake_cli: PathBuf::new(),
        reps: 5,
        out: None,
        params: json!({}),
        subjects: Vec::new(),
        timeout: Duration::from_secs(600),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--fake-cli" => args.fake_cli = value().into(),
            "--reps" => args.reps = value().parse().unwrap_or_else(|_| usage()),
            "--out" => args.out = Some(value().into()),
            "--params" => args.params = serde_json::from_str(&value()).unwrap_or_else(|_| usage()),
            "--timeout-s" => {
                args.timeout = Duration::from_secs(value().parse().unwrap_or_else(|_| usage()))
            }
            "--subject" => {
                let spec = value();
                let mut parts = spec.splitn(3, '|');
                let (Some(name), Some(kind), Some(cmd)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    usage()
                };
                if kind != "sdk" && kind != "responder" {
                    usage();
                }
                args.subjects.push(Subject {
                    name: name.into(),
                    kind: kind.into(),
                    cmd: cmd.split_whitespace().map(str::to_owned).collect(),
                });
            }
            _ => usage(),
        }
    }
    if args.subjects.is_empty() || args.fake_cli.as_os_str().is_empty() {
        usage();
    }
    args
}

/// What the subject itself reports (`BENCH_SUBJECT_REPORT`): when it called
/// `query()` and when it got the first message, ns since the Unix epoch.
#[derive(Debug, Clone, Default, serde::Deserialize)]
struct SubjectTiming {
    #[serde(default)]
    query_ns: u64,
    #[serde(default)]
    first_message_ns: u64,
}

/// One repetition of one subject.
struct Rep {
    report: BenchReport,
    timing: Option<SubjectTiming>,
    /// Why the run did not complete (the report then has the phases done).
    failure: Option<String>,
}

/// Runs one repetition of one subject. `Err` when nothing was measured.
fn run_once(args: &Args, subject: &Subject, dir: &Path, rep: usize) -> Result<Rep, String> {
    let report = dir.join(format!("{}-{rep}.json", subject.name));
    let timing_path = dir.join(format!("{}-{rep}.timing.json", subject.name));
    let log = dir.join(format!("{}-{rep}.stderr", subject.name));
    let mut params = args.params.clone();
    params["report"] = json!(report);
    let stderr = File::create(&log).map_err(|e| e.to_string())?;
    let mut cmd = if subject.kind == "sdk" {
        let mut c = Command::new(&subject.cmd[0]);
        c.args(&subject.cmd[1..])
            .env("FAKE_CLAUDE_PATH", &args.fake_cli)
            .env("BENCH_SUBJECT_REPORT", &timing_path);
        c
    } else {
        let mut c = Command::new(&args.fake_cli);
        c.env(
            RESPONDER_ENV,
            serde_json::to_string(&subject.cmd).expect("strings"),
        );
        c
    };
    cmd.env(SCENARIO_ENV, "bench")
        .env(PARAMS_ENV, params.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", subject.cmd))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > args.timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let tail = || {
        let s = std::fs::read_to_string(&log).unwrap_or_default();
        let mut cut = s.len().saturating_sub(2000);
        while !s.is_char_boundary(cut) {
            cut += 1;
        }
        s[cut..].to_owned()
    };
    let mut failure = match status {
        None => Some(format!("timed out after {:?}", args.timeout)),
        Some(st) if !st.success() => Some(format!(
            "exited with {st}; stderr ends with:\n{}",
            tail()
        )),
        Some(_) => None,
    };
    let text = std::fs::read_to_string(&report).map_err(|e| {
        format!(
            "no report ({e}); {}",
            failure.clone().unwrap_or_else(|| format!("stderr ends with:\n{}", tail()))
        )
    })?;
    let report: BenchReport = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    if failure.is_none() && !report.failures.is_empty() {
        failure = Some(format!("checks failed: {:?}", report.failures));
    }
    if failure.is_none() && !report.complete {
        failure = Some("the run stopped early".into());
    }
    if let Some(f) = &mut failure
        && !report.failures.is_empty()
        && !f.starts_with("checks failed")
    {
        *f = format!("{:?}; {f}", report.failures);
    }
    let timing = std::fs::read_to_string(&timing_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    Ok(Rep {
        report,
        timing,
        failure,
    })
}

/// The wall time of `fake-claude --version` (spawn, run, exit), ms: the
/// fake CLI's own start, which the query-to-first-message overhead excludes.
fn bare_cli_start_ms(fake_cli: &Path) -> Option<f64> {
    let t = Instant::now();
    let status = Command::new(fake_cli)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| t.elapsed().as_secs_f64() * 1e3)
}

/// Median and range of a sample.
#[derive(Clone, Copy, Default)]
struct Summary {
    median: f64,
    min: f64,
    max: f64,
}

fn summarize(mut v: Vec<f64>) -> Option<Summary> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Summary {
        median,
        min: v[0],
        max: v[n - 1],
    })
}

fn fmt_num(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn cell(s: Option<Summary>) -> String {
    match s {
        Some(s) if s.min == s.max => fmt_num(s.median),
        Some(s) => format!(
            "{} ({}–{})",
            fmt_num(s.median),
            fmt_num(s.min),
            fmt_num(s.max)
        ),
        None => "—".into(),
    }
}

/// Extracts one value from a report.
type Getter = Box<dyn Fn(&BenchReport) -> Option<f64>>;

/// One row of the table: a label and how to get the value from a report.
struct Row {
    label: String,
    get: Getter,
    /// Throughput-like (higher is better) rows get a "% of floor" column.
    higher_better: bool,
}

fn phase_metric(name: &str, f: fn(&PhaseReport) -> f64) -> Getter {
    let name = name.to_owned();
    Box::new(move |r| r.phases.iter().find(|p| p.name == name).map(f))
}

fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

fn rows(reports: &[&BenchReport]) -> Vec<Row> {
    let window = reports
        .iter()
        .find_map(|r| {
            r.phases
                .iter()
                .find(|p| p.name == "pipelined")
                .map(|p| p.window)
        })
        .unwrap_or(64);
    let mut rows = vec![
        Row {
            label: "serial: calls/s".into(),
            get: phase_metric("serial", |p| p.calls_per_s),
            higher_better: true,
        },
        Row {
            label: "serial: p50 µs".into(),
            get: phase_metric("serial", |p| p.p50_us),
            higher_better: false,
        },
        Row {
            label: "serial: p99 µs".into(),
            get: phase_metric("serial", |p| p.p99_us),
            higher_better: false,
        },
        Row {
            label: "serial: CPU µs/call (subject)".into(),
            get: phase_metric("serial", |p| p.peer_cpu_us_per_call),
            higher_better: false,
        },
        Row {
            label: format!("{window} in flight: calls/s"),
            get: phase_metric("pipelined", |p| p.calls_per_s),
            higher_better: true,
        },
        Row {
            label: format!("{window} in flight: p50 µs"),
            get: phase_metric("pipelined", |p| p.p50_us),
            higher_better: false,
        },
        Row {
            label: format!("{window} in flight: p99 µs"),
            get: phase_metric("pipelined", |p| p.p99_us),
            higher_better: false,
        },
        Row {
            label: format!("{window} in flight: CPU µs/call (subject)"),
            get: phase_metric("pipelined", |p| p.peer_cpu_us_per_call),
            higher_better: false,
        },
        Row {
            label: "peak RSS after the small calls, MiB".into(),
            get: Box::new(|r| Some(r.peer_hwm_kb_after_calls as f64 / 1024.0)),
            higher_better: false,
        },
        Row {
            label: "peak RSS at the end (after 10 MiB payloads), MiB".into(),
            get: Box::new(|r| Some(r.peer_hwm_kb_end as f64 / 1024.0)),
            higher_better: false,
        },
    ];
    let mut payloads: BTreeMap<(u64, bool), String> = BTreeMap::new();
    for r in reports {
        for p in &r.phases {
            if p.name.starts_with("result_") {
                payloads.insert((p.result_bytes, false), p.name.clone());
            } else if p.name.starts_with("args_") {
                payloads.insert((p.arg_bytes, true), p.name.clone());
            }
        }
    }
    for ((bytes, is_args), name) in payloads {
        let what = if is_args { "arguments" } else { "result" };
        rows.push(Row {
            label: format!("{} {what}: p50 ms", size_label(bytes)),
            get: phase_metric(&name, |p| p.p50_us / 1000.0),
            higher_better: false,
        });
    }
    rows
}

fn command_output(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "?".into())
}

fn machine() -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_owned())
        })
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| format!("{:.1} GiB", kb as f64 / 1048576.0))
        .unwrap_or_else(|| "?".into());
    vec![
        (
            "date".into(),
            command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        ),
        ("CPU".into(), format!("{model}, {cores} cores available")),
        ("memory".into(), mem),
        (
            "kernel".into(),
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_owned(),
        ),
        (
            "load average at start".into(),
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        ("rustc".into(), command_output("rustc", &["-V"])),
        (
            "claude-agent".into(),
            format!(
                "{} (commit {})",
                env!("CARGO_PKG_VERSION"),
                command_output("git", &["rev-parse", "--short", "HEAD"])
            ),
        ),
        (
            "CLI".into(),
            format!("fake-claude (claims {CLI_VERSION}), release build"),
        ),
    ]
}

fn main() {
    let args = parse_args();
    let machine = machine();
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut results: Vec<Vec<BenchReport>> = args.subjects.iter().map(|_| Vec::new()).collect();
    let mut errors: Vec<String> = Vec::new();
    for rep in 0..args.reps {
        for (i, subject) in args.subjects.iter().enumerate() {
            eprint!("rep {}/{} {:<14} ", rep + 1, args.reps, subject.name);
            let t = Instant::now();
            match run_once(&args, subject, dir.path(), rep) {
                Ok(r) => {
                    let serial = r
                        .phases
                        .iter()
                        .find(|p| p.name == "serial")
                        .map_or(0.0, |p| p.calls_per_s);
                    eprintln!(
                        "ok in {:.1} s (serial {serial:.0} calls/s)",
                        t.elapsed().as_secs_f64()
                    );
                    results[i].push(r);
                }
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    errors.push(format!("{} rep {}: {e}", subject.name, rep + 1));
                }
            }
        }
    }

    let all: Vec<&BenchReport> = results.iter().flatten().collect();
    let rows = rows(&all);
    let floor = args.subjects.iter().position(|s| s.kind == "responder");
    let mut header = vec!["metric".to_owned()];
    header.extend(args.subjects.iter().map(|s| s.name.clone()));
    let others: Vec<usize> = (0..args.subjects.len())
        .filter(|i| Some(*i) != floor)
        .collect();
    if let Some(f) = floor {
        for &o in &others {
            header.push(format!(
                "{} vs {}",
                args.subjects[o].name, args.subjects[f].name
            ));
        }
    }
    let mut table: Vec<Vec<String>> = Vec::new();
    for row in &rows {
        let sums: Vec<Option<Summary>> = results
            .iter()
            .map(|rs| summarize(rs.iter().filter_map(|r| (row.get)(r)).collect()))
            .collect();
        let mut line = vec![row.label.clone()];
        line.extend(sums.iter().map(|s| cell(*s)));
        if let Some(f) = floor {
            for &o in &others {
                line.push(match (sums[o], sums[f]) {
                    (Some(a), Some(b)) if b.median > 0.0 && a.median > 0.0 => {
                        if row.higher_better {
                            format!("{:.0} % of floor", 100.0 * a.median / b.median)
                        } else {
                            format!("{:.1}×", a.median / b.median)
                        }
                    }
                    _ => "—".into(),
                });
            }
        }
        table.push(line);
    }

    let md_table = {
        let mut s = format!(
            "| {} |\n|{}\n",
            header.join(" | "),
            "---|".repeat(header.len())
        );
        for line in &table {
            s += &format!("| {} |\n", line.join(" | "));
        }
        s
    };
    // Plain text for the terminal.
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            std::iter::once(&header[c])
                .chain(table.iter().map(|l| &l[c]))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    println!();
    println!(
        "{}",
        header
            .iter()
            .zip(&widths)
            .map(|(h, w)| pad(h, *w))
            .collect::<Vec<_>>()
            .join("  ")
    );
    for line in &table {
        println!(
            "{}",
            line.iter()
                .zip(&widths)
                .map(|(h, w)| pad(h, *w))
                .collect::<Vec<_>>()
                .join("  ")
        );
    }
    for e in &errors {
        println!("error: {e}");
    }

    if let Some(out) = &args.out {
        let p = &args.params;
        let n = |k: &str, d: u64| p.get(k).and_then(Value::as_u64).unwrap_or(d);
        let mut doc = String::from(
            "# Performance\n\n\
             Generated by `scripts/bench` (do not edit by hand; rerun it). How fast the SDK answers \
             the CLI's in-process MCP `tools/call` requests, next to the **echo floor**: a \
             single-threaded loop that parses each request with `serde_json`, builds the reply and \
             writes it — the least any SDK must do over the same pipes.\n\n\
             ## Method\n\n\
             * The load generator is the testkit's fake CLI (`fake-claude`, scenario `bench`). It \
             performs the real CLI's handshake, then writes `tools/call` requests in the real CLI's \
             shape and times each round trip from just before its write to the moment the matching \
             `control_response` line has been read. Every answer is checked (success, `jsonrpc`, \
             id, not `isError`, size).\n\
             * **rust-sdk**: `crates/claude-agent/examples/bench_sdk.rs`, an in-process server with \
             one tool `add`, run through `query()`; it spawns the fake CLI exactly as it would the \
             real one (SDK process → CLI process). **echo-floor**: `echo-responder`, spawned *by* \
             the fake CLI over pipes. The fake CLI measures in both cases.\n\
             * Phases: ",
        );
        doc += &format!(
            "{} warm-up calls (not reported); {} serial calls; {} calls with {} in flight; then \
             1 KiB / 100 KiB / 1 MiB / 10 MiB results and arguments, serially (64 MiB of payload \
             per size, 5 to 2 000 calls).\n",
            n("warmup", 1000),
            n("serial", 20_000),
            n("pipelined", 50_000),
            n("window", 64)
        );
        doc += "* CPU per call: the subject's CPU time (sum of its threads' `schedstat`) over the \
                phase, divided by the calls. Peak RSS: the subject's `VmHWM`.\n\
                * Each cell: median over the repetitions (min–max in parentheses). Repetitions \
                interleave the subjects. The machine is shared, so absolute numbers move; compare \
                columns of one run.\n\n## Machine\n\n";
        for (k, v) in &machine {
            doc += &format!("* {k}: {v}\n");
        }
        doc += &format!("* repetitions: {}\n\n## Results\n\n{md_table}", args.reps);
        if !errors.is_empty() {
            doc += "\nFailed runs:\n\n";
            for e in &errors {
                doc += &format!("* {}\n", e.lines().next().unwrap_or(""));
            }
        }
        doc += "\n## Subjects\n\n";
        for s in &args.subjects {
            doc += &format!("* `{}` ({}): `{}`\n", s.name, s.kind, s.cmd.join(" "));
        }
        if let Err(e) = std::fs::write(out, doc) {
            eprintln!("cannot write {}: {e}", out.display());
            std::process::exit(1);
        }
        eprintln!("wrote {}", out.display());
    }
    if !errors.is_empty() {
        std::process::exit(1);
    }
}
