//! The performance targets (issue 14, and issue 7's that still stand),
//! judged on this run's figures only: the SDK against the echo floor, our
//! client against rmcp, our HTTP server against the others.

use claude_code_agent_fake_cli::report::PhaseReport;

use crate::args::Args;
use crate::clients::ClientBench;
use crate::run::Rep;
use crate::scale::Scale;
use crate::stats::{Summary, cell, fmt_num, span_ms, summarize};

/// One row: what, ours, the reference, ours ÷ reference, reached.
struct Rows(String);

impl Rows {
    fn new(ours: &str) -> Self {
        Self(format!(
            "| target | {ours} | reference | ratio | reached |\n|---|---|---|---|---|\n"
        ))
    }

    fn line(
        &mut self,
        what: &str,
        ours: String,
        reference: String,
        ratio: String,
        ok: Option<bool>,
    ) {
        let ok = match ok {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        self.0 += &format!("| {what} | {ours} | {reference} | {ratio} | {ok} |\n");
    }
}

fn with_unit(v: Option<Summary>, unit: &str) -> String {
    let c = cell(v);
    if v.is_some() { format!("{c}{unit}") } else { c }
}

fn plain(v: Option<f64>, unit: &str) -> String {
    v.map_or("—".into(), |v| format!("{}{unit}", fmt_num(v)))
}

/// The targets table, or `None` when nothing it judges was measured.
pub fn targets(
    args: &Args,
    results: &[Vec<Rep>],
    clients: Option<&ClientBench>,
    scale: Option<&Scale>,
) -> Option<String> {
    let mut rows = Rows::new("ours");
    let mut any = sdk_targets(args, results, &mut rows);
    if let Some(c) = clients {
        any |= client_targets(args, c, &mut rows);
    }
    let mut behind = Vec::new();
    if let Some(s) = scale {
        any |= http_targets(args, s, &mut rows, &mut behind);
    }
    if !any {
        return None;
    }
    let mut s = rows.0;
    if !behind.is_empty() {
        s += "\nWhere our HTTP server is behind another in this run:\n\n";
        for b in behind {
            s += &format!("* {b}\n");
        }
    }
    Some(s)
}

/// Issue 14 item 1 (and issue 7's payload and start-up targets): the first
/// SDK subject against the floor. Ratios are taken per repetition (the two
/// ran one after the other, under the same load) and their median judged.
fn sdk_targets(args: &Args, results: &[Vec<Rep>], rows: &mut Rows) -> bool {
    let subjects = &args.subjects;
    let (Some(floor), Some(sdk)) = (
        subjects.iter().position(|s| s.kind == "responder"),
        subjects.iter().position(|s| s.kind == "sdk"),
    ) else {
        return false;
    };
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
    // A row against the floor: `judge` takes the median ratio, or ours.
    let mut row = |what: &str, get: Get, unit: &str, judge: &dyn Fn(f64, f64) -> bool| {
        let (o, f, r) = (med(sdk, &get), med(floor, &get), ratio(&get));
        let ok = o.zip(r).map(|(o, r)| judge(o.median, r.median));
        let r = r.map_or("—".into(), |_| format!("{}×", cell(r)));
        rows.line(
            &format!("SDK: {what}"),
            with_unit(o, unit),
            format!("floor {}", with_unit(f, unit)),
            r,
            ok,
        );
    };
    let calls = |p: &PhaseReport| p.calls_per_s;
    let cpu = |p: &PhaseReport| p.peer_cpu_us_per_call;
    row(
        "serial calls/s ≥ 0.9 × floor",
        ph("serial", calls),
        " /s",
        &|_, r| r >= 0.9,
    );
    row(
        "64 in flight calls/s ≥ 0.8 × floor",
        ph("pipelined", calls),
        " /s",
        &|_, r| r >= 0.8,
    );
    row(
        "serial CPU per call ≤ 1.5 × floor",
        ph("serial", cpu),
        " µs",
        &|_, r| r <= 1.5,
    );
    row(
        "64 in flight CPU per call ≤ 1.5 × floor",
        ph("pipelined", cpu),
        " µs",
        &|_, r| r <= 1.5,
    );
    row(
        "serial p99 < 60 µs",
        ph("serial", |p| p.p99_us),
        " µs",
        &|o, _| o < 60.0,
    );
    let rss = ph("serial", |p| p.peer_hwm_kb as f64 * 1024.0 / 1e6);
    row(
        "peak RSS < 8 MB (after the warm-up + serial calls)",
        rss,
        " MB",
        &|o, _| o < 8.0,
    );
    let mib = |name: &'static str| ph(name, |p| p.calls_per_s * 10.0);
    row(
        "10 MiB results: MiB/s ≥ 0.7 × floor",
        mib("result_10485760"),
        " MiB/s",
        &|_, r| r >= 0.7,
    );
    row(
        "10 MiB arguments: MiB/s ≥ 0.7 × floor",
        mib("args_10485760"),
        " MiB/s",
        &|_, r| r >= 0.7,
    );
    let first: Get = Box::new(|r: &Rep| {
        let t = r.timing.as_ref()?;
        Some(span_ms(t.query_ns, t.first_message_ns)? - r.bare_cli_ms?)
    });
    let o = med(sdk, &first);
    rows.line(
        "SDK: query() → first message, beyond the CLI's own start < 5 ms",
        with_unit(o, " ms"),
        "—".into(),
        "—".into(),
        o.map(|o| o.median < 5.0),
    );
    true
}

/// Issue 14 items 2 and 3: the in-process client's serial rate, and our
/// client at least as fast as rmcp's on every transport and concurrency.
fn client_targets(args: &Args, c: &ClientBench, rows: &mut Rows) -> bool {
    let ours = 0;
    let rmcp = args.clients.iter().position(|c| c.name == "rmcp");
    let mut any = false;
    if let Some(v) = c.medians.get(&("in-process".to_owned(), 1)) {
        let o = v[ours];
        rows.line(
            "client: in-process serial calls/s ≥ 1,000,000",
            plain(o, " /s"),
            "—".into(),
            "—".into(),
            o.map(|o| o >= 1e6),
        );
        any = true;
    }
    let Some(rmcp) = rmcp else { return any };
    for ((transport, in_flight), v) in &c.medians {
        let (Some(o), Some(r)) = (v[ours], v[rmcp]) else {
            continue;
        };
        let how = if *in_flight > 1 {
            format!("{in_flight} in flight")
        } else {
            "serial".into()
        };
        rows.line(
            &format!("client: {transport} {how} calls/s ≥ rmcp"),
            plain(Some(o), " /s"),
            format!("rmcp {}", plain(Some(r), " /s")),
            format!("{:.2}×", o / r),
            Some(o >= r),
        );
        any = true;
    }
    any
}

/// Issue 14 item 4: the session open rate at 10,000 sessions, the memory of
/// a used session, and ahead of every other server at every point.
fn http_targets(args: &Args, s: &Scale, rows: &mut Rows, behind: &mut Vec<String>) -> bool {
    let names: Vec<String> = args.scale_servers.iter().map(|s| s.name.clone()).collect();
    let n = 10_000;
    for (key, what) in [("idle_open_rate", "idle"), ("busy_open_rate", "busy")] {
        if args.scale_sessions.contains(&n) {
            let o = s.ours(n, key);
            rows.line(
                &format!("HTTP: sessions opened/s beside 10,000 {what} ≥ 7,000"),
                plain(o, " /s"),
                "—".into(),
                "—".into(),
                o.map(|o| o >= 7000.0),
            );
        }
    }
    let [_, sessions, calls] = s.memory_shape;
    let kb = s
        .memory
        .first()
        .and_then(Option::as_ref)
        .and_then(|v| v.get("marginal_bytes_per_session")?.as_f64())
        .map(|b| b / 1e3);
    rows.line(
        &format!(
            "HTTP: ≤ 4 KB per session after {calls} calls each (growth over {sessions} sessions)"
        ),
        plain(kb, " KB"),
        "—".into(),
        "—".into(),
        kb.map(|kb| kb <= 4.0),
    );
    *behind = s.behind(&names);
    let cells = s.points();
    rows.line(
        "HTTP: ahead of every other server at every point of the scale table",
        format!("behind at {} of {cells} points", behind.len()),
        names[1..].join(", "),
        "—".into(),
        Some(behind.is_empty()),
    );
    true
}
