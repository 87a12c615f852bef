//! What a response body reads ([`Rx`]), what the hub sends into ([`Sink`]):
//! events, each charged to the session's byte budget while it waits in the
//! channel (what the client has not taken yet), and the budget-charged JSON
//! bodies.

use std::fmt::Display;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use tokio::sync::mpsc;

use crate::transport::budget::{Budget, Charge, Ticket};

/// An event on its way to the client, and its charge.
pub(super) type Event = (Bytes, Option<Charge>);

/// The rest of a replay from the event store, page by page, each read as
/// the client has taken the one before; `Err` when reading failed (the
/// response ends: its client resumes again).
pub(crate) type Pages = futures::stream::BoxStream<'static, Result<Vec<Bytes>, ()>>;

/// The rest of a replay, and the budget its pages are charged to (boxed in
/// [`Rx`]: most responses have none).
pub(super) struct Replay {
    pub(super) pages: Pages,
    pub(super) budget: Arc<Budget>,
}

/// The receiving end a response body reads: the stream's events, and which
/// attachment of which stream it is (to say when it has read them all).
pub(crate) struct Rx {
    /// Events read before `events` (a page of a replay from the event
    /// store), and the replay's next pages.
    pub(super) prefix: std::collections::VecDeque<Event>,
    pub(super) replay: Option<Box<Replay>>,
    pub(super) events: mpsc::Receiver<Event>,
    /// Bytes in `events`, shared with the stream that sends into it.
    pub(super) pending: Arc<AtomicUsize>,
    pub(super) stream: u64,
    pub(super) attachment: u64,
}

impl Rx {
    /// The next event (taken: its charge ends); `None` once the stream
    /// has ended.
    pub(crate) async fn recv(&mut self) -> Option<Bytes> {
        if let Some((bytes, _charge)) = self.prefix.pop_front() {
            return Some(bytes);
        }
        // A replay from the event store: rare, so its state is boxed
        // rather than carried by every call's future.
        if self.replay.is_some()
            && let Some(next) = Box::pin(self.replayed()).await
        {
            return next;
        }
        let (bytes, _charge) = self.events.recv().await?;
        self.pending.fetch_sub(bytes.len(), Ordering::Relaxed);
        Some(bytes)
    }

    /// The next event of the replay's pages (`Some(None)`: the replay was
    /// cut short, and the response ends), or `None` once they are read and
    /// the stream's channel follows.
    async fn replayed(&mut self) -> Option<Option<Bytes>> {
        use futures::StreamExt;
        loop {
            if let Some((bytes, _charge)) = self.prefix.pop_front() {
                return Some(Some(bytes));
            }
            let replay = self.replay.as_mut()?;
            match replay.pages.next().await {
                Some(Ok(page)) => {
                    // Charged until the client takes it.
                    let budget = &replay.budget;
                    let charged = |frame: Bytes| {
                        let charge = budget.charge(frame.len());
                        (frame, Some(charge))
                    };
                    self.prefix.extend(page.into_iter().map(charged));
                }
                Some(Err(())) => {
                    // Cut short: nothing after it goes out either.
                    self.replay = None;
                    self.events = mpsc::channel(1).1;
                    return Some(None);
                }
                None => self.replay = None,
            }
        }
    }

    /// The next event if one is there.
    #[cfg(test)]
    pub(crate) fn try_recv(&mut self) -> Option<Bytes> {
        let (bytes, _charge) = self.events.try_recv().ok()?;
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
    pub(super) tx: mpsc::Sender<Event>,
    pub(super) pending: Arc<AtomicUsize>,
}

impl Sink {
    pub(super) fn try_send(&self, event: Event) -> Result<(), mpsc::error::TrySendError<Event>> {
        let len = event.0.len();
        self.pending.fetch_add(len, Ordering::Relaxed);
        self.tx.try_send(event).inspect_err(|_| {
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

/// Text charged to a budget while it lives: the owner of a JSON body's
/// [`Bytes`], which has no other holder.
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
pub(super) fn charged(budget: &Arc<Budget>, text: String, ticket: Option<Ticket>) -> Bytes {
    let (text, charge) = with_charge(budget, text, ticket);
    Bytes::from_owner(Charged {
        text,
        _charge: charge,
    })
}

/// `text`, shrunk to its length, and its charge to `budget` (or to
/// `ticket`, the request it answers).
pub(super) fn with_charge(
    budget: &Arc<Budget>,
    mut text: String,
    ticket: Option<Ticket>,
) -> (String, Charge) {
    text.shrink_to_fit();
    let charge = match ticket {
        Some(ticket) => ticket.answered(text.len()),
        None => budget.charge(text.len()),
    };
    (text, charge)
}

pub(crate) fn frame_text(stream: u64, seq: u64, message: &dyn Display) -> String {
    format!("id: {stream}-{seq}\nevent: message\ndata: {message}\n\n")
}
