//! The reader over in-memory streams with controlled chunking (the writer's
//! tests are in `tests/writer.rs`).

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, DuplexStream, ReadBuf};

use super::fuzz::{RawItem, ReaderItem, check_ndjson_reader, read_raw};
use super::*;

/// Hands out `data` at most `chunk` bytes per read; with `stall`, every
/// other poll returns `Pending` (and wakes itself at once).
struct Chunked {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
    stall: bool,
    flip: bool,
    fail_at_end: bool,
}

impl Chunked {
    fn new(data: impl Into<Vec<u8>>, chunk: usize) -> Self {
        Chunked {
            data: data.into(),
            pos: 0,
            chunk,
            stall: false,
            flip: false,
            fail_at_end: false,
        }
    }
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.stall {
            self.flip = !self.flip;
            if self.flip {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        let left = self.data.len() - self.pos;
        if left == 0 && self.fail_at_end {
            return Poll::Ready(Err(io::Error::other("boom")));
        }
        let n = left.min(self.chunk).min(buf.remaining());
        let pos = self.pos;
        buf.put_slice(&self.data[pos..pos + n]);
        self.pos += n;
        Poll::Ready(Ok(()))
    }
}

async fn within<F: std::future::Future>(secs: u64, f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(secs), f)
        .await
        .expect("timed out")
}

fn text(s: &str) -> RawItem {
    RawItem::Text(s.as_bytes().to_vec())
}

#[test]
fn lines_of_any_size_under_the_cap() {
    let big = "x".repeat(100_000);
    let input = format!("a\r\n{big}\n\n \nlast\r");
    for chunk in [1, 7, 8192, 1 << 20] {
        let (lines, cut) = read_raw(input.as_bytes(), &[chunk, 0], 200_000);
        assert_eq!(
            lines,
            [text("a"), text(&big), text(""), text(" "), text("last")],
            "chunk {chunk}"
        );
        assert!(cut);
    }
    let (lines, cut) = read_raw(b"one\n", &[3], 10);
    assert_eq!((lines, cut), (vec![text("one")], false));
    assert_eq!(read_raw(b"", &[3], 10), (vec![], false));
}

#[test]
fn over_the_cap_is_one_report_with_length_and_head() {
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":\"{}\"}}",
        "y".repeat(5000)
    );
    let input = format!("ok1\n{long}\nok2\n{}", "z".repeat(3000));
    for chunk in [3, 64, 8192] {
        let (lines, cut) = read_raw(input.as_bytes(), &[chunk], 1000);
        assert!(cut);
        assert_eq!(lines.len(), 4, "chunk {chunk}");
        assert_eq!(lines[0], text("ok1"));
        let RawItem::TooLong { len, head } = &lines[1] else {
            panic!("{:?}", lines[1])
        };
        assert_eq!(*len, long.len(), "chunk {chunk}");
        assert_eq!(head.len(), HEAD_BYTES);
        assert_eq!(id_from_head(head), Some(17.into()));
        assert_eq!(lines[2], text("ok2"));
        assert!(matches!(lines[3], RawItem::TooLong { len: 3000, .. }));
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

#[test]
fn parsing_policies() {
    assert!(matches!(parse_line::<Value>(b" \t\r"), Parsed::Blank));
    assert!(matches!(parse_line::<Value>(b"[1]"), Parsed::Value(_)));
    assert!(matches!(
        parse_object::<Value>(b"[1]"),
        Parsed::Invalid(None)
    ));
    assert!(matches!(
        parse_object::<Value>(b"{\"a\":"),
        Parsed::Invalid(Some(_))
    ));
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Msg {
        r#type: String,
    }
    fn value<T>(parsed: Parsed<T>) -> Option<T> {
        match parsed {
            Parsed::Value(v) => Some(v),
            _ => None,
        }
    }
    // Straight from the line into the type; lone surrogates decode.
    assert_eq!(
        value(parse_object::<Msg>(br#"{"type":"ok"}"#)),
        Some(Msg {
            r#type: "ok".into()
        })
    );
    assert_eq!(
        value(parse_object::<Msg>(br#" {"type":"o\ud83d"}"#)),
        Some(Msg {
            r#type: "o\u{FFFD}".into()
        })
    );
    assert!(matches!(
        parse_object::<Msg>(br#"{"type":1}"#),
        Parsed::Mismatch(_)
    ));
    assert!(matches!(
        parse_line::<Value>(br#"{"type":"\ud83d",}"#),
        Parsed::Invalid(Some(_))
    ));
    assert_eq!(preview("aé".as_bytes(), 2), "a…");
    assert_eq!(preview(b"abc", 10), "abc");
}

#[tokio::test]
async fn objects_skip_everything_else() {
    let mut data = Vec::new();
    data.extend_from_slice(b"\n\r\n   \n{\"a\":1}\r\n");
    data.extend_from_slice(b"[SandboxDebug] something happened\n");
    data.extend_from_slice(b"{\"bad\":\"\xff\xfe\"}\n\xc3\x28\xa0\xa1\n");
    data.extend_from_slice(b"{\"truncated\": [1, 2,\n[1,2,3]\n42\n\"str\"\nnull\n");
    data.extend_from_slice(b"  {\"b\":2}  \n{\"c\":3}");
    for chunk in [1, 3, 1 << 20] {
        let got = check_ndjson_reader(&data, &[chunk], 1 << 20);
        // The two lines that start as objects but do not parse (invalid
        // UTF-8 in a string, truncated) are each reported; everything
        // that is not an object is skipped.
        assert_eq!(
            got,
            [
                ReaderItem::Object(json!({"a": 1})),
                ReaderItem::Protocol,
                ReaderItem::Protocol,
                ReaderItem::Object(json!({"b": 2})),
                ReaderItem::Object(json!({"c": 3})),
            ],
            "chunk {chunk}"
        );
    }
}

#[tokio::test]
async fn skipping_a_huge_line_does_not_buffer_it() {
    let cap = 1024;
    let data = format!(
        "{{\"x\":1}}\n{{\"big\":\"{}\"}}\n{{\"y\":2}}\n",
        "x".repeat(10 << 20)
    );
    let mut r = LineReader::new(Chunked::new(data, 64 << 10), cap);
    let mut max_buf = 0;
    let mut lines = 0;
    while let Some(line) = within(10, r.next_line()).await.unwrap() {
        if let Line::TooLong { len, .. } = line {
            assert_eq!(len, 10 * 1024 * 1024 + 10);
        }
        lines += 1;
        max_buf = max_buf.max(r.buffer_capacity());
    }
    assert_eq!(lines, 3);
    assert!(max_buf <= 128 << 10, "buffer grew to {max_buf}");
}

#[tokio::test]
async fn huge_lines_grow_the_buffer_once_and_it_shrinks_after() {
    let n = 16 << 20;
    let mut data = Vec::new();
    for i in 0..3 {
        data.extend_from_slice(format!("{{\"i\":{i},\"data\":\"").as_bytes());
        data.resize(data.len() + n, b'z');
        data.extend_from_slice(b"\"}\n");
    }
    for _ in 0..20 {
        data.extend_from_slice(b"{\"type\":\"small\"}\n");
    }
    data.extend_from_slice(&vec![b' '; 1 << 20]);
    data.extend_from_slice(b"{\"last\":1}\n");
    let mut r = LineReader::new(Chunked::new(data, 64 << 10), 256 << 20);
    let t = Instant::now();
    let mut capacities = Vec::new();
    for _ in 0..3 {
        let Some(Line::Text(line)) = r.next_line().await.unwrap() else {
            panic!()
        };
        assert_eq!(line.len(), n + 17);
        capacities.push(r.buffer_capacity());
    }
    eprintln!(
        "reader: three 16 MiB lines framed in {:.0} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    // Grown for the first, kept for the next ones (no regrowth per line).
    assert_eq!(capacities[0], capacities[2], "{capacities:?}");
    for _ in 0..20 {
        let Some(Line::Text(line)) = r.next_line().await.unwrap() else {
            panic!()
        };
        assert_eq!(line, b"{\"type\":\"small\"}");
    }
    let Some(Line::Text(last)) = r.next_line().await.unwrap() else {
        panic!()
    };
    assert!(last.ends_with(b"{\"last\":1}"));
    assert!(
        r.buffer_capacity() <= 8 << 20,
        "buffer kept {}",
        r.buffer_capacity()
    );
    assert!(r.next_line().await.unwrap().is_none());
    assert_eq!(r.buffer_capacity(), 0, "freed at the end");
}

#[tokio::test]
async fn cancellation_loses_nothing() {
    let mut data = String::new();
    let mut expected = Vec::new();
    for i in 0..300 {
        let v = json!({"i": i, "pad": "p".repeat((i * 37) % 900)});
        data.push_str(&v.to_string());
        data.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
        expected.push(v);
    }
    let mut src = Chunked::new(data, 7);
    src.stall = true;
    let mut r = LineReader::new(src, 1 << 20);
    let mut got = Vec::new();
    let mut cancelled = 0;
    loop {
        // Poll once and drop the future: cancelled mid-line most times.
        let value = match r.next_line().now_or_never() {
            None => {
                cancelled += 1;
                continue;
            }
            Some(Ok(None)) => break,
            Some(Ok(Some(Line::Text(line)))) => serde_json::from_slice::<Value>(line).unwrap(),
            Some(other) => panic!("{other:?}"),
        };
        got.push(value);
    }
    assert!(cancelled > 100, "only {cancelled} cancellations");
    assert_eq!(got, expected);
}

#[tokio::test]
async fn a_read_error_is_returned_once_then_the_stream_ends() {
    let mut src = Chunked::new("{\"a\":1}\n{\"partial\"", 4);
    src.fail_at_end = true;
    let mut r = LineReader::new(src, 1024);
    assert_eq!(r.next_line().await.unwrap(), Some(Line::Text(b"{\"a\":1}")));
    assert!(r.next_line().await.is_err());
    assert!(r.next_line().await.unwrap().is_none());
}

#[tokio::test]
async fn many_small_lines() {
    let line = br#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"hello there"}]},"session_id":"abc"}"#;
    let count = 200_000;
    let mut data = Vec::with_capacity((line.len() + 1) * count);
    for _ in 0..count {
        data.extend_from_slice(line);
        data.push(b'\n');
    }
    let mut r = LineReader::new(Chunked::new(data, 64 << 10), 1 << 20);
    let t = Instant::now();
    let mut n = 0;
    while let Some(Line::Text(l)) = r.next_line().await.unwrap() {
        let Parsed::Value(v) = parse_object::<Value>(l) else {
            panic!()
        };
        assert_eq!(v["session_id"], "abc");
        n += 1;
    }
    eprintln!(
        "reader: {count} lines in {:.0} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    assert_eq!(n, count);
}

mod order;
mod properties;
mod writer;

#[tokio::test]
async fn line_ready_says_whether_next_line_would_read() {
    let mut r = LineReader::new(
        Chunked::new(&b"{\"a\":1}\n{\"b\":2}\n{\"c\""[..], 1 << 10),
        1 << 20,
    );
    assert!(!r.line_ready(), "nothing read yet");
    assert_eq!(r.next_line().await.unwrap(), Some(Line::Text(b"{\"a\":1}")));
    assert!(r.line_ready(), "the second line came in the same read");
    assert!(r.line_ready(), "asking twice changes nothing");
    assert_eq!(r.next_line().await.unwrap(), Some(Line::Text(b"{\"b\":2}")));
    assert!(!r.line_ready(), "only part of the third line is here");
    assert_eq!(r.next_line().await.unwrap(), Some(Line::Text(b"{\"c\"")));
    assert!(r.ended_mid_line());
    assert!(r.line_ready(), "the end is ready at once");
    assert_eq!(r.next_line().await.unwrap(), None);
}
