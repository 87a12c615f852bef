//! [`MessageStream`]: the messages of a conversation, as [`query()`](crate::query())
//! and [`Client`](crate::Client) hand them out.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::{BoxStream, Stream, StreamExt};

use crate::error::Result;
use crate::message::Message;

/// A stream of the CLI's messages. It is `Unpin`: call
/// [`next`](futures::StreamExt::next) on it directly, no pinning needed.
///
/// **Errors.** An `Err` item for a line the SDK had to skip —
/// [`Error::LineTooLong`](crate::Error::LineTooLong) (over [`Options::max_line_bytes`](crate::Options::max_line_bytes))
/// or [`Error::Protocol`](crate::Error::Protocol) (a JSON object serde cannot hold, such as a number
/// out of range) — is a report: the stream goes on after it, since nothing
/// the CLI sends is fatal. Any other error ends the stream (the CLI exited,
/// [`Error::MessageBufferFull`](crate::Error::MessageBufferFull), …) and is its last item; so a loop that
/// stops at the first error with `?` is always correct, and one that
/// wants to see past skipped lines continues while
/// [`Error::ends_stream`](crate::Error::ends_stream) is `false`.
#[must_use = "streams do nothing unless polled"]
pub struct MessageStream<'a> {
    inner: BoxStream<'a, Result<Message>>,
}

impl<'a> MessageStream<'a> {
    pub(crate) fn new(inner: impl Stream<Item = Result<Message>> + Send + 'a) -> Self {
        Self {
            inner: inner.boxed(),
        }
    }
}

impl Stream for MessageStream<'_> {
    type Item = Result<Message>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

impl fmt::Debug for MessageStream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageStream").finish_non_exhaustive()
    }
}
