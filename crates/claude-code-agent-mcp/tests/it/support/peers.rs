//! Finding the binaries and peers the client tests run.

use std::path::PathBuf;

/// The `stdio_server` example next to this test binary (`cargo test` builds
/// examples); built on demand when missing.
pub fn stdio_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap().join("examples");
    let path = dir.join("stdio_server");
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args([
                "build",
                "-p",
                "claude-code-agent-mcp",
                "--example",
                "stdio_server",
            ])
            .status()
            .unwrap();
        assert!(status.success(), "building the stdio_server example failed");
    }
    assert!(
        path.exists(),
        "no stdio_server example at {}",
        path.display()
    );
    path
}

/// A binary of the unpublished tooling crate (`crates/devtools`: the
/// conformance server and client), built in this test binary's profile and
/// target folder; returns its path. Cheap when it is fresh.
///
/// With `CLAUDE_AGENT_BINS_BUILT` set (`scripts/test` builds every binary
/// of the workspace with the test build's features first), the binary is
/// used as it is: `cargo build -p` here would resolve the features for
/// this package alone and build its dependencies again.
/// One of this crate's examples, built with `features` (or as `cargo
/// test` built it, with `CLAUDE_AGENT_BINS_BUILT`).
#[allow(dead_code)] // only with some features
pub fn example(name: &str, features: &str) -> PathBuf {
    let args = [
        "-p",
        "claude-code-agent-mcp",
        "--example",
        name,
        "--features",
        features,
    ];
    built(&format!("examples/{name}"), &args)
}

pub fn devtool(name: &str) -> PathBuf {
    built(name, &["-p", "claude-code-agent-devtools", "--bin", name])
}

/// `path` in this test binary's profile directory: as built before the
/// tests (`CLAUDE_AGENT_BINS_BUILT`), or built now with `cargo build
/// <args>` into the same target directory and profile.
fn built(path: &str, args: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let prebuilt = profile_dir.join(path);
    if std::env::var_os("CLAUDE_AGENT_BINS_BUILT").is_some() && prebuilt.exists() {
        return prebuilt;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args(["build", "-q"])
        .args(args)
        .env("CARGO_TARGET_DIR", profile_dir.parent().unwrap());
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "cargo build {} failed", args.join(" "));
    prebuilt
}

/// Where `scripts/install-peers` put the third-party peers:
/// `$CLAUDE_AGENT_PEERS_DIR`, else the default cache directory.
///
/// `None` (after a loud `SKIPPED:` message) when the peers are not
/// installed and the variable is unset; panics when the variable is set
/// and the peers are missing, or when `CI` is set, since then the interop
/// tests must run.
pub fn peers_dir(test: &str) -> Option<PathBuf> {
    let from_env = std::env::var_os("CLAUDE_AGENT_PEERS_DIR").map(PathBuf::from);
    let dir = from_env.clone().unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
            });
        cache.join("claude-agent-rs/peers")
    });
    if dir.join(".installed").exists() {
        return Some(dir);
    }
    let why = format!(
        "{test}: the MCP test peers are not installed in {} (run scripts/install-peers)",
        dir.display()
    );
    if from_env.is_some() || std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
    None
}

/// Where `scripts/install-mcp-peers` put the official TypeScript MCP SDK
/// 1.x (`$PEERS_DIR/ts-sdk`), or `None` (after a loud `SKIPPED:`) when it
/// is not installed and the tests need not run; panics when they must (as
/// [`peers_dir`] does).
// The TypeScript interop tests need an HTTP transport (one each way).
#[cfg(any(feature = "http-client", feature = "http-server"))]
pub fn ts_sdk(test: &str) -> Option<PathBuf> {
    npm_peer(test, "ts-sdk", &["@modelcontextprotocol/sdk"])
}

/// The official TypeScript MCP SDK's 2.x line (`$PEERS_DIR/ts-sdk2`:
/// `@modelcontextprotocol/client` and `/server`), as [`ts_sdk`].
#[cfg(any(feature = "http-client", feature = "http-server"))]
pub fn ts_sdk2(test: &str) -> Option<PathBuf> {
    npm_peer(
        test,
        "ts-sdk2",
        &[
            "@modelcontextprotocol/client",
            "@modelcontextprotocol/server",
        ],
    )
}

/// `$PEERS_DIR/<sub>` when the npm `packages` are installed there.
#[cfg(any(feature = "http-client", feature = "http-server"))]
fn npm_peer(test: &str, sub: &str, packages: &[&str]) -> Option<PathBuf> {
    let dir = peers_dir(test)?.join(sub);
    let missing = |p: &str| {
        !dir.join("node_modules")
            .join(p)
            .join("package.json")
            .exists()
    };
    let Some(package) = packages.iter().find(|p| missing(p)) else {
        return Some(dir);
    };
    let why = format!(
        "{test}: {package} is not installed in {} (run scripts/install-mcp-peers)",
        dir.display()
    );
    if std::env::var_os("CI").is_some() || std::env::var_os("CLAUDE_AGENT_PEERS_DIR").is_some() {
        panic!("{why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
    None
}

/// A peer server process in its own process group, killed and reaped on drop.
pub struct PeerProcess {
    child: std::process::Child,
}

impl PeerProcess {
    /// Starts `cmd` in a new process group.
    pub fn spawn(mut cmd: std::process::Command) -> Self {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0).stdin(std::process::Stdio::null());
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        Self { child }
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        let pgid = self.child.id() as i32;
        // SAFETY: signals to the group our child leads.
        unsafe { libc::killpg(pgid, libc::SIGTERM) };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                unsafe { libc::killpg(pgid, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// A free port on 127.0.0.1 for a process a test starts, below the kernel's
/// ephemeral range (32768 and up by default): a port from `bind(…:0)` is in
/// that range, and any outgoing connection may take it between this call and
/// the bind of the process it is for (seen: a replica failing with
/// `AddrInUse` under load). Ports are handed out in turn within the test
/// binary, from a start that differs per process.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = std::process::id().wrapping_mul(2_654_435_761) % SPAN;
    for _ in 0..SPAN {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (LOW + (start + n) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port between {LOW} and {}", LOW + SPAN)
}

/// Waits until something accepts connections on 127.0.0.1:`port`.
pub async fn wait_port(port: u16) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after 30 s");
}

/// Runs the TypeScript SDK script `tests/peers/<script>` with `args` (the
/// SDK at `dir`, from [`ts_sdk`]) in a process group of its own, killed if
/// it takes more than `within`; its report, the JSON object on the last
/// line of its stdout. Fails the test if it exits unsuccessfully.
#[cfg(feature = "http-server")]
pub async fn ts_script_report(
    dir: &std::path::Path,
    script: &str,
    args: &[&str],
    within: std::time::Duration,
) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(script);
    let mut cmd = tokio::process::Command::new("node");
    cmd.env("TS_SDK_DIR", dir)
        .arg(path)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd.spawn().expect("node runs");
    let pgid = child.id().expect("a pid") as i32;
    let output = match tokio::time::timeout(within, child.wait_with_output()).await {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // SAFETY: signals the process group our child leads.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
            panic!("{script} {args:?} did not finish within {within:?}");
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} {args:?} failed ({}):\n{stderr}\n{stdout}",
        output.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("no report ({e}) from {script}:\n{stdout}\n{stderr}"))
}
