//! A stdio MCP client that floods a server with tool calls and does not
//! read its answers, then reads them all: what the server holds meanwhile
//! (its RSS) is measured from outside. Linux only (`/proc/<pid>/status`).
//!
//! ```text
//! flood serve [--chars C] [--budget BYTES]
//! flood stdio [--calls N] [--chars C] [--budget BYTES] [--cut]
//! ```
//!
//! `serve` is the server: `serve_stdio_with` (a byte budget of `--budget`,
//! default the crate's), one tool `big` that answers `--chars` characters
//! of text (default 1,000,000), under the default result cap, or cut by it
//! with `--cut` (the tool then answers 5 × `--chars` and the cap is
//! `--chars`).
//!
//! `stdio` spawns `flood serve` with the same options, initializes, writes
//! `--calls` calls (default 1000) from a thread without reading, waits until
//! the server's RSS has stopped growing, then reads every answer and checks
//! each call is answered exactly once, in full (or cut). It prints one JSON
//! line: `{"calls", "chars", "budget", "baseline_rss", "peak_rss",
//! "held_rss", "seconds"}` (bytes; `held_rss` is the peak minus the
//! baseline taken after `initialize`), and fails if an answer is missing,
//! doubled or wrong.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use claude_code_agent_mcp::server::{SERVE_MAX_HELD_BYTES, ServeOptions, serve_stdio_with};
use claude_code_agent_mcp::{Server, Tool};
use serde_json::{Value, json};

struct Args {
    calls: usize,
    chars: usize,
    budget: usize,
    cut: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Args {
    let mut out = Args {
        calls: 1000,
        chars: 1_000_000,
        budget: SERVE_MAX_HELD_BYTES,
        cut: false,
    };
    while let Some(flag) = args.next() {
        let mut number = || -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{flag} wants a number"))
        };
        match flag.as_str() {
            "--calls" => out.calls = number(),
            "--chars" => out.chars = number(),
            "--budget" => out.budget = number(),
            "--cut" => out.cut = true,
            other => panic!("unknown argument {other}"),
        }
    }
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("serve") => serve(parse(args)),
        Some("stdio") => flood(parse(args)),
        _ => {
            eprintln!("usage: flood serve|stdio [--calls N] [--chars C] [--budget BYTES] [--cut]");
            std::process::exit(2);
        }
    }
}

fn serve(args: Args) {
    let answer = if args.cut { 5 * args.chars } else { args.chars };
    let mut server = Server::builder("flood", "1").tool(
        Tool::new("big", "a large text", move |_: Value| async move {
            "x".repeat(answer)
        })
        .input_schema(json!({"type": "object"})),
    );
    if args.cut {
        server = server.max_result_chars(args.chars);
    } else {
        server = server.max_result_chars(args.chars.max(1 << 20));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let options = ServeOptions::new().max_held_bytes(args.budget);
    runtime
        .block_on(serve_stdio_with(server.build(), options))
        .unwrap();
}

/// VmRSS of `pid`, in bytes.
fn rss(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn flood(args: Args) {
    let start = Instant::now();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args([
        "serve",
        "--chars",
        &args.chars.to_string(),
        "--budget",
        &args.budget.to_string(),
    ]);
    if args.cut {
        command.arg("--cut");
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"flood","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":0"#), "initialize: {line}");
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let baseline = rss(pid);

    // Write every call from a thread; nobody reads yet.
    let written = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (written, done, calls) = (Arc::clone(&written), Arc::clone(&done), args.calls);
        std::thread::spawn(move || {
            for id in 1..=calls {
                let call = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"big","arguments":{{}}}}}}"#
                );
                if writeln!(input, "{call}").is_err() {
                    break;
                }
                written.store(id, Ordering::Relaxed);
            }
            done.store(true, Ordering::Relaxed);
            input
        })
    };
    // Until the server has stopped growing: no new call taken and RSS
    // within 1 MiB for 500 ms.
    let mut peak = baseline;
    let (mut last_rss, mut last_written, mut since) = (baseline, 0, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = rss(pid);
        peak = peak.max(now);
        let w = written.load(Ordering::Relaxed);
        if now > last_rss + (1 << 20) || w != last_written {
            (last_rss, last_written, since) = (now, w, Instant::now());
        } else if since.elapsed() > Duration::from_millis(500) {
            break;
        }
    }

    // Now read: every call answered once, in full or cut.
    let sampler = {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicUsize::new(peak));
        let (s, p) = (Arc::clone(&stop), Arc::clone(&peak));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        (stop, peak, thread)
    };
    let mut seen = vec![false; args.calls + 1];
    for _ in 0..args.calls {
        line.clear();
        let n = output.read_line(&mut line).unwrap();
        assert!(n > 0, "the server ended before answering every call");
        let reply: Value = serde_json::from_str(&line).unwrap();
        let id = reply["id"].as_u64().expect("an answer with an id") as usize;
        assert!(
            !std::mem::replace(&mut seen[id], true),
            "call {id} answered twice"
        );
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("call {id}: {}", &line[..line.len().min(300)]));
        if args.cut {
            assert!(
                text.starts_with(&"x".repeat(args.chars)) && text.contains("[Output truncated"),
                "call {id} is cut"
            );
        } else {
            assert_eq!(text.len(), args.chars, "call {id} in full");
        }
    }
    assert!(seen[1..].iter().all(|s| *s), "every call answered");
    let input = writer.join().unwrap();
    assert!(done.load(Ordering::Relaxed));
    drop(input);
    let status = child.wait().unwrap();
    let (stop, peak, thread) = sampler;
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    let peak = peak.load(Ordering::Relaxed);
    assert!(status.success(), "the server failed: {status}");
    println!(
        "{}",
        json!({
            "calls": args.calls,
            "chars": args.chars,
            "cut": args.cut,
            "budget": args.budget,
            "baseline_rss": baseline,
            "peak_rss": peak,
            "held_rss": peak.saturating_sub(baseline),
            "seconds": start.elapsed().as_secs_f64(),
        })
    );
}
