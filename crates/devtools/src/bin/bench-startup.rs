//! One run of the start-up benchmark (`scripts/bench-real-cli --startup`):
//! how long a prompt waits for its first message and its result, with the
//! CLI started by `query()` itself (`cold`) or by `startup()` beforehand
//! (`warm`).
//!
//! ```text
//! FAKE_CLAUDE_PATH=/path/to/claude bench-startup cold|warm [IDLE_MS]
//! ```
//!
//! `FAKE_CLAUDE_PATH` names the CLI (the real one here; the name is the
//! other bench programs'). In `warm`, `startup()` runs first, then the
//! program waits `IDLE_MS` (default 1000: the prompt comes a while after
//! the start, as a user's does); the clock starts when the prompt is given
//! (`query()` or `WarmQuery::query`), in the same process in both modes.
//! Prints one JSON line: `{"mode", "startup_ms" (warm), "first_message_ms",
//! "first_type", "assistant_ms", "result_ms"}`, times from the prompt.

use std::time::{Duration, Instant};

use claude_code_agent::{Message, Options, query, startup};
use futures::StreamExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let idle = Duration::from_millis(args.next().map_or(Ok(1000), |s| s.parse())?);
    let cli = std::env::var_os("FAKE_CLAUDE_PATH").ok_or("set FAKE_CLAUDE_PATH to the CLI")?;
    let options = Options::new().cli_path(cli);
    let prompt = "Say hello.";

    let (startup_ms, given, stream) = match mode.as_str() {
        "cold" => (None, Instant::now(), query(prompt, options)),
        "warm" => {
            let started = Instant::now();
            let warm = startup(options).await?;
            let startup_ms = ms(started.elapsed());
            tokio::time::sleep(idle).await;
            (Some(startup_ms), Instant::now(), warm.query(prompt))
        }
        _ => return Err("usage: bench-startup cold|warm [IDLE_MS]".into()),
    };
    let mut stream = stream;
    let (mut first, mut first_type, mut assistant, mut result) = (None, String::new(), None, None);
    while let Some(message) = stream.next().await {
        let message = message?;
        let at = ms(given.elapsed());
        if first.is_none() {
            first = Some(at);
            let wire = message.to_value();
            first_type = [&wire["type"], &wire["subtype"]]
                .iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join("/");
        }
        match message {
            Message::Assistant(_) if assistant.is_none() => assistant = Some(at),
            Message::Result(r) => {
                if r.is_error {
                    return Err(format!("the turn failed: {:?}", r.result).into());
                }
                result = Some(at);
            }
            _ => {}
        }
    }
    let line = serde_json::json!({
        "mode": mode,
        "startup_ms": startup_ms,
        "first_message_ms": first.ok_or("no message")?,
        "first_type": first_type,
        "assistant_ms": assistant,
        "result_ms": result.ok_or("no result")?,
    });
    println!("{line}");
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
