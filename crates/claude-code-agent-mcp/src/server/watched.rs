//! A watched tool call for a transport that answers where it read the
//! request (the HTTP server's plain JSON answers and stateless requests):
//! [`answer_watched`]. The watchdog itself is in `watchdog.rs`.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::watchdog::Watch;
use super::{Handler, RequestContext};

/// Answers a tool call in a task of its own, with a watch in its context,
/// and waits for its answer or the watchdog's, whichever comes first (for
/// a transport that awaits each answer where it read the request: the HTTP
/// server's plain JSON answers and stateless requests). The task is aborted
/// if this future is dropped (the client went away).
pub(crate) async fn answer_watched(
    handler: Arc<dyn Handler>,
    message: Value,
    mut ctx: RequestContext,
) -> Option<Value> {
    type Slot = Arc<Mutex<Option<oneshot::Sender<Option<Value>>>>>;
    fn send(slot: &Slot, reply: Option<Value>) {
        if let Some(tx) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = tx.send(reply);
        }
    }
    let (tx, rx) = oneshot::channel();
    let slot: Slot = Arc::new(Mutex::new(Some(tx)));
    let watch = Watch::new(Box::new({
        let slot = Arc::clone(&slot);
        move |answer| send(&slot, Some(answer))
    }));
    ctx.watch = Some(Arc::clone(&watch));
    let task = tokio::spawn({
        let watch = Arc::clone(&watch);
        async move {
            let reply = super::answer(handler.as_ref(), message, ctx).await;
            if watch.settle() {
                send(&slot, reply);
            }
        }
    });
    watch.set_task(task.abort_handle());
    let _abort = AbortOnDrop(task.abort_handle());
    rx.await.ok().flatten()
}

/// Aborts a task when dropped.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
