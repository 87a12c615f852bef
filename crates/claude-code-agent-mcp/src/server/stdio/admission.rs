//! Requests read while they cannot be admitted yet (no room in the byte
//! budget, or [`SERVE_MAX_REQUESTS_IN_FLIGHT`](super::SERVE_MAX_REQUESTS_IN_FLIGHT)
//! running): they wait as their lines (their parsed values may take many
//! times the bytes), while the reader goes on handling responses and
//! notifications (the client's answers to the server's own requests, which
//! running calls may wait for). Each is admitted as soon as it fits: one
//! that does not fit never holds up one behind it that does.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;

use crate::transport::budget::{Budget, Demand, Ticket};
use crate::transport::lines::Order;

/// A request read and not admitted yet.
pub(super) struct Queued {
    /// Its line, parsed again once admitted.
    pub(super) line: Vec<u8>,
    /// What it asks of the budget.
    pub(super) demand: Demand,
    pub(super) order: Order,
    /// Its id (not for a batch), for `notifications/cancelled`.
    pub(super) id: Option<Value>,
    /// What it takes while it waits (its line and its place in the queue).
    pub(super) bytes: usize,
}

/// How many bytes of requests may wait for admission before reading stops:
/// a 16th of the budget, at least 1 MiB.
pub(super) fn queue_bound(budget: usize) -> usize {
    (budget / 16).max(1 << 20)
}

/// Waits until a request of `queue` fits: its position, and its ticket.
/// Cancel-safe: dropped before it is done, every request still waits.
/// Never ready on an empty queue.
pub(super) async fn admission(budget: &Arc<Budget>, queue: &VecDeque<Queued>) -> (usize, Ticket) {
    budget.admit_any(|| queue.iter().map(|q| q.demand)).await
}

/// The id a `notifications/cancelled` cancels.
pub(super) fn cancelled_id(message: &Value) -> Option<&Value> {
    (message.get("method")? == "notifications/cancelled")
        .then(|| crate::jsonrpc::at(message, &["params", "requestId"]))
        .flatten()
}
