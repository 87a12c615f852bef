//! The performance targets, judged on the first SDK subject against the floor.

use claude_agent_fake_cli::report::PhaseReport;

use crate::args::Subject;
use crate::run::Rep;
use crate::stats::{Summary, cell, span_ms, summarize};

/// The targets of issue 7, checked on the first SDK subject against the
/// floor. Ratios are taken per repetition (the two ran one after the other,
/// under the same machine load) and their median is what is judged.
pub fn targets(subjects: &[Subject], results: &[Vec<Rep>]) -> Option<String> {
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
