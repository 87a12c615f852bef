//! Draining the CLI's stderr on a dedicated thread: lines to `tracing`, to
//! the user's callback, and into a bounded tail ring for error messages.

use std::collections::VecDeque;
use std::io::Read;
use std::panic::AssertUnwindSafe;
use std::process::ChildStderr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::StderrCallback;

/// Longest stderr line handed out in one piece; longer lines are split.
pub(crate) const MAX_STDERR_LINE: usize = 64 * 1024;
const READ_CHUNK: usize = 64 * 1024;

/// The running drain: the tail ring and a signal for "stderr reached EOF".
#[derive(Clone)]
pub(crate) struct StderrDrain {
    tail: Arc<Mutex<Tail>>,
    finished: watch::Receiver<bool>,
}

impl std::fmt::Debug for StderrDrain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StderrDrain")
            .field("finished", &*self.finished.borrow())
            .finish_non_exhaustive()
    }
}

impl StderrDrain {
    /// Starts the drain thread. It ends when every writer of the pipe has
    /// closed it (the process group is gone).
    pub(crate) fn start(
        stderr: ChildStderr,
        pid: u32,
        callback: Option<StderrCallback>,
        tail_bytes: usize,
    ) -> std::io::Result<Self> {
        let tail = Arc::new(Mutex::new(Tail::new(tail_bytes)));
        let (done_tx, finished) = watch::channel(false);
        let thread_tail = Arc::clone(&tail);
        std::thread::Builder::new()
            .name(format!("claude-cli-stderr-{pid}"))
            .stack_size(256 * 1024)
            .spawn(move || {
                drain(stderr, pid, callback.as_deref(), &thread_tail);
                done_tx.send_replace(true);
            })?;
        Ok(StderrDrain { tail, finished })
    }

    /// The last bytes of stderr (at most the configured size), as text.
    pub(crate) fn tail(&self) -> String {
        lock(&self.tail).text()
    }

    /// Waits up to `timeout` for stderr to reach EOF, so that the tail is
    /// complete. Returns whether it did.
    pub(crate) async fn wait_finished(&self, timeout: Duration) -> bool {
        let mut rx = self.finished.clone();
        matches!(
            tokio::time::timeout(timeout, rx.wait_for(|done| *done)).await,
            Ok(Ok(_))
        )
    }
}

fn lock(tail: &Mutex<Tail>) -> std::sync::MutexGuard<'_, Tail> {
    tail.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn drain(
    mut stderr: ChildStderr,
    pid: u32,
    callback: Option<&(dyn Fn(&str) + Send + Sync)>,
    tail: &Mutex<Tail>,
) {
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut line: Vec<u8> = Vec::new();
    // The last piece was emitted because it was full: a newline right after
    // it ends that line, it does not make an empty one.
    let mut continued = false;
    let emit = |bytes: &[u8]| {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        lock(tail).push_line(bytes);
        let text = String::from_utf8_lossy(bytes);
        tracing::debug!(target: "claude_agent::cli_stderr", pid, "{text}");
        if let Some(cb) = callback
            && std::panic::catch_unwind(AssertUnwindSafe(|| cb(&text))).is_err()
        {
            tracing::error!("the stderr callback panicked; the panic was caught");
        }
    };
    loop {
        let n = match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => {
                tracing::debug!(pid, error = %err, "reading the CLI's stderr failed");
                break;
            }
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    let room = MAX_STDERR_LINE - line.len();
                    if line.is_empty() && i <= MAX_STDERR_LINE {
                        if i > 0 || !continued {
                            emit(&rest[..i]); // no copy for the common case
                        }
                    } else if i <= room {
                        line.extend_from_slice(&rest[..i]);
                        emit(&line);
                        line.clear();
                    } else {
                        line.extend_from_slice(&rest[..room]);
                        emit(&line);
                        line.clear();
                        continued = true;
                        rest = &rest[room..];
                        continue;
                    }
                    continued = false;
                    rest = &rest[i + 1..];
                }
                None => {
                    let room = MAX_STDERR_LINE - line.len();
                    let take = rest.len().min(room);
                    line.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    if line.len() == MAX_STDERR_LINE {
                        emit(&line);
                        line.clear();
                        continued = true;
                    }
                }
            }
        }
    }
    if !line.is_empty() {
        emit(&line);
    }
}

/// A byte ring holding the last `cap` bytes of stderr, line by line.
struct Tail {
    ring: VecDeque<u8>,
    cap: usize,
}

impl Tail {
    fn new(cap: usize) -> Self {
        Tail {
            ring: VecDeque::with_capacity(cap.min(64 * 1024)),
            cap,
        }
    }

    fn push_line(&mut self, line: &[u8]) {
        if self.cap == 0 {
            return;
        }
        let incoming = line.len() + 1;
        if incoming >= self.cap {
            self.ring.clear();
            let keep = self.cap - 1;
            self.ring.extend(&line[line.len() - keep..]);
            self.ring.push_back(b'\n');
            return;
        }
        let overflow = (self.ring.len() + incoming).saturating_sub(self.cap);
        self.ring.drain(..overflow);
        self.ring.extend(line);
        self.ring.push_back(b'\n');
    }

    fn text(&self) -> String {
        let (a, b) = self.ring.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        // The ring may start inside a UTF-8 sequence; skip its tail bytes.
        let skip = bytes
            .iter()
            .take(3)
            .take_while(|&&b| (b & 0xC0) == 0x80)
            .count();
        let text = String::from_utf8_lossy(&bytes[skip..]);
        text.trim_end_matches('\n').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_bytes() {
        let mut t = Tail::new(10);
        t.push_line(b"hello");
        t.push_line(b"world");
        assert_eq!(t.text(), "llo\nworld");
        assert!(t.ring.len() <= 10);
        t.push_line(b"a very long line indeed");
        assert_eq!(t.text(), "ne indeed");
        assert_eq!(t.ring.len(), 10);
    }

    #[test]
    fn tail_skips_a_cut_utf8_sequence() {
        let mut t = Tail::new(5);
        // 1 + 2 + 3 bytes: the last 4 start inside `é`.
        t.push_line("aé€".as_bytes());
        assert_eq!(t.text(), "€");
    }

    #[test]
    fn zero_sized_tail_keeps_nothing() {
        let mut t = Tail::new(0);
        t.push_line(b"x");
        assert_eq!(t.text(), "");
    }
}
