//! Process-level faults, against the fake CLI: early exit, death
//! mid-call and mid-stream, stdin closed early, a stderr flood. Each test is
//! bounded in time and checks the fake CLI is gone and reaped afterwards.

use std::time::{Duration, Instant};

use crate::support::fake_cli::{bounded, calc_server, collect, errors, fake, final_result};
use claude_code_agent::{Client, Error, Message, query};
use futures::StreamExt;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_exiting_before_initialize_is_cli_exited_with_its_stderr() {
    // The CLI may exit before or after the SDK wrote `initialize`: both
    // orders must give the exit error, so try a few times.
    for _ in 0..5 {
        exit_before_initialize_once().await;
    }
}

async fn exit_before_initialize_once() {
    let fake = fake(
        "exit_before_init",
        json!({"code": 1, "stderr": "Error: No conversation found with session ID: nope"}),
    );
    let started = Instant::now();
    let messages = bounded(20, collect(query("hi", fake.options.clone()))).await;
    assert_eq!(messages.len(), 1, "{messages:?}");
    match &messages[0] {
        Err(Error::CliExited {
            code, stderr_tail, ..
        }) => {
            assert_eq!(*code, Some(1));
            assert!(
                stderr_tail.contains("No conversation found with session ID: nope"),
                "{stderr_tail:?}"
            );
        }
        other => panic!("expected CliExited, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the early exit was noticed only after {:?} (a control timeout?)",
        started.elapsed()
    );
    fake.assert_gone().await;

    let fake2 = crate::support::fake_cli::fake(
        "exit_before_init",
        json!({"code": 3, "stderr": "bad flag"}),
    );
    let err = bounded(20, Client::connect(fake2.options.clone()))
        .await
        .expect_err("connect must fail");
    assert!(
        matches!(&err, Error::CliExited { code: Some(3), stderr_tail, .. } if stderr_tail.contains("bad flag")),
        "{err:?}"
    );
    fake2.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_killed_mid_tool_call_is_an_error_not_a_hang() {
    let fake = fake(
        "die_mid_tool_call",
        json!({"tool": "slow", "args": {"ms": 60000}, "delay_ms": 200}),
    );
    let options = fake.options.clone().mcp_server(calc_server(None));
    let started = Instant::now();
    let messages = bounded(30, collect(query("call the slow tool", options))).await;
    assert!(
        messages
            .iter()
            .any(|m| matches!(m, Ok(Message::Assistant(a)) if !a.content().is_empty())),
        "the tool_use before the death is delivered: {messages:?}"
    );
    match messages.last() {
        Some(Err(Error::CliExited { signal, .. })) => assert_eq!(*signal, Some(9)),
        other => panic!("expected CliExited by SIGKILL at the end, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(15));
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_killed_mid_line_delivers_what_came_before_then_errors() {
    let fake = fake("die_mid_stream", json!({}));
    let messages = bounded(30, collect(query("hi", fake.options.clone()))).await;
    let texts: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::Assistant(a)) => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["about to die"], "{messages:?}");
    // The half line is a message lost, and the user is told, before the
    // error.
    let n = messages.len();
    assert!(
        n >= 2
            && matches!(&messages[n - 2], Ok(Message::SkippedLine(s))
                if s.excerpt.contains("msg_cut") && s.len == s.excerpt.len()),
        "{messages:?}"
    );
    match messages.last() {
        Some(Err(Error::CliExited { signal, .. })) => assert_eq!(*signal, Some(9)),
        other => panic!("expected CliExited by SIGKILL, got {other:?}"),
    }
    fake.assert_gone().await;
}

/// When the SDK ends the session (here: a transcript past its limit), it
/// kills the CLI, which may be writing a line (seen on the real CLI: a
/// 64 KiB `transcript_mirror` line cut at the pipe's size). That cut is
/// the SDK's own doing: the error says what happened, no `SkippedLine`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_cut_by_the_sdk_ending_the_session_is_not_reported_as_skipped() {
    let fake = fake(
        "die_mid_stream",
        json!({"mirror_bytes": 4000, "wait_ms": 20000}),
    );
    let config = tempfile::tempdir().unwrap();
    let options = fake
        .options
        .clone()
        .env("CLAUDE_CONFIG_DIR", config.path().to_str().unwrap())
        .session_store(claude_code_agent::sessions::InMemorySessionStore::new())
        .max_transcript_bytes(1000);
    let started = Instant::now();
    let messages = bounded(30, collect(query("hi", options))).await;
    assert!(
        !messages
            .iter()
            .any(|m| matches!(m, Ok(Message::SkippedLine(_)))),
        "{messages:?}"
    );
    match messages.last() {
        Some(Err(Error::TranscriptTooLarge { limit, size, .. })) => {
            assert_eq!(*limit, 1000);
            assert!(*size > 4000);
        }
        other => panic!("expected TranscriptTooLarge, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the SDK killed it"
    );
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_closing_its_stdin_ends_the_next_turn_with_an_error() {
    let fake = fake("close_stdin", json!({"linger_ms": 500}));
    let client = bounded(20, Client::connect(fake.options.clone()))
        .await
        .expect("connect");
    client.query("one").await.expect("first query");
    let first = bounded(20, collect(client.receive_response())).await;
    final_result(&first);
    // The CLI no longer reads: the write fails (EPIPE) and the turn can
    // never complete; the stream must end with an error once the CLI exits.
    let sent = client.query("two").await;
    let second = bounded(20, collect(client.receive_response())).await;
    assert!(
        !second.iter().any(|m| matches!(m, Ok(Message::Result(_)))),
        "{second:?}"
    );
    let errs = errors(&second);
    assert!(
        sent.is_err()
            || errs
                .iter()
                .any(|e| matches!(e, Error::CliExited { .. } | Error::Closed | Error::Io(_))),
        "expected an error for the turn the CLI never read, got {sent:?} / {second:?}"
    );
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_stderr_flood_does_not_stall_the_cli() {
    let fake = fake(
        "stderr_flood",
        json!({"mb": 100, "text": "after the flood"}),
    );
    let lines = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = lines.clone();
    let options = fake.options.clone().stderr(move |_| {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let started = Instant::now();
    let messages = bounded(120, collect(query("hi", options))).await;
    assert_eq!(
        final_result(&messages).result.as_deref(),
        Some("after the flood")
    );
    assert!(errors(&messages).is_empty(), "{messages:?}");
    // 100 MB in lines of 1 000 bytes; a few more of the fake's own.
    let n = lines.load(std::sync::atomic::Ordering::Relaxed);
    assert!(n >= 100_000, "only {n} stderr lines were seen");
    eprintln!("100 MB of stderr drained in {:?}", started.elapsed());
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_query_mid_tool_call_kills_the_cli() {
    let fake = fake(
        "ping_during_slow_call",
        json!({"tool": "slow", "args": {"ms": 60000}}),
    );
    let options = fake.options.clone().mcp_server(calc_server(None));
    let mut stream = Box::pin(query("hi", options));
    // Wait for the tool_use: the call is now running in this process.
    bounded(20, async {
        while let Some(m) = stream.next().await {
            if let Ok(Message::Assistant(a)) = m
                && !a.content().is_empty()
            {
                break;
            }
        }
    })
    .await;
    drop(stream);
    fake.assert_gone().await;
}

/// `startup()` on a CLI that exits before its handshake fails as
/// `Client::connect` does, and leaves nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_of_a_cli_exiting_before_initialize_is_cli_exited() {
    let fake = fake("exit_before_init", json!({"code": 3, "stderr": "bad flag"}));
    let err = bounded(20, claude_code_agent::startup(fake.options.clone()))
        .await
        .expect_err("startup must fail");
    assert!(
        matches!(&err, Error::CliExited { code: Some(3), stderr_tail, .. } if stderr_tail.contains("bad flag")),
        "{err:?}"
    );
    fake.assert_gone().await;
}

/// A started CLI that dies before its prompt: the prompt, given at once
/// (while the SDK may not have seen the death yet) or later, through a
/// query or a client, gets how it ended, never a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_cli_killed_before_its_prompt_is_reported_when_used() {
    for (use_client, wait_first) in [(false, false), (false, true), (true, false), (true, true)] {
        let fake = fake("chat", json!({"text": "never"}));
        let warm = bounded(20, claude_code_agent::startup(fake.options.clone()))
            .await
            .expect("startup");
        let pid = fake.pid();
        assert_eq!(warm.pid() as i32, pid);
        crate::support::kill(pid, libc::SIGKILL);
        if wait_first {
            // Gone and reaped (the SDK's reaper) before the prompt is given.
            crate::support::assert_gone(pid).await;
        }
        let error = if use_client {
            let client = Client::from(warm);
            match bounded(20, client.query("hi")).await {
                // Written before the SDK saw the death: the response says it.
                Ok(()) => {
                    let messages = bounded(20, collect(client.receive_response())).await;
                    assert!(
                        messages
                            .iter()
                            .all(|m| !matches!(m, Ok(Message::Result(_))))
                    );
                    messages
                        .into_iter()
                        .last()
                        .expect("an item")
                        .expect_err("an error")
                }
                Err(e) => e,
            }
        } else {
            let messages = bounded(20, collect(warm.query("hi"))).await;
            assert_eq!(messages.len(), 1, "{messages:?}");
            messages.into_iter().next().unwrap().expect_err("an error")
        };
        assert!(
            matches!(
                &error,
                Error::CliExited {
                    signal: Some(9),
                    ..
                }
            ),
            "client {use_client}, waited {wait_first}: {error:?}"
        );
        fake.assert_gone().await;
    }
}

/// Dropping an unused started session kills the CLI at once; closing it
/// ends it gracefully; either way it is reaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_started_fake_cli_dropped_or_closed_is_reaped() {
    let fake1 = fake("chat", json!({}));
    let warm = bounded(20, claude_code_agent::startup(fake1.options.clone()))
        .await
        .expect("startup");
    drop(warm);
    fake1.assert_gone().await;

    let fake2 = fake("chat", json!({}));
    let warm = bounded(20, claude_code_agent::startup(fake2.options.clone()))
        .await
        .expect("startup");
    let started = Instant::now();
    bounded(20, warm.close()).await;
    // It exits on stdin's end: no shutdown timeout was waited out.
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    fake2.assert_gone().await;
}
