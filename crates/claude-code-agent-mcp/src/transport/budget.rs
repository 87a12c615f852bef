//! A byte budget: what waits for one peer to take it, within a number of
//! bytes, and which of the peer's requests may run meanwhile.
//!
//! A server keeps one per client over NDJSON (`server/stdio.rs`) and per
//! session of the Streamable HTTP server (`http_server/hub/`). *Held* are
//! the bytes the peer has not taken yet: answers serialized and not yet
//! handed to the writer or written to the client's connection, messages in
//! a response stream's channel, requests to the client waiting for room.
//! What is kept after the peer took it (events kept for replay, messages
//! waiting for a GET stream) is bounded on its own and never held here: a
//! client that reads everything brings the held bytes back to zero, whatever
//! the sizes of its answers were.
//!
//! A request runs once *admitted*. Each admitted request reserves what its
//! answer is expected to hold until it is answered; a request is admitted
//! while what is held plus every reservation (its own included) fits the
//! budget. The expectation is learned per kind of request (its method and,
//! for `tools/call`, the tool's name: a few buckets, by hash): the largest
//! recent answer of that kind, fading by a sixteenth per answer, at first a
//! 16th of the budget. A reservation is at most half the budget, so:
//!
//! * a request is always admitted once the peer has taken what is held and
//!   nothing else runs: an answer larger than the whole budget is served
//!   (and held until taken), never refused and never left charged;
//! * requests of a kind whose answers are small are admitted beside a large
//!   one waiting for room, and a request that runs for long (a
//!   `subscriptions/listen`, a tool waiting for a person) holds only its
//!   own reservation;
//! * what the server holds at once is the budget plus, at most, what the
//!   answers of requests admitted together exceed their reservations by.
//!
//! A client keeps one per server (`client/engine.rs`) for responses and
//! notifications its caller has not taken: past the budget it reads no more
//! from the server ([`Budget::room`]) and the oldest unread notifications go.

use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;

/// The smallest expectation of a request's answer.
const MIN_ESTIMATE: usize = 4 * 1024;

/// How many kinds of request are told apart (two kinds that share a bucket
/// share their expectation: the larger one, which is safe).
const KINDS: usize = 16;

/// The budget of one peer; shared by the reader and the requests' tasks.
pub(crate) struct Budget {
    limit: usize,
    /// How many requests may run at once (a batch counts as many as it holds).
    max_running: usize,
    state: Mutex<State>,
    room: Notify,
}

struct State {
    /// Bytes the peer has not taken yet.
    held: usize,
    /// What the admitted requests reserved, together.
    reserved: usize,
    /// Requests admitted and not answered yet.
    running: usize,
    /// The expected answer of each kind of request, in bytes; 0 for a kind
    /// not seen answering yet.
    estimates: [u32; KINDS],
}

/// What one request (or batch) asks of a [`Budget`]: its kind and how many
/// requests it holds. [`Demand::of`] reads it off the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Demand {
    /// The bucket of its kind; `None` for a batch.
    kind: Option<u8>,
    n: u32,
}

impl Demand {
    /// The demand of a request, or of a batch of requests (counted as
    /// `batch_len`, expected to answer as unknown kinds do).
    pub(crate) fn of(message: &Value, batch_len: usize) -> Self {
        match message {
            Value::Array(_) => Self {
                kind: None,
                n: u32::try_from(batch_len.max(1)).unwrap_or(u32::MAX),
            },
            _ => Self {
                kind: Some(kind(message)),
                n: 1,
            },
        }
    }
}

/// The bucket of a request's kind: its method, and the tool a `tools/call`
/// calls.
fn kind(message: &Value) -> u8 {
    let method = message.get("method").and_then(Value::as_str);
    let mut h = foldhash::fast::FixedState::with_seed(0x6d63_7062_7564_6774).build_hasher();
    h.write(method.unwrap_or_default().as_bytes());
    if method == Some("tools/call")
        && let Some(name) = message
            .get("params")
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
    {
        h.write_u8(0xff);
        h.write(name.as_bytes());
    }
    (h.finish() % KINDS as u64) as u8
}

fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Budget {
    /// A budget of `limit` bytes, with no bound on the requests running.
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Self::with_max_running(limit, usize::MAX)
    }

    /// A budget of `limit` bytes, with at most `max_running` requests
    /// running at once.
    pub(crate) fn with_max_running(limit: usize, max_running: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            max_running,
            state: Mutex::new(State {
                held: 0,
                reserved: 0,
                running: 0,
                estimates: [0; KINDS],
            }),
            room: Notify::new(),
        })
    }

    /// The budget, in bytes.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.lock().held
    }

    /// What admitted requests reserve now, and how many run.
    #[cfg(test)]
    pub(crate) fn reserved(&self) -> (usize, usize) {
        let s = self.lock();
        (s.reserved, s.running)
    }

    /// Whether more is held than the budget allows.
    pub(crate) fn is_over(&self) -> bool {
        self.lock().held > self.limit
    }

    /// Waits until what is held is within the budget.
    pub(crate) async fn room(&self) {
        loop {
            let notified = self.room.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if !self.is_over() {
                return;
            }
            notified.await;
        }
    }

    /// What `demand` reserves: the expectation of its kind (of an unknown
    /// kind for each request of a batch), at most half the budget.
    fn reservation(&self, s: &State, demand: Demand) -> usize {
        let unknown = (self.limit / 16).max(MIN_ESTIMATE);
        let each = match demand.kind.map(|k| s.estimates[usize::from(k)]) {
            Some(0) | None => unknown,
            Some(e) => e as usize,
        };
        each.saturating_mul(demand.n as usize)
            .min(self.limit.div_ceil(2).max(1))
    }

    /// Admits `demand` if it fits now: counts it as running, its
    /// reservation as reserved.
    fn fits(self: &Arc<Self>, s: &mut State, demand: Demand) -> Option<Ticket> {
        let n = demand.n as usize;
        let reservation = self.reservation(s, demand);
        let fits = s.running.saturating_add(n) <= self.max_running
            && s.held
                .saturating_add(s.reserved)
                .saturating_add(reservation)
                <= self.limit;
        if !fits {
            return None;
        }
        s.running += n;
        s.reserved += reservation;
        Some(Ticket {
            budget: Arc::clone(self),
            n,
            reservation,
            kind: demand.kind,
        })
    }

    /// Admits `demand` if it fits now.
    pub(crate) fn try_admit(self: &Arc<Self>, demand: Demand) -> Option<Ticket> {
        self.fits(&mut self.lock(), demand)
    }

    /// Waits until one of the `demands` (asked again after every change of
    /// the budget) fits, and admits the first that does: its position and
    /// its ticket. Those that do not fit do not hold up those behind them.
    /// Cancel-safe. Never ready while `demands` gives none.
    pub(crate) async fn admit_any<I>(self: &Arc<Self>, demands: impl Fn() -> I) -> (usize, Ticket)
    where
        I: Iterator<Item = Demand>,
    {
        loop {
            let notified = self.room.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut s = self.lock();
                for (i, demand) in demands().enumerate() {
                    if let Some(ticket) = self.fits(&mut s, demand) {
                        return (i, ticket);
                    }
                }
            }
            notified.await;
        }
    }

    /// Counts `bytes` as held until the charge is dropped.
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Charge {
        self.lock().held += bytes;
        Charge {
            budget: Arc::clone(self),
            bytes,
        }
    }
}

/// An admitted request, until answered (or dropped: a request that ends
/// without an answer gives its reservation back).
pub(crate) struct Ticket {
    budget: Arc<Budget>,
    n: usize,
    reservation: usize,
    kind: Option<u8>,
}

impl Ticket {
    /// The answer is ready: its `bytes` are held instead of the
    /// reservation, and they teach the expectation of its kind.
    pub(crate) fn answered(self, bytes: usize) -> Charge {
        {
            let mut s = self.budget.lock();
            if let Some(k) = self.kind {
                // The first answer of a kind replaces the guess; later
                // ones raise the expectation, or let it fade.
                let e = &mut s.estimates[usize::from(k)];
                *e = clamp_u32(bytes.max(MIN_ESTIMATE)).max(*e - *e / 16);
            }
        }
        let charge = self.budget.charge(bytes);
        drop(self);
        charge
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        {
            let mut s = self.budget.lock();
            s.running -= self.n;
            s.reserved -= self.reservation;
        }
        self.budget.room.notify_waiters();
    }
}

/// Bytes held for the peer until dropped (the peer took them, or they were
/// let go of).
pub(crate) struct Charge {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.lock().held -= self.bytes;
        self.budget.room.notify_waiters();
    }
}

#[cfg(test)]
mod tests;
