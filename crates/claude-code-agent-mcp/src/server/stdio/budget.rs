//! The byte budget of one client served over NDJSON: what the server holds
//! for it (answers serialized and not yet handed to the writer, requests to
//! the client waiting for room) stays within a number of bytes; past it,
//! the next line is read only once the client has read enough.
//!
//! An answer's size is known only once its handler is done, so a request
//! still running is counted at an estimate: the size of recent answers
//! (the largest, fading by a sixteenth per answer), at first a 16th of the
//! budget. The next request is read while what is held plus the estimate
//! of every request running (this one included) fits the budget, or when
//! nothing is held and nothing runs (an answer larger than the whole budget
//! is still served, one at a time).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

/// The smallest estimate of a running request's answer.
const MIN_ESTIMATE: usize = 4 * 1024;

/// The budget of one client; shared by the reader and the requests' tasks.
pub(super) struct Budget {
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
}

impl Budget {
    pub(super) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            state: Mutex::new(State {
                held: 0,
                running: 0,
                estimate: (limit / 16).max(MIN_ESTIMATE),
            }),
            room: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes held now (answers waiting for the writer).
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.lock().held
    }

    /// Waits until `n` more requests fit, then counts them as running.
    pub(super) async fn admit(self: &Arc<Self>, n: usize) -> Ticket {
        loop {
            let notified = self.room.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut s = self.lock();
                let idle = s.held == 0 && s.running == 0;
                let expected = s.running.saturating_add(n).saturating_mul(s.estimate);
                if idle || s.held.saturating_add(expected) <= self.limit {
                    s.running += n;
                    return Ticket {
                        budget: Arc::clone(self),
                        n,
                    };
                }
            }
            notified.await;
        }
    }

    /// Counts `bytes` as held until the charge is dropped.
    pub(super) fn charge(self: &Arc<Self>, bytes: usize) -> Charge {
        self.lock().held += bytes;
        Charge {
            budget: Arc::clone(self),
            bytes,
        }
    }
}

/// Requests admitted by [`Budget::admit`], until answered (or dropped: a
/// task that ends without an answer gives its place back).
pub(super) struct Ticket {
    budget: Arc<Budget>,
    n: usize,
}

impl Ticket {
    /// The answer is ready: `bytes` are held instead of the estimate.
    pub(super) fn answered(self, bytes: usize) -> Charge {
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

/// Bytes held for the client until dropped (the frame was handed to the
/// writer, or writing failed).
pub(super) struct Charge {
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
        let first = budget.admit(1).await.answered(300 * 1024);
        let second = budget.admit(1).await.answered(300 * 1024);
        assert_eq!(budget.held(), 600 * 1024);
        // One more running request (300 KiB expected) fits; two do not.
        let third = budget.admit(1).await;
        let blocked = tokio::time::timeout(Duration::from_millis(50), budget.admit(1)).await;
        assert!(blocked.is_err(), "a fourth would pass the budget");
        drop(third);
        drop(first);
        let fourth = tokio::time::timeout(Duration::from_secs(5), budget.admit(1))
            .await
            .expect("written answers make room");
        drop((second, fourth));
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test]
    async fn an_answer_larger_than_the_budget_is_served_alone() {
        let budget = Budget::new(1024);
        let big = budget.admit(1).await.answered(1 << 20);
        let next = tokio::time::timeout(Duration::from_millis(50), budget.admit(1)).await;
        assert!(next.is_err(), "held past the budget: reading waits");
        drop(big);
        let next = budget.admit(1).await;
        drop(next);
    }
}
