//! The official MCP conformance harness (server mode) against our
//! conformance server (crates/devtools/src/bin/conformance-server) over Streamable HTTP.
//! Peers come from scripts/install-mcp-peers; without them the test prints
//! `SKIPPED` (and fails when `CI` or `CLAUDE_AGENT_PEERS_DIR` is set).

use crate::support::peers;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Expected results: (harness folder, arguments, checks that must pass,
/// checks expected to fail).
const SUITES: &[(&str, &[&str], usize, usize)] = &[
    ("conformance-0.1.16", &["--suite", "active"], 39, 0),
    ("conformance-0.1.16", &["--suite", "all"], 46, 0),
    (
        "conformance-alpha",
        &["--requirements", "2025-11-25"],
        83,
        0,
    ),
    // The Tasks extension's scenarios (`tasks-*`) included.
    (
        "conformance-alpha",
        &["--requirements", "2026-07-28"],
        196,
        0,
    ),
];

/// Scenarios that fail, and why. Each is "not scored" for its revision, so
/// the harness still exits 0; a scenario listed here that starts passing
/// (or one not listed that fails) fails this test.
const EXPECTED_FAILURES: &[(&str, &str)] = &[];

fn installed(dir: &Path) -> bool {
    dir.join(".mcp-peers-installed").exists()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_server_suites_pass() {
    let Some(dir) = peers::peers_dir("peer_conformance") else {
        return;
    };
    if !installed(&dir) {
        let why = format!(
            "peer_conformance: run scripts/install-mcp-peers (nothing in {})",
            dir.display()
        );
        if std::env::var_os("CI").is_some() || std::env::var_os("CLAUDE_AGENT_PEERS_DIR").is_some()
        {
            panic!("{why}");
        }
        eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
        return;
    }
    let server = peers::devtool("conformance-server");
    for (harness, args, expected, failing) in SUITES {
        let port = peers::free_port();
        let mut cmd = Command::new(&server);
        cmd.arg(port.to_string());
        let _server = peers::PeerProcess::spawn(cmd);
        peers::wait_port(port).await;

        let mut run = tokio::process::Command::new(dir.join("node22/node_modules/.bin/node"));
        run.arg("--require")
            .arg(dir.join("force-loopback.cjs"))
            .arg(
                dir.join(harness)
                    .join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
            )
            .args(["server", "--url", &format!("http://localhost:{port}/mcp")])
            .args(*args)
            .arg("-o")
            .arg(
                std::env::temp_dir().join(format!("mcp-conformance-{}-{port}", std::process::id())),
            )
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(240), run.output())
            .await
            .unwrap_or_else(|_| panic!("{harness} {args:?} took over 240 s"))
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let total = stdout
            .lines()
            .find(|l| l.starts_with("Total: "))
            .unwrap_or_else(|| {
                panic!(
                    "{harness} {args:?}: no Total line\n{stdout}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        assert_eq!(
            total,
            format!("Total: {expected} passed, {failing} failed"),
            "{harness} {args:?}\n{stdout}"
        );
        let failed: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("✗ "))
            .filter_map(|l| l.split(':').next())
            .collect();
        for scenario in &failed {
            assert!(
                EXPECTED_FAILURES.iter().any(|(s, _)| s == scenario),
                "{harness} {args:?}: {scenario} failed unexpectedly\n{stdout}"
            );
        }
        if *failing > 0 {
            for (scenario, why) in EXPECTED_FAILURES {
                assert!(
                    failed.contains(scenario),
                    "{harness} {args:?}: {scenario} passes now; drop it from EXPECTED_FAILURES ({why})"
                );
            }
        }
        assert!(
            out.status.success(),
            "{harness} {args:?} exited with {}",
            out.status
        );
        eprintln!("{harness} {args:?}: {total}");
    }
}
