//! Big tool results through the CLI: 10 MiB passed whole and back, 500 MiB
//! capped in place.

use std::path::PathBuf;
use std::time::Instant;

use crate::support::child::run_alone;
use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::query;
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

const SIZE: usize = 10 * 1024 * 1024;

/// The most characters of an MCP result the pinned CLI passes inline.
const INLINE_CEILING: usize = 500_000;

/// `size` characters: a head marker, a repeated body, a tail marker.
fn big_text(size: usize) -> String {
    let head = "BEGIN-OF-BIG-RESULT\n";
    let tail = "\nEND-OF-BIG-RESULT";
    let line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_\n";
    let body = size - head.len() - tail.len();
    let mut text = String::with_capacity(size);
    text.push_str(head);
    text.push_str(&line.repeat(body / line.len()));
    text.push_str(&".".repeat(body % line.len()));
    text.push_str(tail);
    assert_eq!(text.len(), size);
    text
}

/// The persisted-output notice the CLI shows the model instead of a result
/// over its inline ceiling: the path of the file holding the whole result.
fn persisted_path(notice: &str) -> PathBuf {
    let rest = notice
        .split("Full output saved to: ")
        .nth(1)
        .unwrap_or_else(|| panic!("not a persisted-output notice: {notice:.300}"));
    PathBuf::from(rest.lines().next().unwrap().trim())
}

/// A 10 MiB result, with the tool's `_meta` `anthropic/maxResultSizeChars`
/// set through the Tool builder and the server's own cap raised.
///
/// The pinned CLI passes MCP results inline only up to 500,000 characters,
/// whatever the `_meta` says (500,000 inline, 500,001 persisted: checked here),
/// so the 10 MiB result is saved to a file and the model gets a notice with
/// a preview. What is verified: a 500,000-character result of the same tool
/// goes to the model inline (so the `_meta` arrives: the default inline
/// limit is 50,000); the file the CLI wrote holds the whole 10 MiB result,
/// byte for byte (so our ~10 MiB line reached the CLI intact); and a
/// 10 MiB answer of the model comes back through our reader (the CLI writes
/// it in an `assistant` line and again in the `result` line).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_mib_result_reaches_the_cli_and_big_lines_come_back() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use(
                    "mcp__big__dump",
                    json!({"size": INLINE_CEILING}),
                ))
                .turn(Turn::tool_use(
                    "mcp__big__dump",
                    json!({"size": INLINE_CEILING + 1}),
                ))
                .turn(Turn::tool_use("mcp__big__dump", json!({"size": SIZE})))
                .turn(Turn::text(big_text(SIZE))),
        )
        .await;
        let server = Server::builder("big", "1.0.0")
            // The server's own cap (1 Mi characters by default) is raised …
            .max_result_chars(2 * SIZE)
            // … and the CLI is told it may pass the result inline.
            .tool(
                Tool::new("dump", "A lot of text", |args: Value| async move {
                    big_text(args["size"].as_u64().unwrap() as usize)
                })
                .input_schema(
                    json!({"type": "object", "properties": {"size": {"type": "integer"}}}),
                )
                .max_result_size_chars(2 * SIZE as u64),
            )
            .build();
        let options = h.options().mcp_server(server).allowed_tools(["mcp__big"]);

        let started = Instant::now();
        let (messages, error) = drain(query("dump it", options)).await;
        let took = started.elapsed();
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());

        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 3, "{sent:?}");
        assert!(sent.iter().all(|r| !r.is_error));
        // 500,000 characters: inline, whole.
        assert_eq!(sent[0].text(), big_text(INLINE_CEILING));
        // One more character: saved to a file, though the tool asked for
        // 20 Mi inline (the CLI's ceiling, `CLI_MAX_RESULT_SIZE_CHARS`).
        assert!(
            sent[1].text().contains("<persisted-output>"),
            "{:.300}",
            sent[1].text()
        );
        assert_eq!(
            INLINE_CEILING as u64,
            claude_code_agent::mcp::server::CLI_MAX_RESULT_SIZE_CHARS
        );
        // 10 MiB: saved by the CLI, all of it.
        let notice = sent[2].text();
        assert!(notice.contains("<persisted-output>"), "{notice:.300}");
        assert!(notice.contains("BEGIN-OF-BIG-RESULT"), "{notice:.300}");
        let path = persisted_path(&notice);
        assert!(
            path.starts_with(h.env().config_dir()),
            "{} is not under the config folder",
            path.display()
        );
        let saved: Value = serde_json::from_slice(&std::fs::read(&path).expect("the saved result"))
            .expect("JSON content blocks");
        assert_eq!(saved[0]["type"], "text", "{saved:.300}");
        let saved = saved[0]["text"].as_str().expect("text");
        assert_eq!(saved.len(), SIZE);
        assert!(saved == big_text(SIZE), "the saved result differs");

        // Our side: the tool results came back, and so did the 10 MiB answer.
        let seen = tool_results(&messages);
        assert_eq!(seen.len(), 3);
        assert_eq!(result_text(&seen[0]).len(), INLINE_CEILING);
        let last_text = messages
            .iter()
            .rev()
            .find_map(|m| match m {
                claude_code_agent::Message::Assistant(a) => Some(a.text()),
                _ => None,
            })
            .expect("an assistant message");
        assert!(last_text == big_text(SIZE), "{} chars", last_text.len());
        let result = results(&messages).pop().expect("a result");
        assert!(!result.is_error, "{result:?}");
        assert!(result.result.as_deref() == Some(big_text(SIZE).as_str()));
        eprintln!("the 10 MiB round trip took {took:?}");
        h.finish().await;
    })
    .await
}

/// The peak resident memory of this process so far, in bytes (`VmHWM`).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kb * 1024
}

/// A tool that builds a 500 MiB result under the default cap.
///
/// The server cuts it to 1 Mi characters with a note saying how much was
/// cut, in place (the process's peak memory grows by the tool's own 500 MiB
/// and little more: the whole result is never copied or serialized); the
/// CLI gets the capped result (over its token limit, so it saves it to a
/// file and tells the model where) and the session goes on to its end.
#[test]
fn five_hundred_mib_result_is_capped_in_place() {
    // The peak memory is the process's: measured in a process of its own,
    // where no other test of this binary runs.
    let out = run_alone(module_path!(), "five_hundred_mib_result_alone", &[]);
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
}

/// [`five_hundred_mib_result_is_capped_in_place`], alone in its process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run alone in a child process by five_hundred_mib_result_is_capped_in_place"]
async fn five_hundred_mib_result_alone() {
    const HUGE: usize = 500 * 1024 * 1024;
    const CAP: usize = claude_code_agent::mcp::server::limits::DEFAULT_MAX_RESULT_CHARS;
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__huge__build", json!({})))
                .turn(Turn::text("done")),
        )
        .await;
        let server = Server::builder("huge", "1.0.0")
            .tool(
                Tool::new("build", "Builds 500 MiB of text", |_: Value| async move {
                    let mut text = String::with_capacity(HUGE);
                    text.push_str("HEAD-");
                    let body = "0123456789abcdef".repeat(1 << 16);
                    while text.len() < HUGE {
                        text.push_str(&body);
                    }
                    text.truncate(HUGE);
                    text
                })
                .input_schema(json!({"type": "object"})),
            )
            .build();
        let options = h.options().mcp_server(server).allowed_tools(["mcp__huge"]);

        let before = peak_rss();
        let started = Instant::now();
        let (messages, error) = drain(query("build it", options)).await;
        let took = started.elapsed();
        let grew = peak_rss().saturating_sub(before);
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
        eprintln!(
            "the 500 MiB result took {took:?}; peak memory grew by {} MiB",
            grew >> 20
        );
        // The tool's own 500 MiB, plus at most half of it again.
        assert!(
            grew < (HUGE + HUGE / 2) as u64,
            "peak memory grew by {} MiB",
            grew >> 20
        );

        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert!(!sent[0].is_error);
        // Without `anthropic/maxResultSizeChars` the CLI's token limit
        // applies: it saves the text to a file and tells the model where.
        let notice = sent[0].text();
        let path = notice
            .split("Output has been saved to ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(|p| PathBuf::from(p.trim_end_matches('.')))
            .unwrap_or_else(|| panic!("no saved-output notice: {notice:.300}"));
        assert!(path.starts_with(h.env().config_dir()), "{}", path.display());
        let saved = std::fs::read_to_string(&path).expect("the saved result");
        let (kept, note) = saved.split_at(CAP);
        assert!(kept.starts_with("HEAD-0123456789abcdef"));
        let cut = HUGE - CAP;
        assert_eq!(
            note,
            format!(
                "\n\n[Output truncated: {cut} of {HUGE} characters were cut to stay within \
                 the limit of {CAP} characters.]"
            )
        );
        let result = results(&messages).pop().expect("a result");
        assert!(!result.is_error, "{result:?}");
        assert_eq!(result.result.as_deref(), Some("done"));
        h.finish().await;
    })
    .await
}
