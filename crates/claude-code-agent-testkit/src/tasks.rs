//! Checks that a test left no Tokio task running.
//!
//! Each `#[tokio::test]` has its own runtime and its body is not a task, so
//! once everything a test started has ended, the runtime has no live task.
//! A task still alive then is a leak: a reader, a watcher or a handler that
//! outlived its session. [`assert_none_left`] checks exactly that; a
//! [`Baseline`] checks the same of one part of a test (a client, a server)
//! while other tasks of the test may still run.

use std::time::{Duration, Instant};

/// How long [`Baseline::settled`] waits for tasks to end.
pub const SETTLE_WITHIN: Duration = Duration::from_secs(5);

/// How many tasks are alive on the current runtime.
///
/// # Panics
///
/// Outside a Tokio runtime.
pub fn alive() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Waits up to `within` for the current runtime to have no live task, and
/// panics, saying how many are left, if it still has some.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use std::time::Duration;
///
/// let task = tokio::spawn(async { tokio::time::sleep(Duration::from_millis(10)).await });
/// task.await.unwrap();
/// claude_code_agent_testkit::tasks::assert_none_left(Duration::from_secs(1)).await;
/// # }
/// ```
///
/// # Panics
///
/// Outside a Tokio runtime, or when tasks are still alive after `within`.
pub async fn assert_none_left(within: Duration) {
    Baseline(0)
        .settled_within("the test ended its work", within)
        .await;
}

/// The number of tasks alive at one moment, to check later that what was
/// created after it left no task behind.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use claude_code_agent_testkit::tasks::Baseline;
///
/// let tasks = Baseline::now();
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let worker = tokio::spawn(async move { let _ = stopped.await; });
/// assert!(tasks.exceeded(), "a running worker is a task");
/// drop(stop);
/// worker.await.unwrap();
/// tasks.settled("the worker").await;
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Baseline(usize);

impl Baseline {
    /// The tasks alive now.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn now() -> Baseline {
        Baseline(alive())
    }

    /// How many tasks were alive.
    pub fn count(&self) -> usize {
        self.0
    }

    /// Whether more tasks are alive now than at the baseline (to show that a
    /// check is not vacuous: a live client has tasks).
    pub fn exceeded(&self) -> bool {
        alive() > self.0
    }

    /// Waits up to [`SETTLE_WITHIN`] until no more tasks are alive than at
    /// the baseline; panics, naming `what` and the count, if some never end.
    pub async fn settled(&self, what: &str) {
        self.settled_within(what, SETTLE_WITHIN).await;
    }

    /// [`settled`](Self::settled) with a deadline of your choice.
    pub async fn settled_within(&self, what: &str, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let now = alive();
            if now <= self.0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: {now} task(s) still alive {within:?} later (baseline: {})",
                self.0
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
