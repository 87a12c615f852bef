//! Watches for the transports that do not run `serve_lines`: a tool call
//! answered where its request was read (the HTTP server's plain JSON
//! answers and stateless requests, [`answer_watched`]) and the Claude Code
//! bridge of the agent crate ([`ExternalWatch`]). The watchdog itself is in
//! `watchdog.rs`.

use std::sync::Arc;

use serde_json::Value;

use super::RequestContext;
use super::watchdog::{Watch, can_watch};
#[cfg(feature = "http-server")]
pub(crate) use http::answer_watched;

#[cfg(feature = "http-server")]
mod http {
    use std::sync::{Arc, Mutex, PoisonError};

    use serde_json::Value;
    use tokio::sync::oneshot;
    use tokio::task::AbortHandle;

    use super::super::{Handler, RequestContext};
    use super::Watch;

    /// Answers a tool call in a task of its own, with a watch in its
    /// context, and waits for its answer or the watchdog's, whichever
    /// comes first (for a transport that awaits each answer where it read the
    /// request: the HTTP server's plain JSON answers and stateless requests).
    /// The task is aborted if this future is dropped (the client went away).
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
                let reply = super::super::answer(handler.as_ref(), message, ctx).await;
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
}

/// A watch for a transport of another crate (the Claude Code bridge, which
/// polls each request's first step where it read it, then moves the rest
/// into a task of its own): the transport attaches it to the call's
/// context, asks after the first poll whether the watchdog answered, and
/// settles it with its own answer.
#[doc(hidden)]
pub struct ExternalWatch(Arc<Watch>);

impl ExternalWatch {
    /// A watch whose timeout answer (the JSON-RPC response) goes to
    /// `deliver`, called from the watchdog's thread: it must not block, and
    /// it is outside the runtime's context (spawn with a `Handle`). `None`
    /// on a current-thread runtime.
    pub fn new(deliver: impl FnOnce(Value) + Send + 'static) -> Option<Self> {
        can_watch().then(|| Self(Watch::new(Box::new(deliver))))
    }

    /// Puts the watch in the context of the call it watches.
    pub fn attach(&self, ctx: &mut RequestContext) {
        ctx.watch = Some(Arc::clone(&self.0));
    }

    /// Whether the watchdog answered already (the call has not settled).
    pub fn answered(&self) -> bool {
        self.0.answered()
    }

    /// Called with the call's own answer: whether it is the one to answer
    /// (`false`: the watchdog answered already; drop yours).
    pub fn settle(&self) -> bool {
        self.0.settle()
    }
}
