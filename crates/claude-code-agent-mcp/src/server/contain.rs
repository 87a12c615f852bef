//! Containing handlers: whatever a handler does — panic (in its future or
//! before it returns one), run too long, answer a request with nothing —
//! the server answers. The one home of panic capture and handler timeouts,
//! for tools, resources, prompts, completion, whole `handle` calls and the
//! transports that run a [`Handler`](super::Handler).

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use tokio::time::Instant;

use super::limits;
use crate::jsonrpc::{self, ErrorObject, Kind};

/// Why a contained handler produced nothing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// It panicked; the panic's message.
    Panicked(String),
    /// Its deadline passed.
    TimedOut(Expiry),
}

/// How a deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// No progress within the timeout (or none reported at all).
    Quiet(Duration),
    /// Progress kept it alive up to its absolute cap.
    Cap(Duration),
}

impl Expiry {
    /// How the handler's timeout is worded: `timed out after 3s`, or
    /// `timed out: it reported progress but reached its cap of 2s`.
    pub(crate) fn describe(self) -> String {
        match self {
            Self::Quiet(limit) => format!("timed out after {}", limits::human(limit)),
            Self::Cap(cap) => format!(
                "timed out: it kept reporting progress but reached its cap of {}",
                limits::human(cap)
            ),
        }
    }
}

/// When a handler's run ends: a fixed timeout, or a timeout that each
/// progress report restarts, up to an absolute cap.
#[derive(Debug, Clone)]
pub(crate) struct Deadline {
    limit: Duration,
    following: Option<(Arc<ProgressClock>, Duration)>,
}

impl Deadline {
    /// `limit` after the start, whatever happens.
    pub(crate) fn fixed(limit: Duration) -> Self {
        Self {
            limit,
            following: None,
        }
    }

    /// `limit` after the start or after the last progress `clock` saw,
    /// never later than `cap` after the start.
    pub(crate) fn following(limit: Duration, clock: Arc<ProgressClock>, cap: Duration) -> Self {
        Self {
            limit,
            following: Some((clock, cap.max(limit))),
        }
    }

    /// When the deadline passes, as far as is known now, for a run that
    /// started at `start` (the progress clock's start, when following).
    pub(crate) fn due(&self, start: Instant) -> Instant {
        match &self.following {
            None => start + self.limit,
            Some((clock, cap)) => (clock.last() + self.limit).min(clock.start + *cap),
        }
    }

    /// How the deadline passed, once [`due`](Self::due) is past.
    pub(crate) fn expiry(&self, start: Instant) -> Expiry {
        match &self.following {
            Some((clock, cap)) if clock.moved() && self.due(start) == clock.start + *cap => {
                Expiry::Cap(*cap)
            }
            _ => Expiry::Quiet(self.limit),
        }
    }

    /// Completes when the deadline has passed, saying how.
    pub(crate) async fn expired(&self) -> Expiry {
        let Some((clock, _)) = &self.following else {
            tokio::time::sleep(self.limit).await;
            return Expiry::Quiet(self.limit);
        };
        loop {
            let due = self.due(clock.start);
            if due <= Instant::now() {
                return self.expiry(clock.start);
            }
            tokio::time::sleep_until(due).await;
        }
    }
}

/// When a call last reported progress (for [`Deadline::following`]).
#[derive(Debug)]
pub(crate) struct ProgressClock {
    start: Instant,
    /// Nanoseconds from `start` to the last progress report; `u64::MAX`
    /// before the first.
    last: AtomicU64,
}

impl ProgressClock {
    pub(crate) fn start() -> Arc<Self> {
        Arc::new(Self {
            start: Instant::now(),
            last: AtomicU64::new(u64::MAX),
        })
    }

    /// Records a progress report now.
    pub(crate) fn tick(&self) {
        let nanos = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        self.last.store(nanos, Ordering::Relaxed);
    }

    fn moved(&self) -> bool {
        self.last.load(Ordering::Relaxed) != u64::MAX
    }

    fn last(&self) -> Instant {
        match self.last.load(Ordering::Relaxed) {
            u64::MAX => self.start,
            nanos => self.start + Duration::from_nanos(nanos),
        }
    }
}

/// Runs the future `make` returns until it completes or `deadline` passes,
/// catching a panic in `make` itself or in the future. A timed-out future
/// is dropped.
pub(crate) async fn run<Fut: Future>(
    deadline: &Deadline,
    make: impl FnOnce() -> Fut,
) -> Result<Fut::Output, Failure> {
    // `make` is called inside the caught future, so a handler that panics
    // before returning its future is caught too.
    let guarded = AssertUnwindSafe(async move { make().await }).catch_unwind();
    tokio::select! {
        biased;
        finished = guarded => finished.map_err(|panic| Failure::Panicked(panic_message(panic.as_ref()))),
        expiry = deadline.expired() => Err(Failure::TimedOut(expiry)),
    }
}

/// A handler future after [`start`]: finished on its first poll (or
/// failed making it), or still running.
pub(crate) enum Started<F: Future> {
    Finished(Result<F::Output, Failure>),
    Running(F),
}

/// Makes the future with `make` and polls it once, synchronously, with the
/// caller's `cx`, catching a panic in either: most handlers finish there,
/// with no timer armed and nothing moved. One that does not is handed back
/// to be [`finish`]ed, its deadline counting from then (as [`run`]'s does).
pub(crate) fn start<F: Future + Unpin>(
    make: impl FnOnce() -> F,
    cx: &mut Context<'_>,
) -> Started<F> {
    let caught = |panic: Box<dyn Any + Send>| {
        Started::Finished(Err(Failure::Panicked(panic_message(panic.as_ref()))))
    };
    let mut future = match std::panic::catch_unwind(AssertUnwindSafe(make)) {
        Ok(future) => future,
        Err(panic) => return caught(panic),
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(&mut future).poll(cx))) {
        Ok(Poll::Ready(output)) => Started::Finished(Ok(output)),
        Ok(Poll::Pending) => Started::Running(future),
        Err(panic) => caught(panic),
    }
}

/// Runs a future [`start`] left running until it completes or `deadline`
/// passes, catching a panic. A timed-out future is dropped.
pub(crate) async fn finish<F: Future + Unpin>(
    future: F,
    deadline: &Deadline,
) -> Result<F::Output, Failure> {
    let guarded = AssertUnwindSafe(future).catch_unwind();
    tokio::select! {
        biased;
        finished = guarded => finished.map_err(|panic| Failure::Panicked(panic_message(panic.as_ref()))),
        expiry = deadline.expired() => Err(Failure::TimedOut(expiry)),
    }
}

/// [`run`] for a request of the catalog (a resource, prompt or completion
/// handler): a failure is a `-32603` error naming `what` failed.
pub(crate) async fn catalog<Fut: Future>(
    what: &str,
    limit: Duration,
    make: impl FnOnce() -> Fut,
) -> Result<Fut::Output, ErrorObject> {
    run(&Deadline::fixed(limit), make).await.map_err(|failure| {
        let message = match failure {
            Failure::Panicked(panic) => {
                tracing::error!(what, panic = %panic, "handler panicked");
                format!("{what}: the handler panicked: {panic}")
            }
            Failure::TimedOut(expiry) => {
                tracing::warn!(what, ?limit, "handler timed out");
                format!("{what}: the handler {}", expiry.describe())
            }
        };
        ErrorObject::internal(message)
    })
}

/// Answers `message` with `handle`, whatever it does: a request (or an
/// invalid message) it panics on gets `-32603` naming the panic, and a
/// request it answers with nothing gets `-32603` too, so every request is
/// answered exactly once. Notifications and responses get no reply.
pub(crate) async fn answer<F, Fut>(message: Value, handle: F) -> Option<Value>
where
    F: FnOnce(Value) -> Fut,
    Fut: Future<Output = Option<Value>>,
{
    let kind = jsonrpc::kind(&message);
    let id = match kind {
        Kind::Request => message.get("id").cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let guarded = AssertUnwindSafe(async move { handle(message).await }).catch_unwind();
    match guarded.await {
        Ok(Some(reply)) => Some(reply),
        Ok(None) if kind == Kind::Request => {
            tracing::error!(%id, "the handler gave no reply to a request");
            Some(jsonrpc::error_response(
                &id,
                ErrorObject::internal("the server's handler gave no reply to this request"),
            ))
        }
        Ok(None) => None,
        Err(panic) => {
            let error = panicked(&id, panic.as_ref());
            matches!(kind, Kind::Request | Kind::Invalid)
                .then(|| jsonrpc::error_response(&id, error))
        }
    }
}

/// The `-32603` error of the request `id` whose handling panicked (in the
/// server's own code: a tool handler's panic is an `isError` result),
/// logged.
pub(crate) fn panicked(id: &Value, panic: &(dyn Any + Send)) -> ErrorObject {
    let panic = panic_message(panic);
    tracing::error!(%id, panic = %panic, "the handler panicked");
    ErrorObject::internal(format!("the server's handler panicked: {panic}"))
}

/// The message of a caught panic: its `&str` or `String` payload, or a
/// placeholder. The one helper for every place that catches a panic (a
/// tool handler, an in-process handler, and the Claude Code SDK's control
/// handlers, through `__private::panic_message`).
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic payload that is not a string)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_following_deadline_restarts_on_progress_up_to_its_cap() {
        let limit = Duration::from_millis(300);
        let clock = ProgressClock::start();
        let deadline = Deadline::following(limit, Arc::clone(&clock), Duration::from_secs(1));
        let ticker = {
            let clock = Arc::clone(&clock);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    clock.tick();
                }
            })
        };
        let started = Instant::now();
        assert_eq!(
            deadline.expired().await,
            Expiry::Cap(Duration::from_secs(1))
        );
        assert_eq!(started.elapsed(), Duration::from_secs(1));
        ticker.abort();

        // No progress: the plain timeout.
        let deadline = Deadline::following(limit, ProgressClock::start(), Duration::from_secs(1));
        let started = Instant::now();
        assert_eq!(deadline.expired().await, Expiry::Quiet(limit));
        assert_eq!(started.elapsed(), limit);
    }

    #[tokio::test]
    async fn answer_replies_to_requests_whatever_the_handler_does() {
        let request = serde_json::json!({"jsonrpc":"2.0","id":5,"method":"x"});
        let reply = answer(request.clone(), |_| async { None }).await.unwrap();
        assert_eq!(reply["id"], 5);
        assert_eq!(reply["error"]["code"], -32603);
        let reply = answer(request, |_| async {
            if true {
                panic!("boom")
            }
            None
        })
        .await
        .unwrap();
        assert!(
            reply["error"]["message"].as_str().unwrap().contains("boom"),
            "{reply}"
        );
        let note = serde_json::json!({"jsonrpc":"2.0","method":"x"});
        let quiet = answer(note, |_| async {
            if true {
                panic!("quiet")
            }
            None
        });
        assert_eq!(quiet.await, None);
    }
}
