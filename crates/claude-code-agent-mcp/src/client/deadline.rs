//! How long one request may take: a timeout that progress may restart, and
//! an absolute cap (the TypeScript SDK's `resetTimeoutOnProgress` and
//! `maxTotalTimeout`).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until};

use super::Error;

/// A request whose timeout restarts on progress: the token its progress
/// comes with, and what is told when it comes.
pub(crate) struct ProgressWatch {
    pub(crate) token: Value,
    pub(crate) seen: Arc<Notify>,
}

impl ProgressWatch {
    pub(crate) fn new(token: Value) -> Self {
        Self {
            token,
            seen: Arc::new(Notify::new()),
        }
    }
}

/// The limits of one request.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    /// How long it may go without an answer (without progress, when
    /// progress restarts it).
    pub(crate) timeout: Duration,
    /// The most it may take in any case.
    pub(crate) cap: Option<Duration>,
    /// Whether progress restarts `timeout`.
    pub(crate) reset_on_progress: bool,
}

/// Which limit a request ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expired {
    Timeout,
    Cap,
}

impl Limits {
    /// The error of a request of `method` that ran into `expired`.
    pub(crate) fn error(&self, method: &str, expired: Expired) -> Error {
        Error::timeout(match expired {
            Expired::Timeout if self.reset_on_progress => format!(
                "request {method} timed out after {} without progress",
                fmt_duration(self.timeout)
            ),
            Expired::Timeout => format!(
                "request {method} timed out after {}",
                fmt_duration(self.timeout)
            ),
            Expired::Cap => format!(
                "request {method} reached its maximum total timeout of {}",
                fmt_duration(self.cap.unwrap_or_default())
            ),
        })
    }
}

/// `start + d`, or a far future when that does not fit (`Duration::MAX`).
fn after(start: Instant, d: Duration) -> Instant {
    start
        .checked_add(d)
        .unwrap_or_else(|| start + Duration::from_secs(60 * 60 * 24 * 365 * 30))
}

/// Runs `exchange` within `limits`; `progress` is told of each progress
/// report (only looked at when progress restarts the timeout).
pub(crate) async fn within<F: Future>(
    exchange: F,
    limits: Limits,
    progress: Option<&Notify>,
) -> Result<F::Output, Expired> {
    let start = Instant::now();
    let cap = limits.cap.map(|c| after(start, c));
    let progress = progress.filter(|_| limits.reset_on_progress);
    let mut idle = after(start, limits.timeout);
    let mut exchange = pin!(exchange);
    loop {
        let (deadline, expired) = match cap {
            Some(cap) if cap <= idle => (cap, Expired::Cap),
            _ => (idle, Expired::Timeout),
        };
        let progressed = async {
            match progress {
                Some(seen) => seen.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            outcome = &mut exchange => return Ok(outcome),
            () = progressed => idle = after(Instant::now(), limits.timeout),
            () = sleep_until(deadline) => return Err(expired),
        }
    }
}

/// `5s`, or `1500ms` when not whole seconds.
pub(crate) fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(timeout: u64, cap: Option<u64>, reset: bool) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout),
            cap: cap.map(Duration::from_millis),
            reset_on_progress: reset,
        }
    }

    /// Reports progress every 40 ms, `n` times, then answers.
    async fn progressing(seen: Arc<Notify>, n: u32) -> &'static str {
        for _ in 0..n {
            tokio::time::sleep(Duration::from_millis(40)).await;
            seen.notify_one();
        }
        "done"
    }

    #[tokio::test(start_paused = true)]
    async fn progress_restarts_the_timeout_up_to_the_cap() {
        let seen = Arc::new(Notify::new());
        // 10 × 40 ms = 400 ms, with a 100 ms timeout: only progress saves it.
        let ok = within(
            progressing(seen.clone(), 10),
            limits(100, Some(1000), true),
            Some(&seen),
        )
        .await;
        assert_eq!(ok, Ok("done"));

        // Without the reset the same call times out.
        let start = Instant::now();
        let e = within(
            progressing(seen.clone(), 10),
            limits(100, None, false),
            Some(&seen),
        )
        .await;
        assert_eq!(e, Err(Expired::Timeout));
        assert_eq!(start.elapsed(), Duration::from_millis(100));

        // Progress forever: the cap ends it.
        let start = Instant::now();
        let e = within(
            progressing(seen.clone(), u32::MAX),
            limits(100, Some(300), true),
            Some(&seen),
        )
        .await;
        assert_eq!(e, Err(Expired::Cap));
        assert_eq!(start.elapsed(), Duration::from_millis(300));

        // Progress that stops: the timeout counts from the last report.
        let start = Instant::now();
        let stalls = async {
            progressing(seen.clone(), 3).await;
            std::future::pending::<&str>().await
        };
        let e = within(stalls, limits(100, Some(10_000), true), Some(&seen)).await;
        assert_eq!(e, Err(Expired::Timeout));
        assert_eq!(start.elapsed(), Duration::from_millis(220));
    }

    #[test]
    fn messages_name_the_limit() {
        let l = limits(1500, Some(4000), true);
        assert_eq!(
            l.error("tools/call", Expired::Timeout).to_string(),
            "request tools/call timed out after 1500ms without progress"
        );
        assert_eq!(
            l.error("tools/call", Expired::Cap).to_string(),
            "request tools/call reached its maximum total timeout of 4s"
        );
        assert_eq!(
            limits(2000, None, false)
                .error("ping", Expired::Timeout)
                .to_string(),
            "request ping timed out after 2s"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_huge_timeout_does_not_overflow() {
        let l = Limits {
            timeout: Duration::MAX,
            cap: Some(Duration::MAX),
            reset_on_progress: true,
        };
        assert_eq!(within(async { 1 }, l, None).await, Ok(1));
    }
}
