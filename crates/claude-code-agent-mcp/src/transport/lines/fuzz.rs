//! Not a public API: lets the fuzz targets (`fuzz/`) and the property
//! tests drive the [`LineReader`] against a line-by-line model. Compiled
//! only with the `__fuzz` feature (and in this crate's own tests), so it
//! costs users nothing. May change or disappear in any release.

use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use super::{Line, LineReader, Parsed, parse_object};

/// What the reader yielded for one line, read the way the Claude Code SDK
/// reads the CLI's stdout ([`parse_object`] into a [`Value`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ReaderItem {
    /// A JSON object.
    Object(Value),
    /// A line over the cap.
    TooLong,
    /// A line that starts with `{` but is no JSON serde can hold as the
    /// type asked for ([`Parsed::Mismatch`], or [`Parsed::Invalid`] with
    /// serde's error: truncated, invalid UTF-8, a number out of range).
    Protocol,
}

/// One raw line as the reader yielded it (owned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawItem {
    /// [`Line::Text`].
    Text(Vec<u8>),
    /// [`Line::TooLong`].
    TooLong {
        /// Its length.
        len: usize,
        /// Its first bytes.
        head: Vec<u8>,
    },
}

/// A reader over `data` handing out `chunks[i]` bytes per read in turn
/// (cycled); a `0` makes that read pending.
struct Src<'a>(&'a [u8], &'a [usize], usize);

impl tokio::io::AsyncRead for Src<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let (data, chunks, turn) = (self.0, self.1, self.2);
        self.2 += 1;
        let chunk = if chunks.iter().all(|&c| c == 0) {
            1
        } else {
            chunks[turn % chunks.len()]
        };
        if chunk == 0 {
            return Poll::Pending;
        }
        let n = chunk.min(data.len()).min(buf.remaining());
        buf.put_slice(&data[..n]);
        self.0 = &data[n..];
        Poll::Ready(Ok(()))
    }
}

/// Reads every line of `data` (cap `max_line`), reads handing out
/// `chunks[i]` bytes in turn; a `0` makes that read pending, which drops
/// the pending `next_line` future (cancellation) before the next one is
/// polled. Calls `f` with each line, and returns whether the input ended
/// mid-line.
fn read_lines(data: &[u8], chunks: &[usize], max_line: usize, mut f: impl FnMut(Line<'_>)) -> bool {
    let chunks = if chunks.is_empty() {
        &[usize::MAX][..]
    } else {
        chunks
    };
    let mut reader = LineReader::new(Src(data, chunks, 0), max_line);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    loop {
        let next = std::pin::pin!(reader.next_line());
        match next.poll(&mut cx) {
            Poll::Pending => continue,
            Poll::Ready(Ok(None)) => break,
            Poll::Ready(Ok(Some(line))) => f(line),
            Poll::Ready(Err(e)) => panic!("unexpected read error: {e}"),
        }
    }
    reader.ended_mid_line()
}

/// The raw lines of `data` through the reader, and whether it ended mid-line.
pub fn read_raw(data: &[u8], chunks: &[usize], max_line: usize) -> (Vec<RawItem>, bool) {
    let mut out = Vec::new();
    let cut = read_lines(data, chunks, max_line, |line| {
        out.push(match line {
            Line::Text(t) => RawItem::Text(t.to_vec()),
            Line::TooLong { len, head } => RawItem::TooLong {
                len,
                head: head.to_vec(),
            },
        });
    });
    (out, cut)
}

/// What [`read_raw`] must yield, from the whole input split on `\n` (the
/// last line may lack it): a line longer than `max_line` is `TooLong` with
/// its length and first 256 bytes, any other line is its text without a
/// trailing `\r`.
pub fn expected_raw(data: &[u8], max_line: usize) -> (Vec<RawItem>, bool) {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let cut = !data.is_empty() && !data.ends_with(b"\n");
    if !cut {
        lines.pop();
    }
    let items = lines
        .into_iter()
        .map(|line| {
            if line.len() > max_line {
                RawItem::TooLong {
                    len: line.len(),
                    head: line[..line.len().min(super::HEAD_BYTES)].to_vec(),
                }
            } else {
                RawItem::Text(line.strip_suffix(b"\r").unwrap_or(line).to_vec())
            }
        })
        .collect();
    (items, cut)
}

/// Reads `data` with the SDK's policy for the CLI's stdout: objects only
/// ([`parse_object`]); blank lines and lines that do not start with `{`
/// skipped; a `{` line that does not parse reported.
pub fn read_ndjson(data: &[u8], chunks: &[usize], max_line: usize) -> Vec<ReaderItem> {
    let mut out = Vec::new();
    read_lines(data, chunks, max_line, |line| match line {
        Line::TooLong { .. } => out.push(ReaderItem::TooLong),
        Line::Text(text) => match parse_object::<Value>(text) {
            Parsed::Value(value) => out.push(ReaderItem::Object(value)),
            Parsed::Mismatch(_) | Parsed::Invalid(Some(_)) => out.push(ReaderItem::Protocol),
            Parsed::Blank | Parsed::Invalid(None) => {}
        },
    });
    out
}

/// What [`read_ndjson`] must yield, computed line by line from the whole
/// input: each line (split on `\n`, the last one may lack it) longer than
/// `max_line` bytes is one `TooLong`; otherwise, trimmed of ASCII
/// whitespace, a line that starts with `{` and parses (leniently, as
/// [`json::from_slice`](crate::transport::json::from_slice)) is an `Object`, one
/// that starts with `{` and does not parse is `Protocol`, and every other
/// line is skipped.
pub fn expected_ndjson(data: &[u8], max_line: usize) -> Vec<ReaderItem> {
    let mut out = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        if line.len() > max_line {
            out.push(ReaderItem::TooLong);
            continue;
        }
        let line = line.trim_ascii();
        if line.first() != Some(&b'{') {
            continue;
        }
        // The lenient decoding (lone surrogates as U+FFFD) is checked on
        // its own by `json::fuzz`.
        match crate::transport::json::from_slice::<Value>(line) {
            Ok(value) => out.push(ReaderItem::Object(value)),
            Err(_) => out.push(ReaderItem::Protocol),
        }
    }
    out
}

/// Runs the reader over `data` both ways and panics unless the raw lines
/// equal [`expected_raw`] and the objects equal [`expected_ndjson`] (and
/// are all objects). Returns the objects.
pub fn check_ndjson_reader(data: &[u8], chunks: &[usize], max_line: usize) -> Vec<ReaderItem> {
    assert_eq!(
        read_raw(data, chunks, max_line),
        expected_raw(data, max_line),
        "raw lines and the line-by-line model differ (cap {max_line}, chunks {chunks:?})"
    );
    let got = read_ndjson(data, chunks, max_line);
    for item in &got {
        if let ReaderItem::Object(v) = item {
            assert!(v.is_object(), "the reader yielded a non-object: {v}");
        }
    }
    let want = expected_ndjson(data, max_line);
    assert_eq!(
        got, want,
        "reader and line-by-line model differ (cap {max_line}, chunks {chunks:?})"
    );
    got
}
