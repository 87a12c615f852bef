//! A fake Claude Code CLI: speaks the real CLI's wire protocol (stream-json
//! on stdin/stdout, the control protocol, the MCP handshake with in-process
//! servers) and runs a **scenario** instead of a model. It is the load
//! generator of the benchmark and the misbehaving peer of the fault tests.
//!
//! This library is what its users need: the binary's name and environment
//! variables, [`binary`] (builds `fake-claude` and returns its path), and the
//! benchmark [`report`] it writes. Point the SDK at the binary with
//! `Options::cli_path` and choose what it does with two environment
//! variables, which the SDK passes through:
//!
//! * `FAKE_CLAUDE_SCENARIO` — the scenario (default `chat`), see below;
//! * `FAKE_CLAUDE_PARAMS` — a JSON object of parameters.
//!
//! Parameters every scenario understands: `pid_file` (the fake writes its
//! pid there first thing), `server`/`tool` (which in-process tool to call;
//! default the first tool of the first server), `claude_code_version` (the
//! version its `initialize` answer claims instead of [`CLI_VERSION`]; `null`
//! leaves the field out, as CLIs before 2.1.296 do).
//!
//! | scenario | what it does per user message |
//! |---|---|
//! | `chat` | `system/init`, an `assistant` text (`text`), a `result`; with `stall_ms`, first that long without reading stdin |
//! | `tool_calls` | calls the tool `n` times, `in_flight` at once; with `hooks: true` each call is wrapped in PreToolUse/PostToolUse `hook_callback`s, with `permission: true` preceded by `can_use_tool`; checks every answer's shape; `report` names a JSON file for per-call latencies |
//! | `bench` | the benchmark (`src/bin/fake-claude/bench.rs`); writes [`report::BenchReport`] to `report` |
//! | `exit_before_init` | writes `stderr` to stderr and exits with `code` before reading anything |
//! | `die_mid_tool_call` | sends a `tools/call`, waits `delay_ms`, SIGKILLs itself |
//! | `die_mid_stream` | writes half a line (after a `transcript_mirror` frame of one entry of `mirror_bytes` bytes under `$CLAUDE_CONFIG_DIR/projects`, with that parameter), waits `wait_ms` (50), SIGKILLs itself |
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
//! | `echo_answers` | a `can_use_tool` (`tool_use_id` `toolu_echo`; none with `permission: false`), then a `hook_callback` per entry of `hook_inputs` (event → input) to that event's first callback; the `result` text is the JSON array of the answers as they came |
//!
//! Control requests the fake answers: `initialize`, `interrupt`,
//! `mcp_message`, `mcp_status`, `set_permission_mode`, `set_model`, and
//! `reload_plugins` (an empty reload whose answer carries the request in
//! `request`); any other gets an `unsupported_request` error.
//!
//! A failed check makes the turn's `result` `is_error: true` with the
//! failures in `result` (prefixed `FAILED:`) and `errors`; tests assert on it.
//!
//! **Responder mode** (`FAKE_CLAUDE_RESPONDER`, a JSON array: a command):
//! instead of being spawned by an SDK, the fake spawns that command and
//! speaks to its stdin/stdout as it would to an SDK (no `initialize` is
//! expected; the servers are `params.servers`, default `["bench"]`). This is
//! how the echo floor is measured with the same load generator.
//!
//! The other binary, `echo-responder`, is the benchmark's floor: the least an
//! SDK must do per `tools/call` (see its source).
//!
//! Not published: test and benchmark tooling of this repository.

pub mod report;

use std::path::PathBuf;
use std::process::Command;

/// The version the fake CLI claims: the testkit's pinned one.
pub use claude_code_agent_testkit::PINNED_CLI_VERSION as CLI_VERSION;

/// The environment variable naming the scenario.
pub const SCENARIO_ENV: &str = "FAKE_CLAUDE_SCENARIO";
/// The environment variable holding the JSON parameters.
pub const PARAMS_ENV: &str = "FAKE_CLAUDE_PARAMS";
/// The environment variable that switches on responder mode.
pub const RESPONDER_ENV: &str = "FAKE_CLAUDE_RESPONDER";

/// Builds the `fake-claude` binary (with the same profile as the running
/// executable, so `cargo test` and `cargo test --release` both work) and
/// returns its path. Runs `cargo build` once per process; cheap when the
/// binary is fresh; with `CLAUDE_AGENT_BINS_BUILT` set, a binary already
/// there is used unbuilt. `FAKE_CLAUDE_BIN` overrides it all.
pub fn binary() -> std::io::Result<PathBuf> {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| build_bin("fake-claude").map_err(|e| e.to_string()))
        .clone()
        .map_err(std::io::Error::other)
}

/// Builds one binary of this crate like [`binary`] does and returns its path.
fn build_bin(name: &str) -> std::io::Result<PathBuf> {
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
    // Built already, with the features of the build that runs us
    // (`scripts/test` builds every binary first and says so): `cargo build
    // -p` would resolve the features for this package alone and build its
    // dependencies again.
    let prebuilt = profile_dir.join(name);
    if std::env::var_os("CLAUDE_AGENT_BINS_BUILT").is_some() && prebuilt.exists() {
        return Ok(prebuilt);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "-q",
        "-p",
        "claude-code-agent-fake-cli",
        "--bin",
        name,
    ])
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
