//! A small incremental parser of `text/event-stream` (Server-Sent Events),
//! with a cap on one event.

use std::fmt;

use super::DEFAULT_MAX_MESSAGE_BYTES;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// `event:` (absent means `message`).
    pub event: Option<String>,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id in force when it was dispatched (`id:`).
    pub id: Option<String>,
}

/// An event over the parser's cap: it was skipped, not buffered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEventTooLarge {
    /// The cap on one event (its data plus the line being read).
    pub limit: usize,
    /// How many bytes of the event had been seen when it crossed the cap
    /// (the event may be longer: the rest is skipped unread).
    pub size: usize,
}

impl fmt::Display for SseEventTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an SSE event exceeds the message cap of {} bytes ({} bytes seen)",
            self.limit, self.size
        )
    }
}

impl std::error::Error for SseEventTooLarge {}

/// Parses an event stream fed in arbitrary chunks.
///
/// Follows the HTML event-stream rules: lines end with CRLF, LF or CR;
/// `:` starts a comment; `data:` lines accumulate; a blank line dispatches
/// (nothing is dispatched without data); `id:` sets the last event id
/// (ignored if it contains NUL) and `retry:` the reconnection time (digits
/// only). One space after the colon is dropped.
///
/// Memory is bounded: an event whose data plus the line being read grows
/// past the cap ([`DEFAULT_MAX_MESSAGE_BYTES`] unless
/// [`with_max_event_bytes`](Self::with_max_event_bytes) says otherwise) is
/// reported once by [`feed_checked`](Self::feed_checked) and the rest of it,
/// up to its blank line, is skipped without being buffered (its `id:` and
/// `retry:` lines too); parsing then goes on.
///
/// ```
/// use claude_code_agent_mcp::__private::SseParser;
///
/// let mut p = SseParser::new();
/// let events = p.feed(b"id: 7\nretry: 500\ndata: {\"a\":\ndata: 1}\n\n: ping\n");
/// assert_eq!(events.len(), 1);
/// assert_eq!(events[0].data, "{\"a\":\n1}");
/// assert_eq!(p.last_event_id(), Some("7"));
/// assert_eq!(p.retry_ms(), Some(500));
///
/// let mut small = SseParser::with_max_event_bytes(8);
/// let items = small.feed_checked(b"data: far too long\n\ndata: ok\n\n");
/// assert_eq!(items[0].as_ref().unwrap_err().limit, 8);
/// assert_eq!(items[1].as_ref().unwrap().data, "ok");
/// ```
#[derive(Debug)]
pub struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended in CR: a following LF belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    last_id: Option<String>,
    retry: Option<u64>,
    max: usize,
    /// Skipping the rest of an event over the cap.
    skipping: bool,
    /// While skipping: no byte of the current line seen yet.
    skip_line_empty: bool,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::with_max_event_bytes(DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl SseParser {
    /// A parser at the start of a stream, with the default cap on one event
    /// ([`DEFAULT_MAX_MESSAGE_BYTES`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser whose events (data plus the line being read) may not exceed
    /// `max` bytes.
    pub fn with_max_event_bytes(max: usize) -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            event: None,
            data: String::new(),
            has_data: false,
            last_id: None,
            retry: None,
            max,
            skipping: false,
            skip_line_empty: false,
        }
    }

    /// The last event id seen (for `Last-Event-ID` on reconnection).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the server asked for, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// Whether part of an event is buffered: a line without its end, or
    /// `data:` lines without their blank line (what [`finish`](Self::finish)
    /// would drop).
    pub fn has_partial_event(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    /// Feeds bytes; returns the events they complete. Events over the cap
    /// are skipped silently: use [`feed_checked`](Self::feed_checked) to
    /// hear about them.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.feed_checked(bytes)
            .into_iter()
            .filter_map(Result::ok)
            .collect()
    }

    /// Feeds bytes; returns, in order, the events they complete and an
    /// error for each event that crossed the cap.
    pub fn feed_checked(&mut self, mut bytes: &[u8]) -> Vec<Result<SseEvent, SseEventTooLarge>> {
        let mut out = Vec::new();
        // An empty chunk says nothing, not even that a CR was not followed by LF.
        if bytes.is_empty() {
            return out;
        }
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        loop {
            let end = memchr::memchr2(b'\n', b'\r', bytes);
            self.push_segment(&bytes[..end.unwrap_or(bytes.len())], &mut out);
            let Some(i) = end else { break };
            self.end_line(&mut out);
            let was_cr = bytes[i] == b'\r';
            bytes = &bytes[i + 1..];
            if was_cr {
                if bytes.first() == Some(&b'\n') {
                    bytes = &bytes[1..];
                } else if bytes.is_empty() {
                    self.after_cr = true;
                }
            }
        }
        out
    }

    /// Ends the stream: an event without its blank line is dropped, as the
    /// rules say.
    pub fn finish(&mut self) {
        self.line.clear();
        self.skipping = false;
        self.reset_event();
    }

    /// Adds bytes of the current line (no line ending in them).
    fn push_segment(&mut self, segment: &[u8], out: &mut Vec<Result<SseEvent, SseEventTooLarge>>) {
        if segment.is_empty() {
            return;
        }
        if self.skipping {
            self.skip_line_empty = false;
            return;
        }
        let size = self.data.len() + self.line.len() + segment.len();
        if size > self.max {
            self.too_large(size, false, out);
            return;
        }
        self.line.extend_from_slice(segment);
    }

    /// A line ending: processes the line, or, while skipping, looks for
    /// the blank line that ends the skipped event.
    fn end_line(&mut self, out: &mut Vec<Result<SseEvent, SseEventTooLarge>>) {
        if self.skipping {
            if self.skip_line_empty {
                self.skipping = false;
            }
            self.skip_line_empty = true;
            return;
        }
        let line = std::mem::take(&mut self.line);
        self.process_line(&line, out);
    }

    /// Reports the current event as over the cap and skips the rest of it.
    fn too_large(
        &mut self,
        size: usize,
        at_line_start: bool,
        out: &mut Vec<Result<SseEvent, SseEventTooLarge>>,
    ) {
        out.push(Err(SseEventTooLarge {
            limit: self.max,
            size,
        }));
        self.line = Vec::new();
        self.reset_event();
        self.data = String::new();
        self.skipping = true;
        self.skip_line_empty = at_line_start;
    }

    fn reset_event(&mut self) {
        self.event = None;
        self.data.clear();
        self.has_data = false;
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<Result<SseEvent, SseEventTooLarge>>) {
        if line.is_empty() {
            if self.has_data {
                out.push(Ok(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                    id: self.last_id.clone(),
                }));
            }
            self.reset_event();
            return;
        }
        if line[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&*line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                // Invalid UTF-8 grows by its replacement characters.
                if self.data.len() > self.max {
                    let size = self.data.len();
                    self.too_large(size, true, out);
                }
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> (Vec<SseEvent>, SseParser) {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed(c));
        }
        (out, p)
    }

    #[test]
    fn an_empty_chunk_after_cr_does_not_split_the_line_ending() {
        // Found by fuzzing: CR, empty chunk, LF is one line ending, not two.
        let (ev, _) = all(&[b"data: a\r", b"", b"\ndata: b\n\n"]);
        assert_eq!(ev.len(), 1, "{ev:?}");
        assert_eq!(ev[0].data, "a\nb");
    }

    #[test]
    fn multi_line_data_event_and_id() {
        let (ev, p) = all(&[b"event: message\nid: 1\ndata: a\ndata:b\ndata\n\n"]);
        assert_eq!(
            ev,
            [SseEvent {
                event: Some("message".into()),
                data: "a\nb\n".into(),
                id: Some("1".into())
            }]
        );
        assert_eq!(p.last_event_id(), Some("1"));
    }

    #[test]
    fn any_chunking_and_line_ending_gives_the_same_events() {
        let stream = b": comment\r\nretry: 250\r\ndata: {\"x\":1}\r\n\r\nid: e2\rdata: two\r\rdata: three\n\n";
        let (whole, p) = all(&[stream]);
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[1].data, "two");
        assert_eq!(whole[1].id.as_deref(), Some("e2"));
        assert_eq!(p.retry_ms(), Some(250));
        for split in 1..stream.len() {
            let (parts, _) = all(&[&stream[..split], &stream[split..]]);
            assert_eq!(parts, whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(all(&bytes).0, whole);
    }

    #[test]
    fn no_data_no_event_and_bad_fields_ignored() {
        let (ev, p) = all(&[b"id: 5\nretry: 1x\n\nevent: ping\n\n:c\nfoo: bar\ndata: ok\n\n"]);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "ok");
        assert_eq!(ev[0].id.as_deref(), Some("5"));
        assert_eq!(p.retry_ms(), None);
        let (ev, _) = all(&[b"data: unterminated"]);
        assert!(ev.is_empty());
    }

    fn checked(max: usize, chunks: &[&[u8]]) -> Vec<Result<String, SseEventTooLarge>> {
        let mut p = SseParser::with_max_event_bytes(max);
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed_checked(c).into_iter().map(|r| r.map(|e| e.data)));
        }
        out
    }

    #[test]
    fn an_event_over_the_cap_is_reported_once_skipped_and_parsing_goes_on() {
        let stream = b"data: a\n\ndata: 0123456789\r\ndata: more\nid: x\n\ndata: b\n\n";
        let want = vec![
            Ok("a".to_owned()),
            Err(SseEventTooLarge {
                limit: 12,
                size: 16,
            }),
            Ok("b".to_owned()),
        ];
        assert_eq!(checked(12, &[stream]), want);
        for split in 1..stream.len() {
            let got = checked(12, &[&stream[..split], &stream[split..]]);
            assert_eq!(got.len(), 3, "split at {split}: {got:?}");
            assert_eq!(got[0], want[0]);
            assert_eq!(got[2], want[2]);
            assert!(matches!(got[1], Err(SseEventTooLarge { limit: 12, size }) if size > 12));
        }
        // The skipped event's id is not taken.
        let mut p = SseParser::with_max_event_bytes(12);
        p.feed(stream);
        assert_eq!(p.last_event_id(), None);
    }

    #[test]
    fn data_accumulated_over_many_lines_counts_and_memory_stays_bounded() {
        let mut p = SseParser::with_max_event_bytes(100);
        let mut errors = 0;
        for _ in 0..1000 {
            for item in p.feed_checked(b"data: 0123456789\n") {
                assert_eq!(item.unwrap_err().limit, 100);
                errors += 1;
            }
            assert!(p.data.len() + p.line.len() <= 100);
        }
        assert_eq!(errors, 1);
        // A line with no end at all.
        let mut p = SseParser::with_max_event_bytes(100);
        for _ in 0..1000 {
            p.feed(b"data: xxxxxxxxxxxxxxxxxxxxxxx");
            assert!(p.line.len() <= 100 && p.line.capacity() <= 256);
        }
        assert!(!p.has_partial_event(), "skipped bytes are not buffered");
        assert_eq!(p.feed(b"\n\ndata: ok\n\n")[0].data, "ok");
    }

    #[test]
    fn partial_events_are_visible_before_finish() {
        let mut p = SseParser::new();
        assert!(!p.has_partial_event());
        p.feed(b"data: half");
        assert!(p.has_partial_event());
        p.feed(b"\n");
        assert!(p.has_partial_event());
        p.finish();
        assert!(!p.has_partial_event());
    }
}
