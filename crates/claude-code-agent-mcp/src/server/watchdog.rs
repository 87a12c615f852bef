//! The tool timeout's backstop for a handler that blocks its thread.
//!
//! A call's timeout is a timer in the call's own task ([`contain`]): it
//! fires only when that task is polled, so a handler that blocks the thread
//! its task runs on (`std::thread::sleep`, a blocking read, a long loop
//! with no `.await`) keeps its caller waiting for as long as it blocks. A
//! transport that runs each request in a task of its own (`serve_lines`,
//! the HTTP server's calls answered over SSE) gives each tool call a
//! [`Watch`]: the call arms it with its deadline before the handler's
//! first poll, and a call still running [`GRACE`] after its deadline is
//! answered with the timeout result the call itself would have given,
//! delivered where the transport said (`serve_lines`: its connection's
//! channel of timeout answers; HTTP: the call's SSE stream, or the waiting
//! POST of a plain JSON answer, `watched.rs`), and its task is aborted
//! (the handler future is dropped once the blocking call returns).
//! Whichever of the two settles the watch first answers; the other's
//! answer is dropped.
//!
//! The deadlines are kept by one thread of the process, not a Tokio task: a
//! task woken from the worker that is about to block would wait in that
//! worker's LIFO slot, which other workers cannot steal, until the handler
//! returns. The answers go out through a worker that is free. On a
//! current-thread runtime nothing is armed: no worker could write the
//! answer before the handler returns.
//!
//! [`contain`]: super::contain

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::contain::{Deadline, Expiry};

/// How long after its deadline a call's own timer has to answer before the
/// watchdog does: the call's timer starts a little later (after the first
/// poll) and is normally the one that answers.
pub(crate) const GRACE: Duration = Duration::from_millis(100);

/// When a call's deadline passes: its [`Deadline`], counted from `start`.
pub(crate) struct Timing {
    pub(crate) start: tokio::time::Instant,
    pub(crate) deadline: Deadline,
}

impl Timing {
    /// The deadline as far as is known now, plus [`GRACE`].
    fn due(&self) -> Instant {
        self.deadline.due(self.start).into_std() + GRACE
    }
}

/// The answer a call gives when it times out (the JSON-RPC response).
pub(crate) type TimeoutAnswer = Box<dyn FnOnce(Expiry) -> Value + Send>;

/// The timeout answers of one connection's watches.
pub(crate) type Answers = mpsc::UnboundedReceiver<Value>;

/// Where a watch's timeout answer goes: the transport writes it as it
/// writes any answer (called from the watchdog's thread; must not block).
pub(crate) type Deliver = Box<dyn FnOnce(Value) + Send>;

/// Whether watches can help here: on a multi-thread runtime only.
pub(crate) fn can_watch() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// One connection's watches, whose timeout answers go to one channel
/// (`serve_lines`).
#[derive(Clone)]
pub(crate) struct Watchdog {
    answers: mpsc::UnboundedSender<Value>,
    /// On a multi-thread runtime: the only kind where it can help.
    enabled: bool,
}

impl Watchdog {
    /// A watchdog for a connection served on the current runtime, and the
    /// channel its timeout answers arrive on.
    pub(crate) fn new() -> (Self, Answers) {
        let (answers, rx) = mpsc::unbounded_channel();
        (
            Self {
                answers,
                enabled: can_watch(),
            },
            rx,
        )
    }

    /// A watch for one tool call; none on a current-thread runtime.
    pub(crate) fn watch(&self) -> Option<Arc<Watch>> {
        self.enabled.then(|| {
            let answers = self.answers.clone();
            Watch::new(Box::new(move |answer| {
                let _ = answers.send(answer);
            }))
        })
    }
}

/// One request's slot: armed by its call, settled by whoever answers first.
pub(crate) struct Watch {
    slot: Mutex<Slot>,
    task: OnceLock<AbortHandle>,
    deliver: Mutex<Option<Deliver>>,
}

enum Slot {
    Idle,
    Armed {
        timing: Timing,
        answer: TimeoutAnswer,
        /// Its key in the timer's schedule.
        key: Key,
    },
    Settled,
}

/// A due time, and a sequence number that makes it unique.
type Key = (Instant, u64);

impl Watch {
    /// A watch whose timeout answer goes to `deliver`.
    pub(crate) fn new(deliver: Deliver) -> Arc<Self> {
        Arc::new(Self {
            slot: Mutex::new(Slot::Idle),
            task: OnceLock::new(),
            deliver: Mutex::new(Some(deliver)),
        })
    }

    /// Arms the watch: `answer` is sent if the call is still running
    /// [`GRACE`] after `timing`'s deadline. Nothing happens when the watch
    /// was armed or settled already.
    pub(crate) fn arm(self: &Arc<Self>, timing: Timing, answer: TimeoutAnswer) {
        let mut slot = lock(&self.slot);
        if !matches!(*slot, Slot::Idle) {
            return;
        }
        let timer = timer();
        let key = timer.schedule(timing.due(), self);
        *slot = Slot::Armed {
            timing,
            answer,
            key,
        };
    }

    /// The task running the request, aborted when the watchdog answers.
    pub(crate) fn set_task(&self, task: AbortHandle) {
        let _ = self.task.set(task);
    }

    /// Called by the request's task with its answer: whether it is the one
    /// to answer (`false`: the watchdog answered already; drop yours).
    pub(crate) fn settle(&self) -> bool {
        let mut slot = lock(&self.slot);
        match std::mem::replace(&mut *slot, Slot::Settled) {
            Slot::Settled => false,
            Slot::Armed { key, .. } => {
                lock(&timer().due).watches.remove(&key);
                true
            }
            Slot::Idle => true,
        }
    }

    /// Its time came (taken off the schedule at `popped`): put back if
    /// progress moved its deadline, else answered here unless its call
    /// answered first.
    fn expire(self: &Arc<Self>, popped: Key) {
        let mut slot = lock(&self.slot);
        let Slot::Armed { timing, key, .. } = &mut *slot else {
            return;
        };
        if *key != popped {
            return;
        }
        let due = timing.due();
        if due > Instant::now() {
            *key = timer().schedule(due, self);
            return;
        }
        let Slot::Armed { timing, answer, .. } = std::mem::replace(&mut *slot, Slot::Settled)
        else {
            return;
        };
        drop(slot);
        tracing::warn!(
            after = ?timing.start.elapsed(),
            "a tool call's handler blocked its thread past the call's timeout: \
             answered by the watchdog"
        );
        // Delivered before the task is aborted: a transport that sees the
        // task end (and then stops) finds the answer already delivered.
        let deliver = lock(&self.deliver).take();
        if let Some(deliver) = deliver {
            deliver(answer(timing.deadline.expiry(timing.start)));
        }
        if let Some(task) = self.task.get() {
            task.abort();
        }
    }
}

/// The process's schedule of armed watches, kept by its own thread.
///
/// Arming a watch wakes the thread only when the thread would otherwise
/// wake too late for it: a call's deadline is seconds away, and the thread
/// wakes at the first due time, or, while watches were armed lately and
/// the schedule is empty, every [`IDLE_TICK`]. So a call that answers in
/// time costs a lock and a map insertion and removal, never a wake of
/// another thread; after [`IDLE_PARK`] with nothing armed the thread
/// sleeps until the next watch.
struct Timer {
    due: Mutex<Schedule>,
    wake: Condvar,
    next: AtomicU64,
}

/// How often the thread looks at an empty schedule while watches are armed.
const IDLE_TICK: Duration = Duration::from_secs(1);
/// How long the thread keeps ticking with nothing armed before it sleeps
/// until the next watch.
const IDLE_PARK: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Schedule {
    watches: BTreeMap<Key, Arc<Watch>>,
    /// When the thread wakes next by itself (`None`: only when woken).
    wakes_at: Option<Instant>,
    /// How many watches were ever armed (the thread notices new ones).
    armed: u64,
}

impl Timer {
    /// Puts `watch` on the schedule at `due`; wakes the thread if it would
    /// wake only after `due`.
    fn schedule(&self, due: Instant, watch: &Arc<Watch>) -> Key {
        let key = (due, self.next.fetch_add(1, Ordering::Relaxed));
        let mut schedule = lock(&self.due);
        schedule.watches.insert(key, Arc::clone(watch));
        schedule.armed += 1;
        if schedule.wakes_at.is_none_or(|at| due < at) {
            self.wake.notify_one();
        }
        key
    }

    /// The thread's loop: sleeps until the first due time (or the next
    /// tick), then expires the watches that are due.
    fn run(&self) {
        let mut schedule = lock(&self.due);
        let mut seen = schedule.armed;
        let mut quiet = Duration::ZERO;
        loop {
            #[cfg(test)]
            WAKES.fetch_add(1, Ordering::Relaxed);
            let now = Instant::now();
            let first = schedule.watches.first_key_value().map(|(&key, _)| key);
            let until = match first {
                Some(key) if key.0 <= now => {
                    let Some(watch) = schedule.watches.remove(&key) else {
                        continue;
                    };
                    drop(schedule);
                    watch.expire(key);
                    schedule = lock(&self.due);
                    continue;
                }
                Some(key) => Some(key.0),
                None => {
                    if schedule.armed == seen {
                        quiet += IDLE_TICK;
                    } else {
                        (seen, quiet) = (schedule.armed, Duration::ZERO);
                    }
                    (quiet < IDLE_PARK).then(|| now + IDLE_TICK)
                }
            };
            schedule.wakes_at = until;
            schedule = match until {
                Some(at) => {
                    self.wake
                        .wait_timeout(schedule, at.saturating_duration_since(now))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .wake
                    .wait(schedule)
                    .unwrap_or_else(PoisonError::into_inner),
            };
            schedule.wakes_at = None;
        }
    }
}

/// How often the thread went round its loop (tests).
#[cfg(test)]
static WAKES: AtomicU64 = AtomicU64::new(0);

/// The timer, its thread started on first use.
fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let timer: &'static Timer = Box::leak(Box::new(Timer {
            due: Mutex::new(Schedule::default()),
            wake: Condvar::new(),
            next: AtomicU64::new(0),
        }));
        let started = std::thread::Builder::new()
            .name("mcp-tool-watchdog".into())
            .spawn(move || timer.run());
        if let Err(e) = started {
            tracing::warn!(error = %e, "no watchdog thread: a blocking tool handler delays its timeout");
        }
        timer
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(after: Duration) -> Timing {
        Timing {
            start: tokio::time::Instant::now(),
            deadline: Deadline::fixed(after),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_that_answer_in_time_do_not_wake_the_thread() {
        let call = || {
            let watch = Watch::new(Box::new(|_| {}));
            watch.arm(timing(Duration::from_secs(60)), Box::new(|_| Value::Null));
            assert!(watch.settle(), "the call answers first");
        };
        // The first may wake it (it may be asleep for good).
        call();
        std::thread::sleep(Duration::from_millis(50));
        let before = WAKES.load(Ordering::Relaxed);
        for _ in 0..2000 {
            call();
        }
        let wakes = WAKES.load(Ordering::Relaxed) - before;
        assert!(wakes < 20, "2000 calls woke the watchdog {wakes} times");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_deadline_before_the_next_tick_wakes_it_on_time() {
        let (tx, rx) = std::sync::mpsc::channel();
        let watch = Watch::new(Box::new(move |answer| {
            let _ = tx.send(answer);
        }));
        let armed = Instant::now();
        watch.arm(
            timing(Duration::from_millis(50)),
            Box::new(|_| Value::from("timed out")),
        );
        let answer = rx.recv_timeout(Duration::from_secs(5)).expect("answered");
        assert_eq!(answer, "timed out");
        let took = armed.elapsed();
        assert!(
            took < Duration::from_millis(50) + GRACE + Duration::from_millis(400),
            "answered after {took:?}"
        );
    }
}
