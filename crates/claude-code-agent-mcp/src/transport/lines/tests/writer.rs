//! The writer over in-memory pipes: compact lines, cancelled and
//! concurrent sends, a full buffer, closing, a vanished reader, queued
//! frames.

use super::*;

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
    w.send_raw(b"{\"raw\":1}\n").await.unwrap();
    assert!(matches!(
        w.send_raw(b"{\"a\":\n1}").await,
        Err(SendError::Invalid(_))
    ));
    let bad: HashMap<(i32, i32), i32> = HashMap::from([((1, 2), 3)]);
    assert!(matches!(w.send(&bad).await, Err(SendError::Serialize(_))));
    w.send(&json!({"type": "keep_alive"})).await.unwrap();
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"type\":\"user\",\"text\":\"two\\nlines\",\"n\":[1,2]}\n{\"raw\":1}\n{\"type\":\"keep_alive\"}\n"
    );
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
    assert_eq!(serde_json::from_str::<Value>(lines[0]).unwrap(), big);
    assert_eq!(lines[1], "{\"small\":true}");
}

/// Counts the writes a pipe sees.
struct Counting {
    inner: DuplexStream,
    writes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl tokio::io::AsyncWrite for Counting {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if r.is_ready() {
            self.writes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_senders_never_interleave_and_share_writes() {
    let (tx, rx) = tokio::io::duplex(1 << 20);
    let writes = std::sync::Arc::default();
    let w = LineWriter::new(Counting {
        inner: tx,
        writes: std::sync::Arc::clone(&writes),
    });
    let reader = tokio::spawn(read_all(rx));
    let mut tasks = Vec::new();
    for t in 0..16 {
        let w = w.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..200 {
                let pad = "x".repeat((t * 1000 + i * 13) % 3000);
                w.send(&json!({"t": t, "i": i, "pad": pad})).await.unwrap();
            }
        }));
    }
    for t in tasks {
        within(20, t).await.unwrap();
    }
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    let mut next = [0; 16];
    for line in String::from_utf8(out).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let t = v["t"].as_u64().unwrap() as usize;
        assert_eq!(v["i"], next[t], "one sender's frames stay in order");
        next[t] += 1;
    }
    assert_eq!(next, [200; 16]);
    let writes = writes.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("writer: 3200 frames from 16 tasks in {writes} writes");
    assert!(writes <= 3200, "{writes}");
}

#[tokio::test]
async fn a_full_buffer_makes_senders_wait_and_try_send_refuse() {
    let (tx, rx) = tokio::io::duplex(1024);
    let w = LineWriter::with_limit(tx, 4096);
    // Nobody reads: the first send writes 1 KiB and blocks holding the pipe.
    let first = tokio::spawn({
        let w = w.clone();
        async move { w.send(&json!({"pad": "a".repeat(2000)})).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut queued = 0;
    while w.try_send(&json!({"pad": "b".repeat(1000)})).is_ok() {
        queued += 1;
        assert!(queued < 10);
    }
    assert!(matches!(
        w.try_send(&json!({"refused": 1})),
        Err(SendError::Full)
    ));
    let blocked = tokio::time::timeout(Duration::from_millis(50), w.send(&json!({"c": 1}))).await;
    assert!(blocked.is_err(), "a sender waits while the buffer is full");
    let reader = tokio::spawn(read_all(rx));
    within(5, first).await.unwrap().unwrap();
    w.send(&json!({"c": 2})).await.unwrap();
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1 + queued + 1);
    assert_eq!(lines.last().unwrap(), &json!({"c": 2}));
    assert!(
        lines.iter().all(|l| l.get("refused").is_none()),
        "a refused frame is gone"
    );
}

#[tokio::test]
async fn try_send_writes_in_the_background() {
    let (tx, rx) = tokio::io::duplex(1 << 16);
    let w = LineWriter::new(tx);
    let reader = tokio::spawn(read_all(rx));
    for i in 0..10 {
        w.try_send(&json!({"i": i})).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    w.close().await.unwrap();
    let out = within(5, reader).await.unwrap();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 10);
}

#[tokio::test]
async fn close_is_idempotent_and_later_sends_fail() {
    let (tx, _rx) = tokio::io::duplex(1024);
    let w = LineWriter::new(tx);
    assert!(!w.is_closed());
    w.close().await.unwrap();
    w.close().await.unwrap();
    assert!(w.is_closed());
    assert!(matches!(w.send(&json!({})).await, Err(SendError::Closed)));
    assert!(matches!(w.try_send(&json!({})), Err(SendError::Closed)));
}

#[tokio::test]
async fn a_vanished_reader_is_an_io_error_then_closed() {
    let (tx, rx) = tokio::io::duplex(1024);
    drop(rx);
    let w = LineWriter::new(tx);
    match w.send(&json!({"a": 1})).await {
        Err(SendError::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
        other => panic!("{other:?}"),
    }
    assert!(w.is_closed());
    assert!(matches!(
        w.send(&json!({"a": 2})).await,
        Err(SendError::Closed)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_frames_wait_for_a_flush_and_go_out_together_in_order() {
    let (tx, mut rx) = tokio::io::duplex(1 << 20);
    let writes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let w = LineWriter::with_limit(
        Counting {
            inner: tx,
            writes: std::sync::Arc::clone(&writes),
        },
        1024,
    );
    let count = || writes.load(std::sync::atomic::Ordering::Relaxed);
    for i in 0..3 {
        w.queue(&json!({"i": i})).unwrap();
    }
    assert_eq!(count(), 0, "queue never writes");
    let mut buf = [0u8; 64];
    let nothing = tokio::time::timeout(Duration::from_millis(50), rx.read(&mut buf)).await;
    assert!(
        nothing.is_err(),
        "nothing reached the pipe before the flush"
    );
    w.flush_queued();
    assert_eq!(count(), 1, "three queued frames, one write, done inline");
    w.flush_queued();
    assert_eq!(count(), 1, "nothing left to flush");
    // A send writes what was queued before it, first.
    w.queue(&json!({"i": 3})).unwrap();
    w.send(&json!({"i": 4})).await.unwrap();
    assert_eq!(count(), 2);
    // Full: refused, nothing queued; a send waits instead.
    w.queue(&json!({"pad": "x".repeat(2000)})).unwrap();
    assert!(matches!(w.queue(&json!({"i": 5})), Err(SendError::Full)));
    w.flush_queued();
    w.close().await.unwrap();
    assert!(matches!(w.queue(&json!({"i": 6})), Err(SendError::Closed)));
    let out = within(5, read_all(rx)).await;
    let got: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 6, "{got:?}");
    for (i, v) in got.iter().take(5).enumerate() {
        assert_eq!(v["i"], i, "{got:?}");
    }
    assert_eq!(got[5]["pad"].as_str().map(str::len), Some(2000));
}
