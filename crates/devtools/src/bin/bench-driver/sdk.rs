//! The SDK benchmark: the subjects run `reps` times, interleaved, and the
//! table of their metrics next to the echo floor.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use claude_code_agent_fake_cli::report::PhaseReport;
use serde_json::Value;

use crate::args::Args;
use crate::run::{Rep, bare_cli_start_ms, run_once};
use crate::stats::{Summary, cell, size_label, span_ms, summarize};
use crate::table::Table;

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

/// The SDK benchmark: every subject, `reps` times, interleaved.
pub fn sdk_bench(args: &Args, dir: &Path, errors: &mut Vec<String>) -> (Table, Vec<Vec<Rep>>) {
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
