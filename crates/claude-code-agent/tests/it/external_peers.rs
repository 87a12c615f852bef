//! Third-party MCP clients driving our calculator example over stdio and
//! Streamable HTTP: the official Python SDK (`mcp` 2.3.0, default
//! `mode="auto"`, which probes `server/discover` first) and the MCP
//! Inspector CLI (2.12.0). Peers come from scripts/install-mcp-peers; without
//! them the tests print `SKIPPED` (and fail when `CI` or
//! `CLAUDE_AGENT_PEERS_DIR` is set). Needs the `http-server` feature
//! (`scripts/test` turns it on).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{self, Reaped, http_calculator};

fn peers() -> Option<PathBuf> {
    let from_env = std::env::var_os("CLAUDE_AGENT_PEERS_DIR").map(PathBuf::from);
    let dir = from_env.clone().unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
            });
        cache.join("claude-agent-rs/peers")
    });
    if dir.join(".mcp-peers-installed").exists() {
        return Some(dir);
    }
    let why = format!(
        "external_peers: no MCP peers in {} (run scripts/install-mcp-peers)",
        dir.display()
    );
    if from_env.is_some() || std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
    None
}

fn calculator() -> PathBuf {
    support::example("calculator")
}

/// Runs `cmd` with a deadline; its stdout.
fn run(mut cmd: Command, limit: Duration) -> String {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = Reaped(
        cmd.spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}")),
    );
    let pid = child.0.id() as i32;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let watchdog = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if flag.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: the child is not reaped yet (we wait below only after
        // `done`), so its process group id cannot have been reused.
        unsafe { libc_killpg(pid) };
    });
    let mut child = child;
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = watchdog.join();
    let _ = child.0.wait();
    assert!(
        !stdout.trim().is_empty(),
        "{cmd:?} printed nothing; stderr:\n{stderr}"
    );
    stdout
}

unsafe extern "C" {
    fn killpg(pgrp: i32, sig: i32) -> i32;
}

unsafe fn libc_killpg(pid: i32) {
    // SAFETY: plain syscall wrapper; SIGKILL = 9.
    unsafe { killpg(pid, 9) };
}

fn python_client(peers: &Path, target: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../claude-code-agent-mcp/tests/peers/py_calc_client.py");
    let mut cmd = Command::new(peers.join("venv/bin/python"));
    cmd.arg(script).args(target);
    let out = run(cmd, Duration::from_secs(90));
    serde_json::from_str(out.lines().last().unwrap()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn expected() -> Value {
    json!({"tools":["add","divide","stats"],"add":"42","add_is_error":false,
           "divide":"division by zero","divide_is_error":true})
}

#[test]
fn python_sdk_client_auto_mode_over_stdio_and_http() {
    let Some(peers) = peers() else { return };
    let calc = calculator().to_string_lossy().into_owned();
    assert_eq!(
        python_client(&peers, &["stdio", &calc, "--stdio"]),
        expected()
    );
    let (_server, url) = http_calculator(&[]);
    assert_eq!(python_client(&peers, &["http", &url]), expected());
}

fn inspector(peers: &Path, target: &[&str], args: &[&str]) -> Value {
    let node = peers.join("node22/node_modules/.bin/node");
    let mut cmd = Command::new(node);
    cmd.arg(peers.join(
        "inspector2/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
    ))
    .arg("--cli")
    .args(target)
    .args(args)
    .env("MCP_CATALOG_PATH", peers.join("inspector2/catalog.json"))
    .env(
        "PATH",
        format!(
            "{}:{}",
            peers.join("node22/node_modules/.bin").display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    let out = run(cmd, Duration::from_secs(90));
    let start = out.find('{').unwrap_or_else(|| panic!("no JSON: {out}"));
    let mut de = serde_json::Deserializer::from_str(&out[start..]).into_iter::<Value>();
    de.next().unwrap().unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn inspector_scenario(peers: &Path, target: &[&str]) {
    let tools = inspector(peers, target, &["--method", "tools/list"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "divide", "stats"]);
    let add = inspector(
        peers,
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "add",
            "--tool-arg",
            "a=2",
            "b=3",
        ],
    );
    assert_eq!(add["content"][0]["text"], "5");
    assert_eq!(add["isError"], false);
    let div = inspector(
        peers,
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "divide",
            "--tool-arg",
            "a=1",
            "b=0",
        ],
    );
    assert_eq!(div["isError"], true);
    assert_eq!(div["content"][0]["text"], "division by zero");
}

#[test]
fn inspector_cli_over_stdio_and_http() {
    let Some(peers) = peers() else { return };
    let calc = calculator().to_string_lossy().into_owned();
    inspector_scenario(&peers, &[&calc, "--stdio"]);
    let (_server, url) = http_calculator(&[]);
    inspector_scenario(&peers, &[&url]);
}
