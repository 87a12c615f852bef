//! A byte budget: what is held for one peer until it takes it, within a
//! number of bytes. A server keeps one per client over NDJSON
//! (`server/stdio.rs`) and per session of the Streamable HTTP server
//! (`http_server/hub/`): answers serialized and not yet taken by the
//! writer or the client's connection, notifications and requests to the
//! client not yet sent, events kept for replay; past it, the peer's next
//! request is taken only once it has read enough. A client keeps one per
//! server (`client/engine.rs`): responses and notifications its caller
//! has not taken; past it, it reads no more from the server
//! ([`Budget::room`]) and the oldest unread notifications go.
//!
//! A server's request still running is counted at an estimate of its
//! answer: the size of recent answers (the largest, fading by a sixteenth
//! per answer), at first a 16th of the budget. The next request is
//! admitted while what is held plus the estimate of every request running
//! (this one included) fits the budget, or when nothing is held and
//! nothing runs (an answer larger than the whole budget is still served,
//! one at a time).
//!
//! A request read while an earlier one waits for admission waits behind it
//! ([`Waiting`]); its bytes count as held meanwhile (but not against its
//! own admission).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

/// The smallest estimate of a running request's answer.
const MIN_ESTIMATE: usize = 4 * 1024;

/// The budget of one client; shared by the reader and the requests' tasks.
pub(crate) struct Budget {
    limit: usize,
    state: Mutex<State>,
    room: Notify,
}

struct State {
    /// Bytes of answers (and requests to the client) not yet handed to
    /// the writer.
    held: usize,
    /// Requests admitted and not answered yet (a batch counts as many as
    /// it holds).
    running: usize,
    /// What a running request is expected to hold once answered.
    estimate: usize,
    /// Bytes of requests read and waiting for admission.
    queued: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            state: Mutex::new(State {
                held: 0,
                running: 0,
                estimate: (limit / 16).max(MIN_ESTIMATE),
                queued: 0,
            }),
            room: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.lock().held
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

    /// Counts `n` requests as running if they fit now: what is held, the
    /// requests waiting (but `own` bytes, theirs) and the estimate of every
    /// running request (these included) within the limit, or nothing held
    /// and nothing running.
    fn fits(&self, s: &mut State, n: usize, own: usize) -> bool {
        let idle = s.held == 0 && s.running == 0;
        let expected = s.running.saturating_add(n).saturating_mul(s.estimate);
        let held = s.held.saturating_add(s.queued - own);
        if idle || held.saturating_add(expected) <= self.limit {
            s.running += n;
            s.queued -= own;
            return true;
        }
        false
    }

    /// Admits `n` requests at once if they fit (nothing waits before them).
    pub(crate) fn try_admit(self: &Arc<Self>, n: usize) -> Option<Ticket> {
        let fits = self.fits(&mut self.lock(), n, 0);
        fits.then(|| Ticket {
            budget: Arc::clone(self),
            n,
        })
    }

    /// Waits until the `n` requests of `waiting` fit, then counts them as
    /// running and their line no longer as waiting. Cancel-safe: dropped
    /// before it is done, `waiting` still waits.
    pub(crate) async fn admit(self: &Arc<Self>, n: usize, waiting: &mut Waiting) -> Ticket {
        loop {
            let notified = self.room.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.fits(&mut self.lock(), n, waiting.bytes) {
                waiting.bytes = 0;
                return Ticket {
                    budget: Arc::clone(self),
                    n,
                };
            }
            notified.await;
        }
    }

    /// Counts `bytes` of a request read and not admitted yet as waiting.
    pub(crate) fn wait(self: &Arc<Self>, bytes: usize) -> Waiting {
        self.lock().queued += bytes;
        Waiting {
            budget: Arc::clone(self),
            bytes,
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

/// Requests admitted by [`Budget::admit`], until answered (or dropped: a
/// task that ends without an answer gives its place back).
pub(crate) struct Ticket {
    budget: Arc<Budget>,
    n: usize,
}

impl Ticket {
    /// The answer is ready: `bytes` are held instead of the estimate.
    pub(crate) fn answered(self, bytes: usize) -> Charge {
        {
            let mut s = self.budget.lock();
            let per = bytes / self.n.max(1);
            s.estimate = per.max(s.estimate - s.estimate / 16).max(MIN_ESTIMATE);
        }
        let charge = self.budget.charge(bytes);
        drop(self);
        charge
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.budget.lock().running -= self.n;
        self.budget.room.notify_waiters();
    }
}

/// A request read and waiting for admission ([`Budget::wait`]): its bytes
/// count as held until it is admitted or dropped (cancelled).
pub(crate) struct Waiting {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.lock().queued -= self.bytes;
            self.budget.room.notify_waiters();
        }
    }
}

/// Bytes held for the client until dropped (the frame was handed to the
/// writer, or writing failed).
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
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn reading_waits_while_answers_fill_the_budget_and_resumes_when_they_are_written() {
        let budget = Budget::new(1000 * 1024);
        // The first answers show what a request holds: 300 KiB each.
        let first = budget.try_admit(1).unwrap().answered(300 * 1024);
        let second = budget.try_admit(1).unwrap().answered(300 * 1024);
        assert_eq!(budget.held(), 600 * 1024);
        // One more running request (300 KiB expected) fits; two do not.
        let third = budget.try_admit(1).unwrap();
        let mut waiting = budget.wait(100);
        let blocked =
            tokio::time::timeout(Duration::from_millis(50), budget.admit(1, &mut waiting)).await;
        assert!(blocked.is_err(), "a fourth would pass the budget");
        drop(third);
        drop(first);
        let fourth = tokio::time::timeout(Duration::from_secs(5), budget.admit(1, &mut waiting))
            .await
            .expect("written answers make room");
        drop((second, fourth));
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test]
    async fn an_answer_larger_than_the_budget_is_served_alone() {
        let budget = Budget::new(1024);
        let big = budget.try_admit(1).unwrap().answered(1 << 20);
        assert!(
            budget.try_admit(1).is_none(),
            "held past the budget: it waits"
        );
        drop(big);
        let next = budget.try_admit(1).unwrap();
        drop(next);
    }

    #[tokio::test]
    async fn requests_waiting_count_against_the_budget_but_not_against_their_own_admission() {
        let budget = Budget::new(64 * 1024);
        // The estimate is 4 KiB: 16 running requests fit, or 15 and 4 KiB waiting.
        let running: Vec<Ticket> = (0..15).map(|_| budget.try_admit(1).unwrap()).collect();
        let mut head = budget.wait(4 * 1024);
        let behind = budget.wait(1);
        assert!(budget.try_admit(1).is_none(), "the waiting bytes count");
        drop(behind);
        let ticket = tokio::time::timeout(Duration::from_secs(5), budget.admit(1, &mut head))
            .await
            .expect("its own bytes do not hold it up");
        assert_eq!(budget.lock().queued, 0);
        drop((running, ticket, head));
        assert_eq!(budget.lock().running, 0);
    }
}
