//! The `bench` scenario: `tools/call` round trips at full speed.
//!
//! Phases: `warmup` calls (not reported); `serial` calls one at a time;
//! `pipelined` calls with `window` (64) in flight; then for each size in
//! `payload_sizes` (1 KiB, 100 KiB, 1 MiB, 10 MiB) `result_<size>` (the tool
//! is asked for a result of that size, `reply_bytes`) and `args_<size>`
//! (the arguments carry a `pad` string of that size), serially.
//!
//! Each round trip is timed from just before the request is written to the
//! moment the line with the matching `control_response` has been read, and
//! every answer is checked (success, `jsonrpc`, id, not `isError`, result
//! size). The tool called gets `{"a", "b"}` plus `pad`/`reply_bytes` and must
//! answer with a text block of at least `reply_bytes` bytes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use super::peer::{Peer, Pumped, write_request_id};
use super::report::{BenchReport, PhaseReport, Stats, cpu_us, status_kb};
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
}

/// Runs the benchmark against `peer` (whose process is `peer_pid`) and
/// returns the report (also written to `params.report` by the caller).
pub fn run(peer: &mut Peer, peer_pid: i32) -> io::Result<BenchReport> {
    let mut report = BenchReport {
        peer_pid,
        ..BenchReport::default()
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
    };
    let small = |i: u64| format!("{{\"a\":{i},\"b\":2}}");

    let warmup = param_u64(&p, "warmup", 1000);
    if warmup > 0 {
        phase(peer, &setup, "warmup", warmup, 1, &small, 0, 0)?;
    }
    let serial = param_u64(&p, "serial", 20_000);
    let window = param_u64(&p, "window", 64).max(1);
    let pipelined = param_u64(&p, "pipelined", 50_000);
    if serial > 0 {
        report
            .phases
            .push(phase(peer, &setup, "serial", serial, 1, &small, 0, 0)?);
    }
    if pipelined > 0 {
        report.phases.push(phase(
            peer,
            &setup,
            "pipelined",
            pipelined,
            window,
            &small,
            0,
            0,
        )?);
    }
    report.peer_hwm_kb_after_calls = status_kb(peer_pid, "VmHWM").unwrap_or(0);

    let sizes: Vec<u64> = match p.get("payload_sizes").and_then(Value::as_array) {
        Some(a) => a.iter().filter_map(Value::as_u64).collect(),
        None => vec![1 << 10, 100 << 10, 1 << 20, 10 << 20],
    };
    let budget = param_u64(&p, "payload_budget_bytes", 64 << 20);
    for size in sizes {
        let calls = (budget / size.max(1)).clamp(5, 2000);
        let result_args = |i: u64| format!("{{\"a\":{i},\"b\":2,\"reply_bytes\":{size}}}");
        report.phases.push(phase(
            peer,
            &setup,
            &format!("result_{size}"),
            calls,
            1,
            &result_args,
            0,
            size,
        )?);
        let pad = format!(
            "{{\"a\":1,\"b\":2,\"pad\":\"{}\"}}",
            "x".repeat(size as usize)
        );
        let pad_args = |_: u64| pad.clone();
        report.phases.push(phase(
            peer,
            &setup,
            &format!("args_{size}"),
            calls,
            1,
            &pad_args,
            size,
            0,
        )?);
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
    let mut args_cache: Option<String> = None;

    while (lat.len() as u64) + errors < calls {
        while sent < calls && (pending.len() as u64) < window {
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
            peer.out.raw(&buf)?;
            pending.insert(seq, (at, id));
            sent += 1;
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
                peer.fail(format!(
                    "{name}: the SDK closed the pipe with {} calls pending",
                    calls - lat.len() as u64
                ));
                break;
            }
            Pumped::Timeout => {
                peer.fail(format!(
                    "{name}: timed out with {} calls pending",
                    pending.len()
                ));
                break;
            }
        }
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
