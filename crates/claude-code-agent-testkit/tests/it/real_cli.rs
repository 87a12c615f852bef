//! The mock model against the real, pinned Claude Code CLI (raw NDJSON over pipes, no
//! SDK). Each test has its own mock, temporary `CLAUDE_CONFIG_DIR` and working folder;
//! every wait is bounded and the CLI is killed if a test fails.

use std::time::{Duration, Instant};

use crate::support::RawCli;
use claude_code_agent_testkit::cli::{CliEnv, tested_cli_version};
use claude_code_agent_testkit::mock_api::{Answer, MockModel, RequestKind, Turn};
use serde_json::{Value, json};

const TEST_TIMEOUT: Duration = Duration::from_secs(120);

async fn bounded<F: std::future::Future<Output = ()>>(name: &str, f: F) {
    let t0 = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, f)
        .await
        .unwrap_or_else(|_| panic!("{name} did not finish within {TEST_TIMEOUT:?}"));
    eprintln!("{name}: {:?}", t0.elapsed());
}

/// The `tool_use` blocks of the `assistant` messages the CLI printed.
fn printed_tool_uses(cli: &RawCli) -> Vec<Value> {
    cli.seen("assistant")
        .iter()
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_turn_becomes_the_result() {
    bounded("text_turn_becomes_the_result", async {
        let mock = MockModel::builder()
            .turn(Turn::text("Hello from the mock"))
            .start()
            .await;
        let env = CliEnv::for_mock(&mock).unwrap();
        let mut cli = RawCli::spawn(&env, &[]).await;
        cli.initialize().await;
        cli.user("hi there").await;
        let result = cli.result().await;
        assert_eq!(result["subtype"], "success", "{result}");
        assert_eq!(result["is_error"], false, "{result}");
        assert_eq!(result["result"], "Hello from the mock", "{result}");
        // usage comes from the mock: input ≈ request chars / 4, a few output tokens
        assert!(
            result["usage"]["input_tokens"].as_u64().unwrap() > 100,
            "{result}"
        );
        let status = cli.finish().await;
        assert!(status.success(), "exit status {status:?}");

        let conv = mock.conversation_requests();
        assert_eq!(conv.len(), 1, "{:#?}", mock.requests());
        let req = &conv[0];
        assert_eq!(req.answer, Answer::Script(0));
        assert_eq!(req.path, "/v1/messages");
        assert!(req.is_streaming());
        assert_eq!(req.header("x-api-key"), Some("sk-test"));
        let user_agent = req.header("user-agent").unwrap();
        let after = user_agent
            .strip_prefix(&format!("claude-cli/{}", tested_cli_version()))
            .unwrap_or_else(|| panic!("{user_agent}"));
        assert!(
            !after.starts_with(|c: char| c.is_ascii_digit()),
            "{user_agent}"
        );
        assert!(req.last_user_text().unwrap().contains("hi there"));
        assert!(req.tool_names().contains(&"Read"), "{:?}", req.tool_names());
        assert!(!req.system_text().is_empty());
        assert_eq!(mock.remaining_turns(), 0);
        assert!(
            mock.unexpected_requests().is_empty(),
            "{:#?}",
            mock.unexpected_requests()
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_error_turn_gives_an_error_result() {
    bounded("api_error_turn_gives_an_error_result", async {
        let mock = MockModel::builder()
            .turn(Turn::invalid_request("mock says bad request"))
            .turn(Turn::text("second turn works"))
            .start()
            .await;
        let env = CliEnv::for_mock(&mock).unwrap();
        let mut cli = RawCli::spawn(&env, &["--system-prompt", ""]).await;
        cli.initialize().await;
        cli.user("fail please").await;
        let result = cli.result().await;
        assert_eq!(result["is_error"], true, "{result}");
        assert_eq!(result["api_error_status"], 400, "{result}");
        assert!(
            result["result"]
                .as_str()
                .unwrap()
                .contains("mock says bad request"),
            "{result}"
        );
        // the CLI retries a 400 with fewer betas; all attempts are one scripted step
        let conv = mock.conversation_requests();
        assert!(!conv.is_empty());
        assert_eq!(conv[0].answer, Answer::Script(0));
        for r in &conv[1..] {
            assert_eq!(r.answer, Answer::Retry(0), "{r:#?}");
            assert_eq!(r.status, 400);
        }
        eprintln!("400 attempts: {}", conv.len());

        // the script continues with the next user message
        cli.user("again").await;
        let result = cli.result().await;
        assert_eq!(result["is_error"], false, "{result}");
        assert_eq!(result["result"], "second turn works", "{result}");
        let status = cli.finish().await;
        assert!(status.success(), "exit status {status:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overloaded_once_then_the_retry_succeeds() {
    bounded("overloaded_once_then_the_retry_succeeds", async {
        let mock = MockModel::builder()
            .turn(Turn::overloaded().once())
            .turn(Turn::text("recovered"))
            .start()
            .await;
        let env = CliEnv::for_mock(&mock)
            .unwrap()
            .set("CLAUDE_CODE_MAX_RETRIES", "2");
        let mut cli = RawCli::spawn(&env, &["--system-prompt", ""]).await;
        cli.initialize().await;
        cli.user("hello").await;
        let result = cli.result().await;
        assert_eq!(result["is_error"], false, "{result}");
        assert_eq!(result["result"], "recovered", "{result}");
        let retries: Vec<Value> = cli
            .seen("system")
            .into_iter()
            .filter(|m| m["subtype"] == "api_retry")
            .collect();
        assert_eq!(retries.len(), 1, "{retries:?}");
        assert_eq!(retries[0]["error_status"], 529);
        let conv = mock.conversation_requests();
        assert_eq!(conv.len(), 2);
        assert_eq!((conv[0].status, conv[1].status), (529, 200));
        assert_eq!(conv[1].answer, Answer::Script(1));
        assert_eq!(cli.finish().await.code(), Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_read_tool_runs_and_its_result_comes_back() {
    bounded("scripted_read_tool_runs_and_its_result_comes_back", async {
        let mock = MockModel::builder().start().await;
        let env = CliEnv::for_mock(&mock).unwrap();
        let file = env.work_dir().join("notes.txt");
        std::fs::write(&file, "the secret word is pineapple\n").unwrap();
        mock.push_turn(
            Turn::thinking("I should read the notes.")
                .with_text("Reading the file.")
                .with_tool_use("Read", json!({"file_path": file.to_str().unwrap()})),
        );
        // echo the tool result back, computed from the request
        mock.push_turn(Turn::dynamic(|req| {
            let texts: Vec<String> = req.tool_results().iter().map(|t| t.text()).collect();
            Turn::text(format!("ECHO {}", texts.join(" | ")))
        }));
        let mut cli =
            RawCli::spawn(&env, &["--system-prompt", "", "--include-partial-messages"]).await;
        cli.initialize().await;
        cli.user("what is the secret word?").await;
        let result = cli.result().await;
        assert_eq!(result["is_error"], false, "{result}");

        // the CLI saw the tool call…
        let uses = printed_tool_uses(&cli);
        assert_eq!(uses.len(), 1, "{uses:?}");
        assert_eq!(uses[0]["name"], "Read");
        let id = uses[0]["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("toolu_01"), "{id}");
        let conv = mock.conversation_requests();
        assert_eq!(conv.len(), 2);
        assert_eq!(conv[0].answered_tool_uses()[0].0, id);
        // …ran it, and sent the result back in the next request
        let tr = mock.tool_result(&id).expect("tool_result sent back");
        assert!(!tr.is_error, "{tr:?}");
        assert!(tr.text().contains("pineapple"), "{tr:?}");
        assert_eq!(conv[1].tool_results()[0].tool_use_id, id);
        let text = result["result"].as_str().unwrap();
        assert!(
            text.starts_with("ECHO ") && text.contains("pineapple"),
            "{text}"
        );
        // the thinking block was streamed through too
        let thinking = cli
            .seen("assistant")
            .iter()
            .flat_map(|m| {
                m["message"]["content"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|b| b["type"] == "thinking")
            .expect("thinking block");
        assert_eq!(thinking["thinking"], "I should read the notes.");
        assert!(thinking["signature"].as_str().unwrap().starts_with("sig_"));
        // the raw SSE events came through as stream_event lines, in the API's shapes
        let events: Vec<Value> = cli
            .seen("stream_event")
            .iter()
            .map(|m| m["event"].clone())
            .collect();
        let kinds = |ty: &str| -> Vec<String> {
            events
                .iter()
                .filter(|e| e["type"] == ty)
                .map(|e| e["delta"]["type"].as_str().unwrap_or("").to_owned())
                .collect()
        };
        let deltas = kinds("content_block_delta");
        for d in [
            "thinking_delta",
            "signature_delta",
            "text_delta",
            "input_json_delta",
        ] {
            assert!(deltas.iter().any(|x| x == d), "no {d} in {deltas:?}");
        }
        assert_eq!(kinds("message_start").len(), 2);
        assert_eq!(kinds("message_stop").len(), 2);
        let stops: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "message_delta")
            .map(|e| &e["delta"]["stop_reason"])
            .collect();
        assert_eq!(stops, [&json!("tool_use"), &json!("end_turn")]);
        assert!(cli.finish().await.success());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_bash_without_permission_is_denied_and_reported() {
    bounded(
        "scripted_bash_without_permission_is_denied_and_reported",
        async {
            let mock = MockModel::builder()
                .turn(Turn::tool_use(
                    "Bash",
                    json!({"command": "touch created-by-bash", "description": "touch"}),
                ))
                .turn(Turn::text("ok, denied"))
                .start()
                .await;
            let env = CliEnv::for_mock(&mock).unwrap();
            let mut cli = RawCli::spawn(&env, &["--system-prompt", ""]).await;
            cli.initialize().await;
            cli.user("run it").await;
            let result = cli.result().await;
            assert_eq!(result["result"], "ok, denied", "{result}");
            let uses = printed_tool_uses(&cli);
            assert_eq!(uses.len(), 1);
            assert_eq!(uses[0]["name"], "Bash");
            let id = uses[0]["id"].as_str().unwrap();
            let tr = mock.tool_result(id).expect("tool_result");
            assert!(tr.is_error, "{tr:?}");
            assert!(!env.work_dir().join("created-by-bash").exists());
            let denials = result["permission_denials"].as_array().unwrap();
            assert_eq!(denials.len(), 1, "{result}");
            assert_eq!(denials[0]["tool_name"], "Bash");
            assert!(cli.finish().await.success());
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_tokens_and_side_calls_do_not_consume_the_script() {
    bounded(
        "count_tokens_and_side_calls_do_not_consume_the_script",
        async {
            let mock = MockModel::builder()
                .turn(Turn::text("still the first scripted turn"))
                .start()
                .await;
            let env = CliEnv::for_mock(&mock).unwrap();
            let mut cli = RawCli::spawn(&env, &["--model", "claude-sonnet-4-5"]).await;
            cli.initialize().await;
            // get_context_usage makes the CLI count tokens through the API
            let id = cli.control(json!({"subtype": "get_context_usage"})).await;
            let usage = cli.control_response(&id).await;
            assert_eq!(usage["response"]["subtype"], "success", "{usage}");
            let counted = mock.count_tokens_requests();
            assert!(!counted.is_empty(), "{:#?}", mock.requests());
            for r in &counted {
                assert_eq!(r.path, "/v1/messages/count_tokens");
                assert_eq!(r.status, 200);
                let n = r.response["input_tokens"].as_u64().unwrap();
                let chars = serde_json::to_string(&r.body).unwrap().chars().count() as u64;
                assert!(
                    n * 4 >= chars / 2 && n * 4 <= chars * 2,
                    "{n} tokens for {chars} chars"
                );
            }
            eprintln!(
                "get_context_usage: {} count_tokens, {} side calls: {:?}",
                counted.len(),
                mock.side_requests().len(),
                mock.side_requests()
                    .iter()
                    .map(|r| (
                        r.model().map(str::to_owned),
                        r.max_tokens(),
                        r.is_streaming()
                    ))
                    .collect::<Vec<_>>()
            );
            assert_eq!(mock.remaining_turns(), 1);
            assert!(mock.conversation_requests().is_empty());
            // switching models makes the CLI probe the new model with a side call
            let id = cli
                .control(json!({"subtype": "set_model", "model": "claude-haiku-4-5"}))
                .await;
            cli.control_response(&id).await;
            let id = cli
                .control(json!({"subtype": "set_model", "model": "claude-sonnet-4-5"}))
                .await;
            cli.control_response(&id).await;
            let side = mock.side_requests();
            assert_eq!(side.len(), 2, "{side:#?}");
            for (r, model) in side.iter().zip(["claude-haiku-4-5", "claude-sonnet-4-5"]) {
                assert_eq!(r.model(), Some(model));
                assert_eq!(r.max_tokens(), Some(1));
                assert!(!r.is_streaming());
                assert_eq!((r.answer.clone(), r.status), (Answer::SideCall, 200));
            }
            assert_eq!(mock.remaining_turns(), 1);
            assert!(mock.conversation_requests().is_empty());

            cli.user("hello").await;
            let result = cli.result().await;
            assert_eq!(
                result["result"], "still the first scripted turn",
                "{result}"
            );
            assert_eq!(
                mock.conversation_requests()[0].model(),
                Some("claude-sonnet-4-5")
            );
            assert!(cli.finish().await.success());
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delayed_turn_can_be_interrupted() {
    bounded("delayed_turn_can_be_interrupted", async {
        let mock = MockModel::builder()
            .turn(Turn::text("too late").delay(Duration::from_secs(60)))
            .turn(Turn::text("after the interrupt"))
            .start()
            .await;
        let env = CliEnv::for_mock(&mock).unwrap();
        let mut cli = RawCli::spawn(&env, &["--system-prompt", ""]).await;
        cli.initialize().await;
        cli.user("slow one").await;
        assert!(
            mock.wait_for_conversation_requests(1, Duration::from_secs(30))
                .await,
            "the CLI never called the API"
        );
        let t0 = Instant::now();
        let id = cli.control(json!({"subtype": "interrupt"})).await;
        cli.control_response(&id).await;
        let result = cli.result().await;
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "interrupt took {:?}",
            t0.elapsed()
        );
        assert_ne!(result["result"], "too late", "{result}");
        let first = &mock.conversation_requests()[0];
        assert_eq!(first.answer, Answer::Script(0));
        assert!(first.client_disconnected, "{first:#?}");
        assert_eq!(first.status, 0);

        cli.user("next").await;
        let result = cli.result().await;
        assert_eq!(result["result"], "after the interrupt", "{result}");
        cli.finish().await;
        assert!(mock.requests().iter().all(|r| r.kind != RequestKind::Other));
    })
    .await;
}
