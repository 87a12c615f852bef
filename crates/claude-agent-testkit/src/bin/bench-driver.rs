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
    /// Client benchmark programs (`name|cmd`).
    clients: Vec<Subject>,
    /// The stdio server the clients spawn.
    stdio_server: Vec<String>,
    /// The HTTP server started for the clients; it prints its URL on stderr.
    http_server: Option<Vec<String>>,
    /// Seconds per client measurement.
    client_seconds: f64,
    /// Where to draw the plot (PNG).
    plot: Option<PathBuf>,
    /// Markdown appended to the document.
    notes: Option<PathBuf>,
    /// `name=version` lines for the document.
    versions: Vec<(String, String)>,
}

fn usage() -> ! {
    eprintln!(
        "usage: bench-driver --fake-cli PATH [--reps N] [--out FILE.md] [--plot FILE.png] \
         [--notes FILE.md] [--params JSON] [--timeout-s N] [--version 'what=version' …] \
         [--subject 'name|sdk|cmd args' …] [--client 'name|cmd args' … --stdio-server 'cmd' \
         [--http-server 'cmd'] [--client-seconds S]]"
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
        clients: Vec::new(),
        stdio_server: Vec::new(),
        http_server: None,
        client_seconds: 3.0,
        plot: None,
        notes: None,
        versions: Vec::new(),
    };
    let words = |s: String| -> Vec<String> { s.split_whitespace().map(str::to_owned).collect() };
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
            "--plot" => args.plot = Some(value().into()),
            "--notes" => args.notes = Some(value().into()),
            "--version" => {
                let v = value();
                let (k, v) = v.split_once('=').unwrap_or_else(|| usage());
                args.versions.push((k.into(), v.into()));
            }
            "--stdio-server" => args.stdio_server = words(value()),
            "--http-server" => args.http_server = Some(words(value())),
            "--client-seconds" => args.client_seconds = value().parse().unwrap_or_else(|_| usage()),
            "--client" => {
                let spec = value();
                let Some((name, cmd)) = spec.split_once('|') else {
                    usage()
                };
                args.clients.push(Subject {
                    name: name.into(),
                    kind: "client".into(),
                    cmd: words(cmd.into()),
                });
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
    if (args.subjects.is_empty() || args.fake_cli.as_os_str().is_empty())
        && (args.clients.is_empty() || args.stdio_server.is_empty())
    {
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
    /// The fake CLI's own start (`--version`), ms, measured next to the run.
    bare_cli_ms: Option<f64>,
    /// Which repetition (0-based).
    rep: usize,
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
            break Some(status);
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
        Some(st) if !st.success() => {
            Some(format!("exited with {st}; stderr ends with:\n{}", tail()))
        }
        Some(_) => None,
    };
    let text = std::fs::read_to_string(&report).map_err(|e| {
        format!(
            "no report ({e}); {}",
            failure
                .clone()
                .unwrap_or_else(|| format!("stderr ends with:\n{}", tail()))
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
        bare_cli_ms: None,
        rep,
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

/// Extracts one value from a repetition.
type Getter = Box<dyn Fn(&Rep) -> Option<f64>>;

/// One row of the table: a label and how to get the value from a repetition.
struct Row {
    label: String,
    get: Getter,
    /// Throughput-like (higher is better) rows get a "% of floor" column.
    higher_better: bool,
    /// The phase the row is about: a subject for which it never completed
    /// shows "failed" instead of "—".
    phase: Option<String>,
}

/// A metric of a phase, only when the phase completed with good answers.
fn phase_metric(name: &str, f: fn(&PhaseReport) -> f64) -> Getter {
    let name = name.to_owned();
    Box::new(move |r| {
        r.report
            .phases
            .iter()
            .find(|p| p.name == name && p.ok())
            .map(f)
    })
}

fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// ns → ms between two stamps, when both are set.
fn span_ms(from: u64, to: u64) -> Option<f64> {
    (from > 0 && to > 0).then(|| (to as f64 - from as f64) / 1e6)
}

fn rows(reps: &[&Rep], warmup: u64) -> Vec<Row> {
    let window = reps
        .iter()
        .find_map(|r| {
            r.report
                .phases
                .iter()
                .find(|p| p.name == "pipelined")
                .map(|p| p.window)
        })
        .unwrap_or(64);
    let row = |label: String, get: Getter, higher_better: bool, phase: Option<&str>| Row {
        label,
        get,
        higher_better,
        phase: phase.map(str::to_owned),
    };
    let mut rows = vec![
        row(
            "serial: calls/s".into(),
            phase_metric("serial", |p| p.calls_per_s),
            true,
            Some("serial"),
        ),
        row(
            "serial: calls made".into(),
            phase_metric("serial", |p| p.calls as f64),
            true,
            Some("serial"),
        ),
        row(
            "serial: p50 µs".into(),
            phase_metric("serial", |p| p.p50_us),
            false,
            Some("serial"),
        ),
        row(
            "serial: p99 µs".into(),
            phase_metric("serial", |p| p.p99_us),
            false,
            Some("serial"),
        ),
        row(
            "serial: CPU µs/call (subject)".into(),
            phase_metric("serial", |p| p.peer_cpu_us_per_call),
            false,
            Some("serial"),
        ),
        row(
            format!("{window} in flight: calls/s"),
            phase_metric("pipelined", |p| p.calls_per_s),
            true,
            Some("pipelined"),
        ),
        row(
            format!("{window} in flight: p50 µs"),
            phase_metric("pipelined", |p| p.p50_us),
            false,
            Some("pipelined"),
        ),
        row(
            format!("{window} in flight: p99 µs"),
            phase_metric("pipelined", |p| p.p99_us),
            false,
            Some("pipelined"),
        ),
        row(
            format!("{window} in flight: CPU µs/call (subject)"),
            phase_metric("pipelined", |p| p.peer_cpu_us_per_call),
            false,
            Some("pipelined"),
        ),
        row(
            format!("peak RSS after {warmup} warm-up + the serial calls, MiB"),
            phase_metric("serial", |p| p.peer_hwm_kb as f64 / 1024.0),
            false,
            Some("serial"),
        ),
        row(
            "peak RSS after the small calls, MiB".into(),
            Box::new(|r| {
                r.report
                    .phases
                    .iter()
                    .any(|p| p.name == "pipelined" && p.ok())
                    .then_some(r.report.peer_hwm_kb_after_calls as f64 / 1024.0)
            }),
            false,
            Some("pipelined"),
        ),
        row(
            "peak RSS at the end (after 10 MiB payloads), MiB".into(),
            Box::new(|r| {
                r.report
                    .complete
                    .then_some(r.report.peer_hwm_kb_end as f64 / 1024.0)
            }),
            false,
            Some("args_10485760"),
        ),
        row(
            "query() → first message, ms".into(),
            Box::new(|r| {
                let t = r.timing.as_ref()?;
                span_ms(t.query_ns, t.first_message_ns)
            }),
            false,
            None,
        ),
        row(
            "query() → fake CLI main(), ms".into(),
            Box::new(|r| span_ms(r.timing.as_ref()?.query_ns, r.report.cli_main_ns)),
            false,
            None,
        ),
        row(
            "fake CLI main() → first message written, ms".into(),
            Box::new(|r| {
                r.timing.as_ref()?;
                span_ms(r.report.cli_main_ns, r.report.first_message_ns)
            }),
            false,
            None,
        ),
        row(
            "first message written → received, ms".into(),
            Box::new(|r| {
                span_ms(
                    r.report.first_message_ns,
                    r.timing.as_ref()?.first_message_ns,
                )
            }),
            false,
            None,
        ),
        row(
            "query() → first message beyond the CLI's own start, ms".into(),
            Box::new(|r| {
                let t = r.timing.as_ref()?;
                Some(span_ms(t.query_ns, t.first_message_ns)? - r.bare_cli_ms?)
            }),
            false,
            None,
        ),
    ];
    let mut payloads: BTreeMap<(bool, u64), String> = BTreeMap::new();
    for r in reps {
        for p in &r.report.phases {
            if p.name.starts_with("result_") {
                payloads.insert((false, p.result_bytes), p.name.clone());
            } else if p.name.starts_with("args_") {
                payloads.insert((true, p.arg_bytes), p.name.clone());
            }
        }
    }
    for ((is_args, bytes), name) in payloads {
        let what = if is_args { "arguments" } else { "result" };
        rows.push(row(
            format!("{} {what}: p50 ms", size_label(bytes)),
            phase_metric(&name, |p| p.p50_us / 1000.0),
            false,
            Some(&name),
        ));
        rows.push(row(
            format!("{} {what}: MiB/s", size_label(bytes)),
            phase_metric(&name, |p| {
                (p.arg_bytes + p.result_bytes) as f64 * p.calls_per_s / 1048576.0
            }),
            true,
            Some(&name),
        ));
    }
    rows
}

/// A table: header and lines of cells.
struct Table {
    header: Vec<String>,
    lines: Vec<Vec<String>>,
}

impl Table {
    fn markdown(&self) -> String {
        let mut s = format!(
            "| {} |\n|{}\n",
            self.header.join(" | "),
            "---|".repeat(self.header.len())
        );
        for line in &self.lines {
            s += &format!("| {} |\n", line.join(" | "));
        }
        s
    }

    fn print(&self) {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header[c])
                    .chain(self.lines.iter().map(|l| &l[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let pad =
            |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
        let line = |cells: &[String]| {
            cells
                .iter()
                .zip(&widths)
                .map(|(h, w)| pad(h, *w))
                .collect::<Vec<_>>()
                .join("  ")
        };
        println!();
        println!("{}", line(&self.header));
        for l in &self.lines {
            println!("{}", line(l));
        }
    }
}

/// The SDK benchmark: every subject, `reps` times, interleaved.
fn sdk_bench(args: &Args, dir: &Path, errors: &mut Vec<String>) -> (Table, Vec<Vec<Rep>>) {
    let mut results: Vec<Vec<Rep>> = args.subjects.iter().map(|_| Vec::new()).collect();
    for rep in 0..args.reps {
        for (i, subject) in args.subjects.iter().enumerate() {
            eprint!("rep {}/{} {:<14} ", rep + 1, args.reps, subject.name);
            // The fake CLI's own start, measured next to each SDK run.
            let bare = if subject.kind == "sdk" {
                summarize(
                    (0..5)
                        .filter_map(|_| bare_cli_start_ms(&args.fake_cli))
                        .collect(),
                )
                .map(|s| s.median)
            } else {
                None
            };
            let t = Instant::now();
            match run_once(args, subject, dir, rep) {
                Ok(mut r) => {
                    r.bare_cli_ms = bare;
                    let serial = r
                        .report
                        .phases
                        .iter()
                        .find(|p| p.name == "serial")
                        .map_or(0.0, |p| p.calls_per_s);
                    let what = if r.failure.is_some() {
                        "FAILED in part"
                    } else {
                        "ok"
                    };
                    eprintln!(
                        "{what} in {:.1} s (serial {serial:.0} calls/s)",
                        t.elapsed().as_secs_f64()
                    );
                    if let Some(f) = &r.failure {
                        eprintln!("  {}", f.lines().next().unwrap_or(""));
                        errors.push(format!("{} rep {}: {f}", subject.name, rep + 1));
                    }
                    results[i].push(r);
                }
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    errors.push(format!("{} rep {}: {e}", subject.name, rep + 1));
                }
            }
        }
    }

    let all: Vec<&Rep> = results.iter().flatten().collect();
    let warmup = args
        .params
        .get("warmup")
        .and_then(Value::as_u64)
        .unwrap_or(1000);
    let rows = rows(&all, warmup);
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
    let mut lines: Vec<Vec<String>> = Vec::new();
    for row in &rows {
        let sums: Vec<Option<Summary>> = results
            .iter()
            .map(|rs| summarize(rs.iter().filter_map(|r| (row.get)(r)).collect()))
            .collect();
        let mut line = vec![row.label.clone()];
        for (s, rs) in sums.iter().zip(&results) {
            // A phase that never completed for a subject that did run: failed.
            let failed = s.is_none()
                && !rs.is_empty()
                && row.phase.as_ref().is_some_and(|ph| {
                    rs.iter().all(|r| {
                        r.report.failures.iter().any(|f| f.starts_with(ph.as_str()))
                            || r.report.phases.iter().any(|p| p.name == *ph && !p.ok())
                            || (!r.report.complete
                                && !r.report.phases.iter().any(|p| p.name == *ph))
                    })
                });
            line.push(if failed { "failed".into() } else { cell(*s) });
        }
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
        lines.push(line);
    }
    (Table { header, lines }, results)
}

/// One measurement a client program prints (one JSON object per line).
#[derive(Debug, Clone, serde::Deserialize)]
struct ClientLine {
    transport: String,
    #[serde(default = "one")]
    in_flight: u64,
    calls: u64,
    seconds: f64,
}

fn one() -> u64 {
    1
}

/// Starts the HTTP server command; returns it and the URL it printed on
/// stderr (`… http://127.0.0.1:PORT/mcp`).
fn start_http_server(cmd: &[String]) -> Result<(std::process::Child, String), String> {
    use std::io::BufRead;
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the HTTP server {cmd:?}: {e}"))?;
    let mut err = std::io::BufReader::new(child.stderr.take().expect("piped"));
    let mut line = String::new();
    let url = match err.read_line(&mut line) {
        Ok(n) if n > 0 => line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .map(str::to_owned),
        _ => None,
    };
    let Some(url) = url else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("the HTTP server printed no URL: {line:?}"));
    };
    // Keep draining its stderr so that it never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while err.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    Ok((child, url))
}

/// The client benchmark: every client, `reps` times, interleaved, against
/// the stdio server (each client spawns it) and the HTTP server (started
/// here, once). Returns the table and the per-client medians of calls/s.
fn client_bench(args: &Args, errors: &mut Vec<String>) -> Option<Table> {
    if args.clients.is_empty() {
        return None;
    }
    let http = match &args.http_server {
        Some(cmd) => match start_http_server(cmd) {
            Ok(h) => Some(h),
            Err(e) => {
                errors.push(e);
                None
            }
        },
        None => None,
    };
    let url = http.as_ref().map(|(_, u)| u.clone()).unwrap_or_default();
    // (transport, in_flight) → per client → calls/s of each repetition
    let mut data: BTreeMap<(String, u64), Vec<Vec<f64>>> = BTreeMap::new();
    for rep in 0..args.reps {
        for (i, client) in args.clients.iter().enumerate() {
            eprint!("rep {}/{} client {:<14} ", rep + 1, args.reps, client.name);
            let t = Instant::now();
            let out = Command::new(&client.cmd[0])
                .args(&client.cmd[1..])
                .env(
                    "BENCH_STDIO_SERVER",
                    serde_json::to_string(&args.stdio_server).expect("strings"),
                )
                .env("BENCH_HTTP_URL", &url)
                .env("BENCH_CLIENT_SECONDS", args.client_seconds.to_string())
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output();
            let out = match out {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    errors.push(format!("client {} rep {}: {e}", client.name, rep + 1));
                    continue;
                }
            };
            let mut n = 0;
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let Ok(l) = serde_json::from_str::<ClientLine>(line) else {
                    continue;
                };
                if l.seconds > 0.0 {
                    let v = data
                        .entry((l.transport, l.in_flight))
                        .or_insert_with(|| vec![Vec::new(); args.clients.len()]);
                    v[i].push(l.calls as f64 / l.seconds);
                    n += 1;
                }
            }
            if out.status.success() {
                eprintln!(
                    "ok in {:.1} s ({n} measurements)",
                    t.elapsed().as_secs_f64()
                );
            } else {
                eprintln!("FAILED ({}) after {n} measurements", out.status);
                errors.push(format!(
                    "client {} rep {}: exited with {}",
                    client.name,
                    rep + 1,
                    out.status
                ));
            }
        }
    }
    if let Some((mut child, _)) = http {
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut header = vec!["calls/s".to_owned()];
    header.extend(args.clients.iter().map(|c| c.name.clone()));
    if args.clients.len() > 1 {
        for c in &args.clients[1..] {
            header.push(format!("{} vs {}", args.clients[0].name, c.name));
        }
    }
    let mut lines = Vec::new();
    let order = |t: &str| match t {
        "in-process" => 0,
        "stdio" => 1,
        "http" => 2,
        _ => 3,
    };
    let mut keys: Vec<&(String, u64)> = data.keys().collect();
    keys.sort_by_key(|(t, f)| (order(t), *f));
    for key in keys {
        let per_client = &data[key];
        let (transport, in_flight) = key;
        let what = match transport.as_str() {
            "in-process" => "in-process (our server in the client's process)".to_owned(),
            "stdio" => "stdio (the client spawns the server)".to_owned(),
            "http" => "Streamable HTTP (loopback)".to_owned(),
            t => t.to_owned(),
        };
        let mut line = vec![if *in_flight > 1 {
            format!("{what}, {in_flight} in flight")
        } else {
            format!("{what}, serial")
        }];
        let sums: Vec<Option<Summary>> = per_client.iter().map(|v| summarize(v.clone())).collect();
        line.extend(sums.iter().map(|s| cell(*s)));
        if let Some(Some(ours)) = sums.first() {
            for s in &sums[1..] {
                line.push(match s {
                    Some(o) if o.median > 0.0 => format!("{:.1}×", ours.median / o.median),
                    _ => "—".into(),
                });
            }
        }
        lines.push(line);
    }
    Some(Table { header, lines })
}

/// Draws throughput (serial and pipelined calls/s) and p99 latency per
/// subject, medians with min–max bars, into a PNG.
#[cfg(feature = "plot")]
fn plot(path: &Path, subjects: &[Subject], results: &[Vec<Rep>]) -> Result<(), String> {
    use plotters::prelude::*;
    use plotters::style::FontStyle;

    // No fonts are built into plotters without its `ttf` feature (which
    // needs fontconfig): register a system TTF for ab_glyph.
    let font = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    ]
    .iter()
    .find_map(|p| std::fs::read(p).ok())
    .ok_or("no TTF font found (install fonts-dejavu-core)")?;
    plotters::style::register_font("sans-serif", FontStyle::Normal, Box::leak(font.into()))
        .map_err(|_| "the font could not be loaded".to_owned())?;

    let get = |rs: &[Rep], phase: &str, f: fn(&PhaseReport) -> f64| {
        summarize(
            rs.iter()
                .filter_map(|r| {
                    r.report
                        .phases
                        .iter()
                        .find(|p| p.name == phase && p.ok())
                        .map(f)
                })
                .collect(),
        )
    };
    // Medians written above the bars.
    let value_style = TextStyle::from(("sans-serif", 13).into_font()).pos(
        plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Bottom,
        ),
    );
    let series: [(&str, RGBColor); 2] = [
        ("serial", RGBColor(66, 133, 244)),
        ("pipelined", RGBColor(234, 67, 53)),
    ];
    let n = subjects.len() as f64;
    let root = BitMapBackend::new(path, (1400, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (title, body) = root.split_vertically(50);
    title
        .titled(
            "In-process MCP tools/call through the CLI's control channel (fake CLI, medians, bars: min–max)",
            ("sans-serif", 22),
        )
        .map_err(|e| e.to_string())?;
    let (left, right) = body.split_horizontally(700);
    let names: Vec<String> = subjects.iter().map(|s| s.name.clone()).collect();
    let label = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
            names[i as usize].clone()
        } else {
            String::new()
        }
    };

    // Throughput, linear.
    let mut top: f64 = 1.0;
    for rs in results {
        for (ph, _) in &series {
            if let Some(s) = get(rs, ph, |p| p.calls_per_s) {
                top = top.max(s.max);
            }
        }
    }
    let mut chart = ChartBuilder::on(&left)
        .caption("throughput, calls/s (higher is better)", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..n - 0.5, 0.0..top * 1.3)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(subjects.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
    for (k, (ph, color)) in series.iter().enumerate() {
        let mut bars = Vec::new();
        let mut whiskers = Vec::new();
        let mut labels = Vec::new();
        for (i, rs) in results.iter().enumerate() {
            if let Some(s) = get(rs, ph, |p| p.calls_per_s) {
                let x = i as f64 - 0.2 + 0.4 * k as f64;
                bars.push(Rectangle::new(
                    [(x - 0.17, 0.0), (x + 0.17, s.median)],
                    color.filled(),
                ));
                whiskers.push(PathElement::new(
                    vec![(x, s.min), (x, s.max)],
                    BLACK.stroke_width(2),
                ));
                labels.push(Text::new(
                    fmt_num(s.median),
                    (x, s.max.max(s.median)),
                    value_style.clone(),
                ));
            }
        }
        let legend = if *ph == "serial" {
            "serial".to_owned()
        } else {
            "64 in flight".to_owned()
        };
        let c = *color;
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(legend)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()));
        chart.draw_series(whiskers).map_err(|e| e.to_string())?;
        chart.draw_series(labels).map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperMiddle)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;

    // p99 latency, log scale.
    let (mut lo, mut hi) = (f64::MAX, 1.0f64);
    for rs in results {
        for (ph, _) in &series {
            if let Some(s) = get(rs, ph, |p| p.p99_us) {
                lo = lo.min(s.min);
                hi = hi.max(s.max);
            }
        }
    }
    let lo = (lo.min(hi) / 2.0).max(0.1);
    let mut chart = ChartBuilder::on(&right)
        .caption(
            "p99 latency, µs (log scale, lower is better)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..n - 0.5, (lo..hi * 3.0).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(subjects.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
    for (k, (ph, color)) in series.iter().enumerate() {
        let mut bars = Vec::new();
        let mut whiskers = Vec::new();
        let mut labels = Vec::new();
        for (i, rs) in results.iter().enumerate() {
            if let Some(s) = get(rs, ph, |p| p.p99_us) {
                let x = i as f64 - 0.2 + 0.4 * k as f64;
                bars.push(Rectangle::new(
                    [(x - 0.17, lo), (x + 0.17, s.median)],
                    color.filled(),
                ));
                whiskers.push(PathElement::new(
                    vec![(x, s.min), (x, s.max)],
                    BLACK.stroke_width(2),
                ));
                labels.push(Text::new(
                    fmt_num(s.median),
                    (x, s.max.max(s.median)),
                    value_style.clone(),
                ));
            }
        }
        chart.draw_series(bars).map_err(|e| e.to_string())?;
        chart.draw_series(whiskers).map_err(|e| e.to_string())?;
        chart.draw_series(labels).map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(not(feature = "plot"))]
fn plot(_: &Path, _: &[Subject], _: &[Vec<Rep>]) -> Result<(), String> {
    Err("bench-driver was built without the `plot` feature".into())
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

/// The targets of issue 7, checked on the first SDK subject against the
/// floor. Ratios are taken per repetition (the two ran one after the other,
/// under the same machine load) and their median is what is judged.
fn targets(subjects: &[Subject], results: &[Vec<Rep>]) -> Option<String> {
    let floor = subjects.iter().position(|s| s.kind == "responder")?;
    let sdk = subjects.iter().position(|s| s.kind == "sdk")?;
    type Get = Box<dyn Fn(&Rep) -> Option<f64>>;
    let ph = |name: &'static str, f: fn(&PhaseReport) -> f64| -> Get {
        Box::new(move |r: &Rep| {
            r.report
                .phases
                .iter()
                .find(|p| p.name == name && p.ok())
                .map(f)
        })
    };
    let med = |i: usize, f: &Get| summarize(results[i].iter().filter_map(f).collect());
    let ratio = |f: &Get| {
        summarize(
            results[sdk]
                .iter()
                .filter_map(|r| {
                    let o = f(r)?;
                    let fl = results[floor].iter().find(|x| x.rep == r.rep).and_then(f)?;
                    (fl > 0.0).then_some(o / fl)
                })
                .collect(),
        )
    };
    let mut s = format!(
        "| target | {} | floor | {} ÷ floor, per repetition | reached |\n|---|---|---|---|---|\n",
        subjects[sdk].name, subjects[sdk].name
    );
    let mut line = |what: &str,
                    ours: Option<Summary>,
                    fl: Option<Summary>,
                    r: Option<Summary>,
                    ok: Option<bool>,
                    unit: &str| {
        let f = |v: Option<Summary>| {
            let c = cell(v);
            if v.is_some() { format!("{c}{unit}") } else { c }
        };
        let ok = match ok {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        let r = match r {
            Some(_) => format!("{}×", cell(r)),
            None => "—".into(),
        };
        s += &format!("| {what} | {} | {} | {r} | {ok} |\n", f(ours), f(fl));
    };
    // (ours, floor, per-repetition ratio, reached) for "at least `min` × floor".
    let relative = |get: Get, min: f64| {
        let r = ratio(&get);
        (
            med(sdk, &get),
            med(floor, &get),
            r,
            r.map(|r| r.median >= min),
        )
    };
    let (o, f, r, ok) = relative(ph("serial", |p| p.calls_per_s), 0.8);
    line("serial: calls/s ≥ 0.8 × floor", o, f, r, ok, " /s");
    let (o, f, r, ok) = relative(ph("pipelined", |p| p.calls_per_s), 0.8);
    line("64 in flight: calls/s ≥ 0.8 × floor", o, f, r, ok, " /s");
    let p99 = ph("serial", |p| p.p99_us);
    let o = med(sdk, &p99);
    line(
        "serial p99 < 100 µs",
        o,
        med(floor, &p99),
        ratio(&p99),
        o.map(|o| o.median < 100.0),
        " µs",
    );
    let rss = ph("serial", |p| p.peer_hwm_kb as f64 * 1024.0 / 1e6);
    let o = med(sdk, &rss);
    line(
        "peak RSS < 8 MB (after the warm-up + serial calls)",
        o,
        med(floor, &rss),
        ratio(&rss),
        o.map(|o| o.median < 8.0),
        " MB",
    );
    let (o, f, r, ok) = relative(ph("result_10485760", |p| p.calls_per_s * 10.0), 0.7);
    line("10 MiB results: MiB/s ≥ 0.7 × floor", o, f, r, ok, " MiB/s");
    let (o, f, r, ok) = relative(ph("args_10485760", |p| p.calls_per_s * 10.0), 0.7);
    line(
        "10 MiB arguments: MiB/s ≥ 0.7 × floor",
        o,
        f,
        r,
        ok,
        " MiB/s",
    );
    let first: Get = Box::new(|r: &Rep| {
        let t = r.timing.as_ref()?;
        Some(span_ms(t.query_ns, t.first_message_ns)? - r.bare_cli_ms?)
    });
    let o = med(sdk, &first);
    line(
        "query() → first message, beyond the CLI's own start < 5 ms",
        o,
        None,
        None,
        o.map(|o| o.median < 5.0),
        " ms",
    );
    Some(s)
}

fn main() {
    let args = parse_args();
    let machine = machine();
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut errors: Vec<String> = Vec::new();
    let (table, results) = if args.subjects.is_empty() {
        (None, Vec::new())
    } else {
        let (t, r) = sdk_bench(&args, dir.path(), &mut errors);
        (Some(t), r)
    };
    let clients = client_bench(&args, &mut errors);
    if let Some(t) = &table {
        t.print();
    }
    let target_table = targets(&args.subjects, &results);
    if let Some(t) = &target_table {
        println!("\n{t}");
    }
    if let Some(t) = &clients {
        t.print();
    }
    for e in &errors {
        println!("error: {}", e.lines().next().unwrap_or(""));
    }
    if let Some(png) = &args.plot
        && !args.subjects.is_empty()
    {
        match plot(png, &args.subjects, &results) {
            Ok(()) => eprintln!("wrote {}", png.display()),
            Err(e) => {
                eprintln!("cannot draw {}: {e}", png.display());
                errors.push(format!("plot: {e}"));
            }
        }
    }

    if let Some(out) = &args.out {
        let doc = document(
            &args,
            &machine,
            table.as_ref(),
            target_table.as_deref(),
            clients.as_ref(),
            &errors,
        );
        if let Err(e) = std::fs::write(out, doc) {
            eprintln!("cannot write {}: {e}", out.display());
            std::process::exit(1);
        }
        eprintln!("wrote {}", out.display());
    }
}

fn document(
    args: &Args,
    machine: &[(String, String)],
    table: Option<&Table>,
    targets: Option<&str>,
    clients: Option<&Table>,
    errors: &[String],
) -> String {
    let p = &args.params;
    let n = |k: &str, d: u64| p.get(k).and_then(Value::as_u64).unwrap_or(d);
    let mut doc = String::from(
        "# Performance\n\n\
         Generated by `scripts/bench` (do not edit by hand; rerun it — the notes at the end come \
         from `bench/performance-notes.md`). How fast an SDK answers the CLI's in-process MCP \
         `tools/call` requests — ours, the official Python and TypeScript SDKs — next to the \
         **echo floor**: a single-threaded loop that parses each request with `serde_json`, builds \
         the reply and writes it, the least any SDK must do over the same pipes. Then our MCP \
         client next to the Python `mcp` client and `rmcp`.\n\n\
         ## Method: the SDK benchmark\n\n\
         * The load generator is the testkit's fake CLI (`fake-claude`, scenario `bench`). It \
         performs the real CLI's handshake (live, or from the TS SDK's `sdkMcpServerManifests`, \
         docs/protocol.md §5.13), then writes `tools/call` requests in the real CLI's shape \
         and times each round trip from just before its write to the moment the matching \
         `control_response` line has been read. Every answer is checked (success, `jsonrpc`, id, \
         not `isError`, size).\n\
         * Subjects of kind `sdk` are programs that define an in-process server `bench` with one \
         tool `add` and run `query()` with the fake CLI as their CLI path; each spawns it exactly \
         as it would the real one (SDK process → CLI process): `rust-sdk` \
         (`crates/claude-agent/examples/bench_sdk.rs`), `python-sdk` (`bench/python_sdk.py`, \
         `claude-agent-sdk` from PyPI, which declares the server in `--mcp-config`), `ts-sdk` \
         (`bench/ts_sdk.mjs`, `@anthropic-ai/claude-agent-sdk` from npm, which declares it in \
         `initialize.sdkMcpServers` and skips the handshake with a manifest). The SDKs run with \
         their defaults (Python's 1 MiB line limit included: a failure is a result). \
         **echo-floor**: `echo-responder`, spawned *by* the fake CLI over pipes.\n\
         * Phases: ",
    );
    let max_ms = n("phase_max_ms", 0);
    doc += &format!(
        "{} warm-up calls (not reported); {} serial calls; {} calls with {} in flight; then \
         1 KiB / 100 KiB / 1 MiB / 10 MiB results, then arguments of those sizes, serially \
         ({} MiB of payload per size, 5 to 2 000 calls){}. A phase the subject cannot finish \
         (it died, it timed out) ends its run: that phase and the later ones show `failed`.\n",
        n("warmup", 1000),
        n("serial", 20_000),
        n("pipelined", 50_000),
        n("window", 64),
        n("payload_budget_bytes", 64 << 20) >> 20,
        if max_ms > 0 {
            format!(
                "; a phase stops sending after {} s, so a slow subject makes fewer calls (row \
                 `serial: calls made`)",
                max_ms / 1000
            )
        } else {
            String::new()
        }
    );
    doc += "* CPU per call: the subject's CPU time (sum of its threads' `schedstat`) over the \
            phase, divided by the calls. Peak RSS: the subject's `VmHWM` (the SDK process, \
            not the CLI).\n\
            * Time to the first message: each SDK subject notes the wall clock when it calls \
            `query()` and when the first message comes out of it; the fake CLI notes when its \
            `main()` starts and when it writes that first message (`system/init`, right after \
            the handshake and the user message). *Beyond the CLI's own start* subtracts the \
            wall time of a bare `fake-claude --version` (spawn, run, exit; median of 5, measured \
            next to each run): what remains is the SDK's own cost.\n\
            * Each cell: median over the repetitions (min–max in parentheses). Repetitions \
            interleave the subjects. The machine is shared, so absolute numbers move; compare \
            columns of one run.\n\n";
    doc += "## Machine\n\n";
    for (k, v) in machine {
        doc += &format!("* {k}: {v}\n");
    }
    for (k, v) in &args.versions {
        doc += &format!("* {k}: {v}\n");
    }
    doc += &format!("* repetitions: {}\n\n", args.reps);
    if let Some(t) = table {
        doc += "## Results: the SDK benchmark\n\n";
        if let Some(png) = &args.plot {
            let name = png
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            doc += &format!("![throughput and p99 per SDK]({name})\n\n");
        }
        doc += &t.markdown();
    }
    if let Some(t) = targets {
        doc += "\n### Targets (issue 7)\n\n";
        doc += t;
    }
    if let Some(t) = clients {
        doc += &format!(
            "\n## Results: the client benchmark\n\n\
             `call_tool(\"add\", {{\"a\":1,\"b\":2}})` round trips per second against our demo \
             calculator server, by our client (`crates/claude-agent-mcp/examples/bench_client.rs`), \
             the Python `mcp` client (`bench/mcp_client.py`) and an `rmcp` client \
             (`bench/rmcp-client`). Each measurement runs for {} s after a warm-up; the stdio \
             server is spawned by each client (`{}`), the HTTP server is started once (`{}`). \
             The last columns: our calls/s divided by theirs.\n\n",
            args.client_seconds,
            args.stdio_server.join(" "),
            args.http_server
                .as_ref()
                .map(|c| c.join(" "))
                .unwrap_or_default(),
        );
        doc += &t.markdown();
    }
    if !errors.is_empty() {
        doc += "\n## Failed runs\n\n";
        for e in errors {
            let first = e.lines().next().unwrap_or("");
            let cut: String = first.chars().take(400).collect();
            doc += &format!("* {cut}\n");
        }
    }
    doc += "\n## Subjects\n\n";
    for s in &args.subjects {
        doc += &format!("* `{}` ({}): `{}`\n", s.name, s.kind, s.cmd.join(" "));
    }
    for c in &args.clients {
        doc += &format!("* client `{}`: `{}`\n", c.name, c.cmd.join(" "));
    }
    if let Some(notes) = &args.notes
        && let Ok(text) = std::fs::read_to_string(notes)
    {
        doc += "\n";
        doc += &text;
    }
    doc
}
