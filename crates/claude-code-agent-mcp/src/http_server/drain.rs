//! The graceful drain of a service
//! ([`StreamableHttpService::drain`](super::StreamableHttpService::drain)):
//! from the moment it starts, no session opens here (`initialize` gets a
//! 503 whose JSON-RPC error says `retryable`, so a client tries again, and
//! a load balancer sends it elsewhere) and no GET stream either; the GET
//! streams open end, so their clients reconnect elsewhere (with an event
//! store, with `Last-Event-ID`, missing nothing); the calls running here go
//! on to their answers, which the drain waits for, up to its deadline.
//! What still runs then ends with the service's sessions: with an event
//! store, its client resumes through another replica and gets the
//! retryable error, as after a crash.
//!
//! Running calls are counted by a guard ([`Running`]) that each POST holds
//! until its answer is written (for a streamed answer, its task holds one).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::sessions::SessionTable;
use crate::jsonrpc::{self, ErrorObject};

/// Whether the service drains, and how many of its requests run.
pub(crate) struct Drain {
    draining: AtomicBool,
    running: watch::Sender<usize>,
}

/// One request counted as running while it lives.
pub(crate) struct Running(Arc<Drain>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Drain {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            draining: AtomicBool::new(false),
            running: watch::Sender::new(0),
        })
    }

    /// Whether the service is draining (it takes no new session).
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Counts a request as running until the guard is dropped.
    pub(crate) fn running(self: &Arc<Self>) -> Running {
        self.running.send_modify(|n| *n += 1);
        Running(Arc::clone(self))
    }

    /// Starts draining: GET streams end; waits until no request runs, or
    /// `timeout`. How many still run.
    pub(crate) async fn drain(&self, sessions: &SessionTable, timeout: Duration) -> usize {
        if !self.draining.swap(true, Ordering::AcqRel) {
            let ended = sessions.end_get_streams();
            tracing::info!(
                running = *self.running.borrow(),
                get_streams = ended,
                "MCP HTTP: draining: no new session; waiting for the calls running"
            );
        }
        let mut running = self.running.subscribe();
        let _ = tokio::time::timeout(timeout, running.wait_for(|n| *n == 0)).await;
        let left = *running.borrow();
        if left > 0 {
            tracing::warn!(
                left,
                "MCP HTTP: the drain's deadline passed with requests still running"
            );
        }
        left
    }
}

/// 503 to what a draining service no longer takes: its JSON-RPC error
/// says it may be retried (it was not acted on), elsewhere.
pub(crate) fn refused(id: &Value, what: &str) -> Response {
    use axum::response::IntoResponse;
    let error = ErrorObject::new(
        jsonrpc::INTERNAL_ERROR,
        format!("Service Unavailable: this server is shutting down and opens no {what}; try again"),
    )
    .with_data(json!({"retryable": true}));
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        jsonrpc::error_response(id, error).to_string(),
    )
        .into_response()
}
