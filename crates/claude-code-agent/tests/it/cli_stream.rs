//! The stream's contract, against the real CLI: the README's loop
//! (`if let Message::Result(r) = message? {…}`) stops only when the session
//! is over, never on a line the SDK had to skip. The CLI runs under a shell
//! that copies its stdout and, mid-turn (after the first assistant
//! message), adds lines of its own: a JSON object cut short, a line over the
//! cap.

use std::time::Duration;

use crate::support::*;
use claude_code_agent::mcp::schemars::{self, JsonSchema};
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::message::SkipReason;
use claude_code_agent::{CliCommand, Error, Message, Options, query};
use claude_code_agent_testkit::transcript::drain_all;
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;
use futures::stream::FusedStream;
use serde::Deserialize;
use serde_json::json;

/// The README's input type.
#[derive(Deserialize, JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

/// The README's program, its loop verbatim; what it prints is returned
/// instead (`printed`), and `options` are the harness's.
async fn readme_main(options: Options, printed: &mut Vec<String>) -> claude_code_agent::Result<()> {
    let calc = Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add two numbers", |x: Add| async move {
            x.a + x.b
        }))
        .build();
    let options = options.mcp_server(calc).allowed_tools(["mcp__calc__add"]);
    let mut stream = query("What is 2+3?", options);
    while let Some(message) = stream.next().await {
        if let Message::Result(r) = message? {
            printed.push(r.result.unwrap_or_default()); // the README: println!
        }
    }
    Ok(())
}

/// The turns of the README's prompt: the model calls `add`, then answers.
fn add_turns() -> [Turn; 2] {
    [
        Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})),
        Turn::text("5"),
    ]
}

/// A JSON object cut short, as a CLI killed mid-write or a broken build
/// would print it.
const BROKEN: &str = r#"{"type":"assistant","message":{"content":[{"type":"te"#;

/// Runs the CLI under `/bin/sh`, which copies the CLI's stdout and, after
/// its first assistant message, runs `inject` (shell commands that write
/// lines to stdout) and says `injected` on stderr.
fn injecting(inject: String) -> impl Fn(CliCommand) -> std::io::Result<CliCommand> {
    const SCRIPT: &str = r#"inject=$1; shift
"$@" | {
  done=
  while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$line"
    if [ -z "$done" ]; then
      case $line in *'"type":"assistant"'*) done=1; eval "$inject"; echo injected >&2;; esac
    fi
  done
}"#;
    move |cmd: CliCommand| Ok(cmd.wrap("/bin/sh", ["-c", SCRIPT, "sh", &inject]))
}

/// (a) The README's program, as written, against a CLI that prints a
/// broken JSON object mid-turn: it runs to the end of the turn and prints
/// the result (before, the broken line was an `Err` item and `?` ended the
/// program).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_loop_survives_a_broken_line_mid_turn() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turns(add_turns())).await;
        let inject = format!("printf '%s\\n' '{BROKEN}'");
        let options = h.options().spawn_with(injecting(inject));
        let mut printed = Vec::new();
        let ended = readme_main(options, &mut printed).await;
        assert!(ended.is_ok(), "{ended:?}\n{}", h.stderr_text());
        assert_eq!(printed, ["5"], "{}", h.stderr_text());
        // The line was written mid-turn: after the tool call, before the result.
        assert!(
            h.stderr_lines().iter().any(|l| l == "injected"),
            "{}",
            h.stderr_text()
        );
        assert_eq!(h.mock().tool_results().len(), 1);
        assert_eq!(h.mock().tool_results()[0].text(), "5");
        h.finish().await;
    })
    .await
}

/// (b) A line over the cap and a broken object, mid-turn, are each a
/// `Message::SkippedLine` — the reason typed (the cap; serde's error), the
/// length, the first bytes — between the tool call and the result, and the
/// turn completes. No item is an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipped_lines_are_reported_as_messages_and_the_turn_completes() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turns(add_turns())).await;
        let inject = format!(
            "printf '{{\"type\":\"assistant\",\"pad\":\"'; \
             head -c 1048576 /dev/zero | tr '\\0' x; printf '\"}}\\n'; \
             printf '%s\\n' '{BROKEN}'"
        );
        let calc = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "Add two numbers", |x: Add| async move {
                x.a + x.b
            }))
            .build();
        let options = h
            .options()
            .spawn_with(injecting(inject))
            .max_line_bytes(256 << 10)
            .mcp_server(calc)
            .allowed_tools(["mcp__calc__add"]);
        let drained = drain_all(query("What is 2+3?", options)).await;
        assert!(
            drained.error.is_none(),
            "{:?}\n{}",
            drained.error,
            h.stderr_text()
        );
        let skipped = &drained.skipped;
        assert_eq!(skipped.len(), 2, "{skipped:?}");

        assert_eq!(skipped[0].reason, SkipReason::TooLong { limit: 256 << 10 });
        assert_eq!(skipped[0].len, (1 << 20) + 29);
        assert!(
            skipped[0]
                .excerpt
                .starts_with(r#"{"type":"assistant","pad":"xxx"#),
            "{:?}",
            skipped[0].excerpt
        );
        assert_eq!(skipped[0].excerpt.len(), 256);

        let serde = skipped[1].reason.json_error().expect("serde's error");
        assert!(serde.is_eof(), "{serde}");
        assert_eq!(skipped[1].excerpt, BROKEN);
        assert_eq!(skipped[1].len, BROKEN.len());
        let as_error: &dyn std::error::Error = &skipped[1];
        assert!(
            as_error
                .source()
                .is_some_and(|s| s.is::<serde_json::Error>())
        );

        // In order: the tool call, the two reports, the tool result, the answer.
        let at = |f: &dyn Fn(&Message) -> bool| {
            drained
                .messages
                .iter()
                .position(f)
                .unwrap_or_else(|| panic!("{:?}", drained.messages))
        };
        let call = at(&|m| matches!(m, Message::Assistant(a) if a.tool_uses().next().is_some()));
        let first_report = at(&|m| matches!(m, Message::SkippedLine(_)));
        let result = at(&Message::is_result);
        assert!(call < first_report && first_report < result);
        let r = drained.messages[result].as_result().unwrap();
        assert_eq!(r.result.as_deref(), Some("5"));
        assert!(!r.is_error, "{r:?}");
        h.finish().await;
    })
    .await
}

/// (c) What does end a session still ends the loop: the CLI killed
/// mid-turn (inside a tool call) is an `Err(Error::CliExited)` out of the
/// README's `?`, without a result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_loop_stops_with_an_error_when_the_cli_dies_mid_turn() {
    with_timeout(async {
        let h =
            Harness::start(MockModel::builder().turn(Turn::tool_use("mcp__slow__wait", json!({}))))
                .await;
        let (tool, probe) = slow_tool("wait", Duration::from_secs(60));
        let options = h
            .options()
            .mcp_server(Server::builder("slow", "1.0.0").tool(tool).build())
            .allowed_tools(["mcp__slow__wait"]);
        let run = tokio::spawn(async move {
            let mut stream = query("go", options);
            let mut printed = Vec::new();
            let ended: claude_code_agent::Result<()> = async {
                while let Some(message) = stream.next().await {
                    if let Message::Result(r) = message? {
                        printed.push(r.result.unwrap_or_default());
                    }
                }
                Ok(())
            }
            .await;
            // An error is the stream's last item.
            let over = stream.is_terminated() && stream.next().await.is_none();
            (ended, printed, over)
        });
        probe.wait_started(1).await;
        kill(h.wait_for_cli_pid().await, libc::SIGKILL);
        let (ended, printed, then_none) = run.await.unwrap();
        match ended {
            Err(Error::CliExited { signal, .. }) => assert_eq!(signal, Some(libc::SIGKILL)),
            other => panic!("expected CliExited, got {other:?}"),
        }
        assert!(printed.is_empty(), "{printed:?}");
        assert!(then_none, "the stream went on after its error");
        h.finish().await;
    })
    .await
}
