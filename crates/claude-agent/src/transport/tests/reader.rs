//! `LineReader` over in-memory streams with controlled chunking.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::FutureExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

use super::support::within;
use crate::error::Error;
use crate::transport::LineReader;

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

async fn collect(reader: &mut LineReader<Chunked>) -> Vec<Result<Value, String>> {
    let mut out = Vec::new();
    while let Some(item) = reader.next_line().await {
        out.push(item.map_err(|e| e.to_string()));
    }
    out
}

#[tokio::test]
async fn yields_objects_and_skips_everything_else() {
    let mut data = Vec::new();
    data.extend_from_slice(b"\n\r\n   \n{\"a\":1}\r\n");
    data.extend_from_slice(b"[SandboxDebug] something happened\n");
    data.extend_from_slice(b"garbage that is not json\n");
    data.extend_from_slice(b"{\"bad\":\"\xff\xfe\"}\n"); // invalid UTF-8
    data.extend_from_slice(b"\xc3\x28\xa0\xa1\n");
    data.extend_from_slice(b"{\"truncated\": [1, 2,\n");
    data.extend_from_slice(b"[1,2,3]\n42\n\"str\"\nnull\n");
    data.extend_from_slice(b"  {\"b\":2}  \n");
    data.extend_from_slice(b"{\"c\":3}"); // no final newline
    for chunk in [1, 3, 1 << 20] {
        let mut r = LineReader::new(Chunked::new(data.clone(), chunk), 1 << 20);
        let got = within(10, collect(&mut r)).await;
        assert_eq!(
            got,
            vec![Ok(json!({"a":1})), Ok(json!({"b":2})), Ok(json!({"c":3}))],
            "chunk {chunk}"
        );
        assert!(r.next_line().await.is_none(), "stays at EOF");
    }
}

#[tokio::test]
async fn over_long_line_is_reported_then_reading_resumes() {
    let cap = 1024;
    let big = format!("{{\"big\":\"{}\"}}", "x".repeat(10 << 20));
    let fits = format!("{{\"fits\":\"{}\"}}", "y".repeat(cap - 11));
    assert_eq!(fits.len(), cap);
    let data = format!(
        "{{\"x\":1}}\n{big}\n{fits}\n{{\"y\":2}}\n{}\n{{\"z\":3}}\n",
        "q".repeat(2000)
    );
    for chunk in [64 << 10, 1 << 24, 777] {
        let mut r = LineReader::new(Chunked::new(data.clone(), chunk), cap);
        let mut got = Vec::new();
        let mut max_buf = 0;
        while let Some(item) = within(10, r.next_line()).await {
            max_buf = max_buf.max(r.buffer_capacity());
            got.push(item);
        }
        assert_eq!(got.len(), 6, "chunk {chunk}");
        assert_eq!(got[0].as_ref().unwrap(), &json!({"x":1}));
        assert!(matches!(got[1], Err(Error::LineTooLong { limit: 1024 })));
        assert_eq!(
            got[2].as_ref().unwrap()["fits"].as_str().unwrap().len(),
            cap - 11
        );
        assert_eq!(got[3].as_ref().unwrap(), &json!({"y":2}));
        assert!(matches!(got[4], Err(Error::LineTooLong { limit: 1024 })));
        assert_eq!(got[5].as_ref().unwrap(), &json!({"z":3}));
        // Skipping 10 MiB did not buffer it (a 16 MiB chunk is one read).
        let bound = if chunk > 1 << 20 { 1 << 25 } else { 1 << 20 };
        assert!(max_buf <= bound, "buffer grew to {max_buf}");
    }
}

#[tokio::test]
async fn over_long_last_line_without_newline_ends_the_stream() {
    let data = format!("{{\"a\":1}}\n{}", "x".repeat(5000));
    let mut r = LineReader::new(Chunked::new(data, 100), 1000);
    assert_eq!(r.next_line().await.unwrap().unwrap(), json!({"a":1}));
    assert!(matches!(
        r.next_line().await,
        Some(Err(Error::LineTooLong { limit: 1000 }))
    ));
    assert!(r.next_line().await.is_none());
}

#[tokio::test]
async fn huge_line_64_mib_then_buffer_shrinks() {
    let n = 64 << 20;
    let mut data = Vec::with_capacity(n + 100);
    data.extend_from_slice(b"{\"type\":\"big\",\"data\":\"");
    data.resize(data.len() + n, b'z');
    data.extend_from_slice(b"\"}\n{\"type\":\"small\"}\n");
    let total = data.len();
    // Framing alone, then framing and parsing.
    let mut raw = LineReader::new(Chunked::new(data.clone(), 64 << 10), 256 << 20);
    let t = Instant::now();
    let line_len = within(60, raw.next_raw_line())
        .await
        .unwrap()
        .unwrap()
        .len();
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(line_len, total - "{\"type\":\"small\"}\n".len() - 1);
    eprintln!(
        "reader: framing one 64 MiB line in {:.0} ms ({:.0} MiB/s)",
        secs * 1000.0,
        total as f64 / secs / (1 << 20) as f64
    );
    let mut r = LineReader::new(Chunked::new(data, 64 << 10), 256 << 20);
    let t = Instant::now();
    let v = within(60, r.next_line()).await.unwrap().unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "reader: one 64 MiB line in {:.0} ms ({:.0} MiB/s, debug build unless --release)",
        secs * 1000.0,
        total as f64 / secs / (1 << 20) as f64
    );
    assert_eq!(v["data"].as_str().unwrap().len(), n);
    assert_eq!(
        r.next_line().await.unwrap().unwrap(),
        json!({"type":"small"})
    );
    assert!(r.next_line().await.is_none());
    assert!(
        r.buffer_capacity() <= 4 << 20,
        "buffer kept {}",
        r.buffer_capacity()
    );
}

#[tokio::test]
async fn many_small_lines() {
    let line = br#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"hello there, this is a line"}]},"session_id":"abc"}"#;
    let count = 200_000;
    let mut data = Vec::with_capacity((line.len() + 1) * count);
    for _ in 0..count {
        data.extend_from_slice(line);
        data.push(b'\n');
    }
    let total = data.len();
    let mut r = LineReader::new(Chunked::new(data, 64 << 10), 1 << 20);
    let t = Instant::now();
    let mut n = 0;
    while let Some(v) = within(60, r.next_line()).await {
        assert_eq!(v.unwrap()["session_id"], "abc");
        n += 1;
    }
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "reader: {count} lines of {} bytes in {:.0} ms ({:.0} lines/s, {:.0} MiB/s)",
        line.len(),
        secs * 1000.0,
        count as f64 / secs,
        total as f64 / secs / (1 << 20) as f64
    );
    assert_eq!(n, count);
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
        match r.next_line().now_or_never() {
            None => cancelled += 1,
            Some(None) => break,
            Some(Some(v)) => got.push(v.unwrap()),
        }
        assert!(cancelled < 10_000_000);
    }
    assert!(cancelled > 100, "only {cancelled} cancellations");
    assert_eq!(got, expected);
}

#[tokio::test]
async fn wrong_shape_is_a_protocol_error_and_the_stream_goes_on() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Msg {
        r#type: String,
    }
    let data = "{\"type\":1}\nnot json\n{\"type\":\"ok\"}\n";
    let mut r = LineReader::new(Chunked::new(data, 5), 1024);
    match r.next_json::<Msg>().await {
        Some(Err(Error::Protocol { line, .. })) => assert_eq!(line, "{\"type\":1}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        r.next_json::<Msg>().await.unwrap().unwrap(),
        Msg {
            r#type: "ok".into()
        }
    );
    assert!(r.next_json::<Msg>().await.is_none());
}

#[tokio::test]
async fn raw_lines_are_returned_as_is() {
    let mut r = LineReader::new(Chunked::new("a\r\n\nb", 2), 1024);
    assert_eq!(r.next_raw_line().await.unwrap().unwrap(), b"a\r");
    assert_eq!(r.next_raw_line().await.unwrap().unwrap(), b"");
    assert_eq!(r.next_raw_line().await.unwrap().unwrap(), b"b");
    assert!(r.next_raw_line().await.is_none());
}

#[tokio::test]
async fn read_error_is_returned_once_then_the_stream_ends() {
    let mut src = Chunked::new("{\"a\":1}\n{\"partial\"", 4);
    src.fail_at_end = true;
    let mut r = LineReader::new(src, 1024);
    assert_eq!(r.next_line().await.unwrap().unwrap(), json!({"a":1}));
    assert!(matches!(r.next_line().await, Some(Err(Error::Io(_)))));
    assert!(r.next_line().await.is_none());
    assert!(r.next_line().await.is_none());
}

fn arb_line() -> impl Strategy<Value = (String, Option<Value>)> {
    prop_oneof![
        (0usize..3000, any::<u32>()).prop_map(|(len, n)| {
            let v = json!({"n": n, "s": "é".repeat(len / 2)});
            (v.to_string(), Some(v))
        }),
        "[a-z \\[\\]{}:,\"]{0,40}".prop_map(|s| {
            let parsed = serde_json::from_str::<Value>(s.trim())
                .ok()
                .filter(|v| v.is_object() && s.trim_start().starts_with('{'));
            (s, parsed)
        }),
        Just((String::new(), None)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_chunking_gives_the_same_objects(
        lines in proptest::collection::vec(arb_line(), 0..60),
        chunk in 1usize..5000,
        crlf in any::<bool>(),
    ) {
        let mut data = String::new();
        let mut expected = Vec::new();
        for (text, value) in &lines {
            data.push_str(text);
            data.push_str(if crlf { "\r\n" } else { "\n" });
            expected.extend(value.clone().map(Ok));
        }
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let got = rt.block_on(async {
            let mut r = LineReader::new(Chunked::new(data, chunk), 1 << 20);
            collect(&mut r).await
        });
        prop_assert_eq!(got, expected);
    }
}
