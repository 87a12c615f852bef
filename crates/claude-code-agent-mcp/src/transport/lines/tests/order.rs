//! The order a peer observes: an answer is never written with the notices
//! of its key before it, and waits for the peer to have read them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::*;

async fn read_all(mut rx: DuplexStream) -> Vec<u8> {
    let mut out = Vec::new();
    rx.read_to_end(&mut out).await.unwrap();
    out
}

/// Records every write as it reached the pipe.
struct Recording {
    inner: DuplexStream,
    writes: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl tokio::io::AsyncWrite for Recording {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.writes.lock().unwrap().push(buf[..n].to_vec());
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

type Writes = Arc<Mutex<Vec<Vec<u8>>>>;

fn recording(probe: Option<UnreadProbe>) -> (LineWriter<Recording>, DuplexStream, Writes) {
    let (tx, rx) = tokio::io::duplex(1 << 16);
    let writes = Writes::default();
    let w = LineWriter::with_unread_probe(
        Recording {
            inner: tx,
            writes: Arc::clone(&writes),
        },
        DEFAULT_WRITE_BUFFER_BYTES,
        probe,
    );
    (w, rx, writes)
}

/// The writes, each as the `n` of the frames it held.
fn frames(writes: &Writes) -> Vec<Vec<u64>> {
    writes
        .lock()
        .unwrap()
        .iter()
        .map(|w| {
            String::from_utf8_lossy(w)
                .lines()
                .map(|l| {
                    serde_json::from_str::<Value>(l).unwrap()["n"]
                        .as_u64()
                        .unwrap()
                })
                .collect()
        })
        .collect()
}

/// Queues `(n, order)` frames while a background write is pending (the
/// first `try_send` spawns it; this single-threaded runtime runs it only
/// once the test yields), so without marks they would all share a write.
async fn send_together(w: &LineWriter<Recording>, frames: &[(u64, Order)]) {
    for &(n, order) in frames {
        w.try_send_ordered(&json!({"n": n}), order).unwrap();
    }
    w.send(&json!({"n": 99})).await.unwrap();
}

#[tokio::test]
async fn an_answer_is_not_written_with_the_notices_of_its_key() {
    let (w, rx, writes) = recording(None);
    let reader = tokio::spawn(read_all(rx));
    send_together(
        &w,
        &[
            (1, Order::Notice(7)),
            (2, Order::Notice(8)),
            (3, Order::Answer(7)),
            (4, Order::Any),
            (5, Order::Notice(7)),
            (6, Order::Answer(8)),
            (7, Order::Answer(7)),
        ],
    )
    .await;
    // Nothing to wait for: the first write drains everything.
    tokio::task::yield_now().await;
    w.close().await.unwrap();
    within(5, reader).await.unwrap();
    // The answer of 7 waits for notices 7 and 8; after that mark only
    // notice 5 (key 7) is pending, so answer 8 batches, answer 7 does not.
    assert_eq!(
        frames(&writes),
        vec![vec![1, 2], vec![3, 4, 5, 6], vec![7, 99]]
    );
}

#[tokio::test]
async fn other_keys_and_plain_frames_still_share_a_write() {
    let (w, rx, writes) = recording(None);
    let reader = tokio::spawn(read_all(rx));
    send_together(
        &w,
        &[
            (1, Order::Notice(1)),
            (2, Order::Answer(2)),
            (3, Order::Any),
        ],
    )
    .await;
    w.close().await.unwrap();
    within(5, reader).await.unwrap();
    assert_eq!(frames(&writes), vec![vec![1, 2, 3, 99]]);
}

#[tokio::test]
async fn an_answer_to_a_batch_is_kept_from_every_notice_before_it() {
    let (w, rx, writes) = recording(None);
    let reader = tokio::spawn(read_all(rx));
    send_together(&w, &[(1, Order::Notice(1)), (2, Order::AnswerAll)]).await;
    w.close().await.unwrap();
    within(5, reader).await.unwrap();
    assert_eq!(frames(&writes), vec![vec![1], vec![2, 99]]);
}

#[tokio::test]
async fn a_notice_written_earlier_still_holds_its_answer_apart() {
    let unread = Arc::new(AtomicUsize::new(0));
    let probe: UnreadProbe = Box::new({
        let unread = Arc::clone(&unread);
        move || Some(unread.load(Ordering::SeqCst))
    });
    let (w, rx, writes) = recording(Some(probe));
    let reader = tokio::spawn(read_all(rx));
    w.send_ordered(&json!({"n": 1}), Order::Notice(3))
        .await
        .unwrap();
    // The peer has not read it: the answer waits.
    unread.store(10, Ordering::SeqCst);
    let answer = tokio::spawn({
        let w = w.clone();
        async move { w.send_ordered(&json!({"n": 2}), Order::Answer(3)).await }
    });
    let asked = Instant::now();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let seen = frames(&writes);
    if asked.elapsed() < SETTLE_CAP / 2 {
        assert_eq!(seen, vec![vec![1]], "the answer waited");
    }
    unread.store(0, Ordering::SeqCst);
    within(5, answer).await.unwrap().unwrap();
    assert_eq!(frames(&writes), vec![vec![1], vec![2]]);
    w.close().await.unwrap();
    within(5, reader).await.unwrap();
}

#[tokio::test]
async fn an_answer_waits_for_a_peer_that_does_not_read_only_so_long() {
    let probe: UnreadProbe = Box::new(|| Some(1));
    let (w, rx, writes) = recording(Some(probe));
    let reader = tokio::spawn(read_all(rx));
    w.send_ordered(&json!({"n": 1}), Order::Notice(3))
        .await
        .unwrap();
    let start = Instant::now();
    w.send_ordered(&json!({"n": 2}), Order::Answer(3))
        .await
        .unwrap();
    let waited = start.elapsed();
    assert!(
        waited >= SETTLE_CAP && waited < SETTLE_CAP + Duration::from_secs(2),
        "{waited:?}"
    );
    assert_eq!(frames(&writes), vec![vec![1], vec![2]]);
    // The mark is spent: the next answer of that key goes at once.
    let start = Instant::now();
    w.send_ordered(&json!({"n": 3}), Order::Answer(3))
        .await
        .unwrap();
    assert!(start.elapsed() < SETTLE_CAP, "{:?}", start.elapsed());
    w.close().await.unwrap();
    within(5, reader).await.unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn the_probe_sees_what_a_pipe_or_socket_peer_has_not_read() {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    let (mut rx, mut tx) = std::io::pipe().unwrap();
    let probe = unread_probe(tx.as_raw_fd()).expect("a pipe can be probed");
    assert_eq!(probe(), Some(0));
    tx.write_all(b"hello\n").unwrap();
    assert_eq!(probe(), Some(6));
    rx.read_exact(&mut [0; 6]).unwrap();
    assert_eq!(probe(), Some(0));

    let (mut a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    let probe = unread_probe(a.as_raw_fd()).expect("a socket can be probed");
    assert_eq!(probe(), Some(0));
    a.write_all(b"hello\n").unwrap();
    assert!(probe().unwrap() > 0);
    b.read_exact(&mut [0; 6]).unwrap();
    assert_eq!(probe(), Some(0));

    let file = std::fs::File::open("/proc/self/status").unwrap();
    assert!(unread_probe(file.as_raw_fd()).is_none(), "a file is not");
}
