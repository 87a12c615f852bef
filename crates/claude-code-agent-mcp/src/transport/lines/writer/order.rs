//! The order a peer observes: a request's notifications reach it before
//! its answer, in reads of their own.
//!
//! Batching frames into one `write` keeps their order on the wire, but a
//! peer may still act on them out of order: the official TypeScript MCP
//! SDK handles a response at once and a notification a microtask later, so
//! when a call's last `notifications/progress` and its response arrive in
//! one read, the response is handled first, the call's progress handler
//! is gone, and the report is lost. So an answer whose notifications went
//! (or go) out before it is held at a *mark*: what is queued before it is
//! written first and, where the writer can see it ([`UnreadProbe`]), the
//! answer waits until the peer has read all of that (bounded by
//! [`SETTLE_CAP`]). Frames that are not answers to noticed work batch as
//! before.

use std::time::{Duration, Instant};

/// What a frame is to the order the peer observes ([`LineWriter::send_ordered`](super::LineWriter::send_ordered),
/// [`try_send_ordered`](super::LineWriter::try_send_ordered)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Order {
    /// Nothing to keep apart: batched with whatever is queued.
    Any,
    /// A notification about the work on one request (its progress), known
    /// by a key the caller chooses (a hash of its progress token, say).
    Notice(u64),
    /// The answer that ends the work known by this key: never read by the
    /// peer together with a [`Notice`](Self::Notice) of the same key sent
    /// before it.
    Answer(u64),
    /// An answer to several requests at once (a JSON-RPC batch): kept
    /// apart from every notice sent before it.
    AnswerAll,
}

/// How long an answer waits for the peer to read the notices before it
/// at most: a peer that reads this slowly is busy anyway, and an answer is
/// not held longer for its sake.
pub const SETTLE_CAP: Duration = Duration::from_millis(20);

/// How long [`settle`] polls by yielding before it sleeps between polls.
const SPIN: Duration = Duration::from_micros(200);

/// How many notice keys are remembered one by one; past this, any answer
/// is kept apart from the notices before it.
const MAX_KEYS: usize = 64;

/// How many bytes written to the peer it has not read yet, `None` when
/// that cannot be told (`Some(0)`: it has read everything).
pub type UnreadProbe = Box<dyn Fn() -> Option<usize> + Send + Sync>;

/// The notices since the last mark, and where the marks are.
#[derive(Debug, Default)]
pub(super) struct Marks {
    /// Offsets into the queue (ascending) before which the peer must have
    /// read everything written so far.
    pub(super) at: Vec<usize>,
    /// The keys of the notices queued since the last mark.
    keys: Vec<u64>,
    /// More than [`MAX_KEYS`] of them: any answer is kept apart.
    many: bool,
}

impl Marks {
    /// Notes a frame of `order` about to be queued at offset `at`.
    pub(super) fn note(&mut self, order: Order, at: usize) {
        let apart = match order {
            Order::Any => false,
            Order::Notice(key) => {
                if !self.many && !self.keys.contains(&key) {
                    if self.keys.len() == MAX_KEYS {
                        self.many = true;
                        self.keys = Vec::new();
                    } else {
                        self.keys.push(key);
                    }
                }
                false
            }
            Order::Answer(key) => self.many || self.keys.contains(&key),
            Order::AnswerAll => self.many || !self.keys.is_empty(),
        };
        if apart {
            // Every notice noted so far is before this mark: read before
            // anything after it is written.
            if self.at.last() != Some(&at) {
                self.at.push(at);
            }
            self.keys.clear();
            self.many = false;
        }
    }
}

/// Waits until the peer has read everything written (the probe says 0),
/// it cannot tell, or [`SETTLE_CAP`] has passed: yielding at first (a
/// peer that is awake reads within microseconds), then sleeping briefly.
pub(super) async fn settle(probe: &UnreadProbe) {
    let start = Instant::now();
    loop {
        match probe() {
            Some(0) | None => return,
            Some(_) => {}
        }
        let waited = start.elapsed();
        if waited >= SETTLE_CAP {
            tracing::trace!(
                ?waited,
                "NDJSON writer: the peer has not read the notices; writing the answer anyway"
            );
            return;
        }
        if waited < SPIN {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(Duration::from_micros(100)).await;
        }
    }
}

/// A probe of what the peer has not read yet of the pipe or socket `fd`
/// writes to (Linux: `FIONREAD` on a pipe, `SIOCOUTQ` on a Unix or TCP
/// socket), or `None` when `fd` is neither or the kernel does not say.
/// `fd` must stay open as long as the probe is used.
#[cfg(target_os = "linux")]
pub fn unread_probe(fd: std::os::fd::RawFd) -> Option<UnreadProbe> {
    // SAFETY: fstat writes a `stat` for a descriptor; a bad one is EBADF.
    let mode = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return None;
        }
        st.st_mode & libc::S_IFMT
    };
    let request = match mode {
        libc::S_IFIFO => libc::FIONREAD,
        libc::S_IFSOCK => libc::TIOCOUTQ,
        _ => return None,
    };
    let unread = move || {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD / SIOCOUTQ write one int.
        let r = unsafe { libc::ioctl(fd, request, &mut n) };
        (r == 0).then(|| usize::try_from(n).unwrap_or(0))
    };
    unread()?;
    Some(Box::new(unread))
}

/// Elsewhere the kernel is not asked: answers are still written apart from
/// the notices before them, without waiting for the peer to read those.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn unread_probe(_fd: std::os::fd::RawFd) -> Option<UnreadProbe> {
    None
}
