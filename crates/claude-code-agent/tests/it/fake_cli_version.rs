//! The CLI's version against the tested range, with the fake CLI claiming
//! other versions in its `initialize` answer: outside the range a warning
//! reaches stderr once per process (seen in a child test process, whose
//! stderr is not captured by the test harness), `CliVersionPolicy::Error`
//! refuses the session with the version and the range and leaves no process
//! behind, and inside the range nothing is said.

use crate::support::child::run_alone;
use crate::support::fake_cli::{bounded, collect, fake};
use claude_code_agent::{
    CliVersionPolicy, Client, Error, NEWEST_TESTED_CLI_VERSION, OLDEST_TESTED_CLI_VERSION, query,
};
use futures::StreamExt;
use serde_json::{Value, json};

/// The child's instructions: the version the fake claims (JSON) and the policy.
const CHILD_VERSION_ENV: &str = "CLI_VERSION_TEST_CHILD_VERSION";
const CHILD_POLICY_ENV: &str = "CLI_VERSION_TEST_CHILD_POLICY";
const WARNING: &str = "warning (claude-code-agent):";

/// Runs [`child_starts_three_sessions`] in a child process and returns its stderr.
fn child_stderr(version: Value, policy: &str) -> String {
    let fake_bin = claude_code_agent_fake_cli::binary().expect("build fake-claude");
    let out = run_alone(
        module_path!(),
        "child_starts_three_sessions",
        &[
            (CHILD_VERSION_ENV, &version.to_string()),
            (CHILD_POLICY_ENV, policy),
            ("FAKE_CLAUDE_BIN", fake_bin.to_str().unwrap()),
        ],
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(WARNING)).collect()
}

/// Two clients and a `query`, each against a fake claiming the child's version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run in a child process by the tests of this file"]
async fn child_starts_three_sessions() {
    let version: Value = serde_json::from_str(&std::env::var(CHILD_VERSION_ENV).unwrap()).unwrap();
    let policy = match std::env::var(CHILD_POLICY_ENV).unwrap().as_str() {
        "warn" => CliVersionPolicy::Warn,
        "ignore" => CliVersionPolicy::Ignore,
        other => panic!("policy {other}"),
    };
    for _ in 0..2 {
        let fake = fake("chat", json!({ "claude_code_version": version }));
        let options = fake.options.clone().cli_version_policy(policy);
        let client = bounded(20, Client::connect(options))
            .await
            .expect("connect");
        assert_eq!(
            client.initialize_response().claude_code_version,
            version.as_str().map(str::to_owned)
        );
        bounded(20, client.disconnect()).await.expect("disconnect");
        fake.assert_gone().await;
    }
    let fake = fake("chat", json!({ "claude_code_version": version }));
    let messages = bounded(
        20,
        collect(query("hi", fake.options.clone().cli_version_policy(policy))),
    )
    .await;
    assert!(messages.iter().all(Result::is_ok), "{messages:?}");
    fake.assert_gone().await;
}

#[test]
fn an_older_cli_is_warned_about_once_per_process_on_stderr() {
    let stderr = child_stderr(json!("2.1.200"), "warn");
    let warned = warnings(&stderr);
    assert_eq!(warned.len(), 1, "three sessions, one warning:\n{stderr}");
    let w = warned[0];
    assert!(w.contains("version 2.1.200, older"), "{w}");
    assert!(
        w.contains(&format!(
            "{OLDEST_TESTED_CLI_VERSION}..={NEWEST_TESTED_CLI_VERSION}"
        )),
        "{w}"
    );
}

#[test]
fn a_cli_without_a_version_is_older_than_2_1_296() {
    let stderr = child_stderr(Value::Null, "warn");
    let warned = warnings(&stderr);
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(warned[0].contains("older than 2.1.296"), "{}", warned[0]);
}

#[test]
fn a_newer_cli_is_untested() {
    let stderr = child_stderr(json!("2.2.0"), "warn");
    let warned = warnings(&stderr);
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(warned[0].contains("version 2.2.0, newer"), "{}", warned[0]);
}

#[test]
fn no_warning_inside_the_range_or_when_ignored() {
    for v in [
        OLDEST_TESTED_CLI_VERSION,
        "2.1.310",
        NEWEST_TESTED_CLI_VERSION,
    ] {
        let stderr = child_stderr(json!(v), "warn");
        assert!(warnings(&stderr).is_empty(), "{v}: {stderr}");
    }
    let stderr = child_stderr(json!("2.1.200"), "ignore");
    assert!(warnings(&stderr).is_empty(), "ignored: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_error_policy_refuses_the_session_and_stops_the_cli() {
    let f = fake("chat", json!({"claude_code_version": "2.1.200"}));
    let options = f
        .options
        .clone()
        .cli_version_policy(CliVersionPolicy::Error);
    let err = bounded(20, Client::connect(options))
        .await
        .expect_err("an untested CLI is refused");
    match &err {
        Error::UntestedCliVersion { found, message } => {
            assert_eq!(found.as_deref(), Some("2.1.200"));
            assert!(message.contains("2.1.302..=2.1.337"), "{message}");
        }
        other => panic!("expected UntestedCliVersion, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("version 2.1.200") && text.contains("cli_version_policy"),
        "{text}"
    );
    f.assert_gone().await;

    // The same through `query`: the stream's only item is the error.
    let f = fake("chat", json!({"claude_code_version": null}));
    let options = f
        .options
        .clone()
        .cli_version_policy(CliVersionPolicy::Error);
    let mut stream = Box::pin(query("hi", options));
    match bounded(20, stream.next()).await {
        Some(Err(Error::UntestedCliVersion {
            found: None,
            message,
        })) => {
            assert!(message.contains("older than 2.1.296"), "{message}")
        }
        other => panic!("expected UntestedCliVersion, got {other:?}"),
    }
    assert!(bounded(5, stream.next()).await.is_none());
    drop(stream);
    f.assert_gone().await;

    // Inside the range the policy lets the session start.
    let f = fake("chat", json!({}));
    let options = f
        .options
        .clone()
        .cli_version_policy(CliVersionPolicy::Error);
    let client = bounded(20, Client::connect(options))
        .await
        .expect("connect");
    bounded(20, client.disconnect()).await.expect("disconnect");
    f.assert_gone().await;
}
