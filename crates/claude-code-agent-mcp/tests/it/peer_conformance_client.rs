//! The official MCP conformance harness (client mode) running our client
//! (crates/devtools/src/bin/conformance-client.rs) against its own scenario servers.
//! Peers come from scripts/install-mcp-peers; without them the test prints
//! `SKIPPED` (and fails when `CI` or `CLAUDE_AGENT_PEERS_DIR` is set).

use crate::support::peers;
use std::path::Path;
use std::time::Duration;

/// The client scenarios we claim, with the number of checks each must pass.
/// They run one at a time: `sse-retry` measures a reconnection delay, which
/// the harness judges by the clock.
const SCENARIOS: &[(&str, usize)] = &[
    ("initialize", 1),
    ("tools_call", 1),
    ("elicitation-sep1034-client-defaults", 5),
    ("sse-retry", 3),
];

fn installed(dir: &Path) -> bool {
    dir.join(".mcp-peers-installed").exists()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_client_scenarios_pass() {
    let Some(dir) = peers::peers_dir("peer_conformance_client") else {
        return;
    };
    if !installed(&dir) {
        let why = format!(
            "peer_conformance_client: run scripts/install-mcp-peers (nothing in {})",
            dir.display()
        );
        if std::env::var_os("CI").is_some() || std::env::var_os("CLAUDE_AGENT_PEERS_DIR").is_some()
        {
            panic!("{why}");
        }
        eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
        return;
    }
    let client = peers::devtool("conformance-client");
    // The harness splits the command on spaces: the path must have none.
    assert!(
        !client.to_string_lossy().contains(' '),
        "the client path {} contains a space",
        client.display()
    );
    for (scenario, expected) in SCENARIOS {
        let out_dir = std::env::temp_dir().join(format!(
            "mcp-conformance-client-{}-{scenario}",
            std::process::id()
        ));
        let mut run = tokio::process::Command::new(dir.join("node22/node_modules/.bin/node"));
        run.arg("--require")
            .arg(dir.join("force-loopback.cjs"))
            .arg(
                dir.join("conformance-0.1.16")
                    .join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
            )
            .arg("client")
            .arg("--command")
            .arg(&client)
            .args(["--scenario", scenario, "--timeout", "60000"])
            .arg("-o")
            .arg(&out_dir)
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(180), run.output())
            .await
            .unwrap_or_else(|_| panic!("client scenario {scenario} took over 180 s"))
            .unwrap();
        let _ = std::fs::remove_dir_all(&out_dir);
        // The harness prints its summary to stdout or stderr, depending on the version.
        let stdout = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let total = stdout
            .lines()
            .find(|l| l.starts_with("Passed: "))
            .unwrap_or_else(|| panic!("{scenario}: no \"Passed:\" line\n{stdout}"));
        // Warnings (the harness's timing remarks on a loaded machine) do not
        // count as failures; failed checks do.
        assert!(
            total.starts_with(&format!("Passed: {expected}/{expected}, 0 failed")),
            "client scenario {scenario}: {total}\n{stdout}"
        );
        assert!(
            out.status.success(),
            "client scenario {scenario} exited with {}",
            out.status
        );
        eprintln!("client scenario {scenario}: {total}");
    }
}
