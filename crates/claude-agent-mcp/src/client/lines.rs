//! A bounded, cancellation-safe NDJSON line reader.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The default cap on one line (a JSON-RPC message): 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// What [`LineReader::next_line`] read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A complete line, without its `\n` (or `\r\n`).
    Text(Vec<u8>),
    /// A line over the cap, skipped: its length, and its first bytes.
    TooLong { len: usize, head: Vec<u8> },
}

const HEAD: usize = 256;

/// Reads `\n`-terminated lines of any size up to a cap. A longer line is
/// skipped (reported as [`Line::TooLong`]) and reading goes on. A partial
/// line survives a cancelled `next_line`.
pub(crate) struct LineReader<R> {
    reader: R,
    buf: Vec<u8>,
    max: usize,
    /// Bytes of an over-long line skipped so far (0 when not skipping).
    skipping: usize,
    head: Vec<u8>,
    /// The input ended inside a line (no `\n` after its last bytes).
    cut: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        Self {
            reader,
            buf: Vec::new(),
            max,
            skipping: 0,
            head: Vec::new(),
            cut: false,
        }
    }

    /// The next line, or `None` at the end of input.
    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                if self.skipping > 0 {
                    self.cut = true;
                    return Ok(Some(self.too_long(0)));
                }
                if self.buf.is_empty() {
                    return Ok(None);
                }
                self.cut = true;
                return Ok(Some(Line::Text(self.take())));
            }
            match memchr::memchr(b'\n', available) {
                Some(i) => {
                    let line = if self.skipping > 0 {
                        Some(self.too_long(i))
                    } else if self.buf.len() + i > self.max {
                        let chunk = available[..i].to_vec();
                        self.start_skipping(&chunk);
                        Some(self.too_long(0))
                    } else {
                        self.buf.extend_from_slice(&available[..i]);
                        None
                    };
                    self.reader.consume(i + 1);
                    return Ok(Some(line.unwrap_or_else(|| Line::Text(self.take()))));
                }
                None => {
                    let n = available.len();
                    if self.skipping > 0 {
                        self.skipping += n;
                    } else if self.buf.len() + n > self.max {
                        let chunk = available.to_vec();
                        self.start_skipping(&chunk);
                    } else {
                        self.buf.extend_from_slice(available);
                    }
                    self.reader.consume(n);
                }
            }
        }
    }

    /// Whether the input ended inside a line: the last line returned had
    /// no `\n` (the writer died mid-message, say).
    pub(crate) fn ended_mid_line(&self) -> bool {
        self.cut
    }

    fn start_skipping(&mut self, chunk: &[u8]) {
        let mut head = std::mem::take(&mut self.buf);
        self.skipping = head.len() + chunk.len();
        if head.len() < HEAD {
            head.extend_from_slice(&chunk[..chunk.len().min(HEAD - head.len())]);
        }
        head.truncate(HEAD);
        self.head = head;
    }

    fn too_long(&mut self, extra: usize) -> Line {
        let len = self.skipping + extra;
        self.skipping = 0;
        Line::TooLong {
            len,
            head: std::mem::take(&mut self.head),
        }
    }

    fn take(&mut self) -> Vec<u8> {
        let mut line = std::mem::take(&mut self.buf);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        line
    }
}

/// The id of a JSON-RPC message, read from the first bytes of its text
/// (for a message too long to parse): `"id":` followed by a number or a
/// string at the top level of the object, as servers usually write it.
pub(crate) fn id_from_head(head: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(head);
    let at = text.find("\"id\"")?;
    let rest = text[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        let end = s.find('"')?;
        return Some(serde_json::Value::String(s[..end].to_owned()));
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse::<i64>().ok().map(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], max: usize, cap: usize) -> Vec<Line> {
        let reader = tokio::io::BufReader::with_capacity(cap, input);
        let mut lines = LineReader::new(reader, max);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            out.push(line);
        }
        assert_eq!(lines.ended_mid_line(), !input.ends_with(b"\n"));
        out
    }

    fn text(s: &str) -> Line {
        Line::Text(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn lines_of_any_size_under_the_cap() {
        let big = "x".repeat(100_000);
        let input = format!("a\r\n{big}\n\nlast");
        for cap in [1, 7, 8192] {
            let lines = read_all(input.as_bytes(), 200_000, cap).await;
            assert_eq!(
                lines,
                [text("a"), text(&big), text(""), text("last")],
                "cap {cap}"
            );
        }
    }

    #[tokio::test]
    async fn over_the_cap_is_skipped_and_reading_goes_on() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":\"{}\"}}",
            "y".repeat(5000)
        );
        let input = format!("ok1\n{long}\nok2\n{}", "z".repeat(3000));
        for cap in [3, 64, 8192] {
            let lines = read_all(input.as_bytes(), 1000, cap).await;
            assert_eq!(lines.len(), 4, "cap {cap}");
            assert_eq!(lines[0], text("ok1"));
            let Line::TooLong { len, head } = &lines[1] else {
                panic!("{:?}", lines[1])
            };
            assert_eq!(*len, long.len(), "cap {cap}");
            assert_eq!(id_from_head(head), Some(17.into()));
            assert_eq!(lines[2], text("ok2"));
            assert!(
                matches!(lines[3], Line::TooLong { len: 3000, .. }),
                "{:?}",
                lines[3]
            );
        }
    }

    #[test]
    fn reads_ids_from_heads() {
        assert_eq!(
            id_from_head(br#"{"jsonrpc":"2.0","id":"a-1","result""#),
            Some("a-1".into())
        );
        assert_eq!(id_from_head(br#"{"id" : -3,"#), Some((-3).into()));
        assert_eq!(id_from_head(br#"{"result":{"#), None);
    }
}
