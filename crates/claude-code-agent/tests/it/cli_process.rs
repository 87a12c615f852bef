//! The CLI process: killed mid-turn, abandoned mid-turn, failing before the
//! handshake, and a streamed prompt that ends.

use std::time::{Duration, Instant};

use crate::support::*;
use claude_code_agent::mcp::Server;
use claude_code_agent::{Client, Error, Message, PermissionMode, PromptInput, UserInput, query};
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;
use serde_json::json;

fn slow_server(runs_for: Duration) -> (Server, SlowProbe) {
    let (tool, probe) = slow_tool("wait", runs_for);
    (Server::builder("slow", "1.0.0").tool(tool).build(), probe)
}

fn assert_killed(error: &Error) {
    match error {
        Error::CliExited { signal, code, .. } => {
            assert_eq!(*signal, Some(libc::SIGKILL), "{error}");
            assert_eq!(*code, None);
        }
        other => panic!("expected CliExited, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_cli_ends_the_query_stream_with_cli_exited() {
    with_timeout(async {
        let h =
            Harness::start(MockModel::builder().turn(Turn::tool_use("mcp__slow__wait", json!({}))))
                .await;
        let (server, probe) = slow_server(Duration::from_secs(60));
        let options = h.options().mcp_server(server).allowed_tools(["mcp__slow"]);
        let run = tokio::spawn(drain(query("go", options)));
        probe.wait_started(1).await;

        let pid = h.wait_for_cli_pid().await;
        kill(pid, libc::SIGKILL);
        let killed_at = Instant::now();

        let (messages, error) = run.await.unwrap();
        assert!(killed_at.elapsed() < Duration::from_secs(10));
        assert!(!messages.iter().any(Message::is_result));
        assert_killed(&error.expect("the stream reports the exit"));
        // The call that was running is cancelled: nobody will read its answer.
        assert!(
            probe.wait_cancelled(1, Duration::from_secs(5)).await,
            "the running tool was not cancelled"
        );
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_cli_ends_the_client_response_and_closes_the_client() {
    with_timeout(async {
        let h =
            Harness::start(MockModel::builder().turn(Turn::tool_use("mcp__slow__wait", json!({}))))
                .await;
        let (server, probe) = slow_server(Duration::from_secs(60));
        let client = Client::connect(h.options().mcp_server(server).allowed_tools(["mcp__slow"]))
            .await
            .expect("connect");
        client.query("go").await.unwrap();
        probe.wait_started(1).await;
        kill(h.wait_for_cli_pid().await, libc::SIGKILL);

        let (messages, error) = drain(client.receive_response()).await;
        assert!(!messages.iter().any(Message::is_result));
        assert_killed(&error.expect("the response reports the exit"));
        assert!(probe.wait_cancelled(1, Duration::from_secs(5)).await);

        // The session is over: nothing can be sent, nothing more arrives.
        match client.query("anyone there?").await {
            Err(e) => assert_killed(&e),
            Ok(()) => panic!("query on a dead CLI succeeded"),
        }
        let started = Instant::now();
        match client.mcp_status().await {
            Err(e) => assert_killed(&e),
            Ok(status) => panic!("mcp_status on a dead CLI answered {status:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        let rest = tokio::time::timeout(
            Duration::from_secs(5),
            client.receive_messages().collect::<Vec<_>>(),
        )
        .await
        .expect("receive_messages ends");
        assert!(rest.is_empty(), "{rest:?}");
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_stream_leaves_no_process_and_cancels_the_tool() {
    with_timeout(async {
        let h =
            Harness::start(MockModel::builder().turn(Turn::tool_use("mcp__slow__wait", json!({}))))
                .await;
        let (server, probe) = slow_server(Duration::from_secs(60));
        let options = h.options().mcp_server(server).allowed_tools(["mcp__slow"]);
        let mut stream = Box::pin(query("go", options));
        // Read until the tool is running, then walk away.
        let reader = async {
            while let Some(m) = stream.next().await {
                m.expect("no error before the drop");
            }
            panic!("the stream ended before the tool ran");
        };
        tokio::select! {
            () = probe.wait_started(1) => {}
            () = reader => {}
        }
        let pid = h.wait_for_cli_pid().await;
        drop(stream);

        // Killed and reaped at once: gone, and no zombie.
        assert_gone(pid).await;
        assert!(
            probe.wait_cancelled(1, Duration::from_secs(5)).await,
            "the running tool was not cancelled"
        );
        assert_eq!(probe.finished(), 0);
        h.finish().await;
    })
    .await
}

/// Exits before answering `initialize`: an unknown session to resume, or
/// `bypassPermissions` as root without `IS_SANDBOX=1`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_exiting_before_initialize_is_reported_at_once() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder()).await;
        let cases = [
            (
                h.options().resume("00000000-0000-0000-0000-000000000000"),
                "No conversation found",
            ),
            (
                h.options()
                    .permission_mode(PermissionMode::BypassPermissions)
                    .env("IS_SANDBOX", "0"),
                "root",
            ),
        ];
        for (options, stderr_says) in cases {
            // Through query …
            let started = Instant::now();
            let (messages, error) = drain(query("hi", options.clone())).await;
            let took = started.elapsed();
            assert!(messages.is_empty(), "{messages:?}");
            let error = error.expect("an error");
            assert!(took < Duration::from_secs(15), "took {took:?}");
            match &error {
                Error::CliExited {
                    code, stderr_tail, ..
                } => {
                    assert_eq!(*code, Some(1), "{error}");
                    assert!(stderr_tail.contains(stderr_says), "{error}");
                }
                other => panic!("expected CliExited, got {other:?}"),
            }
            // … and through Client::connect.
            let started = Instant::now();
            let error = Client::connect(options).await.expect_err("connect fails");
            assert!(started.elapsed() < Duration::from_secs(15));
            assert!(
                matches!(&error, Error::CliExited { stderr_tail, .. } if stderr_tail.contains(stderr_says)),
                "{error:?}"
            );
        }
        assert!(h.mock().conversation_requests().is_empty());
        h.finish().await;
    })
    .await
}

async fn two_turn_prompt(h: &Harness, prompt: PromptInput) {
    let (messages, error) = drain(query(prompt, h.options())).await;
    assert!(error.is_none(), "{error:?}");
    let results = results(&messages);
    assert_eq!(results.len(), 2, "{messages:?}");
    assert_eq!(results[0].result.as_deref(), Some("you said: one"));
    assert_eq!(results[1].result.as_deref(), Some("you said: two"));
    assert!(matches!(messages.last(), Some(Message::Result(_))));
    let asked: Vec<String> = h
        .mock()
        .conversation_requests()
        .iter()
        .map(last_line)
        .collect();
    assert_eq!(asked, ["one", "two"]);
}

/// The last line of the request's last user text (the CLI may put a
/// system reminder before the prompt).
fn last_line(req: &claude_code_agent_testkit::RecordedRequest) -> String {
    let text = req.last_user_text().unwrap_or_default();
    text.lines().last().unwrap_or_default().to_owned()
}

fn echo_mock() -> claude_code_agent_testkit::MockModelBuilder {
    MockModel::builder().fallback(|req| Turn::text(format!("you said: {}", last_line(req))))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_prompt_of_two_messages_gives_two_results_then_ends() {
    with_timeout(async {
        let h = Harness::start(echo_mock()).await;
        let prompt = PromptInput::stream(futures::stream::iter([
            UserInput::text("one"),
            UserInput::text("two"),
        ]));
        two_turn_prompt(&h, prompt).await;
        h.finish().await;
    })
    .await
}

/// The second message comes after the first turn has ended: the stream must
/// wait for it rather than end after the first result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_prompt_with_a_late_second_message_waits_for_it() {
    with_timeout(async {
        let h = Harness::start(echo_mock()).await;
        let mock_seen_one = {
            let requests = h.mock().requests();
            requests.len()
        };
        assert_eq!(mock_seen_one, 0);
        let prompt = PromptInput::stream(futures::stream::iter([UserInput::text("one")]).chain(
            futures::stream::once(async {
                tokio::time::sleep(Duration::from_millis(2500)).await;
                UserInput::text("two")
            }),
        ));
        two_turn_prompt(&h, prompt).await;
        h.finish().await;
    })
    .await
}
