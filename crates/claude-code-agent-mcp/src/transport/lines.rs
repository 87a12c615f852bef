//! NDJSON framing for every stdio peer: one bounded, cancellation-safe
//! [`LineReader`] and one [`LineWriter`] that keeps every frame whole.
//!
//! Both serve the MCP stdio client ([`StdioTransport`](crate::client::StdioTransport)),
//! [`serve_lines`](crate::server::serve_lines) and the Claude Code SDK's pipes to
//! the CLI.
//!
//! The reader hands out each line as a `&[u8]` borrowed from its buffer
//! (valid until the next call), so a message is parsed straight from the
//! bytes that were read ([`parse_line`], [`parse_object`], leniently as
//! [`json`](super::json) says); nothing is copied and no buffer is
//! zero-filled. The writer serializes into a shared
//! buffer and writes everything queued with one `write` call, so
//! concurrent senders share system calls.
//!
//! ```
//! use claude_code_agent_mcp::__private::transport::{Line, LineReader, LineWriter, Parsed, parse_line};
//! use serde_json::{Value, json};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let (ours, theirs) = tokio::io::duplex(1024);
//! let writer = LineWriter::new(ours);
//! writer.send(&json!({"jsonrpc": "2.0", "method": "ping", "id": 1})).await?;
//! writer.close().await?;
//!
//! let mut reader = LineReader::new(theirs, 1 << 20);
//! let Some(Line::Text(line)) = reader.next_line().await? else { panic!() };
//! let Parsed::Value(message) = parse_line::<Value>(line) else { panic!() };
//! assert_eq!(message["method"], "ping");
//! assert!(reader.next_line().await?.is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::io;

use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt};

#[cfg(any(test, feature = "__fuzz"))]
#[doc(hidden)]
pub mod fuzz;
#[cfg(test)]
mod tests;
mod writer;

#[cfg(unix)]
pub use writer::unread_probe;
pub use writer::{
    DEFAULT_WRITE_BUFFER_BYTES, LineWriter, Order, SETTLE_CAP, SendError, UnreadProbe,
};

/// The default cap on one line (a JSON-RPC message): 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The buffer a reader starts with (and goes back to after a huge line).
const INITIAL: usize = 64 * 1024;
/// Never read into less free space than this.
const MIN_READ: usize = 16 * 1024;
/// A buffer grown past this by huge lines is given back once lines no
/// longer need it.
const SHRINK_ABOVE: usize = 4 * 1024 * 1024;
/// How many lines in a row must fit in an eighth of the buffer before it
/// shrinks: a stream of big lines keeps its buffer (no regrowth per line).
const SHRINK_AFTER: u32 = 8;
/// How many first bytes of an over-long line are kept (to read its id).
pub const HEAD_BYTES: usize = 256;

/// One line from a [`LineReader`], borrowed from its buffer until the next
/// call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A line under the cap, without its `\n` (or `\r\n`). May be blank.
    Text(&'a [u8]),
    /// A line over the cap: it was discarded as it arrived.
    TooLong {
        /// Its length in bytes, without the `\n` (up to the end of input
        /// when it had none).
        len: usize,
        /// Its first bytes (at most [`HEAD_BYTES`]), enough to read the id
        /// of a JSON-RPC message ([`id_from_head`]).
        head: &'a [u8],
    },
}

/// Reads `\n`-terminated lines of any length up to a cap.
///
/// * A line over the cap is reported once, as [`Line::TooLong`] with its
///   length and first bytes; its bytes are discarded as they arrive (the
///   memory used stays bounded by the cap) and reading resumes after its
///   newline.
/// * `\r\n` endings are accepted; blank lines are returned (as empty or
///   whitespace [`Line::Text`]); a last line without a newline is returned
///   too, and [`ended_mid_line`](Self::ended_mid_line) says so.
/// * Cancellation-safe: all state lives in the reader and the only await
///   is one read into its free space, so dropping a pending
///   [`next_line`](Self::next_line) loses nothing.
/// * No zero-filling and no regrowth churn: reads go into the buffer's
///   spare capacity; the buffer grows geometrically only while one line is
///   longer than it, and shrinks back once 8 lines in a row fit in an
///   eighth of it (a stream of big lines keeps it; it is freed at the end).
/// * A read error is returned once; after it, and after the end of input,
///   every call returns `Ok(None)`.
pub struct LineReader<R> {
    inner: R,
    /// Bytes `start..` are unconsumed; `start..scanned` hold no `\n`.
    buf: Vec<u8>,
    start: usize,
    scanned: usize,
    max: usize,
    /// Bytes of an over-long line discarded so far.
    skipping: Option<usize>,
    head: Vec<u8>,
    eof: bool,
    done: bool,
    /// The last line returned had no `\n`.
    cut: bool,
    /// Lines in a row that fit in an eighth of the buffer.
    small_run: u32,
}

impl<R> fmt::Debug for LineReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineReader")
            .field("buffered", &(self.buf.len() - self.start))
            .field("capacity", &self.buf.capacity())
            .field("max_line_bytes", &self.max)
            .field("skipping", &self.skipping.is_some())
            .field("done", &self.done)
            .finish()
    }
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Reads lines of up to `max_line_bytes` (not counting the `\n`) from
    /// `inner`. No buffer is needed around `inner`.
    pub fn new(inner: R, max_line_bytes: usize) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            max: max_line_bytes,
            skipping: None,
            head: Vec::new(),
            eof: false,
            done: false,
            cut: false,
            small_run: 0,
        }
    }

    /// The next line, or `None` at the end of input.
    pub async fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        loop {
            if self.done {
                if self.buf.capacity() > 0 {
                    self.buf = Vec::new();
                }
                return Ok(None);
            }
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let nl = self.scanned + pos;
                let line_start = self.start;
                self.start = nl + 1;
                self.scanned = self.start;
                self.cut = false;
                if self.skipping.is_some() || nl - line_start > self.max {
                    self.skip(line_start, nl);
                    let len = self.skipping.take().unwrap_or_default();
                    return Ok(Some(self.too_long(len)));
                }
                self.count_line(nl - line_start);
                return Ok(Some(Line::Text(strip_cr(&self.buf[line_start..nl]))));
            }
            self.scanned = self.buf.len();
            if self.skipping.is_some() || self.buf.len() - self.start > self.max {
                // Drop what arrived of the over-long line.
                self.skip(self.start, self.buf.len());
                self.start = self.buf.len();
            }
            if self.eof {
                self.done = true;
                if let Some(len) = self.skipping.take() {
                    self.cut = true;
                    return Ok(Some(self.too_long(len)));
                }
                if self.start < self.buf.len() {
                    self.cut = true;
                    let line_start = self.start;
                    self.start = self.buf.len();
                    return Ok(Some(Line::Text(strip_cr(&self.buf[line_start..]))));
                }
                continue;
            }
            self.make_room();
            // The only await: cancelled, it read nothing and the state holds.
            match self.inner.read_buf(&mut self.buf).await {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
    }

    /// Whether [`next_line`](Self::next_line) has a line (or the end)
    /// without reading: a whole line is buffered, or the input is over.
    /// For callers that do something before they would wait for input
    /// (flush the answers to the lines read so far, say). Each byte is
    /// still scanned once: what this scans, `next_line` does not rescan.
    pub fn line_ready(&mut self) -> bool {
        if self.done || self.eof {
            return true;
        }
        match memchr::memchr(b'\n', &self.buf[self.scanned..]) {
            Some(pos) => {
                // `start..scanned` holds no `\n`: the newline is next.
                self.scanned += pos;
                true
            }
            None => {
                self.scanned = self.buf.len();
                false
            }
        }
    }

    /// Whether the input ended inside a line: the last line returned had
    /// no `\n` (the writer died mid-message, say).
    pub fn ended_mid_line(&self) -> bool {
        self.cut
    }

    /// The cap on one line.
    pub fn max_line_bytes(&self) -> usize {
        self.max
    }

    /// The buffer's current capacity (for tests of the memory bound).
    pub fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Counts `buf[from..to]` as skipped bytes of an over-long line, and
    /// keeps what the head still lacks.
    fn skip(&mut self, from: usize, to: usize) {
        let skipped = self.skipping.get_or_insert_with(|| {
            self.head.clear();
            0
        });
        *skipped += to - from;
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        self.head
            .extend_from_slice(&self.buf[from..to.min(from + room)]);
    }

    fn too_long(&self, len: usize) -> Line<'_> {
        Line::TooLong {
            len,
            head: &self.head,
        }
    }

    fn count_line(&mut self, len: usize) {
        if len >= self.buf.capacity() / 8 {
            self.small_run = 0;
        } else {
            self.small_run = self.small_run.saturating_add(1);
        }
    }

    /// Makes at least [`MIN_READ`] bytes of spare capacity: reuses a
    /// drained buffer, gives back one a huge line grew, moves a partial
    /// line to the front, and only then grows (doubling).
    fn make_room(&mut self) {
        let pending = self.buf.len() - self.start;
        if pending == 0 {
            self.buf.clear();
            self.start = 0;
            self.scanned = 0;
        }
        if self.buf.capacity() > SHRINK_ABOVE
            && self.small_run >= SHRINK_AFTER
            && pending < self.buf.capacity() / 8
        {
            let mut fresh = Vec::with_capacity((pending * 2).max(INITIAL));
            fresh.extend_from_slice(&self.buf[self.start..]);
            self.scanned -= self.start;
            self.start = 0;
            self.buf = fresh;
        }
        if self.buf.capacity() - self.buf.len() >= MIN_READ {
            return;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start.., 0);
            self.buf.truncate(pending);
            self.scanned -= self.start;
            self.start = 0;
        }
        let spare = self.buf.capacity() - self.buf.len();
        if spare < MIN_READ {
            // `pending <= max` here (else the line is being skipped), so
            // this stays below `max + 1 + MIN_READ`, or the fixed minimum.
            let wanted = (self.buf.capacity() * 2)
                .max(INITIAL)
                .min(self.max.saturating_add(1 + MIN_READ))
                .max(self.buf.len() + MIN_READ);
            self.buf.reserve_exact(wanted - self.buf.len());
        }
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// What one line holds, read as JSON of type `T` ([`parse_line`],
/// [`parse_object`]).
#[derive(Debug)]
pub enum Parsed<T> {
    /// Nothing but whitespace: skip it.
    Blank,
    /// The line's value.
    Value(T),
    /// Not JSON, or not the kind of JSON asked for (for [`parse_object`]:
    /// not an object); the error says why when serde found out.
    Invalid(Option<serde_json::Error>),
    /// JSON whose shape `T` cannot hold (serde's `Category::Data`: a field
    /// of the wrong type, say).
    Mismatch(serde_json::Error),
}

/// Parses a line (from [`LineReader`]) as one JSON value of type `T`,
/// straight from the line's bytes; lone surrogate escapes, which
/// JavaScript and Python peers write for a string cut mid-emoji, decode
/// to U+FFFD ([`json::from_slice`](super::json::from_slice)).
pub fn parse_line<T: DeserializeOwned>(line: &[u8]) -> Parsed<T> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Parsed::Blank;
    }
    match super::json::from_slice::<T>(line) {
        Ok(value) => Parsed::Value(value),
        Err(e) if e.classify() == serde_json::error::Category::Data => Parsed::Mismatch(e),
        Err(e) => Parsed::Invalid(Some(e)),
    }
}

/// [`parse_line`] for peers that only ever send JSON objects (the Claude
/// Code CLI): a line that does not start with `{` is [`Parsed::Invalid`]
/// without being parsed (diagnostics such as `[SandboxDebug] …`).
pub fn parse_object<T: DeserializeOwned>(line: &[u8]) -> Parsed<T> {
    match line.trim_ascii().first() {
        None => Parsed::Blank,
        Some(b'{') => parse_line(line),
        Some(_) => Parsed::Invalid(None),
    }
}

/// The first bytes of a line, as text for a log message: at most `max`
/// bytes, cut on a character boundary, with `…` when cut.
pub fn preview(line: &[u8], max: usize) -> String {
    let mut cut = line.len().min(max);
    while cut < line.len() && cut > 0 && (line[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    let ellipsis = if cut < line.len() { "…" } else { "" };
    format!("{}{ellipsis}", String::from_utf8_lossy(&line[..cut]))
}

/// The id of a JSON-RPC message, read from the first bytes of its text
/// (for a message too long to parse, [`Line::TooLong`]): its top-level
/// `"id"`, when the head holds it whole ([`json::envelope`](super::json::envelope),
/// which also says whether it is a request or a response).
pub fn id_from_head(head: &[u8]) -> Option<serde_json::Value> {
    super::json::envelope(head).id
}
