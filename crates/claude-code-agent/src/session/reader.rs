//! The reader: a thread of its own that owns the CLI's stdout, blocked in
//! `read` between lines ([`BlockingPipe`]: one system call per line, and
//! the pipe wakes it directly, where a Tokio task would cost an
//! `epoll_wait` and a scheduler pass per line).
//!
//! It routes every line as the module docs say, inside the runtime's
//! context (so a handler polled inline can spawn, sleep and do I/O), and
//! never waits for anything but input. When stdout ends (or the user's
//! queue overflows) the thread hands over to a task, which ends the
//! session ([`Connection::end`]): that task is alive exactly as long as
//! the reader, so the runtime's count of live tasks still shows a reader
//! that outlives its session.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use serde_json::Value;
use tokio::sync::oneshot;

use super::Connection;
use crate::error::{Error, Result};
use crate::mcp::__private::transport::{Parsed, parse_object};
use crate::message::Message;
use crate::protocol::{ControlRequest, Incoming};
use crate::queue::{MessageSender, Overflow, json_size};
use crate::transport::{BlockingPipe, LineReader, Read};

/// Starts the reader thread for `reader`, and the task that ends the
/// session after it. Must be called inside a Tokio runtime.
pub(super) fn start(
    reader: LineReader,
    conn: &Arc<Connection>,
    messages: MessageSender,
) -> Result<()> {
    let reader = reader.into_blocking()?;
    let runtime = tokio::runtime::Handle::current();
    let (done, finished) = oneshot::channel::<(MessageSender, Option<Overflow>)>();
    let thread_conn = conn.clone();
    std::thread::Builder::new()
        .name(format!("cli-reader-{}", conn.pid()))
        .spawn(move || {
            let _runtime = runtime.enter();
            let overflow = read(reader, &thread_conn, &messages);
            drop(thread_conn);
            let _ = done.send((messages, overflow));
        })
        .map_err(Error::Io)?;
    let conn = conn.clone();
    tokio::spawn(async move {
        // Dropped unanswered only if the thread died: nothing to end with.
        if let Ok((messages, overflow)) = finished.await {
            conn.end(messages, overflow).await;
        }
    });
    Ok(())
}

/// Routes every line until the CLI's stdout ends; `Some` when the user's
/// queue overflowed.
fn read(
    mut reader: LineReader<BlockingPipe>,
    conn: &Arc<Connection>,
    messages: &MessageSender,
) -> Option<Overflow> {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    // Answers the inline polls finished are queued, not written: they go
    // out together, with one write, before the reader waits for more input.
    let writer = conn.writer.clone();
    let mut overflow = None;
    while let Some(line) = block_on(
        reader.next_decoded_or(|| writer.flush_queued(), decode),
        &waker,
    ) {
        let routed = match line {
            Ok(Read::Value(line)) => conn.route(line, messages),
            // A line too long or not decodable: a message of its own for
            // the user, and the session goes on.
            Ok(Read::Skipped(skipped)) => {
                let size = skipped.queued_size();
                messages.push(Message::SkippedLine(skipped), size)
            }
            Err(e) => {
                tracing::debug!("reading the CLI's stdout failed: {e}");
                break;
            }
        };
        if let Err(full) = routed {
            overflow = Some(full);
            break;
        }
    }
    writer.flush_queued();
    overflow
}

/// Decodes one line for [`Connection::route`]: what it holds, and what it
/// is charged to the user's queue (only messages for the user are). An
/// `mcp_message` request, the line of every in-process tool call, is
/// decoded straight into its type; every other line through a `Value`.
fn decode(line: &[u8]) -> Parsed<(Incoming, usize)> {
    if let Some(request) = ControlRequest::mcp_message_from_slice(line) {
        return Parsed::Value((Incoming::ControlRequest(request), 0));
    }
    match parse_object::<Value>(line) {
        Parsed::Value(value) => {
            let size = match value.get("type").and_then(Value::as_str) {
                Some(t) if t.starts_with("control_") => 0,
                _ => json_size(&value),
            };
            Parsed::Value((Incoming::from_value(value), size))
        }
        Parsed::Blank => Parsed::Blank,
        Parsed::Invalid(e) => Parsed::Invalid(e),
        Parsed::Mismatch(e) => Parsed::Mismatch(e),
    }
}

/// Wakes the reader thread.
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` on this thread. A read from a [`BlockingPipe`] is ready
/// at its first poll (it waits in `read`), so this normally polls once.
fn block_on<F: Future>(future: F, waker: &Waker) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}
