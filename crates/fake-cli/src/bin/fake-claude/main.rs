//! `fake-claude`: a fake Claude Code CLI that plays a scenario instead of
//! running a model. The scenarios, their parameters and responder mode are
//! described in the library's docs (`crates/fake-cli/src/lib.rs`).

mod bench;
mod io;
mod peer;
mod procfs;
mod scenarios;

use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use claude_code_agent_fake_cli::{CLI_VERSION, PARAMS_ENV, RESPONDER_ENV, SCENARIO_ENV};
use peer::Peer;

fn main() {
    std::process::exit(run());
}

/// The fake CLI's work: returns the process exit code.
fn run() -> i32 {
    let _ = MAIN_NS.set(now_ns());
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-v") {
        println!("{CLI_VERSION} (Claude Code)");
        return 0;
    }
    let scenario = std::env::var(SCENARIO_ENV).unwrap_or_else(|_| "chat".into());
    let params: Value = match std::env::var(PARAMS_ENV) {
        Ok(s) if !s.trim().is_empty() => match serde_json::from_str(&s) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("fake-claude: {PARAMS_ENV} is not JSON: {e}");
                return 2;
            }
        },
        _ => json!({}),
    };
    if let Some(path) = params.get("pid_file").and_then(Value::as_str) {
        let _ = std::fs::write(path, std::process::id().to_string());
    }
    let model = flag_value(&args, "model").unwrap_or_else(|| "claude-fake-1".into());

    if scenario == "exit_before_init" {
        let msg = params
            .get("stderr")
            .and_then(Value::as_str)
            .unwrap_or("Error: fake-claude refuses to start");
        eprintln!("{msg}");
        return params.get("code").and_then(Value::as_i64).unwrap_or(1) as i32;
    }

    let responder: Option<Vec<String>> = std::env::var(RESPONDER_ENV)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok());
    let result = match responder {
        Some(cmd) => run_with_responder(&scenario, params, model, &cmd),
        None => {
            // SAFETY: fds 0 and 1 are ours for the whole process; nothing
            // else in the fake uses std's stdin/stdout handles.
            let (stdin, stdout) = unsafe { (File::from_raw_fd(0), File::from_raw_fd(1)) };
            let mut peer = Peer::new(
                io::LineReader::new(stdin),
                io::Out::new(stdout),
                params,
                model,
            );
            // In-process servers declared the Python SDK's way (docs/protocol.md §1.3).
            if let Some(config) = flag_value(&args, "mcp-config") {
                peer.servers = peer::sdk_servers_in_mcp_config(&config)
                    .into_iter()
                    .map(peer::SdkServer::named)
                    .collect();
            }
            scenarios::run(
                &scenario,
                peer,
                std::os::unix::process::parent_id() as i32,
                false,
            )
        }
    };
    match result {
        Ok(code) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            eprintln!("fake-claude: the SDK closed the pipe: {e}");
            1
        }
        Err(e) => {
            eprintln!("fake-claude: {e}");
            1
        }
    }
}

fn run_with_responder(
    scenario: &str,
    mut params: Value,
    model: String,
    cmd: &[String],
) -> std::io::Result<i32> {
    let (program, rest) = cmd
        .split_first()
        .ok_or_else(|| std::io::Error::other("empty responder command"))?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let stdin = File::from(OwnedFd::from(child.stdin.take().expect("piped")));
    let stdout = File::from(OwnedFd::from(child.stdout.take().expect("piped")));
    if params.get("servers").is_none() {
        params["servers"] = json!(["bench"]);
    }
    let pid = child.id() as i32;
    let peer = Peer::new(
        io::LineReader::new(stdout),
        io::Out::new(stdin),
        params,
        model,
    );
    let code = scenarios::run(scenario, peer, pid, true);
    // The peer (and with it the responder's stdin) is gone: it sees EOF.
    let status = child.wait()?;
    if !status.success() {
        eprintln!("fake-claude: the responder exited with {status}");
    }
    code
}

/// `--name=value` or `--name value` from the CLI's arguments.
fn flag_value(args: &[String], name: &str) -> Option<String> {
    let long = format!("--{name}");
    let prefix = format!("--{name}=");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix(&prefix) {
            return Some(v.to_owned());
        }
        if *a == long {
            return it.next().cloned();
        }
    }
    None
}

/// When `main` started, in ns since the Unix epoch (0 when not run as the binary).
pub(crate) static MAIN_NS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// The wall clock in ns since the Unix epoch: comparable across processes
/// (the benchmark's query-to-first-message timing uses it).
pub(crate) fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// A parameter as `u64`, or `default`.
pub(crate) fn param_u64(params: &Value, key: &str, default: u64) -> u64 {
    params.get(key).and_then(Value::as_u64).unwrap_or(default)
}

/// A parameter as a duration in milliseconds, or `default` ms.
pub(crate) fn param_ms(params: &Value, key: &str, default: u64) -> Duration {
    Duration::from_millis(param_u64(params, key, default))
}
