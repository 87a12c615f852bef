//! `LineWriter` over in-memory pipes.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, DuplexStream};

use super::support::within;
use crate::error::Error;
use crate::transport::LineWriter;

async fn read_all(mut rx: DuplexStream) -> Vec<u8> {
    let mut out = Vec::new();
    rx.read_to_end(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn frames_are_compact_lines() {
    let (tx, rx) = tokio::io::duplex(1 << 16);
    let w = LineWriter::new(tx);
    let reader = tokio::spawn(read_all(rx));
    w.send(&json!({"type": "user", "text": "two\nlines", "n": [1, 2]}))
        .await
        .unwrap();
    #[derive(serde::Serialize)]
    struct Ka {
        r#type: &'static str,
    }
    w.send(&Ka {
        r#type: "keep_alive",
    })
    .await
    .unwrap();
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"type\":\"user\",\"text\":\"two\\nlines\",\"n\":[1,2]}\n{\"type\":\"keep_alive\"}\n"
    );
}

#[tokio::test]
async fn send_raw_checks_its_input() {
    let (tx, rx) = tokio::io::duplex(1 << 16);
    let w = LineWriter::new(tx);
    let reader = tokio::spawn(read_all(rx));
    assert!(matches!(w.send_raw(b"{\"a\":").await, Err(Error::Json(_))));
    assert!(matches!(w.send_raw(b"not json").await, Err(Error::Json(_))));
    match w.send_raw(b"{\"a\":\n1}").await {
        Err(Error::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput),
        other => panic!("{other:?}"),
    }
    w.send_raw(b"{\"a\":1}\n").await.unwrap();
    w.send_raw(b"{\"b\":2}").await.unwrap();
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    assert_eq!(out, b"{\"a\":1}\n{\"b\":2}\n");
}

#[tokio::test]
async fn serialization_error_writes_nothing() {
    let (tx, rx) = tokio::io::duplex(1 << 16);
    let w = LineWriter::new(tx);
    let reader = tokio::spawn(read_all(rx));
    let bad: HashMap<(i32, i32), i32> = HashMap::from([((1, 2), 3)]);
    assert!(matches!(w.send(&json!({"ok": 0})).await, Ok(())));
    assert!(matches!(w.send(&bad).await, Err(Error::Json(_))));
    w.send(&json!({"ok": 1})).await.unwrap();
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    assert_eq!(out, b"{\"ok\":0}\n{\"ok\":1}\n");
}

#[tokio::test]
async fn a_cancelled_send_is_completed_by_the_next() {
    let (tx, rx) = tokio::io::duplex(1024);
    let w = LineWriter::new(tx);
    let big = json!({"big": "b".repeat(100_000)});
    // Nobody reads yet: the send blocks after 1 KiB and is cancelled.
    let r = tokio::time::timeout(Duration::from_millis(50), w.send(&big)).await;
    assert!(r.is_err(), "the send should have blocked");
    let reader = tokio::spawn(read_all(rx));
    w.send(&json!({"small": true})).await.unwrap();
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(lines[0]).unwrap(),
        big
    );
    assert_eq!(lines[1], "{\"small\":true}");
}

#[tokio::test]
async fn clones_never_interleave_frames() {
    let (tx, rx) = tokio::io::duplex(4096);
    let w = LineWriter::new(tx);
    let reader = tokio::spawn(read_all(rx));
    let mut tasks = Vec::new();
    for t in 0..8 {
        let w = w.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..50 {
                let pad = "x".repeat((t * 1000 + i * 13) % 9000);
                w.send(&json!({"t": t, "i": i, "pad": pad})).await.unwrap();
            }
        }));
    }
    for t in tasks {
        within(10, t).await.unwrap();
    }
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    let mut count = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["t"].is_u64());
        count += 1;
    }
    assert_eq!(count, 400);
}

#[tokio::test]
async fn close_is_idempotent_and_later_sends_fail() {
    let (tx, _rx) = tokio::io::duplex(1024);
    let w = LineWriter::new(tx);
    assert!(!w.is_closed());
    w.close().await.unwrap();
    w.close().await.unwrap();
    assert!(w.is_closed());
    assert!(matches!(w.send(&json!({})).await, Err(Error::Closed)));
    assert!(matches!(w.send_raw(b"{}").await, Err(Error::Closed)));
}

#[tokio::test]
async fn a_vanished_reader_is_an_io_error_then_closed() {
    let (tx, rx) = tokio::io::duplex(1024);
    drop(rx);
    let w = LineWriter::new(tx);
    match w.send(&json!({"a": 1})).await {
        Err(Error::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe),
        other => panic!("{other:?}"),
    }
    assert!(w.is_closed());
    assert!(matches!(w.send(&json!({"a": 2})).await, Err(Error::Closed)));
}
