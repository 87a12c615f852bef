//! Checks that a test left no Tokio task running.
//!
//! Each `#[tokio::test]` has its own runtime and its body is not a task, so
//! once everything a test started has ended, the runtime has no live task.
//! A task still alive then is a leak: a reader, a watcher or a handler that
//! outlived its session.

use std::time::{Duration, Instant};

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
/// claude_agent_testkit::tasks::assert_none_left(Duration::from_secs(1)).await;
/// # }
/// ```
///
/// # Panics
///
/// Outside a Tokio runtime, or when tasks are still alive after `within`.
pub async fn assert_none_left(within: Duration) {
    let metrics = tokio::runtime::Handle::current().metrics();
    let deadline = Instant::now() + within;
    loop {
        let alive = metrics.num_alive_tasks();
        if alive == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{alive} task(s) still running {within:?} after the test ended its work"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
