//! A small incremental parser of `text/event-stream` (Server-Sent Events).

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

/// Parses an event stream fed in arbitrary chunks.
///
/// Follows the HTML event-stream rules: lines end with CRLF, LF or CR;
/// `:` starts a comment; `data:` lines accumulate; a blank line dispatches
/// (nothing is dispatched without data); `id:` sets the last event id
/// (ignored if it contains NUL) and `retry:` the reconnection time (digits
/// only). One space after the colon is dropped.
///
/// ```
/// use claude_agent_mcp::client::http::SseParser;
///
/// let mut p = SseParser::new();
/// let events = p.feed(b"id: 7\nretry: 500\ndata: {\"a\":\ndata: 1}\n\n: ping\n");
/// assert_eq!(events.len(), 1);
/// assert_eq!(events[0].data, "{\"a\":\n1}");
/// assert_eq!(p.last_event_id(), Some("7"));
/// assert_eq!(p.retry_ms(), Some(500));
/// ```
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended in CR: a following LF belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    last_id: Option<String>,
    retry: Option<u64>,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last event id seen (for `Last-Event-ID` on reconnection).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the server asked for, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// Feeds bytes; returns the events they complete.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        // An empty chunk says nothing, not even that a CR was not followed by LF.
        if bytes.is_empty() {
            return out;
        }
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(i) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&bytes[..i]);
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out);
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
        self.line.extend_from_slice(bytes);
        out
    }

    /// Ends the stream: an event without its blank line is dropped, as the
    /// rules say.
    pub fn finish(&mut self) {
        self.line.clear();
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.event = None;
        self.data.clear();
        self.has_data = false;
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                    id: self.last_id.clone(),
                });
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
}
