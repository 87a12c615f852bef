//! A fake Claude Code CLI: speaks the real CLI's wire protocol (stream-json
//! on stdin/stdout, the control protocol, the MCP handshake with in-process
//! servers) and runs a **scenario** instead of a model. It is the load
//! generator of the benchmark and the misbehaving peer of the fault tests.
//!
//! The binary `fake-claude` is [`main`]. Point the SDK at it with
//! `Options::cli_path` ([`binary`] builds and finds it) and choose what it
//! does with two environment variables, which the SDK passes through:
//!
//! * `FAKE_CLAUDE_SCENARIO` — the scenario (default `chat`), see below;
//! * `FAKE_CLAUDE_PARAMS` — a JSON object of parameters.
//!
//! Parameters every scenario understands: `pid_file` (the fake writes its
//! pid there first thing), `server`/`tool` (which in-process tool to call;
//! default the first tool of the first server).
//!
//! | scenario | what it does per user message |
//! |---|---|
//! | `chat` | `system/init`, an `assistant` text (`text`), a `result`; with `stall_ms`, first that long without reading stdin |
//! | `tool_calls` | calls the tool `n` times, `in_flight` at once; with `hooks: true` each call is wrapped in PreToolUse/PostToolUse `hook_callback`s, with `permission: true` preceded by `can_use_tool`; checks every answer's shape; `report` names a JSON file for per-call latencies |
//! | `bench` | the benchmark (see [`bench`](mod@bench)); writes [`report::BenchReport`] to `report` |
//! | `exit_before_init` | writes `stderr` to stderr and exits with `code` before reading anything |
//! | `die_mid_tool_call` | sends a `tools/call`, waits `delay_ms`, SIGKILLs itself |
//! | `die_mid_stream` | writes half a line, SIGKILLs itself |
//! | `stdout_garbage` | garbage, a truncated line, invalid UTF-8, a JSON array, a blank line (with `undecodable: true` also a JSON object serde cannot hold, `1e999`), then a normal turn |
//! | `flood` | `n` assistant texts of `bytes` bytes, a `tools/call` answered within `max_call_ms`, `hold_ms` serving the SDK's requests, a `result` (`flooded <n> call_ms=<ms>`) |
//! | `huge_line` | an `assistant` text of `bytes` bytes in one line, then a normal turn |
//! | `close_stdin` | closes its stdin after the first user message, answers it, exits after `linger_ms` |
//! | `stderr_flood` | writes `mb` MB to stderr, then a normal turn |
//! | `unknown_messages` | unknown message types and subtypes, an unknown CLI→SDK control request (expects a control error), a stray control response, then a normal turn |
//! | `cancel_permission` | `can_use_tool`, then `control_cancel_request` after `delay_ms`; checks no answer comes within `quiet_ms` |
//! | `cancel_tool` | `tools/call`, then `notifications/cancelled` after `delay_ms`; checks the acknowledgement |
//! | `ping_during_slow_call` | a `tools/call` to a slow tool, then `ping` and `tools/list` meanwhile; checks they are answered within `max_ping_ms` and before the slow call |
//! | `callbacks` | `can_use_tool` per entry of `permission` and `hook_callback` per entry of `hooks` (each `"allow"`, `"deny"`, `"ok"` or `"error"`: the answer expected) |
//!
//! A failed check makes the turn's `result` `is_error: true` with the
//! failures in `result` (prefixed `FAILED:`) and `errors`; tests assert on it.
//!
//! **Responder mode** (`FAKE_CLAUDE_RESPONDER`, a JSON array: a command):
//! instead of being spawned by an SDK, the fake spawns that command and
//! speaks to its stdin/stdout as it would to an SDK (no `initialize` is
//! expected; the servers are `params.servers`, default `["bench"]`). This is
//! how the echo floor is measured with the same load generator.

pub mod bench;
pub mod io;
pub mod peer;
pub mod report;
mod scenarios;

use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

pub use peer::{CLI_VERSION, Peer, Response};

/// The environment variable naming the scenario.
pub const SCENARIO_ENV: &str = "FAKE_CLAUDE_SCENARIO";
/// The environment variable holding the JSON parameters.
pub const PARAMS_ENV: &str = "FAKE_CLAUDE_PARAMS";
/// The environment variable that switches on responder mode.
pub const RESPONDER_ENV: &str = "FAKE_CLAUDE_RESPONDER";

/// The fake CLI's `main`: returns the process exit code.
pub fn main() -> i32 {
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
pub fn now_ns() -> u64 {
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

/// Builds the `fake-claude` binary (with the same profile as the running
/// executable, so `cargo test` and `cargo test --release` both work) and
/// returns its path. Runs `cargo build` once per process; cheap when the
/// binary is fresh. `FAKE_CLAUDE_BIN` overrides it all.
pub fn binary() -> std::io::Result<PathBuf> {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| build_bin("fake-claude").map_err(|e| e.to_string()))
        .clone()
        .map_err(std::io::Error::other)
}

/// Builds one binary of this crate like [`binary`] does and returns its path.
pub fn build_bin(name: &str) -> std::io::Result<PathBuf> {
    if name == "fake-claude"
        && let Some(p) = std::env::var_os("FAKE_CLAUDE_BIN")
    {
        return Ok(PathBuf::from(p));
    }
    // The running executable is target/<profile>/{deps,examples}/<name>.
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(|p| {
            if matches!(
                p.file_name().and_then(|n| n.to_str()),
                Some("deps" | "examples")
            ) {
                p.parent()
            } else {
                Some(p)
            }
        })
        .ok_or_else(|| std::io::Error::other("cannot locate the target directory"))?
        .to_path_buf();
    let release = profile_dir.file_name().and_then(|n| n.to_str()) == Some("release");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-q", "-p", "claude-agent-testkit", "--bin", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if release {
        cmd.arg("--release");
    }
    if let Some(target_dir) = profile_dir.parent() {
        cmd.env("CARGO_TARGET_DIR", target_dir);
    }
    let status = cmd.status()?;
    if !status.success() {
        return Err(std::io::Error::other(format!(
            "cargo build --bin {name} failed: {status}"
        )));
    }
    let path = profile_dir.join(name);
    if !path.exists() {
        return Err(std::io::Error::other(format!(
            "{} was not built",
            path.display()
        )));
    }
    Ok(path)
}
