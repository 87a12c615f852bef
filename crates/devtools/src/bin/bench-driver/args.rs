//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

pub struct Subject {
    pub name: String,
    pub kind: String,
    pub cmd: Vec<String>,
}

pub struct Args {
    pub fake_cli: PathBuf,
    pub reps: usize,
    pub out: Option<PathBuf>,
    pub params: Value,
    pub subjects: Vec<Subject>,
    pub timeout: Duration,
    /// Client benchmark programs (`name|cmd`).
    pub clients: Vec<Subject>,
    /// The stdio server the clients spawn.
    pub stdio_server: Vec<String>,
    /// The HTTP server started for the clients; it prints its URL on stderr.
    pub http_server: Option<Vec<String>>,
    /// Seconds per client measurement.
    pub client_seconds: f64,
    /// Where to draw the plot (PNG).
    pub plot: Option<PathBuf>,
    /// Markdown appended to the document.
    pub notes: Option<PathBuf>,
    /// `name=version` lines for the document.
    pub versions: Vec<(String, String)>,
    /// The HTTP scale benchmark's load generator (`http-load`).
    pub http_load: Option<String>,
    /// Its servers (`name|cmd`; ours first): each prints its URL on stderr.
    pub scale_servers: Vec<Subject>,
    /// The session counts it steps through.
    pub scale_sessions: Vec<usize>,
    /// Seconds of calls per step.
    pub scale_seconds: f64,
    /// How long one step may spend opening sessions, per phase.
    pub scale_open_max_s: f64,
    /// The memory step: `warm,sessions,calls` (`http-load --marginal`).
    pub scale_memory: [usize; 3],
}

pub fn usage() -> ! {
    eprintln!(
        "usage: bench-driver --fake-cli PATH [--reps N] [--out FILE.md] [--plot FILE.png] \
         [--notes FILE.md] [--params JSON] [--timeout-s N] [--version 'what=version' …] \
         [--subject 'name|sdk|cmd args' …] [--client 'name|cmd args' … --stdio-server 'cmd' \
         [--http-server 'cmd'] [--client-seconds S]] [--http-load PATH --scale-server 'name|cmd' … \
         [--scale-sessions 1,100,1000,10000] [--scale-seconds S] [--scale-open-max-s S] \
         [--scale-memory WARM,SESSIONS,CALLS]]"
    );
    std::process::exit(2)
}

pub fn parse_args() -> Args {
    let mut args = Args {
        fake_cli: PathBuf::new(),
        reps: 5,
        out: None,
        params: json!({}),
        subjects: Vec::new(),
        timeout: Duration::from_secs(600),
        clients: Vec::new(),
        stdio_server: Vec::new(),
        http_server: None,
        client_seconds: 3.0,
        plot: None,
        notes: None,
        versions: Vec::new(),
        http_load: None,
        scale_servers: Vec::new(),
        scale_sessions: vec![1, 100, 1000, 10_000],
        scale_seconds: 2.0,
        scale_open_max_s: 15.0,
        scale_memory: [100, 400, 100],
    };
    let words = |s: String| -> Vec<String> { s.split_whitespace().map(str::to_owned).collect() };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--fake-cli" => args.fake_cli = value().into(),
            "--reps" => args.reps = value().parse().unwrap_or_else(|_| usage()),
            "--out" => args.out = Some(value().into()),
            "--params" => args.params = serde_json::from_str(&value()).unwrap_or_else(|_| usage()),
            "--timeout-s" => {
                args.timeout = Duration::from_secs(value().parse().unwrap_or_else(|_| usage()))
            }
            "--plot" => args.plot = Some(value().into()),
            "--notes" => args.notes = Some(value().into()),
            "--version" => {
                let v = value();
                let (k, v) = v.split_once('=').unwrap_or_else(|| usage());
                args.versions.push((k.into(), v.into()));
            }
            "--stdio-server" => args.stdio_server = words(value()),
            "--http-server" => args.http_server = Some(words(value())),
            "--client-seconds" => args.client_seconds = value().parse().unwrap_or_else(|_| usage()),
            "--http-load" => args.http_load = Some(value()),
            "--scale-server" => {
                let spec = value();
                let Some((name, cmd)) = spec.split_once('|') else {
                    usage()
                };
                args.scale_servers.push(Subject {
                    name: name.into(),
                    kind: "http-server".into(),
                    cmd: words(cmd.into()),
                });
            }
            "--scale-sessions" => {
                args.scale_sessions = value()
                    .split(',')
                    .map(|n| n.trim().parse().unwrap_or_else(|_| usage()))
                    .collect()
            }
            "--scale-memory" => {
                let v: Vec<usize> = value()
                    .split(',')
                    .map(|n| n.trim().parse().unwrap_or_else(|_| usage()))
                    .collect();
                args.scale_memory = v.try_into().unwrap_or_else(|_| usage());
            }
            "--scale-seconds" => args.scale_seconds = value().parse().unwrap_or_else(|_| usage()),
            "--scale-open-max-s" => {
                args.scale_open_max_s = value().parse().unwrap_or_else(|_| usage())
            }
            "--client" => {
                let spec = value();
                let Some((name, cmd)) = spec.split_once('|') else {
                    usage()
                };
                args.clients.push(Subject {
                    name: name.into(),
                    kind: "client".into(),
                    cmd: words(cmd.into()),
                });
            }
            "--subject" => {
                let spec = value();
                let mut parts = spec.splitn(3, '|');
                let (Some(name), Some(kind), Some(cmd)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    usage()
                };
                if kind != "sdk" && kind != "responder" {
                    usage();
                }
                args.subjects.push(Subject {
                    name: name.into(),
                    kind: kind.into(),
                    cmd: cmd.split_whitespace().map(str::to_owned).collect(),
                });
            }
            _ => usage(),
        }
    }
    if (args.subjects.is_empty() || args.fake_cli.as_os_str().is_empty())
        && (args.clients.is_empty() || args.stdio_server.is_empty())
        && (args.http_load.is_none() || args.scale_servers.is_empty())
    {
        usage();
    }
    args
}
