//! A raw Streamable HTTP load generator, none of the servers it measures:
//! HTTP/1.1 keep-alive connections over tokio TCP (`TCP_NODELAY`), one
//! request in flight per connection, on one thread (pin it with `taskset`).
//!
//! ```text
//! http-load --url http://127.0.0.1:PORT/mcp --pid PID --sessions 1000 \
//!   [--conns 64] [--seconds 2] [--calls-per-session N] [--extra 1000] [--open-max-s 10] \
//!   [--tool NAME --args JSON] [--cpu-pid LABEL=PID …]
//! ```
//!
//! 1. opens `--sessions` sessions (`initialize`, then
//!    `notifications/initialized`), `--conns` at a time: the fill rate;
//! 2. opens `--extra` more beside them while they are idle: the idle open
//!    rate at that many live sessions;
//! 3. drives `tools/call add {a, b}` round-robin across the sessions, for
//!    `--seconds` (after a quarter-second warm-up) or exactly
//!    `--calls-per-session` calls each: calls/s, p50, p99, and the messages
//!    per call (SSE events with data, or 1 for a JSON body). `--tool` and
//!    `--args` call another tool instead, with a progress token; `--cpu-pid`
//!    reads the CPU time of those processes (all their threads) over the
//!    measured calls, summed per label;
//! 4. opens `--extra` more beside the now busy sessions: the busy open rate.
//!
//! Each open phase stops after `--open-max-s` (its rate counts what it
//! opened). The server's `VmRSS` (after each phase) and `VmHWM` are read
//! from `/proc/PID/status`. Prints one JSON object on stdout.
//!
//! With `--marginal W` (and `--calls-per-session K`) it measures instead
//! what one more used session costs: it opens W sessions and makes K calls
//! on each (which also warms the server: connection buffers, runtime,
//! allocator), reads the RSS, then opens `--sessions` more, makes K calls on
//! each of those, and reads it again; the growth over the new sessions is
//! `marginal_bytes_per_session`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

const VERSION: &str = "2025-11-25";

struct Opts {
    host: String,
    path: String,
    pid: Option<u32>,
    sessions: usize,
    conns: usize,
    seconds: f64,
    calls_per_session: Option<usize>,
    marginal: Option<usize>,
    extra: usize,
    open_max: Duration,
    /// The tool called and its arguments (`None`: `add {a: i, b: 1}`).
    tool: Option<(String, String)>,
    /// Processes whose CPU time is read over the calls, by label.
    cpu_pids: Vec<(String, u32)>,
}

fn usage() -> ! {
    eprintln!(
        "usage: http-load --url http://HOST:PORT/PATH [--pid PID] [--sessions N] [--conns C] \
         [--seconds S | --calls-per-session K] [--extra M] [--open-max-s S] \
         [--marginal W --calls-per-session K] [--tool NAME --args JSON] [--cpu-pid LABEL=PID …]"
    );
    std::process::exit(2)
}

fn opts() -> Opts {
    let mut o = Opts {
        host: String::new(),
        path: String::new(),
        pid: None,
        sessions: 1,
        conns: 64,
        seconds: 2.0,
        calls_per_session: None,
        marginal: None,
        extra: 0,
        open_max: Duration::from_secs(10),
        tool: None,
        cpu_pids: Vec::new(),
    };
    let mut arguments = String::from("{}");
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let v = it.next().unwrap_or_else(|| usage());
        let num = |v: &str| -> f64 { v.parse().unwrap_or_else(|_| usage()) };
        match a.as_str() {
            "--url" => {
                let rest = v.strip_prefix("http://").unwrap_or_else(|| usage());
                let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
                o.host = host.to_owned();
                o.path = format!("/{path}");
            }
            "--pid" => o.pid = Some(num(&v) as u32),
            "--sessions" => o.sessions = (num(&v) as usize).max(1),
            "--conns" => o.conns = (num(&v) as usize).max(1),
            "--seconds" => o.seconds = num(&v),
            "--calls-per-session" => o.calls_per_session = Some(num(&v) as usize),
            "--marginal" => o.marginal = Some(num(&v) as usize),
            "--extra" => o.extra = num(&v) as usize,
            "--open-max-s" => o.open_max = Duration::from_secs_f64(num(&v)),
            "--tool" => o.tool = Some((v, String::new())),
            "--args" => arguments = v,
            "--cpu-pid" => {
                let (label, pid) = v.split_once('=').unwrap_or_else(|| usage());
                o.cpu_pids.push((label.to_owned(), num(pid) as u32));
            }
            _ => usage(),
        }
    }
    if o.host.is_empty() {
        usage();
    }
    if let Some((_, args)) = &mut o.tool {
        *args = arguments;
    }
    o
}

/// One keep-alive connection.
struct Conn {
    io: BufReader<TcpStream>,
    host: String,
    path: String,
    line: String,
    out: Vec<u8>,
}

/// A response: status, the session id header, the body.
struct Reply {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

impl Conn {
    async fn open(host: &str, path: &str) -> std::io::Result<Self> {
        let tcp = TcpStream::connect(host).await?;
        tcp.set_nodelay(true)?;
        Ok(Self {
            io: BufReader::with_capacity(16 * 1024, tcp),
            host: host.to_owned(),
            path: path.to_owned(),
            line: String::new(),
            out: Vec::with_capacity(1024),
        })
    }

    async fn post(&mut self, session: Option<(&str, &str)>, body: &str) -> Result<Reply, String> {
        use std::io::Write;
        self.out.clear();
        let _ = write!(
            self.out,
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.host,
            body.len()
        );
        if let Some((id, version)) = session {
            let _ = write!(
                self.out,
                "Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: {version}\r\n"
            );
        }
        self.out.extend_from_slice(b"\r\n");
        self.out.extend_from_slice(body.as_bytes());
        let e = |e: std::io::Error| e.to_string();
        self.io.get_mut().write_all(&self.out).await.map_err(e)?;
        self.read_reply().await
    }

    async fn read_line(&mut self) -> Result<&str, String> {
        self.line.clear();
        let n = self
            .io
            .read_line(&mut self.line)
            .await
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        Ok(self.line.trim_end())
    }

    async fn read_reply(&mut self) -> Result<Reply, String> {
        let status: u16 = self
            .read_line()
            .await?
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or("no status line")?;
        let (mut length, mut chunked, mut session) = (None, false, None);
        loop {
            let line = self.read_line().await?;
            if line.is_empty() {
                break;
            }
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            if k.eq_ignore_ascii_case("content-length") {
                length = v.parse::<usize>().ok();
            } else if k.eq_ignore_ascii_case("transfer-encoding") {
                chunked = v.eq_ignore_ascii_case("chunked");
            } else if k.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(v.to_owned());
            }
        }
        let mut body = Vec::new();
        let e = |e: std::io::Error| e.to_string();
        if chunked {
            loop {
                let size = usize::from_str_radix(
                    self.read_line()
                        .await?
                        .split(';')
                        .next()
                        .unwrap_or("")
                        .trim(),
                    16,
                )
                .map_err(|_| "bad chunk size")?;
                if size == 0 {
                    while !self.read_line().await?.is_empty() {}
                    break;
                }
                let at = body.len();
                body.resize(at + size + 2, 0);
                self.io.read_exact(&mut body[at..]).await.map_err(e)?;
                body.truncate(at + size);
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            self.io.read_exact(&mut body).await.map_err(e)?;
        }
        Ok(Reply {
            status,
            session,
            body,
        })
    }
}

/// The JSON-RPC message of a body: JSON, or the last `data:` of an SSE one
/// that holds a JSON-RPC object.
fn message(body: &[u8]) -> Option<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Some(v);
    }
    let text = std::str::from_utf8(body).ok()?;
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|v| v.get("jsonrpc").is_some())
}

/// The JSON-RPC messages a body carries: 1 for JSON, the SSE events with
/// data otherwise.
fn messages_in(body: &[u8]) -> usize {
    if body.first() == Some(&b'{') {
        return 1;
    }
    occurrences(body, b"\ndata: {") + usize::from(body.starts_with(b"data: {"))
}

fn occurrences(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// CPU time (µs) of each label's processes, all threads (`schedstat`).
fn cpu_us(pids: &[(String, u32)]) -> Vec<(String, f64)> {
    let mut by_label: Vec<(String, f64)> = Vec::new();
    for (label, pid) in pids {
        let mut ns = 0u64;
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let stat =
                    std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
                ns += stat
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        match by_label.iter_mut().find(|(l, _)| l == label) {
            Some((_, us)) => *us += ns as f64 / 1e3,
            None => by_label.push((label.clone(), ns as f64 / 1e3)),
        }
    }
    by_label
}

/// Opens a session on `conn`: its id and protocol revision.
async fn open_session(conn: &mut Conn) -> Result<(String, String), String> {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":VERSION,"capabilities":{},
        "clientInfo":{"name":"http-load","version":"1"}}})
    .to_string();
    let reply = conn.post(None, &init).await?;
    if reply.status != 200 {
        return Err(format!("initialize: HTTP {}", reply.status));
    }
    let id = reply.session.ok_or("initialize: no Mcp-Session-Id")?;
    let version = message(&reply.body)
        .and_then(|m| {
            m.pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .ok_or("initialize: no result")?;
    let done = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let reply = conn.post(Some((&id, &version)), done).await?;
    if reply.status / 100 != 2 {
        return Err(format!("notifications/initialized: HTTP {}", reply.status));
    }
    Ok((id, version))
}

type Sessions = Arc<Mutex<Vec<(String, String)>>>;

/// Opens up to `n` sessions over `conns`, stopping at `max`: how many and
/// how long it took.
async fn open_phase(
    conns: &[Arc<Mutex<Conn>>],
    sessions: &Sessions,
    n: usize,
    max: Duration,
) -> Result<(usize, f64), String> {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for conn in conns {
        let (conn, next, sessions) = (Arc::clone(conn), Arc::clone(&next), Arc::clone(sessions));
        tasks.push(tokio::spawn(async move {
            let mut conn = conn.lock().await;
            let mut opened = 0;
            while next.fetch_add(1, Ordering::Relaxed) < n && start.elapsed() < max {
                let s = open_session(&mut conn).await?;
                sessions.lock().await.push(s);
                opened += 1;
            }
            Ok::<usize, String>(opened)
        }));
    }
    let mut opened = 0;
    for t in tasks {
        opened += t.await.map_err(|e| e.to_string())??;
    }
    Ok((opened, start.elapsed().as_secs_f64()))
}

/// What the measured calls of a call phase gave.
struct Calls {
    seconds: f64,
    /// Their latencies (µs).
    latencies: Vec<u32>,
    /// The JSON-RPC messages their responses carried.
    messages: usize,
    /// CPU time (µs) by label of `Opts::cpu_pids`, over the measured calls.
    cpu_us: Vec<(String, f64)>,
}

/// Calls the tool round-robin across `sessions`: until `until`, or `total`
/// calls. The calls made after `warmup`.
async fn call_phase(
    o: &Opts,
    conns: &[Arc<Mutex<Conn>>],
    sessions: Arc<Vec<(String, String)>>,
    total: Option<usize>,
    warmup: Duration,
    until: Duration,
) -> Result<Calls, String> {
    let next = Arc::new(AtomicUsize::new(0));
    let counting = Arc::new(AtomicBool::new(warmup.is_zero()));
    let start = Instant::now();
    let measured_from = Arc::new(std::sync::Mutex::new(start));
    let pids = Arc::new(o.cpu_pids.clone());
    let cpu_from = Arc::new(std::sync::Mutex::new(cpu_us(&pids)));
    let tool = Arc::new(o.tool.clone());
    let mut tasks = Vec::new();
    for conn in conns {
        let (conn, next, sessions) = (Arc::clone(conn), Arc::clone(&next), Arc::clone(&sessions));
        let (counting, measured_from) = (Arc::clone(&counting), Arc::clone(&measured_from));
        let (pids, cpu_from, tool) = (Arc::clone(&pids), Arc::clone(&cpu_from), Arc::clone(&tool));
        tasks.push(tokio::spawn(async move {
            let mut conn = conn.lock().await;
            let mut lat = Vec::with_capacity(1 << 16);
            let mut messages = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let elapsed = start.elapsed();
                if total.is_some_and(|t| i >= t) || (total.is_none() && elapsed >= until) {
                    break;
                }
                if !counting.load(Ordering::Relaxed) && elapsed >= warmup {
                    counting.store(true, Ordering::Relaxed);
                    *cpu_from.lock().unwrap() = cpu_us(&pids);
                    *measured_from.lock().unwrap() = Instant::now();
                }
                let (id, version) = &sessions[i % sessions.len()];
                let body = match &*tool {
                    None => format!(
                        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{i},"b":1}}}}}}"#
                    ),
                    Some((name, args)) => format!(
                        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{name}","arguments":{args},"_meta":{{"progressToken":{i}}}}}}}"#
                    ),
                };
                let t = Instant::now();
                let reply = conn.post(Some((id, version)), &body).await?;
                let us = t.elapsed().as_micros() as u32;
                let ok = reply.status == 200
                    && message(&reply.body).is_some_and(|m| {
                        m.get("result").is_some()
                            && m.pointer("/result/isError") != Some(&Value::Bool(true))
                    });
                if !ok {
                    return Err(format!(
                        "tools/call: HTTP {}: {}",
                        reply.status,
                        String::from_utf8_lossy(&reply.body)
                    ));
                }
                if counting.load(Ordering::Relaxed) {
                    lat.push(us);
                    messages += messages_in(&reply.body);
                }
            }
            Ok::<(Vec<u32>, usize), String>((lat, messages))
        }));
    }
    let mut latencies = Vec::new();
    let mut messages = 0;
    for t in tasks {
        let (lat, n) = t.await.map_err(|e| e.to_string())??;
        latencies.extend(lat);
        messages += n;
    }
    let seconds = measured_from.lock().unwrap().elapsed().as_secs_f64();
    let from = cpu_from.lock().unwrap().clone();
    let cpu_us = cpu_us(&pids)
        .into_iter()
        .map(|(label, us)| {
            let before = from
                .iter()
                .find(|(l, _)| *l == label)
                .map_or(0.0, |(_, b)| *b);
            (label, us - before)
        })
        .collect();
    Ok(Calls {
        seconds,
        latencies,
        messages,
        cpu_us,
    })
}

/// `VmRSS` and `VmHWM` of `pid`, KiB.
fn rss(pid: Option<u32>) -> (u64, u64) {
    let Some(text) = pid.and_then(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
    else {
        return (0, 0);
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// `--marginal`: the RSS growth per session over `o.sessions` used sessions
/// opened after `warm` used ones (see the module documentation).
async fn marginal(o: &Opts, conns: &[Arc<Mutex<Conn>>], warm: usize) -> Result<Value, String> {
    let k = o
        .calls_per_session
        .ok_or("--marginal needs --calls-per-session")?;
    let used = async |n: usize| -> Result<(usize, f64), String> {
        let sessions: Sessions = Arc::default();
        let (opened, _) = open_phase(&conns[..o.conns.min(n)], &sessions, n, o.open_max).await?;
        let live: Vec<(String, String)> = sessions.lock().await.clone();
        let calls = call_phase(
            o,
            conns,
            Arc::new(live),
            Some(k * opened),
            Duration::ZERO,
            Duration::MAX,
        )
        .await?;
        Ok((
            opened,
            calls.latencies.len() as f64 / calls.seconds.max(1e-9),
        ))
    };
    let (rss_start, _) = rss(o.pid);
    let (warm_opened, _) = used(warm).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_warm, _) = rss(o.pid);
    let (opened, calls_per_s) = used(o.sessions).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_end, hwm) = rss(o.pid);
    Ok(json!({
        "warm_sessions": warm_opened, "sessions": opened, "calls_per_session": k,
        "calls_per_s": calls_per_s,
        "rss_start_kb": rss_start, "rss_warm_kb": rss_warm, "rss_end_kb": rss_end, "hwm_kb": hwm,
        "marginal_bytes_per_session":
            (rss_end.saturating_sub(rss_warm) as f64 * 1024.0 / opened.max(1) as f64).round(),
    }))
}

async fn run(o: Opts) -> Result<Value, String> {
    let mut conns = Vec::new();
    for _ in 0..o.conns {
        let c = Conn::open(&o.host, &o.path)
            .await
            .map_err(|e| format!("connecting to {}: {e}", o.host))?;
        conns.push(Arc::new(Mutex::new(c)));
    }
    if let Some(warm) = o.marginal {
        return marginal(&o, &conns, warm).await;
    }
    let (rss_base, _) = rss(o.pid);
    let sessions: Sessions = Arc::default();
    let fill_conns = &conns[..o.conns.min(o.sessions)];
    let (opened, fill_s) = open_phase(fill_conns, &sessions, o.sessions, o.open_max).await?;
    // Let the server settle (allocator, lazily freed buffers) before reading.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_open, _) = rss(o.pid);
    let live: Vec<(String, String)> = sessions.lock().await.clone();
    let extra = Arc::new(Mutex::new(Vec::new()));
    let (idle_opened, idle_s) = open_phase(&conns, &extra, o.extra, o.open_max).await?;
    let (total, warmup, until) = match o.calls_per_session {
        Some(k) => (Some(k * live.len()), Duration::ZERO, Duration::MAX),
        None => (
            None,
            Duration::from_millis(250),
            Duration::from_secs_f64(0.25 + o.seconds),
        ),
    };
    let calls = call_phase(&o, &conns, Arc::new(live), total, warmup, until).await?;
    let (call_s, mut lat) = (calls.seconds, calls.latencies);
    lat.sort_unstable();
    let per_call = |x: f64| x / lat.len().max(1) as f64;
    let cpu: serde_json::Map<String, Value> = calls
        .cpu_us
        .iter()
        .map(|(label, us)| (label.clone(), json!(per_call(*us))))
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_calls, _) = rss(o.pid);
    let (busy_opened, busy_s) = open_phase(&conns, &extra, o.extra, o.open_max).await?;
    let (rss_end, hwm) = rss(o.pid);
    let rate = |n: usize, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
    let per =
        |kb: u64, n: usize| (kb.saturating_sub(rss_base) as f64 / n.max(1) as f64 * 1024.0).round();
    Ok(json!({
        "sessions": o.sessions, "opened": opened, "fill_seconds": fill_s,
        "fill_rate": rate(opened, fill_s),
        "idle_opened": idle_opened, "idle_open_rate": rate(idle_opened, idle_s),
        "busy_opened": busy_opened, "busy_open_rate": rate(busy_opened, busy_s),
        "calls": lat.len(), "call_seconds": call_s, "calls_per_s": rate(lat.len(), call_s),
        "p50_us": percentile(&lat, 0.50), "p99_us": percentile(&lat, 0.99),
        "messages_per_call": per_call(calls.messages as f64), "cpu_us_per_call": cpu,
        "rss_base_kb": rss_base, "rss_open_kb": rss_open, "rss_calls_kb": rss_calls,
        "rss_end_kb": rss_end, "hwm_kb": hwm,
        "idle_bytes_per_session": per(rss_open, opened),
        "used_bytes_per_session": per(rss_calls, opened + idle_opened),
    }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let o = opts();
    match run(o).await {
        Ok(v) => println!("{v}"),
        Err(e) => {
            println!("{}", json!({ "error": e }));
            std::process::exit(1);
        }
    }
}
