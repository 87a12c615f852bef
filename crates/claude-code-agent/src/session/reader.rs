//! The reader: a Tokio task that owns the CLI's stdout, read through the
//! shared [`LineReader`] on the runtime's reactor.
//!
//! It routes every line as the module docs say and never awaits anything
//! but input: a CLI request goes to a task of its own ([`answer`](super::answer)).
//! When stdout ends (or the user's queue overflows) the same task ends the
//! session ([`Connection::end`]), with the last line if the CLI died while
//! writing it (the end decides whether the user hears of it).

use std::sync::Arc;

use serde_json::Value;

use super::Connection;
use crate::mcp::__private::transport::{Parsed, parse_object};
use crate::message::{Message, SkippedLine};
use crate::protocol::{Incoming, McpMessageLine};
use crate::queue::{MessageSender, Overflow, json_size};
use crate::transport::{LineReader, Read};

/// Starts the reader task for `reader`. Must be called inside a Tokio
/// runtime.
pub(super) fn start(reader: LineReader, conn: &Arc<Connection>, messages: MessageSender) {
    let conn = conn.clone();
    tokio::spawn(async move {
        let (overflow, cut) = read(reader, &conn, &messages).await;
        conn.end(messages, overflow, cut).await;
    });
}

/// Routes every line until the CLI's stdout ends; `Some` when the user's
/// queue overflowed, and the last line if it was cut short and does not
/// parse.
async fn read(
    mut reader: LineReader,
    conn: &Arc<Connection>,
    messages: &MessageSender,
) -> (Option<Overflow>, Option<SkippedLine>) {
    let mut cut = None;
    // Held while routing the lines of one read: the answers ready at once
    // leave together, when the reader is about to wait (see `answer`).
    let mut holding = false;
    let overflow = loop {
        let before_wait = || {
            if std::mem::take(&mut holding) {
                conn.release();
            }
        };
        let Some(line) = reader.next_decoded_or(before_wait, decode).await else {
            break None;
        };
        if !std::mem::replace(&mut holding, true) {
            conn.hold();
        }
        let routed = match line {
            Ok(Read::Value(line)) => conn.route(line, messages),
            // Cut short by the CLI's end: left to the session's end, which
            // knows whether the SDK cut it (killing the CLI) or the CLI died.
            Ok(Read::Skipped(skipped)) if reader.ended_mid_line() => {
                cut = Some(skipped);
                Ok(())
            }
            // A line too long or not decodable: a message of its own for
            // the user, and the session goes on.
            Ok(Read::Skipped(skipped)) => {
                let size = skipped.queued_size();
                messages.push(Message::SkippedLine(skipped), size)
            }
            Err(e) => {
                tracing::debug!("reading the CLI's stdout failed: {e}");
                break None;
            }
        };
        if let Err(full) = routed {
            break Some(full);
        }
    };
    if holding {
        conn.release();
    }
    (overflow, cut)
}

/// A line as [`Connection::route`] takes it: an `mcp_message` request,
/// the line of every in-process tool call, decoded straight from the line
/// (its JSON-RPC message still text, see [`McpMessageLine`]); any other
/// line classified through a `Value`, with what it is charged to the
/// user's queue (only messages for the user are).
// Moved once, from the decoder to `route`: boxing the larger variant would
// cost an allocation a line.
#[allow(clippy::large_enum_variant)]
pub(super) enum Routed {
    Mcp(McpMessageLine),
    /// A `transcript_mirror` line (`--session-mirror`), for the session's
    /// store.
    Mirror(Value),
    Other(Incoming, usize),
}

/// Decodes one line for [`Connection::route`].
fn decode(line: &[u8]) -> Parsed<Routed> {
    if let Some(request) = McpMessageLine::from_slice(line) {
        return Parsed::Value(Routed::Mcp(request));
    }
    match parse_object::<Value>(line) {
        Parsed::Value(value) => {
            let size = match value.get("type").and_then(Value::as_str) {
                Some("transcript_mirror") => return Parsed::Value(Routed::Mirror(value)),
                Some(t) if t.starts_with("control_") => 0,
                _ => json_size(&value),
            };
            Parsed::Value(Routed::Other(Incoming::from_value(value), size))
        }
        Parsed::Blank => Parsed::Blank,
        Parsed::Invalid(e) => Parsed::Invalid(e),
        Parsed::Mismatch(e) => Parsed::Mismatch(e),
    }
}
