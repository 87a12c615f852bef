//! One repetition of one subject: the fake CLI (or the SDK program that
//! spawns it) run to the end, and its report read back.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use claude_code_agent_fake_cli::report::BenchReport;
use claude_code_agent_fake_cli::{PARAMS_ENV, RESPONDER_ENV, SCENARIO_ENV};
use serde_json::json;

use crate::args::{Args, Subject};

/// What the subject itself reports (`BENCH_SUBJECT_REPORT`): when it called
/// `query()` and when it got the first message, ns since the Unix epoch.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct SubjectTiming {
    #[serde(default)]
    pub query_ns: u64,
    #[serde(default)]
    pub first_message_ns: u64,
}

/// One repetition of one subject.
pub struct Rep {
    pub report: BenchReport,
    pub timing: Option<SubjectTiming>,
    /// Why the run did not complete (the report then has the phases done).
    pub failure: Option<String>,
    /// The fake CLI's own start (`--version`), ms, measured next to the run.
    pub bare_cli_ms: Option<f64>,
    /// Which repetition (0-based).
    pub rep: usize,
}

/// Runs one repetition of one subject. `Err` when nothing was measured.
pub fn run_once(args: &Args, subject: &Subject, dir: &Path, rep: usize) -> Result<Rep, String> {
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
pub fn bare_cli_start_ms(fake_cli: &Path) -> Option<f64> {
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
