//! The queue of messages for the user, bounded in bytes.
//!
//! The reader never waits for the user: whatever the CLI writes is routed at
//! once, control traffic to its waiters and handlers, messages into this
//! queue. The queue holds at most a byte budget
//! ([`Options::max_buffered_bytes`](crate::Options::max_buffered_bytes)) of
//! messages the user has not read yet; one more message past it ends the
//! session with [`Error::MessageBufferFull`] (delivered after everything
//! queued before it), rather than growing without bound or dropping. A
//! message is always accepted into an empty queue, so a single message never
//! fails however big it is (it already passed the line cap).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::message::Message;

/// Bytes held by a queue, shared by its producer and its consumer.
#[derive(Debug)]
pub(crate) struct ByteBudget {
    used: AtomicUsize,
    limit: usize,
}

impl ByteBudget {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            used: AtomicUsize::new(0),
            limit,
        }
    }

    /// The budget, in bytes.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes reserved now.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Reserves `size` bytes; refused when something is queued already and
    /// `size` more would pass the limit.
    pub(crate) fn try_reserve(&self, size: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used == 0 || used.saturating_add(size) <= self.limit)
                    .then(|| used.saturating_add(size))
            })
            .is_ok()
    }

    /// Reserves `size` bytes whatever the limit (for the one error that
    /// ends a session, which must always get through).
    pub(crate) fn force_reserve(&self, size: usize) {
        self.used.fetch_add(size, Ordering::AcqRel);
    }

    /// Gives back what a dequeued item reserved.
    pub(crate) fn release(&self, size: usize) {
        self.used.fetch_sub(size, Ordering::AcqRel);
    }
}

/// About how many bytes `value` takes as JSON: what a queued value is
/// charged. A walk over the value, far cheaper than encoding it.
pub(crate) fn json_size(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => items.iter().map(json_size).sum::<usize>() + items.len() + 2,
        Value::Object(map) => {
            map.iter()
                .map(|(k, v)| k.len() + 4 + json_size(v))
                .sum::<usize>()
                + 2
        }
    }
}

/// What the error that ends a session is charged.
const ERROR_SIZE: usize = 64;

type Item = (Result<Message>, usize);

/// Creates the queue: the reader's end and the user's end.
pub(crate) fn message_queue(limit: usize) -> (MessageSender, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let budget = Arc::new(ByteBudget::new(limit));
    (
        MessageSender {
            tx,
            budget: budget.clone(),
        },
        Inbox { rx, budget },
    )
}

/// The reader's end. Dropped when the reader ends, which ends the stream
/// once everything queued is read.
pub(crate) struct MessageSender {
    tx: mpsc::UnboundedSender<Item>,
    budget: Arc<ByteBudget>,
}

/// A handle that does not keep the queue open: for messages the SDK makes
/// itself ([`McpProgress`](crate::message::McpProgress)) from inside a
/// tool. Once the reader has ended, what is offered is dropped.
#[derive(Clone)]
pub(crate) struct WeakMessageSender {
    tx: mpsc::WeakUnboundedSender<Item>,
    budget: Arc<ByteBudget>,
}

impl WeakMessageSender {
    /// Queues an advisory message if the session is still reading and the
    /// queue has room; otherwise drops it (it never ends the session).
    /// Returns whether it was queued.
    pub(crate) fn offer(&self, message: Message, size: usize) -> bool {
        let Some(tx) = self.tx.upgrade() else {
            return false;
        };
        if !self.budget.try_reserve(size) {
            tracing::debug!("the message queue is full: an SDK-made message was dropped");
            return false;
        }
        if tx.send((Ok(message), size)).is_err() {
            self.budget.release(size);
            return false;
        }
        true
    }
}

/// The queue is over its budget: the session must end.
#[derive(Debug)]
pub(crate) struct Overflow {
    pub(crate) limit: usize,
}

impl MessageSender {
    /// A handle for advisory messages that does not keep the queue open.
    pub(crate) fn downgrade(&self) -> WeakMessageSender {
        WeakMessageSender {
            tx: self.tx.downgrade(),
            budget: self.budget.clone(),
        }
    }

    /// Queues a message of `size` bytes.
    pub(crate) fn push(&self, message: Message, size: usize) -> std::result::Result<(), Overflow> {
        if !self.budget.try_reserve(size) {
            return Err(Overflow {
                limit: self.budget.limit(),
            });
        }
        if self.tx.send((Ok(message), size)).is_err() {
            // Nobody will read it: the user's end is gone.
            self.budget.release(size);
        }
        Ok(())
    }

    /// Queues the error that ends the session, whatever the budget: the
    /// only error the queue ever holds, and its last item.
    pub(crate) fn finish(&self, error: Error) {
        self.budget.force_reserve(ERROR_SIZE);
        if self.tx.send((Err(error), ERROR_SIZE)).is_err() {
            self.budget.release(ERROR_SIZE);
        }
    }
}

/// The user's end: one consumer at a time owns it.
#[derive(Debug)]
pub(crate) struct Inbox {
    rx: mpsc::UnboundedReceiver<Item>,
    budget: Arc<ByteBudget>,
}

impl Inbox {
    /// The next message; `None` once the reader has ended and everything
    /// queued is read, or once `closed` fired (after `disconnect`, the CLI's
    /// stdout may stay open in a process it left behind) and the queue is
    /// empty.
    pub(crate) async fn next(&mut self, closed: &CancellationToken) -> Option<Result<Message>> {
        let item = tokio::select! {
            biased;
            item = self.rx.recv() => item,
            () = closed.cancelled() => self.rx.try_recv().ok(),
        };
        let (item, size) = item?;
        self.budget.release(size);
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_size_is_close_to_the_encoding() {
        for v in [
            json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "hello"}]}}),
            json!({"a": [1, 2, 3], "b": null, "c": true, "d": "x".repeat(1000)}),
        ] {
            let encoded = serde_json::to_string(&v).unwrap().len();
            let estimate = json_size(&v);
            assert!(
                estimate >= encoded / 2 && estimate <= encoded * 2,
                "{estimate} vs {encoded}"
            );
        }
    }

    #[test]
    fn the_budget_refuses_past_the_limit_but_always_takes_one() {
        let b = ByteBudget::new(100);
        assert!(b.try_reserve(1000), "an empty queue takes anything");
        assert!(!b.try_reserve(1));
        b.release(1000);
        assert!(b.try_reserve(60));
        assert!(b.try_reserve(40));
        assert!(!b.try_reserve(1));
        b.force_reserve(10);
        b.release(110);
        assert!(b.try_reserve(100));
    }

    #[tokio::test]
    async fn a_full_queue_overflows_and_the_final_error_still_gets_through() {
        let (tx, mut inbox) = message_queue(50);
        let m = || Message::from_value(json!({"type": "keep_alive"}));
        tx.push(m(), 30).unwrap();
        tx.push(m(), 20).unwrap();
        assert!(tx.push(m(), 1).is_err());
        tx.finish(Error::MessageBufferFull { limit: 50 });
        drop(tx);
        let closed = CancellationToken::new();
        assert!(matches!(inbox.next(&closed).await, Some(Ok(_))));
        assert!(matches!(inbox.next(&closed).await, Some(Ok(_))));
        assert!(matches!(
            inbox.next(&closed).await,
            Some(Err(Error::MessageBufferFull { limit: 50 }))
        ));
        assert!(inbox.next(&closed).await.is_none());
        assert_eq!(inbox.budget.used.load(Ordering::Relaxed), 0);
    }
}
