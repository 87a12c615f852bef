//! What a response body reads ([`Rx`]), what the hub sends into ([`Sink`]),
//! and the budget-charged event texts both carry.

use std::fmt::Display;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use tokio::sync::mpsc;

use crate::transport::budget::{Budget, Charge, Ticket};

/// The receiving end a response body reads: the stream's events, and which
/// attachment of which stream it is (to say when it has read them all).
pub(crate) struct Rx {
    /// Events read before `events` (a replay from the event store).
    pub(super) prefix: std::collections::VecDeque<Bytes>,
    pub(super) events: mpsc::Receiver<Bytes>,
    /// Bytes in `events`, shared with the stream that sends into it.
    pub(super) pending: Arc<AtomicUsize>,
    pub(super) stream: u64,
    pub(super) attachment: u64,
}

impl Rx {
    /// The next event; `None` once the stream has ended.
    pub(crate) async fn recv(&mut self) -> Option<Bytes> {
        if let Some(bytes) = self.prefix.pop_front() {
            return Some(bytes);
        }
        let bytes = self.events.recv().await?;
        self.pending.fetch_sub(bytes.len(), Ordering::Relaxed);
        Some(bytes)
    }

    /// The next event if one is there.
    #[cfg(test)]
    pub(crate) fn try_recv(&mut self) -> Option<Bytes> {
        let bytes = self.events.try_recv().ok()?;
        self.pending.fetch_sub(bytes.len(), Ordering::Relaxed);
        Some(bytes)
    }

    /// Whether the stream has ended and every event was read.
    #[cfg(test)]
    pub(crate) fn is_closed(&self) -> bool {
        self.events.is_closed()
    }
}

/// The sending end of a response body's channel, counting the bytes in it.
pub(super) struct Sink {
    pub(super) tx: mpsc::Sender<Bytes>,
    pub(super) pending: Arc<AtomicUsize>,
}

impl Sink {
    pub(super) fn try_send(&self, bytes: Bytes) -> Result<(), mpsc::error::TrySendError<Bytes>> {
        let len = bytes.len();
        self.pending.fetch_add(len, Ordering::Relaxed);
        self.tx.try_send(bytes).inspect_err(|_| {
            self.pending.fetch_sub(len, Ordering::Relaxed);
        })
    }

    /// Bytes sent and not yet read by the response body.
    pub(super) fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    pub(super) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Text charged to a budget while it lives: the owner of a [`Bytes`].
struct Charged {
    text: String,
    _charge: Charge,
}

impl AsRef<[u8]> for Charged {
    fn as_ref(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

/// `text` as [`Bytes`], charged to `budget` (or to `ticket`, the request it
/// answers) until its last clone is dropped.
pub(super) fn charged(budget: &Arc<Budget>, mut text: String, ticket: Option<Ticket>) -> Bytes {
    text.shrink_to_fit();
    let charge = match ticket {
        Some(ticket) => ticket.answered(text.len()),
        None => budget.charge(text.len()),
    };
    Bytes::from_owner(Charged {
        text,
        _charge: charge,
    })
}

pub(crate) fn frame_text(stream: u64, seq: u64, message: &dyn Display) -> String {
    format!("id: {stream}-{seq}\nevent: message\ndata: {message}\n\n")
}
