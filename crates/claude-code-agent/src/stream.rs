//! [`MessageStream`]: the messages of a conversation, as [`query()`](crate::query())
//! and [`Client`](crate::Client) hand them out.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::stream::{BoxStream, FusedStream, Stream, StreamExt};

use crate::error::Result;
use crate::message::Message;

/// A stream of the CLI's messages. It is `Unpin`: call
/// [`next`](futures::StreamExt::next) on it directly, no pinning needed.
///
/// **An `Err` is the end.** Every error item is the stream's last: after
/// it the stream yields `None` (it is a [`FusedStream`]), and what it held
/// (for [`query()`](crate::query()), the CLI) is let go at once. Errors are
/// what ended the session — the CLI exited ([`Error::CliExited`]), the
/// messages not read passed [`Options::max_buffered_bytes`](crate::Options::max_buffered_bytes)
/// ([`Error::MessageBufferFull`]), the CLI could not start, another stream
/// is reading ([`Error::AlreadyReceiving`]) — and nothing else. So the loop
///
/// ```no_run
/// # use claude_code_agent::{Message, MessageStream};
/// # use futures::StreamExt;
/// # async fn run(mut stream: MessageStream<'_>) -> claude_code_agent::Result<()> {
/// while let Some(message) = stream.next().await {
///     if let Message::Result(r) = message? {
///         println!("{}", r.result.unwrap_or_default());
///     }
/// }
/// # Ok(())
/// # }
/// ```
///
/// stops with `?` only when the session is over, never on something the
/// CLI wrote: a line the SDK had to skip (longer than
/// [`Options::max_line_bytes`](crate::Options::max_line_bytes), or a JSON
/// object that does not parse) is a message, [`Message::SkippedLine`], with
/// the line's first bytes and the reason, and the stream goes on after it;
/// unknown types and subtypes are `Unknown` variants.
///
/// [`Error::CliExited`]: crate::Error::CliExited
/// [`Error::MessageBufferFull`]: crate::Error::MessageBufferFull
/// [`Error::AlreadyReceiving`]: crate::Error::AlreadyReceiving
#[must_use = "streams do nothing unless polled"]
pub struct MessageStream<'a> {
    /// `None` once the stream has ended (after its `None`, or its error).
    inner: Option<BoxStream<'a, Result<Message>>>,
}

impl<'a> MessageStream<'a> {
    /// The stream of `inner`'s items up to its first error, which is the
    /// last item: the one place that says an error ends a stream. Whatever
    /// `inner` holds is dropped as soon as it has ended.
    pub(crate) fn new(inner: impl Stream<Item = Result<Message>> + Send + 'a) -> Self {
        Self {
            inner: Some(inner.boxed()),
        }
    }
}

impl Stream for MessageStream<'_> {
    type Item = Result<Message>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let item = ready!(inner.poll_next_unpin(cx));
        if !matches!(item, Some(Ok(_))) {
            self.inner = None;
        }
        Poll::Ready(item)
    }
}

impl FusedStream for MessageStream<'_> {
    fn is_terminated(&self) -> bool {
        self.inner.is_none()
    }
}

impl fmt::Debug for MessageStream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageStream").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use futures::StreamExt;
    use futures::stream::FusedStream;
    use serde_json::json;

    use super::MessageStream;
    use crate::error::Error;
    use crate::message::Message;

    /// Sets its flag when dropped: what a stream's state holds (the CLI).
    struct Held(Arc<AtomicBool>);

    impl Drop for Held {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// A stream of `items` that holds a [`Held`] until it is dropped.
    fn holding(items: Vec<crate::Result<Message>>) -> (MessageStream<'static>, Arc<AtomicBool>) {
        let dropped = Arc::new(AtomicBool::new(false));
        let held = Held(dropped.clone());
        let stream = futures::stream::iter(items).map(move |item| {
            let _ = &held;
            item
        });
        (MessageStream::new(stream), dropped)
    }

    fn keep_alive() -> crate::Result<Message> {
        Ok(Message::from_value(json!({"type": "keep_alive"})))
    }

    #[tokio::test]
    async fn an_error_is_the_last_item_and_lets_go_of_the_session() {
        let (mut stream, dropped) = holding(vec![keep_alive(), Err(Error::Closed), keep_alive()]);
        assert!(matches!(
            stream.next().await,
            Some(Ok(Message::KeepAlive(_)))
        ));
        assert!(!dropped.load(Ordering::SeqCst));
        assert!(!stream.is_terminated());
        assert!(matches!(stream.next().await, Some(Err(Error::Closed))));
        assert!(
            dropped.load(Ordering::SeqCst),
            "the state is dropped with the error"
        );
        assert!(stream.is_terminated());
        assert!(stream.next().await.is_none());
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn the_end_lets_go_of_the_session_too() {
        let (mut stream, dropped) = holding(vec![keep_alive()]);
        assert!(stream.next().await.is_some());
        assert!(stream.next().await.is_none());
        assert!(dropped.load(Ordering::SeqCst));
        assert!(stream.is_terminated());
    }
}
