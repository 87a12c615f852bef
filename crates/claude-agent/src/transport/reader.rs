//! NDJSON from the CLI's stdout: lines of any size up to a cap, resync after
//! an over-long line, non-JSON lines skipped, cancellation-safe.

use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::ChildStdout;

use crate::error::{Error, Result};

/// Size of the read buffer at rest.
const INITIAL_BUF: usize = 256 * 1024;
/// Never issue a read into less free space than this.
const MIN_READ: usize = 64 * 1024;
/// A buffer grown past this by a huge line is given back once it is drained.
const SHRINK_ABOVE: usize = 4 * 1024 * 1024;
/// How much of a skipped line goes into the warning.
const PREVIEW: usize = 200;

/// Reads newline-delimited JSON objects.
///
/// * Lines can be as long as `max_line_bytes` (not counting the newline); a
///   longer line yields one [`Error::LineTooLong`], its bytes are discarded
///   as they arrive (memory stays bounded), and reading resumes after its
///   newline.
/// * Blank lines and `\r\n` endings are accepted; lines that are not JSON
///   objects (diagnostics such as `[SandboxDebug] …`, garbage, invalid
///   UTF-8, truncated JSON) are skipped with a `tracing::warn!`.
/// * A final line without a newline at EOF is still parsed.
/// * Cancellation-safe: all state lives in the struct and the only await is
///   a read into free buffer space, so dropping a pending `next_*` future
///   loses nothing; the next call continues where it left off.
/// * After EOF or a read error every call returns `None`.
pub(crate) struct LineReader<R = ChildStdout> {
    inner: R,
    /// Initialized storage; bytes `start..end` are unconsumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// `start..scanned` is known to hold no newline (no re-scanning).
    scanned: usize,
    max_line: usize,
    /// Discarding the rest of an over-long line.
    skipping: bool,
    eof: bool,
    done: bool,
}

impl<R> std::fmt::Debug for LineReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineReader")
            .field("buffered", &(self.end - self.start))
            .field("capacity", &self.buf.len())
            .field("max_line", &self.max_line)
            .field("skipping", &self.skipping)
            .field("done", &self.done)
            .finish()
    }
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Reads lines from `inner`, accepting lines of up to `max_line_bytes`.
    pub(crate) fn new(inner: R, max_line_bytes: usize) -> Self {
        LineReader {
            inner,
            buf: vec![0; INITIAL_BUF],
            start: 0,
            end: 0,
            scanned: 0,
            max_line: max_line_bytes,
            skipping: false,
            eof: false,
            done: false,
        }
    }

    /// The next JSON object as a [`serde_json::Value`]; `None` at EOF.
    pub(crate) async fn next_line(&mut self) -> Option<Result<serde_json::Value>> {
        self.next_json().await
    }

    /// The next JSON object, deserialized straight from the buffered bytes
    /// into `T`; `None` at EOF.
    ///
    /// Lines that are not JSON objects are skipped. A line that is a JSON
    /// object but does not fit `T` yields [`Error::Protocol`]; an over-long
    /// line yields [`Error::LineTooLong`]; in both cases the stream goes on.
    /// A read error is returned once, then the stream ends.
    pub(crate) async fn next_json<T: DeserializeOwned>(&mut self) -> Option<Result<T>> {
        loop {
            let (s, e) = match self.next_frame().await? {
                Ok(range) => range,
                Err(err) => return Some(Err(err)),
            };
            let line = self.buf[s..e].trim_ascii();
            if line.is_empty() {
                continue;
            }
            if line[0] != b'{' {
                warn_skipped(line, "not a JSON object");
                continue;
            }
            match serde_json::from_slice::<T>(line) {
                Ok(value) => return Some(Ok(value)),
                Err(err) if err.classify() == serde_json::error::Category::Data => {
                    return Some(Err(Error::Protocol {
                        message: format!("unexpected message shape: {err}"),
                        line: String::from_utf8_lossy(line).into_owned(),
                    }));
                }
                Err(err) => {
                    warn_skipped(line, &err.to_string());
                    continue;
                }
            }
        }
    }

    /// The next raw line (without `\n`, possibly blank or not JSON); `None`
    /// at EOF. The slice is valid until the next call.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) async fn next_raw_line(&mut self) -> Option<Result<&[u8]>> {
        match self.next_frame().await? {
            Ok((s, e)) => Some(Ok(&self.buf[s..e])),
            Err(err) => Some(Err(err)),
        }
    }

    /// Finds the next complete line and returns its range in `buf`.
    async fn next_frame(&mut self) -> Option<Result<(usize, usize)>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let nl = self.scanned + pos;
                let line_start = self.start;
                self.start = nl + 1;
                self.scanned = self.start;
                if self.skipping {
                    self.skipping = false;
                    continue;
                }
                if nl - line_start > self.max_line {
                    return Some(Err(self.too_long()));
                }
                return Some(Ok((line_start, nl)));
            }
            self.scanned = self.end;
            if self.skipping {
                // Drop what arrived of the over-long line.
                self.start = self.end;
            } else if self.end - self.start > self.max_line {
                self.skipping = true;
                self.start = self.end;
                self.scanned = self.end;
                return Some(Err(self.too_long()));
            }
            if self.eof {
                self.done = true;
                if !self.skipping && self.start < self.end {
                    // A last line without a newline.
                    let range = (self.start, self.end);
                    self.start = self.end;
                    return Some(Ok(range));
                }
                return None;
            }
            self.make_room();
            // The only await: cancelling it reads nothing, state stays valid.
            match self.inner.read(&mut self.buf[self.end..]).await {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => {
                    self.done = true;
                    return Some(Err(Error::Io(err)));
                }
            }
        }
    }

    fn too_long(&self) -> Error {
        tracing::warn!(
            limit = self.max_line,
            "skipping a line from the CLI longer than the limit"
        );
        Error::LineTooLong {
            limit: self.max_line,
        }
    }

    /// Ensures at least `MIN_READ` bytes of free space after `end`, moving
    /// the pending partial line to the front or growing the buffer
    /// (doubling, so a huge line costs amortized linear time).
    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            self.scanned = 0;
        }
        let pending = self.end - self.start;
        if self.buf.len() > SHRINK_ABOVE && pending < INITIAL_BUF / 2 {
            let mut fresh = vec![0; INITIAL_BUF];
            fresh[..pending].copy_from_slice(&self.buf[self.start..self.end]);
            self.buf = fresh;
            self.scanned -= self.start;
            self.start = 0;
            self.end = pending;
        }
        if self.buf.len() - self.end >= MIN_READ {
            return;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.scanned -= self.start;
            self.start = 0;
            self.end = pending;
        }
        if self.buf.len() - self.end < MIN_READ {
            // `pending <= max_line` here, so this stays below
            // `max_line + 1 + MIN_READ` (or the fixed minimum sizes).
            let wanted = (self.buf.len() * 2)
                .min(self.max_line.saturating_add(1 + MIN_READ))
                .max(self.end + MIN_READ);
            self.buf.resize(wanted, 0);
        }
    }

    /// Current size of the internal buffer (for tests of the memory bound).
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.buf.len()
    }
}

fn warn_skipped(line: &[u8], why: &str) {
    let mut cut = line.len().min(PREVIEW);
    // Do not split a UTF-8 sequence in the preview.
    while cut < line.len() && cut > 0 && (line[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    let ellipsis = if cut < line.len() { "…" } else { "" };
    tracing::warn!(
        len = line.len(),
        reason = why,
        "skipping a non-JSON line from the CLI: {}{ellipsis}",
        String::from_utf8_lossy(&line[..cut]),
    );
}
