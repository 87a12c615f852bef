//! Requests read while an earlier one waits for admission (room in the
//! byte budget, or a permit of the [`SERVE_MAX_REQUESTS_IN_FLIGHT`](super::SERVE_MAX_REQUESTS_IN_FLIGHT)):
//! they wait behind it, in order, as their lines (their parsed values may
//! take many times the bytes), counted against the budget, while the reader
//! goes on handling responses and notifications (the client's answers to
//! the server's own requests, which running calls may wait for).

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::transport::budget::{Budget, Ticket, Waiting};
use crate::transport::lines::Order;

/// A request read while an earlier one waits for admission.
pub(super) struct Queued {
    /// Its line, parsed again once admitted.
    pub(super) line: Vec<u8>,
    /// How many requests it holds (a batch, many).
    pub(super) n: u32,
    pub(super) order: Order,
    /// Its id (not for a batch), for `notifications/cancelled`.
    pub(super) id: Option<Value>,
    /// Its bytes, held against the budget until admitted.
    pub(super) waiting: Waiting,
    pub(super) waiting_bytes: usize,
}

/// How many bytes of requests may wait for admission before reading stops:
/// a 16th of the budget, at least 1 MiB.
pub(super) fn queue_bound(budget: usize) -> usize {
    (budget / 16).max(1 << 20)
}

/// Waits until the first request waiting fits (permits, then the budget).
/// Cancel-safe: dropped before it is done, the request still waits.
pub(super) async fn admission(
    permits: &Arc<Semaphore>,
    budget: &Arc<Budget>,
    head: Option<&mut Queued>,
) -> Option<(OwnedSemaphorePermit, Ticket)> {
    let head = head?;
    let permit = Arc::clone(permits).acquire_many_owned(head.n).await.ok()?;
    let ticket = budget.admit(head.n as usize, &mut head.waiting).await;
    Some((permit, ticket))
}

/// Admits `n` requests if they fit now (and nothing waits before them).
pub(super) fn admit_now(
    permits: &Arc<Semaphore>,
    budget: &Arc<Budget>,
    n: u32,
) -> Option<(OwnedSemaphorePermit, Ticket)> {
    let permit = Arc::clone(permits).try_acquire_many_owned(n).ok()?;
    Some((permit, budget.try_admit(n as usize)?))
}

/// The id a `notifications/cancelled` cancels.
pub(super) fn cancelled_id(message: &Value) -> Option<&Value> {
    (message.get("method")? == "notifications/cancelled")
        .then(|| message.pointer("/params/requestId"))
        .flatten()
}
