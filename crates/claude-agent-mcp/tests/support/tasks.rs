//! Checking that a client leaves no task running on the test's runtime.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// How many tasks are alive on the current runtime.
pub fn alive() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// The number of tasks alive before a client was created.
pub struct Baseline(usize);

impl Baseline {
    /// Records the tasks alive now.
    pub fn now() -> Self {
        Self(alive())
    }

    /// Whether more tasks are alive now than at the baseline (to show a
    /// check is not vacuous: a live client has tasks).
    pub fn exceeded(&self) -> bool {
        alive() > self.0
    }

    /// Waits (up to 2 s) until no more tasks are alive than at the
    /// baseline; panics, naming the count, if some never end.
    pub async fn settled(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let now = alive();
            if now <= self.0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: {now} tasks still alive 2 s after the client went, baseline {}",
                self.0
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
