//! The `bench` scenario: `tools/call` round trips at full speed.
//!
//! Phases: `warmup` calls (not reported); `serial` calls one at a time;
//! `pipelined` calls with `window` (64) in flight; then for each size in
//! `payload_sizes` (1 KiB, 100 KiB, 1 MiB, 10 MiB) `result_<size>` (the tool
//! is asked for a result of that size, `reply_bytes`), and then for each size
//! `args_<size>` (the arguments carry a `pad` string of that size), serially.
//! `payload_kinds` (`["result"]`, `["args"]`) keeps only those payload phases.
//!
//! A phase stops sending after `phase_max_ms` (default: no limit), so that a
//! slow subject gets fewer calls rather than a run of hours; the report has
//! the calls actually made.
//!
//! Each round trip is timed from just before the request is written to the
//! moment the line with the matching `control_response` has been read, and
//! every answer is checked (success, `jsonrpc`, id, not `isError`, result
//! size). The tool called gets `{"a", "b"}` plus `pad`/`reply_bytes` and must
//! answer with a text block of at least `reply_bytes` bytes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use claude_code_agent_fake_cli::report::{BenchReport, PhaseReport, Stats};
use serde::Deserialize;
use serde_json::Value;

use super::peer::{Peer, Pumped, write_request_id};
use super::procfs::{cpu_us, status_kb};
use super::{param_ms, param_u64};

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow)]
    mcp_response: Reply<'a>,
}

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<u64>,
    #[serde(borrow, default)]
    result: Option<CallResult<'a>>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default)]
    content: Vec<Block<'a>>,
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// What the phases share.
struct Setup {
    server_json: String,
    tool_json: String,
    server: usize,
    peer_pid: i32,
    timeout: Duration,
    max_time: Duration,
}

/// Runs the benchmark against `peer` (whose process is `peer_pid`) and
/// returns the report. With `out`, the report is also written there after
/// every phase, so that a run cut short (the SDK died and took the fake CLI
/// with it) still tells what was measured. A phase that cannot finish (the
/// SDK closed the pipe, a timeout) ends the run: the remaining phases are
/// listed in `failures` as not run.
pub fn run(
    peer: &mut Peer,
    peer_pid: i32,
    first_message_ns: u64,
    out: Option<&Path>,
) -> io::Result<BenchReport> {
    let mut report = BenchReport {
        peer_pid,
        cli_main_ns: super::MAIN_NS.get().copied().unwrap_or(0),
        first_message_ns,
        ..BenchReport::default()
    };
    let save = |report: &BenchReport| -> io::Result<()> {
        if let Some(path) = out {
            // Written whole, then renamed: a reader never sees half a report.
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, serde_json::to_vec_pretty(report)?)?;
            std::fs::rename(&tmp, path)?;
        }
        Ok(())
    };
    let Some((server, tool)) = peer.target() else {
        report
            .failures
            .push("no in-process server with a tool to call".into());
        return Ok(report);
    };
    let p = peer.params.clone();
    let setup = Setup {
        server_json: serde_json::to_string(&peer.servers[server].name)?,
        tool_json: serde_json::to_string(&tool)?,
        server,
        peer_pid,
        timeout: param_ms(&p, "timeout_ms", 120_000),
        max_time: param_ms(&p, "phase_max_ms", 24 * 3600 * 1000),
    };

    // (name, calls, window, arguments size, result size), in order.
    let mut plan: Vec<(String, u64, u64, u64, u64)> = Vec::new();
    let warmup = param_u64(&p, "warmup", 1000);
    let serial = param_u64(&p, "serial", 20_000);
    let window = param_u64(&p, "window", 64).max(1);
    let pipelined = param_u64(&p, "pipelined", 50_000);
    for (name, calls, window) in [
        ("warmup", warmup, 1),
        ("serial", serial, 1),
        ("pipelined", pipelined, window),
    ] {
        if calls > 0 {
            plan.push((name.into(), calls, window, 0, 0));
        }
    }
    let sizes: Vec<u64> = match p.get("payload_sizes").and_then(Value::as_array) {
        Some(a) => a.iter().filter_map(Value::as_u64).collect(),
        None => vec![1 << 10, 100 << 10, 1 << 20, 10 << 20],
    };
    let budget = param_u64(&p, "payload_budget_bytes", 64 << 20);
    let calls_for = |size: u64| (budget / size.max(1)).clamp(5, 2000);
    // Big results first, then big arguments: an SDK that cannot read big
    // lines (Python's 1 MiB limit) fails at the first big argument, and its
    // results of every size are measured by then.
    // `payload_kinds` narrows the payload phases (for profiling one of them).
    let kind = |k: &str| match p.get("payload_kinds").and_then(Value::as_array) {
        Some(kinds) => kinds.iter().any(|v| v.as_str() == Some(k)),
        None => true,
    };
    if kind("result") {
        for &size in &sizes {
            plan.push((format!("result_{size}"), calls_for(size), 1, 0, size));
        }
    }
    if kind("args") {
        for &size in &sizes {
            plan.push((format!("args_{size}"), calls_for(size), 1, size, 0));
        }
    }

    let mut stopped = false;
    for (name, calls, window, arg_bytes, result_bytes) in plan {
        if stopped {
            report.failures.push(format!("{name}: not run"));
            continue;
        }
        let small = |i: u64| format!("{{\"a\":{i},\"b\":2}}");
        let result_args = |i: u64| format!("{{\"a\":{i},\"b\":2,\"reply_bytes\":{result_bytes}}}");
        let pad = |_: u64| {
            format!(
                "{{\"a\":1,\"b\":2,\"pad\":\"{}\"}}",
                "x".repeat(arg_bytes as usize)
            )
        };
        let args: &dyn Fn(u64) -> String = if arg_bytes > 0 {
            &pad
        } else if result_bytes > 0 {
            &result_args
        } else {
            &small
        };
        let ph = phase(
            peer,
            &setup,
            &name,
            calls,
            window,
            args,
            arg_bytes,
            result_bytes,
        )?;
        stopped = ph.failure.is_some();
        if name == "pipelined" || (name == "serial" && pipelined == 0) {
            report.peer_hwm_kb_after_calls = ph.peer_hwm_kb;
        }
        if name != "warmup" {
            report.phases.push(ph);
        }
        save(&report)?;
    }
    report.peer_hwm_kb_end = status_kb(peer_pid, "VmHWM").unwrap_or(0);
    report.self_hwm_kb = status_kb(std::process::id() as i32, "VmHWM").unwrap_or(0);
    for ph in &report.phases {
        if ph.errors > 0 {
            report
                .failures
                .push(format!("{}: {} bad answers", ph.name, ph.errors));
        }
    }
    report.failures.append(&mut peer.failures);
    report.complete = !stopped;
    save(&report)?;
    Ok(report)
}

/// One phase: `calls` calls, `window` in flight.
#[allow(clippy::too_many_arguments)]
fn phase(
    peer: &mut Peer,
    setup: &Setup,
    name: &str,
    calls: u64,
    window: u64,
    args: &dyn Fn(u64) -> String,
    arg_bytes: u64,
    result_bytes: u64,
) -> io::Result<PhaseReport> {
    let mut lat: Vec<u64> = Vec::with_capacity(calls as usize);
    let mut pending: HashMap<u64, (Instant, u64)> = HashMap::with_capacity(2 * window as usize);
    let mut errors: u64 = 0;
    let mut first_error: Option<String> = None;
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut sent: u64 = 0;
    let self_pid = std::process::id() as i32;
    let peer_cpu0 = cpu_us(setup.peer_pid).unwrap_or(0.0);
    let self_cpu0 = cpu_us(self_pid).unwrap_or(0.0);
    let started = Instant::now();
    let deadline = started + setup.timeout;
    // A slow subject stops early: no new calls after `max_time`.
    let cap = started + setup.max_time;
    let mut calls = calls;
    let mut args_cache: Option<String> = None;
    let mut failure: Option<String> = None;

    while (lat.len() as u64) + errors < calls {
        while sent < calls && (pending.len() as u64) < window {
            if sent > 0 && Instant::now() >= cap {
                calls = sent;
                break;
            }
            // The padded arguments are the same for every call: build once.
            let a = if arg_bytes > 0 {
                args_cache.get_or_insert_with(|| args(sent)).as_str()
            } else {
                args_cache.insert(args(sent)).as_str()
            };
            let seq = peer.next_seq();
            let server = setup.server;
            let id = {
                let s = &mut peer.servers[server];
                let id = s.next_id;
                s.next_id += 1;
                id
            };
            buf.clear();
            buf.extend_from_slice(b"{\"type\":\"control_request\",\"request_id\":\"");
            write_request_id(&mut buf, seq);
            write!(
                buf,
                "\",\"request\":{{\"subtype\":\"mcp_message\",\"server_name\":{},\"message\":{{\"method\":\"tools/call\",\"params\":{{\"name\":{},\"arguments\":",
                setup.server_json, setup.tool_json
            )?;
            buf.extend_from_slice(a.as_bytes());
            writeln!(
                buf,
                ",\"_meta\":{{\"claudecode/toolUseId\":\"toolu_bench{seq:016x}\",\"progressToken\":{id}}}}},\"jsonrpc\":\"2.0\",\"id\":{id}}}}}}}"
            )?;
            let at = Instant::now();
            if let Err(e) = peer.out.raw(&buf) {
                failure = Some(format!("{name}: writing a request failed: {e}"));
                break;
            }
            pending.insert(seq, (at, id));
            sent += 1;
        }
        // Stopped sending (failure, or the time cap) with nothing to wait for.
        if failure.is_some() || pending.is_empty() {
            break;
        }
        if buf.capacity() > (1 << 20) {
            buf = Vec::with_capacity(1024);
        }
        let pumped = peer.pump(Some(deadline), &mut |r| {
            let Some(seq) = Peer::seq_of(r.request_id) else {
                return;
            };
            let Some((at, id)) = pending.remove(&seq) else {
                return;
            };
            match check(&r, id, result_bytes) {
                Ok(()) => lat.push(r.at.duration_since(at).as_nanos() as u64),
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert(e);
                }
            }
        })?;
        match pumped {
            Pumped::Line => {}
            Pumped::Eof => {
                failure = Some(format!(
                    "{name}: the SDK closed the pipe with {} of {calls} calls unanswered",
                    calls - lat.len() as u64
                ));
                break;
            }
            Pumped::Timeout => {
                failure = Some(format!(
                    "{name}: timed out with {} calls pending",
                    pending.len()
                ));
                break;
            }
        }
    }
    if let Some(f) = &failure {
        peer.fail(f.clone());
    }
    let wall = started.elapsed().as_secs_f64();
    if let Some(e) = first_error {
        peer.fail(format!("{name}: {errors} bad answers, the first: {e}"));
    }
    let peer_cpu = cpu_us(setup.peer_pid).unwrap_or(0.0) - peer_cpu0;
    let self_cpu = cpu_us(self_pid).unwrap_or(0.0) - self_cpu0;
    let done = lat.len() as u64;
    let stats = Stats::from_ns(&mut lat);
    Ok(PhaseReport {
        name: name.to_owned(),
        calls: done,
        window,
        arg_bytes,
        result_bytes,
        wall_s: wall,
        calls_per_s: if wall > 0.0 { done as f64 / wall } else { 0.0 },
        p50_us: stats.p50_us,
        p99_us: stats.p99_us,
        max_us: stats.max_us,
        mean_us: stats.mean_us,
        errors,
        peer_cpu_us: peer_cpu,
        peer_cpu_us_per_call: peer_cpu / done.max(1) as f64,
        self_cpu_us_per_call: self_cpu / done.max(1) as f64,
        peer_hwm_kb: status_kb(setup.peer_pid, "VmHWM").unwrap_or(0),
        failure,
    })
}

fn check(r: &super::peer::ResponseRef<'_>, id: u64, result_bytes: u64) -> Result<(), String> {
    if !r.success {
        return Err(format!("control error: {:?}", r.error));
    }
    let payload = r.payload.ok_or("no payload")?;
    let p: Payload<'_> = serde_json::from_str(payload.get()).map_err(|e| e.to_string())?;
    let reply = p.mcp_response;
    if reply.jsonrpc.as_deref() != Some("2.0") {
        return Err("reply without \"jsonrpc\":\"2.0\"".into());
    }
    if reply.id != Some(id) {
        return Err(format!("reply id {:?}, expected {id}", reply.id));
    }
    let result = reply.result.ok_or("no result")?;
    if result.is_error == Some(true) {
        let text = result
            .content
            .first()
            .and_then(|b| b.text.as_deref())
            .unwrap_or("");
        return Err(format!("isError result: {}", &text[..text.len().min(200)]));
    }
    let len: usize = result
        .content
        .iter()
        .filter_map(|b| b.text.as_ref().map(|t| t.len()))
        .sum();
    if (len as u64) < result_bytes {
        return Err(format!("result of {len} bytes, expected {result_bytes}"));
    }
    Ok(())
}
