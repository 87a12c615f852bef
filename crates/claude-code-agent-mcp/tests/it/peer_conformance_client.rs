//! The official MCP conformance harness (client mode) running our client
//! (crates/devtools/src/bin/conformance-client.rs) against its own scenario servers.
//! Peers come from scripts/install-mcp-peers; without them the test prints
//! `SKIPPED` (and fails when `CI` or `CLAUDE_AGENT_PEERS_DIR` is set).

use crate::support::peers;
use std::path::Path;
use std::time::Duration;

/// The client scenarios we claim, with the number of checks each must pass,
/// on the stable harness (0.1.16). They run one at a time: `sse-retry`
/// measures a reconnection delay, which the harness judges by the clock.
const SCENARIOS: &[(&str, usize)] = &[
    ("initialize", 1),
    ("tools_call", 1),
    ("elicitation-sep1034-client-defaults", 5),
    ("sse-retry", 3),
];

/// The client scenarios of the alpha harness (0.2.0-alpha.12: the
/// 2026-07-28 revision and the extensions) we claim, with their checks,
/// every one passed with no warning: the stateless `_meta` and the version
/// retry, multi round-trip requests, the `Mcp-*` headers (mirrored
/// parameters, tools with invalid annotations left out), JSON Schema kept
/// as sent and no network `$ref` followed, and skills (nothing read at
/// listing, a file used only as its entry lists it).
const ALPHA_SCENARIOS: &[(&str, usize)] = &[
    ("tools_call", 2),
    ("request-metadata", 6),
    ("sep-2322-client-request-state", 5),
    ("http-standard-headers", 3),
    ("http-custom-headers", 18),
    ("http-invalid-tool-headers", 12),
    ("json-schema-ref-no-deref", 1),
    ("json-schema-2020-12-preservation", 9),
    ("sep-2640-client-no-prefetch", 1),
    ("sep-2640-client-verify-digest", 1),
    ("sep-2640-client-verify-size", 1),
    ("sep-2640-client-verify-frontmatter", 1),
];

/// Every authorization scenario of both harnesses (feature `oauth-client`):
/// the harness, the scenario and its number of checks, every one passed
/// with no warning (the harness's SHOULDs are warnings). The numbers depend
/// on what the client does: one discovery per 401, the GET stream offered
/// or not.
#[cfg(feature = "oauth-client")]
const AUTH_SCENARIOS: &[(Harness, &str, usize)] = &[
    (Harness::Stable, "auth/metadata-default", 13),
    (Harness::Stable, "auth/metadata-var1", 13),
    (Harness::Stable, "auth/metadata-var2", 13),
    (Harness::Stable, "auth/metadata-var3", 13),
    (Harness::Stable, "auth/basic-cimd", 13),
    (Harness::Stable, "auth/scope-from-www-authenticate", 14),
    (Harness::Stable, "auth/scope-from-scopes-supported", 14),
    (Harness::Stable, "auth/scope-omitted-when-undefined", 14),
    (Harness::Stable, "auth/scope-step-up", 20),
    (Harness::Stable, "auth/scope-retry-limit", 22),
    (Harness::Stable, "auth/token-endpoint-auth-basic", 18),
    (Harness::Stable, "auth/token-endpoint-auth-post", 18),
    (Harness::Stable, "auth/token-endpoint-auth-none", 18),
    (Harness::Stable, "auth/pre-registration", 13),
    (
        Harness::Stable,
        "auth/2025-03-26-oauth-metadata-backcompat",
        12,
    ),
    (
        Harness::Stable,
        "auth/2025-03-26-oauth-endpoint-fallback",
        7,
    ),
    (Harness::Stable, "auth/resource-mismatch", 2),
    (Harness::Stable, "auth/offline-access-scope", 13),
    (Harness::Stable, "auth/offline-access-not-supported", 14),
    (Harness::Stable, "auth/client-credentials-jwt", 8),
    (Harness::Stable, "auth/client-credentials-basic", 8),
    (Harness::Stable, "auth/cross-app-access-complete-flow", 9),
    (Harness::Alpha, "auth/metadata-default", 18),
    (Harness::Alpha, "auth/metadata-var1", 18),
    (Harness::Alpha, "auth/metadata-var2", 18),
    (Harness::Alpha, "auth/metadata-var3", 18),
    (Harness::Alpha, "auth/basic-cimd", 13),
    (Harness::Alpha, "auth/scope-from-www-authenticate", 14),
    (Harness::Alpha, "auth/scope-from-scopes-supported", 14),
    (Harness::Alpha, "auth/scope-omitted-when-undefined", 14),
    (Harness::Alpha, "auth/scope-step-up", 20),
    (Harness::Alpha, "auth/scope-retry-limit", 22),
    (Harness::Alpha, "auth/token-endpoint-auth-basic", 19),
    (Harness::Alpha, "auth/token-endpoint-auth-post", 19),
    (Harness::Alpha, "auth/token-endpoint-auth-none", 19),
    (Harness::Alpha, "auth/pre-registration", 13),
    (
        Harness::Alpha,
        "auth/2025-03-26-oauth-metadata-backcompat",
        12,
    ),
    (Harness::Alpha, "auth/2025-03-26-oauth-endpoint-fallback", 7),
    (Harness::Alpha, "auth/resource-mismatch", 2),
    (Harness::Alpha, "auth/offline-access-scope", 12),
    (Harness::Alpha, "auth/offline-access-not-supported", 14),
    (Harness::Alpha, "auth/authorization-server-migration", 27),
    (Harness::Alpha, "auth/iss-supported", 14),
    (Harness::Alpha, "auth/iss-not-advertised", 14),
    (Harness::Alpha, "auth/iss-supported-missing", 8),
    (Harness::Alpha, "auth/iss-wrong-issuer", 8),
    (Harness::Alpha, "auth/iss-unexpected", 8),
    (Harness::Alpha, "auth/iss-normalized", 8),
    (Harness::Alpha, "auth/metadata-issuer-mismatch", 3),
    (Harness::Alpha, "auth/client-credentials-jwt", 8),
    (Harness::Alpha, "auth/client-credentials-basic", 8),
    (Harness::Alpha, "auth/enterprise-managed-authorization", 9),
    (Harness::Alpha, "auth/dpop", 12),
    (Harness::Alpha, "auth/dpop-nonce", 14),
    (Harness::Alpha, "auth/wif-jwt-bearer", 8),
];

/// A harness version scripts/install-mcp-peers installs.
#[derive(Clone, Copy, Debug)]
enum Harness {
    /// @modelcontextprotocol/conformance 0.1.16.
    Stable,
    /// @modelcontextprotocol/conformance 0.2.0-alpha.12.
    Alpha,
}

impl Harness {
    fn dir(self) -> &'static str {
        match self {
            Self::Stable => "conformance-0.1.16",
            Self::Alpha => "conformance-alpha",
        }
    }
}

fn installed(dir: &Path) -> bool {
    dir.join(".mcp-peers-installed").exists()
}

/// The peers directory and the client, or `None` (the test is skipped)
/// when the peers are not installed outside CI.
fn setup(test: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let dir = peers::peers_dir(test)?;
    if !installed(&dir) {
        let why = format!(
            "{test}: run scripts/install-mcp-peers (nothing in {})",
            dir.display()
        );
        if std::env::var_os("CI").is_some() || std::env::var_os("CLAUDE_AGENT_PEERS_DIR").is_some()
        {
            panic!("{why}");
        }
        eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
        return None;
    }
    let client = peers::devtool("conformance-client");
    // The harness splits the command on spaces: the path must have none.
    assert!(
        !client.to_string_lossy().contains(' '),
        "the client path {} contains a space",
        client.display()
    );
    Some((dir, client))
}

/// Runs `scenario` on `harness` and checks that all `expected` checks
/// passed (and, when `strict`, that none warned).
async fn run(
    dir: &Path,
    client: &Path,
    harness: Harness,
    scenario: &str,
    expected: usize,
    strict: bool,
) {
    run_with(dir, client, harness, scenario, expected, strict, &[]).await;
}

/// [`run`], with `env` for the client.
async fn run_with(
    dir: &Path,
    client: &Path,
    harness: Harness,
    scenario: &str,
    expected: usize,
    strict: bool,
    env: &[(&str, String)],
) {
    let out_dir = std::env::temp_dir().join(format!(
        "mcp-conformance-client-{}-{harness:?}-{}",
        std::process::id(),
        scenario.replace('/', "_")
    ));
    let mut run = tokio::process::Command::new(dir.join("node22/node_modules/.bin/node"));
    run.arg("--require")
        .arg(dir.join("force-loopback.cjs"))
        .arg(
            dir.join(harness.dir())
                .join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
        )
        .arg("client")
        .arg("--command")
        .arg(client)
        .args(["--scenario", scenario, "--timeout", "60000"])
        .arg("-o")
        .arg(&out_dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
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
        .unwrap_or_else(|| panic!("{harness:?} {scenario}: no \"Passed:\" line\n{stdout}"));
    // Outside the strict scenarios, warnings (the harness's timing remarks
    // on a loaded machine) do not count as failures; failed checks do.
    let want = match strict {
        true => format!("Passed: {expected}/{expected}, 0 failed, 0 warnings"),
        false => format!("Passed: {expected}/{expected}, 0 failed"),
    };
    assert!(
        total.starts_with(&want),
        "{harness:?} client scenario {scenario}: {total}\n{stdout}"
    );
    assert!(
        out.status.success(),
        "{harness:?} client scenario {scenario} exited with {}",
        out.status
    );
    eprintln!("{harness:?} client scenario {scenario}: {total}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_client_scenarios_pass() {
    let Some((dir, client)) = setup("peer_conformance_client") else {
        return;
    };
    for (scenario, expected) in SCENARIOS {
        run(&dir, &client, Harness::Stable, scenario, *expected, false).await;
    }
    for (scenario, expected) in ALPHA_SCENARIOS {
        run(&dir, &client, Harness::Alpha, scenario, *expected, true).await;
    }
}

/// Every `auth/*` client scenario of both harnesses: discovery,
/// registration, the grants, scopes and step-up, DPoP, `iss` checks.
#[cfg(feature = "oauth-client")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_auth_scenarios_pass() {
    let Some((dir, client)) = setup("peer_conformance_client") else {
        return;
    };
    for (harness, scenario, expected) in AUTH_SCENARIOS {
        run(&dir, &client, *harness, scenario, *expected, true).await;
    }
}

/// The crate's `oauth_client` example, as the suite's client: the
/// authorization URL is opened in a "browser" (`$BROWSER`: a script that
/// fetches it and follows the redirect) that lands on the example's
/// loopback redirect URI, where it reads the code.
#[cfg(feature = "oauth-client")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oauth_client_example_authorizes_through_a_loopback_redirect() {
    let Some((dir, _)) = setup("peer_conformance_client") else {
        return;
    };
    let example = peers::example("oauth_client", "oauth-client");
    let browser = format!(
        "{} {}",
        dir.join("node22/node_modules/.bin/node").display(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/peers/browser.mjs")
            .display()
    );
    assert!(!browser.contains("  "), "{browser}");
    let env = [("BROWSER", browser)];
    // Discovery, registration, authorization and `tools/list`: the
    // example calls no tool.
    run_with(
        &dir,
        &example,
        Harness::Stable,
        "auth/metadata-default",
        13,
        true,
        &env,
    )
    .await;
}

/// docs/mcp-conformance.md shows what the tests above check: a row for
/// every scenario, with its checks on each harness.
#[test]
fn the_conformance_table_is_true() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mcp-conformance.md"),
    )
    .unwrap();
    let rows: std::collections::BTreeMap<String, (String, String)> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            (
                cells[0].trim_matches('`').to_owned(),
                (cells[1].to_owned(), cells[2].to_owned()),
            )
        })
        .collect();
    let mut want: std::collections::BTreeMap<String, (String, String)> = SCENARIOS
        .iter()
        .map(|(s, n)| (s.to_string(), (n.to_string(), "—".to_owned())))
        .collect();
    for (scenario, n) in ALPHA_SCENARIOS {
        let row = want
            .entry(scenario.to_string())
            .or_insert(("—".to_owned(), "—".to_owned()));
        row.1 = n.to_string();
    }
    #[cfg(feature = "oauth-client")]
    for (harness, scenario, n) in AUTH_SCENARIOS {
        let row = want
            .entry(scenario.to_string())
            .or_insert(("—".to_owned(), "—".to_owned()));
        match harness {
            Harness::Stable => row.0 = n.to_string(),
            Harness::Alpha => row.1 = n.to_string(),
        }
    }
    #[cfg(not(feature = "oauth-client"))]
    let rows: std::collections::BTreeMap<_, _> = rows
        .into_iter()
        .filter(|(s, _)| !s.starts_with("auth/"))
        .collect();
    assert_eq!(
        rows, want,
        "docs/mcp-conformance.md and the scenario lists differ"
    );
}
