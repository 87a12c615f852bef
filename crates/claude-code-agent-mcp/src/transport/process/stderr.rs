//! Draining a child's stderr on a thread of its own: lines to `tracing`,
//! to the user's callback, and into a bounded tail for error messages.

use std::collections::VecDeque;
use std::io::Read;
#[cfg(unix)]
use std::os::fd::AsRawFd;
use std::panic::AssertUnwindSafe;
use std::process::ChildStderr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use super::StderrCallback;

/// Longest stderr line handed out in one piece; longer lines are split.
pub(crate) const MAX_STDERR_LINE: usize = 64 * 1024;
const READ_CHUNK: usize = 64 * 1024;
/// Once told to stop, at most this much more is read (a process outside
/// the group flooding the pipe cannot keep the thread).
const DRAIN_ON_STOP: usize = 1024 * 1024;

/// Held by the reaper, dropped to tell the drain to stop (Unix: the write
/// end of a pipe the drain polls).
pub(super) struct StopTx(#[cfg(unix)] std::fs::File);

impl StopTx {
    /// Tells the drain to stop once nothing more is readable (Windows: the
    /// drain reads on to stderr's end).
    pub(super) fn stop(self) {
        #[cfg(unix)]
        drop(self.0);
    }
}

/// The drain's end of [`StopTx`].
pub(super) struct StopRx(#[cfg(unix)] std::fs::File);

/// A pipe whose write end (held by the reaper) is closed to tell the
/// drain to stop.
#[cfg(unix)]
pub(super) fn stop_pipe() -> std::io::Result<(StopTx, StopRx)> {
    let mut fds = [0; 2];
    // SAFETY: `pipe2` fills the two descriptors on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned by nobody else.
    unsafe {
        use std::os::fd::FromRawFd;
        Ok((
            StopTx(std::fs::File::from_raw_fd(fds[1])),
            StopRx(std::fs::File::from_raw_fd(fds[0])),
        ))
    }
}

/// Windows: a pipe cannot be polled, so the drain reads stderr to its end
/// (the Job Object ends every process that could hold it open) and the
/// stop is not heard.
#[cfg(windows)]
pub(super) fn stop_pipe() -> std::io::Result<(StopTx, StopRx)> {
    Ok((StopTx(), StopRx()))
}

/// The running drain: the tail and a signal for "stderr is done".
#[derive(Clone)]
pub(super) struct StderrDrain {
    tail: Arc<Mutex<Tail>>,
    finished: watch::Receiver<bool>,
}

impl StderrDrain {
    /// Starts the drain thread. It ends at stderr's end (every process
    /// holding the pipe closed it) or, once `stop` is closed, as soon as
    /// nothing more is readable.
    pub(super) fn start(
        stderr: ChildStderr,
        stop: StopRx,
        pid: u32,
        callback: Option<StderrCallback>,
        tail_bytes: usize,
    ) -> std::io::Result<Self> {
        let tail = Arc::new(Mutex::new(Tail::new(tail_bytes)));
        let (done_tx, finished) = watch::channel(false);
        let thread_tail = Arc::clone(&tail);
        std::thread::Builder::new()
            .name(format!("stderr-{pid}"))
            .stack_size(256 * 1024)
            .spawn(move || {
                drain(stderr, &stop, pid, callback.as_deref(), &thread_tail);
                done_tx.send_replace(true);
            })?;
        Ok(Self { tail, finished })
    }

    /// The last bytes of stderr, as text.
    pub(super) fn tail(&self) -> String {
        lock(&self.tail).text()
    }

    /// Waits up to `timeout` for the drain to end; returns whether it did.
    pub(super) async fn wait_finished(&self, timeout: Duration) -> bool {
        let mut rx = self.finished.clone();
        matches!(
            tokio::time::timeout(timeout, rx.wait_for(|done| *done)).await,
            Ok(Ok(_))
        )
    }
}

fn lock(tail: &Mutex<Tail>) -> MutexGuard<'_, Tail> {
    tail.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits until `stderr` is readable or `stop` closed (`wait`), or only
/// checks whether `stderr` is readable now. Returns (readable, stop).
#[cfg(unix)]
fn ready(stderr: &ChildStderr, stop: &StopRx, wait: bool) -> std::io::Result<(bool, bool)> {
    let mut fds = [
        libc::pollfd {
            fd: stderr.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: stop.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: `fds` is a valid array of `pollfd` of the given length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, if wait { -1 } else { 0 }) };
        if n >= 0 {
            return Ok((fds[0].revents != 0, fds[1].revents != 0));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Windows: always "readable" (a read blocks until there is something, or
/// stderr ended), never told to stop.
#[cfg(windows)]
fn ready(_stderr: &ChildStderr, _stop: &StopRx, _wait: bool) -> std::io::Result<(bool, bool)> {
    Ok((true, false))
}

fn drain(
    mut stderr: ChildStderr,
    stop: &StopRx,
    pid: u32,
    callback: Option<&(dyn Fn(&str) + Send + Sync)>,
    tail: &Mutex<Tail>,
) {
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut lines = Splitter::default();
    let emit = |bytes: &[u8]| {
        lock(tail).push_line(bytes);
        let text = String::from_utf8_lossy(bytes);
        tracing::debug!(target: "claude_code_agent_mcp::stderr", pid, "{text}");
        if let Some(cb) = callback
            && std::panic::catch_unwind(AssertUnwindSafe(|| cb(&text))).is_err()
        {
            tracing::error!("a stderr callback panicked; the panic was caught");
        }
    };
    let mut stopping: Option<usize> = None;
    loop {
        let (readable, stop_now) = match ready(&stderr, stop, stopping.is_none()) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(pid, error = %e, "polling a child's stderr failed");
                break;
            }
        };
        if !readable {
            if stopping.is_some() {
                break;
            }
            if stop_now {
                stopping = Some(0);
            }
            continue;
        }
        let n = match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::debug!(pid, error = %e, "reading a child's stderr failed");
                break;
            }
        };
        lines.feed(&chunk[..n], &emit);
        if let Some(read) = &mut stopping {
            *read += n;
            if *read > DRAIN_ON_STOP {
                break;
            }
        }
    }
    lines.finish(&emit);
}

/// Splits stderr into lines of at most [`MAX_STDERR_LINE`] bytes (longer
/// ones in pieces), without `\n` or a trailing `\r`.
#[derive(Default)]
struct Splitter {
    line: Vec<u8>,
    /// The last piece was emitted because it was full: a newline right
    /// after it ends that line, it does not make an empty one.
    continued: bool,
}

impl Splitter {
    fn feed(&mut self, mut rest: &[u8], emit: &impl Fn(&[u8])) {
        let emit = |bytes: &[u8]| emit(bytes.strip_suffix(b"\r").unwrap_or(bytes));
        while !rest.is_empty() {
            let room = MAX_STDERR_LINE - self.line.len();
            match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    if self.line.is_empty() && i <= MAX_STDERR_LINE {
                        if i > 0 || !self.continued {
                            emit(&rest[..i]); // no copy for the common case
                        }
                    } else if i <= room {
                        self.line.extend_from_slice(&rest[..i]);
                        emit(&self.line);
                        self.line.clear();
                    } else {
                        self.line.extend_from_slice(&rest[..room]);
                        emit(&self.line);
                        self.line.clear();
                        self.continued = true;
                        rest = &rest[room..];
                        continue;
                    }
                    self.continued = false;
                    rest = &rest[i + 1..];
                }
                None => {
                    let take = rest.len().min(room);
                    self.line.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    if self.line.len() == MAX_STDERR_LINE {
                        emit(&self.line);
                        self.line.clear();
                        self.continued = true;
                    }
                }
            }
        }
    }

    fn finish(&mut self, emit: &impl Fn(&[u8])) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            emit(line.strip_suffix(b"\r").unwrap_or(&line));
        }
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

    #[test]
    fn lines_split_in_pieces_and_crlf() {
        let out = std::cell::RefCell::new(Vec::new());
        let emit = |b: &[u8]| out.borrow_mut().push(b.len());
        let mut s = Splitter::default();
        let long = vec![b'x'; MAX_STDERR_LINE * 2 + 5];
        s.feed(b"ab\r\n\n", &emit);
        s.feed(&long, &emit);
        s.feed(b"\nlast", &emit);
        s.finish(&emit);
        assert_eq!(
            out.into_inner(),
            [2, 0, MAX_STDERR_LINE, MAX_STDERR_LINE, 5, 4]
        );
    }
}
