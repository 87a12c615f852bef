//! Reading a session's messages in assertions: the tool calls the model
//! made, the results the CLI sent back, the final `result`, the text.
//!
//! ```
//! use claude_agent::Message;
//! use claude_agent_testkit::transcript::{assistant_text, tool_results, tool_uses};
//!
//! let messages: Vec<Message> = Vec::new(); // e.g. from `transcript::drain(query(…))`
//! assert!(tool_uses(&messages).is_empty());
//! assert!(tool_results(&messages).is_empty());
//! assert_eq!(assistant_text(&messages), "");
//! ```

use std::time::Duration;

use claude_agent::message::{ResultMessage, ToolResultBlock, ToolUseBlock};
use claude_agent::{ContentBlock, Message};

/// The `tool_use` blocks of the assistant messages, in order.
pub fn tool_uses(messages: &[Message]) -> Vec<ToolUseBlock> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.content().to_vec()),
            _ => None,
        })
        .flatten()
        .filter_map(|b| match b {
            ContentBlock::ToolUse(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// The `tool_result` blocks of the user messages (what the CLI sent back to
/// the model), in order.
pub fn tool_results(messages: &[Message]) -> Vec<ToolResultBlock> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(u.tool_results().cloned().collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The text of a `tool_result` block (empty without content).
pub fn result_text(block: &ToolResultBlock) -> String {
    block.content.as_ref().map(|c| c.text()).unwrap_or_default()
}

/// The `result` messages (one per turn).
pub fn results(messages: &[Message]) -> Vec<ResultMessage> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Result(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The text of every assistant message, joined by `\n`.
pub fn assistant_text(messages: &[Message]) -> String {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.text()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads a message stream to its end: the messages, and the error that ended
/// it, if any.
///
/// # Panics
///
/// When the stream goes on after an error (it must end within 10 s).
pub async fn drain<S>(stream: S) -> (Vec<Message>, Option<claude_agent::Error>)
where
    S: futures::Stream<Item = claude_agent::Result<Message>>,
{
    use futures::StreamExt;
    let mut stream = std::pin::pin!(stream);
    let mut messages = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(m) => messages.push(m),
            Err(e) => {
                // A stream ends after a fatal error; make sure it does.
                let next = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
                assert!(
                    matches!(next, Ok(None)),
                    "the stream went on after the error {e}: {next:?}"
                );
                return (messages, Some(e));
            }
        }
    }
    (messages, None)
}
