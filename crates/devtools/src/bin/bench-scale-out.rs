//! The scale-out benchmark: replicas of the calculator (`replica`) behind
//! HAProxy (the configuration of `docs/deploy/haproxy.cfg`), with and
//! without the Redis event store, driven by `http-load` through the
//! balancer. Prints a Markdown section (stdout, or `--out FILE`);
//! `scripts/bench-scale-out` builds what it needs and runs it.
//!
//! ```text
//! bench-scale-out --replica PATH --http-load PATH --haproxy-config FILE \
//!   [--haproxy PATH] [--redis-server PATH] [--redis-cli PATH] [--reps 5] [--seconds 3] \
//!   [--sessions 100] [--conns 64] [--out FILE.md]
//! ```
//!
//! Setups: one replica reached directly (no balancer, the reference), then
//! through HAProxy 1 and 3 replicas, each without a store and with Redis.
//! Workloads: `add` (one message per call, its answer) and `slow` with 10
//! steps and no wait (a progress notification and a log message per step,
//! then the answer: 21 messages per call, each an event the store keeps). For each setup, workload and repetition, fresh
//! processes: Redis (empty), the replicas, HAProxy; `http-load` opens the
//! sessions, then calls round-robin across them for `--seconds` after a
//! warm-up, and reads the CPU time of every server process (all threads)
//! over the measured calls. Repetitions interleave the setups.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "bench-driver/machine.rs"]
#[allow(dead_code)]
mod machine;
#[path = "bench-driver/stats.rs"]
#[allow(dead_code)]
mod stats;
#[path = "bench-driver/table.rs"]
#[allow(dead_code)]
mod table;

use machine::load_average;
use stats::{Summary, cell, fmt_num, summarize};
use table::Table;

struct Args {
    replica: PathBuf,
    http_load: PathBuf,
    haproxy_config: PathBuf,
    haproxy: PathBuf,
    redis_server: PathBuf,
    redis_cli: PathBuf,
    reps: usize,
    seconds: f64,
    sessions: usize,
    conns: usize,
    out: Option<PathBuf>,
}

fn usage() -> ! {
    eprintln!(
        "usage: bench-scale-out --replica PATH --http-load PATH --haproxy-config FILE \
         [--haproxy PATH] [--redis-server PATH] [--redis-cli PATH] [--reps N] [--seconds S] \
         [--sessions N] \
         [--conns N] [--out FILE.md]"
    );
    std::process::exit(2)
}

fn args() -> Args {
    let mut a = Args {
        replica: PathBuf::new(),
        http_load: PathBuf::new(),
        haproxy_config: PathBuf::new(),
        haproxy: "haproxy".into(),
        redis_server: "redis-server".into(),
        redis_cli: "redis-cli".into(),
        reps: 5,
        seconds: 3.0,
        sessions: 100,
        conns: 64,
        out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().unwrap_or_else(|| usage());
        let n = || v.parse::<f64>().unwrap_or_else(|_| usage());
        match flag.as_str() {
            "--replica" => a.replica = v.into(),
            "--http-load" => a.http_load = v.into(),
            "--haproxy-config" => a.haproxy_config = v.into(),
            "--haproxy" => a.haproxy = v.into(),
            "--redis-server" => a.redis_server = v.into(),
            "--redis-cli" => a.redis_cli = v.into(),
            "--reps" => a.reps = n() as usize,
            "--seconds" => a.seconds = n(),
            "--sessions" => a.sessions = n() as usize,
            "--conns" => a.conns = n() as usize,
            "--out" => a.out = Some(v.into()),
            _ => usage(),
        }
    }
    if a.replica.as_os_str().is_empty()
        || a.http_load.as_os_str().is_empty()
        || a.haproxy_config.as_os_str().is_empty()
    {
        usage();
    }
    a
}

/// One deployment measured.
#[derive(Clone, Copy)]
struct Setup {
    balanced: bool,
    replicas: usize,
    redis: bool,
}

impl Setup {
    fn label(&self) -> String {
        let front = if self.balanced {
            format!(
                "HAProxy, {} replica{}",
                self.replicas,
                if self.replicas == 1 { "" } else { "s" }
            )
        } else {
            "direct, 1 replica".to_owned()
        };
        let store = if self.redis {
            "Redis store"
        } else {
            "no store"
        };
        format!("{front}, {store}")
    }
}

const SETUPS: [Setup; 5] = [
    Setup {
        balanced: false,
        replicas: 1,
        redis: false,
    },
    Setup {
        balanced: true,
        replicas: 1,
        redis: false,
    },
    Setup {
        balanced: true,
        replicas: 1,
        redis: true,
    },
    Setup {
        balanced: true,
        replicas: 3,
        redis: false,
    },
    Setup {
        balanced: true,
        replicas: 3,
        redis: true,
    },
];

/// The workloads: a label and `http-load`'s arguments for the tool.
const WORKLOADS: [(&str, &[&str]); 2] = [
    ("add", &[]),
    (
        "slow, 10 steps",
        &["--tool", "slow", "--args", r#"{"steps":10,"ms":0}"#],
    ),
];

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn wait_for_port(port: u16, what: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err(format!("{what} did not listen on {port}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The processes of one measurement, killed when dropped.
#[derive(Default)]
struct Running {
    children: Vec<(String, Child)>,
    scratch: Option<PathBuf>,
}

impl Running {
    fn spawn(&mut self, label: &str, cmd: &mut Command) -> Result<u32, String> {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting {label}: {e}"))?;
        let pid = child.id();
        self.children.push((label.to_owned(), child));
        Ok(pid)
    }

    fn cpu_pids(&self) -> Vec<String> {
        self.children
            .iter()
            .flat_map(|(label, c)| ["--cpu-pid".to_owned(), format!("{label}={}", c.id())])
            .collect()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The HAProxy configuration of the docs, its ports replaced (as the
/// scale-out tests do).
fn haproxy_config(a: &Args, front: u16, backs: &[u16], dir: &Path) -> Result<PathBuf, String> {
    let mut text = std::fs::read_to_string(&a.haproxy_config)
        .map_err(|e| format!("{}: {e}", a.haproxy_config.display()))?;
    text = text.replace("127.0.0.1:8080", &format!("127.0.0.1:{front}"));
    let mut servers = String::new();
    for (i, port) in backs.iter().enumerate() {
        servers += &format!("    server r{} 127.0.0.1:{port}\n", i + 1);
    }
    // The replicas measured, in place of the file's three.
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("server r"))
        .collect();
    let text = kept.join("\n") + "\n" + &servers;
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path)
}

/// One measurement: `http-load`'s JSON.
fn measure(a: &Args, setup: Setup, workload: &[&str]) -> Result<Value, String> {
    let mut running = Running::default();
    let dir = std::env::temp_dir().join(format!("bench-scale-out-{}", free_port()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    running.scratch = Some(dir.clone());
    let redis = if setup.redis {
        let port = free_port();
        running.spawn(
            "redis",
            Command::new(&a.redis_server)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"]),
        )?;
        wait_for_port(port, "redis-server")?;
        Some(port)
    } else {
        None
    };
    let mut backs = Vec::new();
    for i in 0..setup.replicas {
        let port = free_port();
        let mut cmd = Command::new(&a.replica);
        cmd.args([
            "--port",
            &port.to_string(),
            "--name",
            &format!("r{}", i + 1),
        ]);
        if let Some(redis) = redis {
            cmd.args(["--redis", &format!("redis://127.0.0.1:{redis}")]);
        }
        running.spawn("replicas", &mut cmd)?;
        wait_for_port(port, "a replica")?;
        backs.push(port);
    }
    let url_port = if setup.balanced {
        let front = free_port();
        let config = haproxy_config(a, front, &backs, &dir)?;
        running.spawn(
            "haproxy",
            Command::new(&a.haproxy).arg("-db").arg("-f").arg(config),
        )?;
        wait_for_port(front, "haproxy")?;
        // Its health checks see every replica up (`rise 2`, 200 ms apart).
        std::thread::sleep(Duration::from_millis(600));
        front
    } else {
        backs[0]
    };
    let out = Command::new(&a.http_load)
        .args(["--url", &format!("http://127.0.0.1:{url_port}/mcp")])
        .args(["--sessions", &a.sessions.to_string()])
        .args(["--conns", &a.conns.to_string()])
        .args(["--seconds", &a.seconds.to_string()])
        .args(workload)
        .args(running.cpu_pids())
        .output()
        .map_err(|e| format!("http-load: {e}"))?;
    let mut v: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "http-load printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if let Some(e) = v.get("error") {
        return Err(format!("http-load: {e}"));
    }
    if let Some(port) = redis {
        // What Redis holds once the calls are done: bounded by the
        // sessions, not by the calls.
        let info = |args: &[&str]| {
            Command::new(&a.redis_cli)
                .args(["-p", &port.to_string()])
                .args(args)
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default()
        };
        let used = info(&["info", "memory"])
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|n| n.trim().parse::<f64>().ok());
        let keys = info(&["dbsize"]).trim().parse::<f64>().ok();
        v["redis_mb"] = used.map(|b| b / 1048576.0).into();
        v["redis_keys"] = keys.into();
    }
    Ok(v)
}

fn version(cmd: &Path, arg: &str) -> String {
    Command::new(cmd)
        .arg(arg)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("?")
                .trim()
                .to_owned()
        })
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let a = args();
    let load_start = load_average();
    let started = std::time::SystemTime::now();
    // results[workload][setup] = one JSON per repetition
    let mut results: Vec<Vec<Vec<Value>>> = vec![vec![Vec::new(); SETUPS.len()]; WORKLOADS.len()];
    let mut errors = Vec::new();
    for rep in 0..a.reps {
        for (w, (wname, wargs)) in WORKLOADS.iter().enumerate() {
            for (s, setup) in SETUPS.iter().enumerate() {
                eprintln!(
                    "bench-scale-out: rep {}/{}: {wname}: {}",
                    rep + 1,
                    a.reps,
                    setup.label()
                );
                match measure(&a, *setup, wargs) {
                    Ok(v) => results[w][s].push(v),
                    Err(e) => {
                        eprintln!("  failed: {e}");
                        errors.push(format!("{wname}, {}: {e}", setup.label()));
                    }
                }
            }
        }
    }
    let load_end = load_average();
    let field = |runs: &[Value], f: &dyn Fn(&Value) -> Option<f64>| -> Option<Summary> {
        summarize(runs.iter().filter_map(f).collect())
    };
    let cpu = |v: &Value, label: &str| v["cpu_us_per_call"][label].as_f64();
    let cpu_all = |v: &Value| {
        v["cpu_us_per_call"]
            .as_object()
            .map(|m| m.values().filter_map(Value::as_f64).sum::<f64>())
    };
    let mut table = Table {
        header: [
            "workload",
            "setup",
            "calls/s",
            "p50 ms",
            "p99 ms",
            "messages per call",
            "CPU µs per call: replicas",
            "HAProxy",
            "Redis",
            "all",
            "Redis after: keys, MB",
        ]
        .map(String::from)
        .to_vec(),
        lines: Vec::new(),
    };
    for (w, (wname, _)) in WORKLOADS.iter().enumerate() {
        for (s, setup) in SETUPS.iter().enumerate() {
            let runs = &results[w][s];
            let ms = |key: &'static str| move |v: &Value| v[key].as_f64().map(|us| us / 1e3);
            let opt =
                |present: bool, x: Option<Summary>| if present { cell(x) } else { "—".into() };
            table.lines.push(vec![
                (*wname).to_owned(),
                setup.label(),
                cell(field(runs, &|v| v["calls_per_s"].as_f64())),
                cell(field(runs, &ms("p50_us"))),
                cell(field(runs, &ms("p99_us"))),
                cell(field(runs, &|v| v["messages_per_call"].as_f64())),
                cell(field(runs, &|v| cpu(v, "replicas"))),
                opt(setup.balanced, field(runs, &|v| cpu(v, "haproxy"))),
                opt(setup.redis, field(runs, &|v| cpu(v, "redis"))),
                cell(field(runs, &cpu_all)),
                if setup.redis {
                    format!(
                        "{}, {}",
                        cell(field(runs, &|v| v["redis_keys"].as_f64())),
                        cell(field(runs, &|v| v["redis_mb"].as_f64()))
                    )
                } else {
                    "—".into()
                },
            ]);
        }
    }
    // The store's cost per kept message: the CPU a call costs more with
    // Redis than without (all processes), over the messages of a call;
    // from the medians of the `slow` workload.
    let median = |w: usize, s: usize, f: &dyn Fn(&Value) -> Option<f64>| {
        field(&results[w][s], f).map(|x| x.median)
    };
    let mut per_event = Vec::new();
    for (off, on) in [(1, 2), (3, 4)] {
        let w = 1;
        if let (Some(a_off), Some(a_on), Some(msgs), Some(p_off), Some(p_on)) = (
            median(w, off, &cpu_all),
            median(w, on, &cpu_all),
            median(w, on, &|v| v["messages_per_call"].as_f64()),
            median(w, off, &|v| v["p50_us"].as_f64()),
            median(w, on, &|v| v["p50_us"].as_f64()),
        ) {
            per_event.push(format!(
                "* {} replica{}: {} µs of CPU per message kept ({} µs per call over {} \
                 messages), p50 {} ms → {} ms",
                SETUPS[on].replicas,
                if SETUPS[on].replicas == 1 { "" } else { "s" },
                fmt_num((a_on - a_off) / msgs),
                fmt_num(a_on - a_off),
                fmt_num(msgs),
                fmt_num(p_off / 1e3),
                fmt_num(p_on / 1e3),
            ));
        }
    }
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let elapsed = started.elapsed().map(|d| d.as_secs()).unwrap_or(0);
    let mut doc = String::new();
    doc += "## Results: replicas behind HAProxy\n\n";
    doc += &format!(
        "Generated by `scripts/bench-scale-out` ({} repetitions, {} s of calls each, {} \
         sessions over {} connections; {date}, {elapsed} s in all; load average {load_start} \
         at start, {load_end} at end; {}; {}). ",
        a.reps,
        a.seconds,
        a.sessions,
        a.conns,
        version(&a.haproxy, "-v"),
        version(&a.redis_server, "--version"),
    );
    doc += "Our calculator (`replica` of `crates/devtools`, release build) behind HAProxy \
            with `docs/deploy/haproxy.cfg` (its ports and server lines replaced), without an \
            event store and with `RedisEventStore` on a local `redis-server` (empty, no \
            persistence); one replica reached directly is the reference. `http-load` opens \
            the sessions through the balancer, then calls round-robin across them, one call \
            in flight per connection, for the time above after a 0.25 s warm-up. Workloads: \
            `add` (its answer: one SSE event) and `slow` with 10 steps and no wait (a \
            progress notification and a log message per step, then the answer: 21 events \
            per call). With Redis every event is kept before it goes out: \
            a stream's opening is one round trip the call waits for, its events and its end \
            are batched by the session's writer. CPU is the time of every server process \
            (all threads) over the measured calls, per call. Each cell: the median over the \
            repetitions (min–max). *Redis after*: its keys and `used_memory` once \
            the calls are done (what it keeps is bounded by the sessions: a record each and \
            the streams not yet read to the end or among the last two, not by the calls). \
            **Everything shares the machine's 2 cores** — replicas, \
            HAProxy, Redis and the load generator — so 3 replicas cannot beat 1 here: the \
            rows show what balancing and the store cost, not how far replicas scale on \
            separate machines.\n\n";
    doc += &table.markdown();
    if !per_event.is_empty() {
        doc += "\nThe store's cost, from the `slow` rows (CPU with Redis less CPU without, \
                all processes, over the events of a call):\n\n";
        doc += &per_event.join("\n");
        doc += "\n";
    }
    if !errors.is_empty() {
        doc += "\nFailed measurements:\n\n";
        for e in &errors {
            doc += &format!("* {e}\n");
        }
    }
    table.print();
    for line in &per_event {
        println!("{line}");
    }
    match &a.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &doc) {
                eprintln!("cannot write {}: {e}", path.display());
                std::process::exit(1);
            }
            eprintln!("wrote {}", path.display());
        }
        None => print!("{doc}"),
    }
}
