//! The reader and writer adapters over in-memory streams: the CLI's policy
//! (objects only; a skipped line reported for an object that does not
//! parse or whose shape does not fit, and for a line over the cap; one `Io`
//! error) and the writer's errors in this crate's terms.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use super::support::within;
use crate::error::Error;
use crate::message::{SkipReason, SkippedLine};
use crate::transport::{LineReader, LineWriter, Read};

/// An item that must be a value.
fn value(item: Option<crate::Result<Read<Value>>>) -> Value {
    match item {
        Some(Ok(Read::Value(value))) => value,
        other => panic!("expected a value, got {other:?}"),
    }
}

/// Every line read: a value, or the report of a skipped line.
async fn collect(data: &[u8], max: usize) -> Vec<Result<Value, SkippedLine>> {
    let mut r = LineReader::new(data, max);
    let mut out = Vec::new();
    while let Some(item) = within(10, r.next_line()).await {
        out.push(match item.expect("no read error") {
            Read::Value(value) => Ok(value),
            Read::Skipped(skipped) => Err(skipped),
        });
    }
    assert!(r.next_line().await.is_none(), "stays at the end");
    out
}

#[tokio::test]
async fn yields_objects_skips_non_objects_and_reports_broken_objects() {
    let mut data = Vec::new();
    data.extend_from_slice(b"\n\r\n   \n{\"a\":1}\r\n[SandboxDebug] hi\n");
    data.extend_from_slice(b"{\"bad\":\"\xff\xfe\"}\n{\"truncated\": [1,\n[1,2]\n42\nnull\n");
    data.extend_from_slice(b"{\"n\":1e999}\n");
    data.extend_from_slice(b"  {\"b\":2}  \n{\"c\":3}"); // no final newline
    let got = collect(&data, 1 << 20).await;
    let invalid = |at: usize, excerpt: &str, bytes: usize| match &got[at] {
        Err(SkippedLine {
            reason: SkipReason::Invalid(e),
            excerpt: got,
            len,
            ..
        }) => {
            assert_eq!(got, excerpt);
            assert_eq!(*len, bytes);
            assert!(e.is_syntax() || e.is_eof(), "{e}");
        }
        other => panic!("no report of {excerpt}: {other:?}"),
    };
    // Lines that start as objects but do not parse are reported, in order,
    // with serde's error; lines that are not objects at all are skipped.
    assert_eq!(got.len(), 6, "{got:?}");
    assert_eq!(got[0], Ok(json!({"a":1})));
    // Bytes that are not UTF-8 are U+FFFD in the excerpt, not in `len`.
    invalid(1, "{\"bad\":\"\u{fffd}\u{fffd}\"}", 12);
    invalid(2, "{\"truncated\": [1,", 17);
    invalid(3, "{\"n\":1e999}", 11);
    assert_eq!(got[4], Ok(json!({"b":2})));
    assert_eq!(got[5], Ok(json!({"c":3})));
}

#[tokio::test]
async fn over_long_lines_are_one_report_each_and_reading_resumes() {
    let data = format!(
        "{{\"x\":1}}\n{{\"big\":\"{}\"}}\n{{\"y\":2}}\n{}",
        "x".repeat(5000),
        "q".repeat(2000)
    );
    let got = collect(data.as_bytes(), 1024).await;
    assert_eq!(got.len(), 4);
    assert_eq!(got[0], Ok(json!({"x":1})));
    assert_eq!(got[2], Ok(json!({"y":2})));
    let too_long = |excerpt: String, len| {
        Err(SkippedLine {
            reason: SkipReason::TooLong { limit: 1024 },
            excerpt,
            len,
        })
    };
    assert_eq!(
        got[1],
        too_long(format!("{{\"big\":\"{}", "x".repeat(248)), 5010)
    );
    assert_eq!(got[3], too_long("q".repeat(256), 2000));
}

#[tokio::test]
async fn wrong_shape_is_a_skipped_line_and_the_stream_goes_on() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Msg {
        r#type: String,
    }
    let data = "{\"type\":1}\nnot json\n{\"type\":\"ok\"}\n";
    let mut r = LineReader::new(data.as_bytes(), 1024);
    match r.next_json::<Msg>().await {
        Some(Ok(Read::Skipped(SkippedLine {
            reason: SkipReason::Invalid(e),
            excerpt,
            ..
        }))) => {
            assert_eq!(excerpt, "{\"type\":1}");
            assert!(e.is_data(), "{e}");
        }
        other => panic!("{other:?}"),
    }
    match r.next_json::<Msg>().await {
        Some(Ok(Read::Value(m))) => assert_eq!(m.r#type, "ok"),
        other => panic!("{other:?}"),
    }
    assert!(r.next_json::<Msg>().await.is_none());
}

#[tokio::test]
async fn a_read_error_is_returned_once_then_the_stream_ends() {
    let failing = tokio_test_reader();
    let mut r = LineReader::new(failing, 1024);
    assert!(matches!(r.next_line().await, Some(Ok(Read::Value(v))) if v == json!({"a":1})));
    assert!(matches!(r.next_line().await, Some(Err(Error::Io(_)))));
    assert!(r.next_line().await.is_none());
}

/// `{"a":1}` and half a line, then a read error.
fn tokio_test_reader() -> impl tokio::io::AsyncRead + Unpin {
    AsyncReadExt::chain(&b"{\"a\":1}\n{\"partial\""[..], Failing)
}

struct Failing;

impl tokio::io::AsyncRead for Failing {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Err(std::io::Error::other("boom")))
    }
}

#[tokio::test]
async fn writer_errors_in_this_crates_terms() {
    let (tx, mut rx) = tokio::io::duplex(1 << 16);
    let w = LineWriter::new(tx);
    let bad: HashMap<(i32, i32), i32> = HashMap::from([((1, 2), 3)]);
    assert!(matches!(w.send(&bad).await, Err(Error::Json(_))));
    w.send(&json!({"ok": 1})).await.unwrap();
    w.clone().close().await.unwrap();
    assert!(w.is_closed());
    assert!(matches!(w.send(&json!({})).await, Err(Error::Closed)));
    let mut out = Vec::new();
    rx.read_to_end(&mut out).await.unwrap();
    assert_eq!(out, b"{\"ok\":1}\n");

    let (tx, rx) = tokio::io::duplex(1024);
    drop(rx);
    let w = LineWriter::new(tx);
    match w.send(&json!({"a": 1})).await {
        Err(Error::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe),
        other => panic!("{other:?}"),
    }
    assert!(matches!(w.send(&json!({"a": 2})).await, Err(Error::Closed)));
}

/// The session's reader lets the answers to the lines it read go in
/// `before_wait`:
/// called whenever the next line is not buffered yet (blank and skipped
/// lines included), never while whole lines are waiting.
#[tokio::test]
async fn before_wait_runs_only_when_no_whole_line_is_buffered() {
    let (mut tx, rx) = tokio::io::duplex(1 << 16);
    let mut r = LineReader::new(rx, 1024);
    let waits = std::cell::Cell::new(0);
    let wait = || waits.set(waits.get() + 1);
    use tokio::io::AsyncWriteExt;
    tx.write_all(b"{\"a\":1}\n\n[debug] not json\n{\"b\":2}\n{\"c\":")
        .await
        .unwrap();
    assert_eq!(value(r.next_line_or(wait).await), json!({"a":1}));
    assert_eq!(waits.get(), 1, "nothing was buffered before the first read");
    // Blank and skipped lines are buffered: no wait before `b`.
    assert_eq!(value(r.next_line_or(wait).await), json!({"b":2}));
    assert_eq!(waits.get(), 1);
    // `c` is not whole: about to wait, so `before_wait` runs first.
    let (line, ()) = tokio::join!(r.next_line_or(wait), async {
        tx.write_all(b"3}\n").await.unwrap();
    });
    assert_eq!(value(line), json!({"c":3}));
    assert_eq!(waits.get(), 2);
    drop(tx);
    assert!(r.next_line_or(wait).await.is_none());
    assert_eq!(waits.get(), 3, "waiting for the end counts too");
}
