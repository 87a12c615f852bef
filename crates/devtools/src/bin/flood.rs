//! A stdio MCP client that floods a server with tool calls and does not
//! read its answers, then reads them all: what the server holds meanwhile
//! (its RSS) is measured from outside. Linux only (`/proc/<pid>/status`).
//!
//! ```text
//! flood serve [--chars C] [--budget BYTES]
//! flood stdio [--calls N] [--chars C] [--budget BYTES] [--cut]
//! flood serve-http [--chars C] [--budget BYTES]
//! flood http [--calls N] [--chars C] [--budget BYTES]
//! flood client [--calls N] [--chars C] [--budget BYTES]
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
//!
//! `serve-http` and `http` are the same over Streamable HTTP: the server
//! serves one session with a byte budget of `--budget`
//! ([`StreamableHttpConfig::max_held_bytes`]) and prints its address;
//! `http` opens the session, then sends each call on a connection of its
//! own (its receive buffer made small, so the operating system holds
//! little for it) and reads none of the SSE responses until the server's
//! RSS has stopped growing; then it reads them all, each in a thread.
//!
//! `client` turns it round: our [`McpClient`] over stdio, with a byte
//! budget of `--budget` ([`ClientOptions::max_held_bytes`]), holds a
//! notification stream it does not read while `flood serve`'s tool `noisy`
//! sends `--calls` log notifications of `--chars` characters each. The call
//! must complete (the client never waits for a stream); the client's own
//! RSS is measured; then the stream is read: what it got plus what it
//! missed is at most what was sent, and something was missed.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, McpClient, StdioOptions, StdioTransport,
};
use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
use claude_code_agent_mcp::server::{SERVE_MAX_HELD_BYTES, ServeOptions, serve_stdio_with};
use claude_code_agent_mcp::types::LogLevel;
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use serde_json::{Value, json};
use std::io::Read;
use std::net::TcpStream;

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
        Some("serve-http") => serve_http(parse(args)),
        Some("http") => flood_http(parse(args)),
        Some("client") => flood_client(parse(args)),
        _ => {
            eprintln!(
                "usage: flood serve|stdio|serve-http|http|client [--calls N] [--chars C] [--budget BYTES] [--cut]"
            );
            std::process::exit(2);
        }
    }
}

fn server(args: &Args) -> Server {
    let answer = if args.cut { 5 * args.chars } else { args.chars };
    let chars = args.chars;
    let mut server = Server::builder("flood", "1")
        .tool(
            Tool::new("big", "a large text", move |_: Value| async move {
                "x".repeat(answer)
            })
            .input_schema(json!({"type": "object"})),
        )
        .tool(
            Tool::new(
                "noisy",
                "sends `count` log notifications of the flood's size",
                move |args: Value, ctx: ToolContext| async move {
                    let count = args["count"].as_u64().unwrap_or(0);
                    let text = "n".repeat(chars);
                    let mut sent = 0u64;
                    for _ in 0..count {
                        sent += u64::from(ctx.log(LogLevel::Error, text.as_str()));
                        tokio::task::yield_now().await;
                    }
                    sent.to_string()
                },
            )
            .input_schema(json!({"type": "object"})),
        );
    if args.cut {
        server = server.max_result_chars(args.chars);
    } else {
        server = server.max_result_chars(args.chars.max(1 << 20));
    }
    server.build()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn serve(args: Args) {
    let options = ServeOptions::new().max_held_bytes(args.budget);
    runtime()
        .block_on(serve_stdio_with(server(&args), options))
        .unwrap();
}

fn serve_http(args: Args) {
    let config = StreamableHttpConfig::default().max_held_bytes(args.budget);
    let service = StreamableHttpService::new(server(&args), config);
    runtime().block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", listener.local_addr().unwrap());
        service.serve(listener).await.unwrap();
    });
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
    let sampler = Sampler::start(pid, peak);
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
    let peak = sampler.stop();
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

/// Sends one POST with `body` on a new connection (`Connection: close`).
fn post(addr: &str, session: Option<&str>, body: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-06-18\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Connection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

/// A response read to its end: the headers (lower-cased) and the body
/// (de-chunked).
fn response(mut stream: TcpStream) -> (String, Vec<u8>) {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response with headers");
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let mut body = raw[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        let (mut out, mut rest) = (Vec::new(), &body[..]);
        loop {
            let line = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = std::str::from_utf8(&rest[..line]).unwrap();
            let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[line + 2..line + 2 + size]);
            rest = &rest[line + 2 + size + 2..];
        }
        body = out;
    }
    (head, body)
}

/// Makes the connection's receive buffer small: what the operating
/// system takes for a client that does not read stays small.
fn small_receive_buffer(stream: &TcpStream) {
    socket2::SockRef::from(stream)
        .set_recv_buffer_size(128 * 1024)
        .expect("SO_RCVBUF");
}

/// Waits until the server has stopped growing (RSS within 1 MiB for
/// 500 ms); the peak seen.
fn settle(pid: u32, baseline: usize) -> usize {
    let mut peak = baseline;
    let (mut last, mut since) = (baseline, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = rss(pid);
        peak = peak.max(now);
        if now > last + (1 << 20) {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > Duration::from_millis(500) {
            return peak;
        }
    }
}

fn flood_http(args: Args) {
    let start = Instant::now();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "serve-http",
            "--chars",
            &args.chars.to_string(),
            "--budget",
            &args.budget.to_string(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut addr = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut addr)
        .unwrap();
    let addr = addr.trim().to_owned();
    let (head, body) = response(post(
        &addr,
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#,
    ));
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .unwrap_or_else(|| panic!("no session: {head} {}", String::from_utf8_lossy(&body)))
        .trim()
        .to_owned();
    response(post(
        &addr,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ));
    std::thread::sleep(Duration::from_millis(200));
    let baseline = rss(pid);

    // Every call on a connection of its own; nobody reads yet.
    let streams: Vec<(usize, TcpStream)> = (1..=args.calls)
        .map(|id| {
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"big","arguments":{{}}}}}}"#
            );
            let stream = post(&addr, Some(&session), &call);
            small_receive_buffer(&stream);
            (id, stream)
        })
        .collect();
    let peak = settle(pid, baseline);

    // Now read them all at once (a call the budget holds back is answered
    // only once others are read).
    let sampler = Sampler::start(pid, peak);
    let readers: Vec<_> = streams
        .into_iter()
        .map(|(id, stream)| {
            let chars = args.chars;
            std::thread::spawn(move || {
                let _ = socket2::SockRef::from(&stream).set_recv_buffer_size(1 << 20);
                let (head, body) = response(stream);
                assert!(head.starts_with("http/1.1 200"), "call {id}: {head}");
                let text = String::from_utf8(body).unwrap();
                let answers: Vec<Value> = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                    .filter(|m| m.get("id").is_some())
                    .collect();
                assert_eq!(answers.len(), 1, "call {id} answered once");
                assert_eq!(answers[0]["id"], id);
                let got = answers[0]["result"]["content"][0]["text"]
                    .as_str()
                    .map(str::len);
                assert_eq!(got, Some(chars), "call {id} in full");
            })
        })
        .collect();
    for reader in readers {
        reader.join().expect("every call answered once, in full");
    }
    let peak = sampler.stop();
    child.kill().unwrap();
    child.wait().unwrap();
    println!(
        "{}",
        json!({
            "transport": "http",
            "calls": args.calls,
            "chars": args.chars,
            "budget": args.budget,
            "baseline_rss": baseline,
            "peak_rss": peak,
            "held_rss": peak.saturating_sub(baseline),
            "seconds": start.elapsed().as_secs_f64(),
        })
    );
}

/// VmRSS of this process, in bytes.
fn own_rss() -> usize {
    rss(std::process::id())
}

/// A thread that samples a process's RSS every 20 ms and keeps the peak.
struct Sampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Sampler {
    /// Starts sampling `pid`, with `peak` the highest RSS seen so far.
    fn start(pid: u32, peak: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicUsize::new(peak));
        let (s, p) = (Arc::clone(&stop), Arc::clone(&peak));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Self { stop, peak, thread }
    }

    /// Stops sampling; the peak RSS seen.
    fn stop(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
        self.peak.load(Ordering::Relaxed)
    }
}

fn flood_client(args: Args) {
    use futures::StreamExt;
    let start = Instant::now();
    let exe = std::env::current_exe().unwrap();
    let chars = args.chars.to_string();
    runtime().block_on(async move {
        let transport = StdioTransport::spawn(StdioOptions::new(&exe).args([
            "serve",
            "--chars",
            chars.as_str(),
        ]))
        .unwrap();
        let options = ClientOptions::new("flood", "1")
            .max_held_bytes(args.budget)
            .handshake(HandshakeMode::Initialize);
        let client = McpClient::connect(transport, options).await.unwrap();
        let mut notes = client.notifications();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let baseline = own_rss();
        let sampler = Sampler::start(std::process::id(), baseline);
        // Nobody reads `notes` while the tool sends them all.
        let result = tokio::time::timeout(
            Duration::from_secs(120),
            client.call_tool("noisy", json!({"count": args.calls})),
        )
        .await
        .expect("the call completes though no stream is read")
        .unwrap();
        let sent: u64 = result.text_content().parse().unwrap();
        let peak = sampler.stop();
        client.close().await.unwrap();
        let mut received = 0u64;
        while let Some(note) = notes.next().await {
            if note.method() == "notifications/message" {
                received += 1;
            }
        }
        let missed = notes.missed();
        assert!(
            received + missed <= sent,
            "{received} read + {missed} missed > {sent} sent"
        );
        assert!(
            missed > 0,
            "the budget made the stream miss some: {received} read, {sent} sent"
        );
        println!(
            "{}",
            json!({
                "transport": "client",
                "calls": args.calls,
                "chars": args.chars,
                "budget": args.budget,
                "sent": sent,
                "received": received,
                "missed": missed,
                "baseline_rss": baseline,
                "peak_rss": peak,
                "held_rss": peak.saturating_sub(baseline),
                "seconds": start.elapsed().as_secs_f64(),
            })
        );
    });
}
