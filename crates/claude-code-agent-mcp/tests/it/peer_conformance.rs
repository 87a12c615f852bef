//! The official MCP conformance harness (server mode) against our
//! conformance server (crates/devtools/src/bin/conformance-server) over Streamable HTTP.
//! Peers come from scripts/install-mcp-peers; without them the test prints
//! `SKIPPED` (and fails when `CI` or `CLAUDE_AGENT_PEERS_DIR` is set).

use crate::support::peers;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Expected results: (harness folder, arguments, scenarios run, checks
/// that must pass, checks expected to fail). No check may warn (the harness's SHOULDs):
/// the warnings are counted in the results it saves (`checks.json` of each
/// scenario), as its summary of a suite leaves them out.
/// The stable harness's `--suite all` runs the 30 scenarios of its
/// `--suite active` and two more (`json-schema-2020-12`,
/// `server-sse-polling`), so `active` is not run on its own.
const SUITES: &[(&str, &[&str], usize, usize, usize)] = &[
    ("conformance-0.1.16", &["--suite", "all"], 32, 46, 0),
    (
        "conformance-alpha",
        &["--requirements", "2025-11-25"],
        33,
        83,
        0,
    ),
    // The Tasks extension's scenarios (`tasks-*`) included.
    (
        "conformance-alpha",
        &["--requirements", "2026-07-28"],
        50,
        196,
        0,
    ),
    // Every server scenario of the alpha, each at its own revision: the
    // requirement sets' and those in neither, the Skills extension's
    // (`sep-2640-skills-*`, SEP-2640: the listing, `skills/get`,
    // `SKILL.md`, `resources/directory/read`) included.
    ("conformance-alpha", &["--suite", "all"], 65, 275, 0),
];

/// The checks the harness saved under `dir` (a `checks.json` for each
/// scenario), counted by status: passed, failed, warned.
fn saved_checks(dir: &Path) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let checks: Vec<serde_json::Value> =
                    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                for check in checks {
                    match check["status"].as_str() {
                        Some("SUCCESS") => counts.0 += 1,
                        Some("FAILURE") => counts.1 += 1,
                        Some("WARNING") => counts.2 += 1,
                        _ => {}
                    }
                }
            }
        }
    }
    counts
}

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
    // The runs wait on the harness more than they compute: all at once,
    // each against a server of its own.
    futures::future::join_all(SUITES.iter().map(|suite| run_suite(&dir, &server, suite))).await;
}

/// One run of [`SUITES`] against a conformance server of its own.
async fn run_suite(
    dir: &Path,
    server: &Path,
    (harness, args, scenarios, expected, failing): &(&str, &[&str], usize, usize, usize),
) {
    let port = peers::free_port();
    let mut cmd = Command::new(server);
    cmd.arg(port.to_string());
    let _server = peers::PeerProcess::spawn(cmd);
    peers::wait_port(port).await;

    let out_dir =
        std::env::temp_dir().join(format!("mcp-conformance-{}-{port}", std::process::id()));
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
        .arg(&out_dir)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(240), run.output())
        .await
        .unwrap_or_else(|_| panic!("{harness} {args:?} took over 240 s"))
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // A suite ends with "Total: …", one scenario with "Passed: …".
    let total = stdout
        .lines()
        .find(|l| l.starts_with("Total: ") || l.starts_with("Passed: "))
        .unwrap_or_else(|| {
            panic!(
                "{harness} {args:?}: no Total line\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let summary = match total.starts_with("Total: ") {
        true => format!("Total: {expected} passed, {failing} failed"),
        false => format!(
            "Passed: {expected}/{}, {failing} failed, 0 warnings",
            expected + failing
        ),
    };
    assert_eq!(total, summary, "{harness} {args:?}\n{stdout}");
    let saved = saved_checks(&out_dir);
    let _ = std::fs::remove_dir_all(&out_dir);
    assert_eq!(
        saved,
        (*expected, *failing, 0),
        "{harness} {args:?}: (passed, failed, warnings) differ: {total}\n{stdout}"
    );
    let ran = stdout
        .lines()
        .filter(|l| l.starts_with("=== Running scenario: "))
        .count();
    assert_eq!(
        ran, *scenarios,
        "{harness} {args:?}: scenarios run\n{stdout}"
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
    eprintln!("{harness} {args:?}: {total}, 0 warnings");
}

/// docs/mcp-conformance.md's server table shows what
/// [`conformance_server_suites_pass`] checks: a row for every run.
#[test]
fn the_server_table_is_true() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mcp-conformance.md"),
    )
    .unwrap();
    let server = &doc[doc.find("## Server scenarios").unwrap()..];
    let rows: Vec<String> = server
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(str::to_owned)
        .collect();
    let want: Vec<String> = SUITES
        .iter()
        .map(|(harness, args, scenarios, passed, _)| {
            format!(
                "| `{harness}` | `{}` | {scenarios} | {passed} |",
                args.join(" ")
            )
        })
        .collect();
    assert_eq!(rows, want, "docs/mcp-conformance.md and SUITES differ");
    // The summary by requirement set.
    let set = |revision: &str| {
        let (_, _, scenarios, passed, _) = SUITES
            .iter()
            .find(|(h, a, ..)| *h == "conformance-alpha" && a == &["--requirements", revision])
            .unwrap();
        format!("{scenarios} scenarios, {passed} checks")
    };
    let summary = format!(
        "| server (`server --requirements …`) | {} | {} |",
        set("2025-11-25"),
        set("2026-07-28")
    );
    assert!(
        doc.contains(&summary),
        "docs/mcp-conformance.md lacks {summary:?}"
    );
}
