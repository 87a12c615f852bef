//! Reading a session's messages in assertions: the tool calls the model
//! made, the results the CLI sent back, the final `result`, the text.
//!
//! ```
//! use claude_code_agent::Message;
//! use claude_code_agent_testkit::transcript::{assistant_text, tool_results, tool_uses};
//!
//! let messages: Vec<Message> = Vec::new(); // e.g. from `transcript::drain(query(…))`
//! assert!(tool_uses(&messages).is_empty());
//! assert!(tool_results(&messages).is_empty());
//! assert_eq!(assistant_text(&messages), "");
//! ```

use std::time::Duration;

use claude_code_agent::message::{ResultMessage, SkippedLine, ToolResultBlock, ToolUseBlock};
use claude_code_agent::{ContentBlock, Message};

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

/// A message stream read to its end by [`drain_all`].
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Drained {
    /// The messages, in order, the reports of skipped lines
    /// ([`Message::SkippedLine`]) among them.
    pub messages: Vec<Message>,
    /// The lines the SDK had to skip, in order: the
    /// [`Message::SkippedLine`]s of [`messages`](Self::messages).
    pub skipped: Vec<SkippedLine>,
    /// The error that ended the stream, if any (always its last item).
    pub error: Option<claude_code_agent::Error>,
}

/// Reads a message stream to its end: the messages, the reports of skipped
/// lines among them (which do not end it), and the error that ended it, if
/// any.
///
/// # Panics
///
/// When the stream goes on after an error (it must end within 10 s).
pub async fn drain_all<S>(stream: S) -> Drained
where
    S: futures::Stream<Item = claude_code_agent::Result<Message>>,
{
    use futures::StreamExt;
    let mut stream = std::pin::pin!(stream);
    let mut drained = Drained::default();
    while let Some(item) = stream.next().await {
        match item {
            Ok(m) => {
                if let Message::SkippedLine(skipped) = &m {
                    drained.skipped.push(skipped.clone());
                }
                drained.messages.push(m);
            }
            Err(e) => {
                // An error is a stream's last item; make sure it is.
                let next = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
                assert!(
                    matches!(next, Ok(None)),
                    "the stream went on after the error {e}: {next:?}"
                );
                drained.error = Some(e);
                break;
            }
        }
    }
    drained
}

/// [`drain_all`] for a stream that should report no skipped line: the
/// messages, and the error that ended it, if any.
///
/// # Panics
///
/// When the stream reported a skipped line (use [`drain_all`] to see
/// them), or went on after an error.
pub async fn drain<S>(stream: S) -> (Vec<Message>, Option<claude_code_agent::Error>)
where
    S: futures::Stream<Item = claude_code_agent::Result<Message>>,
{
    let drained = drain_all(stream).await;
    assert!(
        drained.skipped.is_empty(),
        "the stream reported skipped lines (see transcript::drain_all): {:?}",
        drained.skipped
    );
    (drained.messages, drained.error)
}
