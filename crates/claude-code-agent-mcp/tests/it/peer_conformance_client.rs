//! The official MCP conformance harness (client mode) running our client
//! (crates/devtools/src/bin/conformance-client.rs) against its own scenario servers.
//! Peers come from scripts/install-mcp-peers; without them the test prints
//! `SKIPPED` (and fails when `CI` or `CLAUDE_AGENT_PEERS_DIR` is set).

use crate::support::peers;
use futures::StreamExt;
use std::collections::BTreeMap;
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

/// The client scenarios each requirement set of the alpha harness
/// (0.2.0-alpha.12, `client --requirements <revision>`) runs, at that
/// revision's wire, with the checks each must pass, every one passed with
/// no warning: what the revision requires, and what it runs unscored (the
/// auth extensions, `json-schema-2020-12-preservation`). The sets cover
/// every client scenario of the alpha but those of [`ALPHA_ALONE`] (and the
/// alpha's `auth/2025-03-26-*`), so no other alpha scenario also runs
/// alone. The 2025-11-25 set has `sse-retry`, whose reconnection delay the
/// harness judges by the clock: the alpha fails only a retry too early.
const REQUIREMENT_SETS: &[(&str, &[(&str, usize)])] = &[
    (
        "2025-11-25",
        &[
            ("initialize", 1),
            ("tools_call", 2),
            ("elicitation-sep1034-client-defaults", 5),
            ("sse-retry", 3),
            ("auth/metadata-default", 18),
            ("auth/metadata-var1", 18),
            ("auth/metadata-var2", 18),
            ("auth/metadata-var3", 18),
            ("auth/basic-cimd", 13),
            ("auth/scope-from-www-authenticate", 14),
            ("auth/scope-from-scopes-supported", 14),
            ("auth/scope-omitted-when-undefined", 14),
            ("auth/scope-step-up", 20),
            ("auth/scope-retry-limit", 22),
            ("auth/token-endpoint-auth-basic", 19),
            ("auth/token-endpoint-auth-post", 19),
            ("auth/token-endpoint-auth-none", 19),
            ("auth/pre-registration", 13),
            ("auth/client-credentials-jwt", 8),
            ("auth/client-credentials-basic", 8),
            ("auth/enterprise-managed-authorization", 9),
            ("auth/dpop", 12),
            ("auth/dpop-nonce", 14),
            ("auth/wif-jwt-bearer", 8),
            ("json-schema-2020-12-preservation", 9),
        ],
    ),
    (
        "2026-07-28",
        &[
            ("tools_call", 2),
            ("request-metadata", 6),
            ("auth/metadata-default", 18),
            ("auth/metadata-var1", 18),
            ("auth/metadata-var2", 18),
            ("auth/metadata-var3", 18),
            ("auth/basic-cimd", 12),
            ("auth/scope-from-www-authenticate", 14),
            ("auth/scope-from-scopes-supported", 14),
            ("auth/scope-omitted-when-undefined", 14),
            ("auth/scope-step-up", 23),
            ("auth/scope-retry-limit", 23),
            ("auth/token-endpoint-auth-basic", 19),
            ("auth/token-endpoint-auth-post", 19),
            ("auth/token-endpoint-auth-none", 19),
            ("auth/pre-registration", 12),
            ("auth/resource-mismatch", 2),
            ("auth/offline-access-scope", 12),
            ("auth/offline-access-not-supported", 14),
            ("auth/authorization-server-migration", 27),
            ("auth/iss-supported", 14),
            ("auth/iss-not-advertised", 14),
            ("auth/iss-supported-missing", 8),
            ("auth/iss-wrong-issuer", 8),
            ("auth/iss-unexpected", 8),
            ("auth/iss-normalized", 8),
            ("auth/metadata-issuer-mismatch", 3),
            ("sep-2322-client-request-state", 5),
            ("http-standard-headers", 3),
            ("http-custom-headers", 18),
            ("http-invalid-tool-headers", 12),
            ("json-schema-ref-no-deref", 1),
            ("auth/client-credentials-jwt", 7),
            ("auth/client-credentials-basic", 7),
            ("auth/enterprise-managed-authorization", 8),
            ("auth/dpop", 13),
            ("auth/dpop-nonce", 15),
            ("auth/wif-jwt-bearer", 7),
            ("json-schema-2020-12-preservation", 9),
        ],
    ),
];

/// The alpha's client scenarios in no requirement set (the Skills
/// extension's), run one by one, with their checks, every one passed with
/// no warning: nothing read at listing, a file used only as its entry
/// lists it.
const ALPHA_ALONE: &[(&str, usize)] = &[
    ("sep-2640-client-no-prefetch", 1),
    ("sep-2640-client-verify-digest", 1),
    ("sep-2640-client-verify-size", 1),
    ("sep-2640-client-verify-frontmatter", 1),
];

/// The authorization scenarios (feature `oauth-client`): those of the
/// stable harness's `auth` suite in one run of it, the others one by one;
/// every one of the stable harness, and the alpha's outside its
/// [`REQUIREMENT_SETS`] (the 2025-03-26 back-compatibility ones); the
/// harness, the scenario and its number of checks, every one passed
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
    (
        Harness::Alpha,
        "auth/2025-03-26-oauth-metadata-backcompat",
        12,
    ),
    (Harness::Alpha, "auth/2025-03-26-oauth-endpoint-fallback", 7),
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

/// Runs the client under `harness` with `args` (`--scenario …` or
/// `--requirements …`) and `env`, and returns its output, stdout and
/// stderr (the harness prints its summary to either, depending on the
/// version), and whether it exited with success.
async fn harness_output(
    dir: &Path,
    client: &Path,
    harness: Harness,
    args: &[&str],
    env: &[(&str, String)],
) -> (String, bool) {
    let out_dir = std::env::temp_dir().join(format!(
        "mcp-conformance-client-{}-{harness:?}-{}",
        std::process::id(),
        args.join("-").replace('/', "_")
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
        .args(args)
        .args(["--timeout", "60000"])
        .arg("-o")
        .arg(&out_dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), run.output())
        .await
        .unwrap_or_else(|_| panic!("client {args:?} took over 180 s"))
        .unwrap();
    let _ = std::fs::remove_dir_all(&out_dir);
    let stdout = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (stdout, out.status.success())
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
    let args = ["--scenario", scenario];
    let (stdout, success) = harness_output(dir, client, harness, &args, env).await;
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
        success,
        "{harness:?} client scenario {scenario} failed\n{stdout}"
    );
    eprintln!("{harness:?} client scenario {scenario}: {total}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_client_scenarios_pass() {
    let Some((dir, client)) = setup("peer_conformance_client") else {
        return;
    };
    // One harness run each, four at a time: they wait more than they compute.
    let stable = SCENARIOS
        .iter()
        .map(|(s, n)| (Harness::Stable, *s, *n, false));
    let alpha = ALPHA_ALONE
        .iter()
        .map(|(s, n)| (Harness::Alpha, *s, *n, true));
    futures::stream::iter(stable.chain(alpha))
        .for_each_concurrent(4, |(harness, scenario, expected, strict)| {
            run(&dir, &client, harness, scenario, expected, strict)
        })
        .await;
}

/// Each requirement set of the alpha harness, its scenarios run together
/// (in parallel) at the revision's wire: every scenario it runs, with its
/// checks ([`REQUIREMENT_SETS`]), no check failed, none warned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_client_requirement_sets_pass() {
    let Some((dir, client)) = setup("peer_conformance_client") else {
        return;
    };
    for (revision, scenarios) in REQUIREMENT_SETS {
        let args = ["--requirements", revision];
        let (stdout, success) = harness_output(&dir, &client, Harness::Alpha, &args, &[]).await;
        let total = check_summary(&stdout, scenarios, &format!("requirements {revision}"));
        assert!(success, "requirements {revision} failed\n{stdout}");
        eprintln!("client --requirements {revision}: {total}");
    }
}

/// Checks the summary of a run of several scenarios in `stdout` ("✓
/// <scenario>: <n> passed, 0 failed" each, ", <w> warnings" and ✗ when
/// some warned, then the total): exactly `scenarios` ran, each with its
/// number of checks, none failed, none warned. Returns the total line.
fn check_summary(stdout: &str, scenarios: &[(&str, usize)], what: &str) -> String {
    let ran: BTreeMap<&str, String> = summary(stdout)
        .into_iter()
        .map(|(s, r)| (s, r.to_owned()))
        .collect();
    let want: BTreeMap<&str, String> = scenarios
        .iter()
        .map(|(s, n)| (*s, format!("{n} passed, 0 failed")))
        .collect();
    assert_eq!(ran, want, "{what}\n{stdout}");
    let passed: usize = scenarios.iter().map(|(_, n)| n).sum();
    let total = format!("Total: {passed} passed, 0 failed, 0 warnings");
    assert!(
        stdout.lines().any(|l| l == total),
        "{what}: not {total:?}\n{stdout}"
    );
    total
}

/// The scenarios of a run's summary and what it says of each.
fn summary(stdout: &str) -> BTreeMap<&str, &str> {
    stdout
        .lines()
        .skip_while(|l| !l.contains("SUITE SUMMARY"))
        .filter_map(|l| l.strip_prefix("✓ ").or_else(|| l.strip_prefix("✗ ")))
        .filter_map(|l| l.split_once(": "))
        .collect()
}

/// Every `auth/*` client scenario of both harnesses: discovery,
/// registration, the grants, scopes and step-up, DPoP, `iss` checks.
#[cfg(feature = "oauth-client")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_auth_scenarios_pass() {
    let Some((dir, client)) = setup("peer_conformance_client") else {
        return;
    };
    // The stable harness's `auth` suite, its scenarios in parallel in one
    // run; then the others of the table, one run each, four at a time.
    let (stdout, success) =
        harness_output(&dir, &client, Harness::Stable, &["--suite", "auth"], &[]).await;
    let in_suite = summary(&stdout);
    assert!(
        in_suite.len() >= 10,
        "the auth suite ran too little\n{stdout}"
    );
    let suite: Vec<(&str, usize)> = AUTH_SCENARIOS
        .iter()
        .filter(|(h, s, _)| matches!(h, Harness::Stable) && in_suite.contains_key(s))
        .map(|(_, s, n)| (*s, *n))
        .collect();
    // A scenario of the suite missing from the table fails here too.
    check_summary(&stdout, &suite, "client --suite auth");
    assert!(success, "client --suite auth failed\n{stdout}");
    let rest = AUTH_SCENARIOS
        .iter()
        .filter(|(h, s, _)| !(matches!(h, Harness::Stable) && in_suite.contains_key(s)));
    futures::stream::iter(rest)
        .for_each_concurrent(4, |(harness, scenario, expected)| {
            run(&dir, &client, *harness, scenario, *expected, true)
        })
        .await;
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
/// every scenario, with its checks on the stable harness, in each
/// requirement set of the alpha, and alone on the alpha.
#[test]
fn the_conformance_table_is_true() {
    type Rows = std::collections::BTreeMap<String, [String; 4]>;
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mcp-conformance.md"),
    )
    .unwrap();
    let client = &doc[..doc.find("## Server scenarios").unwrap_or(doc.len())];
    let rows: Rows = client
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let cell = |i: usize| cells.get(i).copied().unwrap_or("").to_owned();
            (
                cells[0].trim_matches('`').to_owned(),
                [cell(1), cell(2), cell(3), cell(4)],
            )
        })
        .collect();
    let mut want = Rows::new();
    let mut put = |scenario: &str, column: usize, n: usize| {
        want.entry(scenario.to_owned())
            .or_insert_with(|| ["—", "—", "—", "—"].map(str::to_owned))[column] = n.to_string();
    };
    for (scenario, n) in SCENARIOS {
        put(scenario, 0, *n);
    }
    for (column, (_, scenarios)) in REQUIREMENT_SETS.iter().enumerate() {
        for (scenario, n) in *scenarios {
            put(scenario, column + 1, *n);
        }
    }
    for (scenario, n) in ALPHA_ALONE {
        put(scenario, 3, *n);
    }
    #[cfg(feature = "oauth-client")]
    for (harness, scenario, n) in AUTH_SCENARIOS {
        match harness {
            Harness::Stable => put(scenario, 0, *n),
            Harness::Alpha => put(scenario, 3, *n),
        }
    }
    // Without the feature, the auth scenarios run alone are not claimed.
    #[cfg(not(feature = "oauth-client"))]
    let (rows, want) = {
        let unclaimed = |mut rows: Rows| {
            for (scenario, row) in &mut rows {
                if scenario.starts_with("auth/") {
                    (row[0], row[3]) = ("—".to_owned(), "—".to_owned());
                }
            }
            rows.retain(|_, row| row.iter().any(|c| c != "—"));
            rows
        };
        (unclaimed(rows), unclaimed(want))
    };
    assert_eq!(
        rows, want,
        "docs/mcp-conformance.md and the scenario lists differ"
    );
    // The summary by requirement set.
    let sets: Vec<String> = REQUIREMENT_SETS
        .iter()
        .map(|(_, scenarios)| {
            let passed: usize = scenarios.iter().map(|(_, n)| n).sum();
            format!("{} scenarios, {passed} checks", scenarios.len())
        })
        .collect();
    let summary = format!(
        "| client (`client --requirements …`) | {} |",
        sets.join(" | ")
    );
    assert!(
        doc.contains(&summary),
        "docs/mcp-conformance.md lacks {summary:?}"
    );
}
