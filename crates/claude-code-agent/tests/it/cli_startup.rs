//! `startup()`: the real CLI started and its handshake done before the
//! first prompt; the prompt given later, through `query` or a `Client`; an
//! unused started session dropped or closed.

use std::time::Duration;

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::protocol::McpServerState;
use claude_code_agent::{Client, Message, WarmQuery, startup};
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;

/// Started (with an in-process server `calc`) and idle: the handshake is
/// answered, the process runs, and the model has not been asked anything;
/// holding it a while changes nothing.
async fn started_and_idle(h: &Harness) -> WarmQuery {
    let calc = Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
            x.a + x.b
        }))
        .build();
    let warm = startup(h.options().mcp_server(calc))
        .await
        .expect("startup");
    assert!(
        warm.initialize_response().claude_code_version.is_some(),
        "{:?}",
        warm.initialize_response()
    );
    assert_eq!(h.wait_for_cli_pid().await as u32, warm.pid());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(Proc::read(warm.pid() as i32).is_some());
    assert!(
        h.mock().conversation_requests().is_empty(),
        "the model was asked before the prompt: {:?}",
        h.mock().conversation_requests()
    );
    warm
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_session_answers_its_first_prompt_after_its_handshake() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turn(Turn::text("warm hello"))).await;
        let warm = started_and_idle(&h).await;
        let pid = warm.pid();
        // Live while it waits: control requests are answered, and the CLI's
        // handshake with an in-process server was served.
        let status = wait_for_server(warm.control(), "calc", McpServerState::Connected).await;
        assert_eq!(status.name, "calc");
        assert!(h.mock().conversation_requests().is_empty());

        let query = warm.query("hi");
        // The session is live before the stream is polled.
        let control = query.control().expect("a warm query has its control");
        assert_eq!(control.pid(), pid);
        assert!(control.initialize_response().claude_code_version.is_some());
        let (messages, error) = drain(query).await;
        assert!(error.is_none(), "{error:?}");
        // Nothing was written while it waited: the turn's `system/init` is first.
        assert!(messages[0].as_init().is_some(), "{messages:?}");
        let results = results(&messages);
        assert_eq!(results.len(), 1, "{messages:?}");
        assert_eq!(results[0].result.as_deref(), Some("warm hello"));
        let asked = h.mock().conversation_requests();
        assert_eq!(asked.len(), 1, "{asked:?}");
        let said = asked[0].last_user_text().unwrap_or_default();
        assert!(said.contains("hi"), "{said:?}");
        // The query ended the CLI it was given.
        assert_gone(pid as i32).await;
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_session_becomes_a_client_for_several_turns() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::text("first"))
                .turn(Turn::text("second")),
        )
        .await;
        let warm = started_and_idle(&h).await;
        let pid = warm.pid();
        let client = Client::from(warm);
        assert_eq!(client.pid(), pid);
        for (prompt, answer) in [("one", "first"), ("two", "second")] {
            client.query(prompt).await.unwrap();
            let (messages, error) = drain(client.receive_response()).await;
            assert!(error.is_none(), "{error:?}");
            let results = results(&messages);
            assert_eq!(results.len(), 1, "{messages:?}");
            assert_eq!(results[0].result.as_deref(), Some(answer));
        }
        assert_eq!(h.mock().conversation_requests().len(), 2);
        client.disconnect().await.unwrap();
        assert_gone(pid as i32).await;
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_started_session_dropped_or_closed_leaves_no_process() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder()).await;
        // Dropped: the process group is killed at once.
        let warm = startup(h.options()).await.expect("startup");
        let pid = warm.pid();
        assert!(Proc::read(pid as i32).is_some());
        drop(warm);
        assert_gone(pid as i32).await;
        // Closed: stdin closed, the CLI exits on its own and is reaped.
        let warm = startup(h.options()).await.expect("startup");
        let pid = warm.pid();
        warm.close().await;
        assert!(
            Proc::read(pid as i32).is_none(),
            "close returned before the CLI was reaped"
        );
        assert!(h.mock().conversation_requests().is_empty());
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_cli_killed_before_its_prompt_is_the_query_s_one_item() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder()).await;
        let warm = startup(h.options()).await.expect("startup");
        let pid = warm.pid();
        kill(pid as i32, libc::SIGKILL);
        assert_gone(pid as i32).await;
        let messages: Vec<_> = warm.query("anyone there?").collect().await;
        match &messages[..] {
            [Err(claude_code_agent::Error::CliExited { signal, .. })] => {
                assert_eq!(*signal, Some(libc::SIGKILL));
            }
            other => panic!("expected one CliExited, got {other:?}"),
        }
        assert!(h.mock().conversation_requests().is_empty());
        assert!(!messages.iter().any(|m| matches!(m, Ok(Message::Result(_)))));
        h.finish().await;
    })
    .await
}
