//! The client benchmark: each MCP client program against the stdio server
//! (which it spawns) and the HTTP server (started here, once).

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::args::Args;
use crate::stats::{Summary, cell, summarize};
use crate::table::Table;

/// One measurement a client program prints (one JSON object per line).
#[derive(Debug, Clone, serde::Deserialize)]
struct ClientLine {
    transport: String,
    #[serde(default = "one")]
    in_flight: u64,
    calls: u64,
    seconds: f64,
}

fn one() -> u64 {
    1
}

/// Starts the HTTP server command; returns it and the URL it printed on
/// stderr (`… http://127.0.0.1:PORT/mcp`).
fn start_http_server(cmd: &[String]) -> Result<(std::process::Child, String), String> {
    let mut command = Command::new(&cmd[0]);
    command.args(&cmd[1..]);
    spawn_for_url(command, cmd)
}

/// Spawns `command` (an HTTP server), reads the first `http://` URL it
/// prints on stderr, and keeps draining its stderr. `cmd` names it in errors.
pub fn spawn_for_url(
    mut command: Command,
    cmd: &[String],
) -> Result<(std::process::Child, String), String> {
    use std::io::BufRead;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the HTTP server {cmd:?}: {e}"))?;
    let mut err = std::io::BufReader::new(child.stderr.take().expect("piped"));
    let mut line = String::new();
    let url = loop {
        line.clear();
        match err.read_line(&mut line) {
            Ok(n) if n > 0 => {
                if let Some(u) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                    break Some(u.to_owned());
                }
            }
            _ => break None,
        }
    };
    let Some(url) = url else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("the HTTP server {cmd:?} printed no URL"));
    };
    // Keep draining its stderr so that it never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while err.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    Ok((child, url))
}

/// The client benchmark: every client, `reps` times, interleaved, against
/// the stdio server (each client spawns it) and the HTTP server (started
/// here, once). Returns the table and the per-client medians of calls/s.
/// The client benchmark's table, and its medians: by (transport, calls in
/// flight), each client's calls/s (in `--client` order).
pub struct ClientBench {
    pub table: Table,
    pub medians: BTreeMap<(String, u64), Vec<Option<f64>>>,
}

pub fn client_bench(args: &Args, errors: &mut Vec<String>) -> Option<ClientBench> {
    if args.clients.is_empty() {
        return None;
    }
    let http = match &args.http_server {
        Some(cmd) => match start_http_server(cmd) {
            Ok(h) => Some(h),
            Err(e) => {
                errors.push(e);
                None
            }
        },
        None => None,
    };
    let url = http.as_ref().map(|(_, u)| u.clone()).unwrap_or_default();
    // (transport, in_flight) → per client → calls/s of each repetition
    let mut data: BTreeMap<(String, u64), Vec<Vec<f64>>> = BTreeMap::new();
    for rep in 0..args.reps {
        for (i, client) in args.clients.iter().enumerate() {
            eprint!("rep {}/{} client {:<14} ", rep + 1, args.reps, client.name);
            let t = Instant::now();
            let out = Command::new(&client.cmd[0])
                .args(&client.cmd[1..])
                .env(
                    "BENCH_STDIO_SERVER",
                    serde_json::to_string(&args.stdio_server).expect("strings"),
                )
                .env("BENCH_HTTP_URL", &url)
                .env("BENCH_CLIENT_SECONDS", args.client_seconds.to_string())
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output();
            let out = match out {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    errors.push(format!("client {} rep {}: {e}", client.name, rep + 1));
                    continue;
                }
            };
            let mut n = 0;
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let Ok(l) = serde_json::from_str::<ClientLine>(line) else {
                    continue;
                };
                if l.seconds > 0.0 {
                    let v = data
                        .entry((l.transport, l.in_flight))
                        .or_insert_with(|| vec![Vec::new(); args.clients.len()]);
                    v[i].push(l.calls as f64 / l.seconds);
                    n += 1;
                }
            }
            if out.status.success() {
                eprintln!(
                    "ok in {:.1} s ({n} measurements)",
                    t.elapsed().as_secs_f64()
                );
            } else {
                eprintln!("FAILED ({}) after {n} measurements", out.status);
                errors.push(format!(
                    "client {} rep {}: exited with {}",
                    client.name,
                    rep + 1,
                    out.status
                ));
            }
        }
    }
    if let Some((mut child, _)) = http {
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut header = vec!["calls/s".to_owned()];
    header.extend(args.clients.iter().map(|c| c.name.clone()));
    if args.clients.len() > 1 {
        for c in &args.clients[1..] {
            header.push(format!("{} vs {}", args.clients[0].name, c.name));
        }
    }
    let mut lines = Vec::new();
    let mut medians = BTreeMap::new();
    let order = |t: &str| match t {
        "in-process" => 0,
        "stdio" => 1,
        "http" => 2,
        _ => 3,
    };
    let mut keys: Vec<&(String, u64)> = data.keys().collect();
    keys.sort_by_key(|(t, f)| (order(t), *f));
    for key in keys {
        let per_client = &data[key];
        let (transport, in_flight) = key;
        let what = match transport.as_str() {
            "in-process" => "in-process (our server in the client's process)".to_owned(),
            "stdio" => "stdio (the client spawns the server)".to_owned(),
            "http" => "Streamable HTTP (loopback)".to_owned(),
            t => t.to_owned(),
        };
        let mut line = vec![if *in_flight > 1 {
            format!("{what}, {in_flight} in flight")
        } else {
            format!("{what}, serial")
        }];
        let sums: Vec<Option<Summary>> = per_client.iter().map(|v| summarize(v.clone())).collect();
        medians.insert(
            key.clone(),
            sums.iter().map(|s| s.map(|s| s.median)).collect(),
        );
        line.extend(sums.iter().map(|s| cell(*s)));
        if let Some(Some(ours)) = sums.first() {
            for s in &sums[1..] {
                line.push(match s {
                    Some(o) if o.median > 0.0 => format!("{:.1}×", ours.median / o.median),
                    _ => "—".into(),
                });
            }
        }
        lines.push(line);
    }
    Some(ClientBench {
        table: Table { header, lines },
        medians,
    })
}
