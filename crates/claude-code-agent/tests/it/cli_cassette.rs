//! Cassettes on the real CLI (the testkit's feature `cassette`): a session
//! recorded through the proxy, with the mock model as the upstream, replays
//! after the mock is gone with the same tool calls, tool results and
//! answer; a changed prompt or tool fails the replay with the diff; the
//! recording key and what the redaction patterns match are not in the file.

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::{Message, query};
use claude_code_agent_testkit::cassette::{Cassette, CassetteError, CassetteSession};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-RECORDING-KEY-6f1e2d9c";
const PROMPT: &str = "What is 2 + 3? (ticket user-secret-1234)";

fn calc(description: &str) -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", description, |x: Operands| async move {
            x.a + x.b
        }))
        .build()
}

/// What a run shows: the tool calls (name, input), the tool results, the
/// final answer.
async fn run(
    cassette: &CassetteSession,
    prompt: &str,
    tool: &str,
) -> (
    Vec<(String, Value)>,
    Vec<String>,
    Option<String>,
    Vec<Message>,
) {
    let options = cassette
        .options()
        .mcp_server(calc(tool))
        .allowed_tools(["mcp__calc__add"]);
    let (messages, _) = drain(query(prompt, options)).await;
    let uses = tool_uses(&messages)
        .into_iter()
        .map(|u| (u.name, u.input))
        .collect();
    let results = tool_results(&messages).iter().map(result_text).collect();
    let answer = results_of(&messages);
    (uses, results, answer, messages)
}

/// The model of the recordings: it calls `add` with 2 and 3, then echoes
/// the result.
async fn calc_model() -> MockModel {
    MockModel::builder()
        .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
        .turn(echo_results())
        .start()
        .await
}

/// `cassette`, recording from `mock` with the test key, redacting the
/// ticket's secret.
fn recording_to(cassette: Cassette, mock: &MockModel) -> Cassette {
    cassette
        .upstream(mock.url())
        .api_key(KEY)
        .redact("user-secret-[0-9]+")
}

fn results_of(messages: &[Message]) -> Option<String> {
    results(messages)
        .into_iter()
        .next()
        .filter(|r| !r.is_error)
        .and_then(|r| r.result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_replays_offline_and_a_change_fails_with_the_diff() {
    with_timeout(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cassettes/calc.json");
        let mock = calc_model().await;

        // Record, with the mock as the upstream.
        let cassette = recording_to(Cassette::record(&path), &mock)
            .start()
            .await
            .unwrap();
        assert!(cassette.is_recording());
        let recorded = run(&cassette, PROMPT, "Add a and b").await;
        assert_eq!(
            recorded.0,
            [("mcp__calc__add".to_owned(), json!({"a": 2, "b": 3}))],
            "{:?}",
            recorded.3
        );
        assert_eq!(recorded.1, ["5"]);
        assert_eq!(recorded.2.as_deref(), Some("results: 5"));
        cassette.finish().await.unwrap();
        let upstream = mock.requests();
        assert!(!upstream.is_empty());
        for r in &upstream {
            assert_eq!(
                r.header("x-api-key"),
                Some(KEY),
                "the proxy sends the recording key upstream"
            );
        }
        mock.shutdown();
        drop(mock);

        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(KEY), "the key is in the cassette");
        assert!(
            !text.contains("user-secret-1234"),
            "a redacted value is in the cassette"
        );
        assert!(text.contains("[REDACTED]"));
        assert!(
            text.contains("\"tool_use\"") && text.contains("mcp__calc__add"),
            "{text}"
        );

        // Replay, offline: the same run.
        let cassette = Cassette::replay(&path).start().await.unwrap();
        assert!(!cassette.is_recording());
        let replayed = run(&cassette, PROMPT, "Add a and b").await;
        assert_eq!(
            (&replayed.0, &replayed.1, &replayed.2),
            (&recorded.0, &recorded.1, &recorded.2),
            "{:?}",
            replayed.3
        );
        cassette.finish().await.unwrap();

        // A changed prompt: the turn fails, and `finish` says what changed.
        let cassette = Cassette::replay(&path).start().await.unwrap();
        let changed = run(
            &cassette,
            "What is 2 + 4? (ticket user-secret-1234)",
            "Add a and b",
        )
        .await;
        assert!(
            changed.0.is_empty() && changed.2.is_none(),
            "{:?}",
            changed.3
        );
        let error = cassette.finish().await.unwrap_err();
        let CassetteError::Mismatch { report, count, .. } = &error else {
            panic!("{error}")
        };
        assert!(
            report.contains("What is 2 + 3?") && report.contains("What is 2 + 4?"),
            "{report}"
        );
        // The CLI retries the request it got an error for: one report.
        assert_eq!(
            report.matches("matches no recorded request").count(),
            1,
            "{count} requests: {report}"
        );
        // `finish().unwrap()` would show the diff as lines, not one string.
        let debug = format!("{error:?}");
        assert!(debug.contains("\n+++ the CLI asked"), "{debug}");
        assert!(
            report.contains("--- the cassette holds") && report.contains("+++ the CLI asked"),
            "{report}"
        );

        // A changed tool: its description is part of what is matched.
        let cassette = Cassette::replay(&path).start().await.unwrap();
        let _ = run(&cassette, PROMPT, "Adds two numbers").await;
        let error = cassette.finish().await.unwrap_err();
        assert!(error.to_string().contains("Adds two numbers"), "{error}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_cassette_is_an_error_in_replay() {
    let dir = tempfile::tempdir().unwrap();
    let error = Cassette::replay(dir.path().join("none.json"))
        .start()
        .await
        .unwrap_err();
    assert!(matches!(error, CassetteError::Io { .. }), "{error}");
    assert!(error.to_string().contains("none.json"), "{error}");
}

#[tokio::test]
async fn a_corrupt_cassette_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(
        &path,
        "{\n  \"cassette\": 1,\n  \"interactions\": [oops]\n}\n",
    )
    .unwrap();
    let error = Cassette::replay(&path).start().await.unwrap_err();
    assert!(matches!(error, CassetteError::Format { .. }), "{error}");
    assert!(
        error.to_string().contains("bad.json") && error.to_string().contains("line 3, column"),
        "{error}"
    );
    let debug = format!("{error:?}");
    assert!(
        debug.contains("line 3, column") && debug.contains("Caused by: "),
        "{debug}"
    );
}

/// The committed cassette (`tests/fixtures/cassettes/calc.json`), recorded
/// from the pinned CLI with the mock model as the upstream, as a user's
/// test would record from the real API: `CLAUDE_AGENT_CASSETTE=all` records
/// it anew (the mock answers), otherwise it is replayed, the mock unused.
/// On the pinned CLI it replays exactly. The oldest supported CLI asks
/// the same, up to what its diff shows: `finish` names each request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_committed_cassette_replays() {
    with_timeout(async {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cassettes/calc.json");
        let mock = calc_model().await;
        let cassette = recording_to(Cassette::new(&path), &mock)
            .start()
            .await
            .unwrap();
        let recording = cassette.is_recording();
        let (uses, results, answer, messages) = run(&cassette, PROMPT, "Add a and b").await;
        let outcome = cassette.finish().await;
        if !recording {
            assert!(
                mock.requests().is_empty(),
                "a replay asks the upstream nothing"
            );
        }
        let pinned = claude_code_agent_testkit::cli::tested_cli_version()
            == claude_code_agent_testkit::PINNED_CLI_VERSION;
        match outcome {
            Ok(()) => {
                assert_eq!(
                    uses,
                    [("mcp__calc__add".to_owned(), json!({"a": 2, "b": 3}))],
                    "{messages:?}"
                );
                assert_eq!(results, ["5"]);
                assert_eq!(answer.as_deref(), Some("results: 5"));
            }
            Err(CassetteError::Mismatch { report, .. }) if !pinned => {
                eprintln!("the oldest CLI asks differently:\n{report}");
                assert!(report.contains("--- the cassette holds"), "{report}");
            }
            Err(e) => panic!("{e}"),
        }
    })
    .await;
}

/// An upstream that refuses the key is not recorded: `finish` says so, and
/// no file is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_records_nothing() {
    with_timeout(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("refused.json");
        let mock = MockModel::builder()
            .default_reply(Turn::api_error(
                401,
                "authentication_error",
                "invalid x-api-key",
            ))
            .start()
            .await;
        let cassette = recording_to(Cassette::record(&path), &mock)
            .start()
            .await
            .unwrap();
        let (_, _, answer, _) = run(&cassette, PROMPT, "Add a and b").await;
        assert!(answer.is_none());
        let error = cassette.finish().await.unwrap_err();
        assert!(matches!(error, CassetteError::Upstream { .. }), "{error}");
        assert!(
            error.to_string().contains("refused the key (HTTP 401)"),
            "{error}"
        );
        assert!(!path.exists(), "a cassette of refusals was written");
    })
    .await;
}
