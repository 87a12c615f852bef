//! Real child processes (small shell and Python programs): framing through
//! pipes, stderr, signals, shutdown, and that nothing is left behind on
//! any path.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use std::os::unix::process::ExitStatusExt;

use super::*;
use crate::transport::lines::{Line, SendError};

const QUICK: ShutdownTimeouts = ShutdownTimeouts::both(Duration::from_millis(300));

/// The real Python interpreter (not a pyenv shim, which is a shell script).
fn python() -> &'static std::path::Path {
    static PY: OnceLock<std::path::PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 is needed by these tests");
        String::from_utf8(out.stdout).unwrap().trim().into()
    })
}

fn py(code: &str) -> StdioOptions {
    StdioOptions::new(python()).arg("-c").arg(code)
}

fn sh(script: &str) -> StdioOptions {
    StdioOptions::new("/bin/sh").arg("-c").arg(script)
}

async fn within<F: Future>(secs: u64, fut: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(secs), fut)
        .await
        .unwrap_or_else(|_| panic!("timed out after {secs} s"))
}

/// The next JSON line from the child; `None` at its end.
async fn next(p: &mut Process) -> Option<Value> {
    match within(60, p.reader.next_line()).await.unwrap()? {
        Line::Text(line) => Some(serde_json::from_slice(line).unwrap()),
        other => panic!("{other:?}"),
    }
}

fn is_running(pid: i32) -> bool {
    proc_stat(pid).is_some_and(|s| !s.is_dead())
}

/// Waits (blocking, up to 5 s) until the group led by `pgid` has no
/// running member and its leader has been reaped; panics otherwise.
fn assert_all_gone(pgid: u32, others: &[i32]) {
    let pgid = pgid as i32;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let group_live = group_has_live_members(pgid);
        let others_live = others.iter().any(|&p| is_running(p));
        let leader_unreaped = proc_stat(pgid).is_some_and(|s| s.ppid == std::process::id() as i32)
            || is_running(pgid);
        if !group_live && !others_live && !leader_unreaped {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "leftovers: group live {group_live}, others live {others_live}, leader unreaped {leader_unreaped}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal_of(status: ExitStatus) -> Option<i32> {
    status.signal()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_64_mib_both_ways() {
    let mut p = spawn(
        &py("import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n    sys.stdout.buffer.flush()")
            .max_line_bytes(256 << 20),
    )
    .unwrap();
    let big = json!({"type": "user", "data": "d".repeat(64 << 20)});
    let writer = p.writer.clone();
    let send = tokio::spawn(async move {
        writer.send(&big).await.unwrap();
        writer.send(&json!({"type": "after"})).await.unwrap();
        writer.close().await.unwrap();
    });
    let t = Instant::now();
    let back = next(&mut p).await.unwrap();
    eprintln!(
        "process: 64 MiB line echoed in {:.0} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    assert_eq!(back["data"].as_str().unwrap().len(), 64 << 20);
    assert_eq!(next(&mut p).await.unwrap(), json!({"type": "after"}));
    assert!(next(&mut p).await.is_none());
    within(10, send).await.unwrap();
    let status = within(10, p.group.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(0));
    assert_all_gone(p.group.pid(), &[]);
}

#[tokio::test]
async fn closing_stdin_early_gives_errors_not_a_crash() {
    let mut p = spawn(&py(
        "import os, time\nos.close(0)\nprint('{\"closed\":true}', flush=True)\ntime.sleep(60)",
    ))
    .unwrap();
    assert_eq!(next(&mut p).await.unwrap(), json!({"closed": true}));
    // EPIPE, not SIGPIPE: this process survives and gets an error.
    match p.writer.send(&json!({"type": "user"})).await {
        Err(SendError::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        p.writer.send(&json!({})).await,
        Err(SendError::Closed)
    ));
    let status = within(10, p.group.shutdown(QUICK)).await;
    assert_eq!(signal_of(status), Some(libc::SIGTERM));
    assert_all_gone(p.group.pid(), &[]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_flood_does_not_block_and_stays_bounded() {
    let lines = Arc::new(AtomicUsize::new(0));
    let longest = Arc::new(AtomicUsize::new(0));
    let (l, m) = (Arc::clone(&lines), Arc::clone(&longest));
    let options = py(concat!(
        "import sys\ne = sys.stderr.buffer\n",
        "chunk = (b'e' * 999 + b'\\n') * 1000\n",
        "for i in range(50): e.write(chunk)\n",
        "e.write(b'L' * (5 << 20) + b'\\n')\n", // one 5 MiB line
        "for i in range(50): e.write(chunk)\n",
        "e.write(b'the end\\n'); e.flush()\n",
        "print('{\"done\":true}', flush=True)\n",
    ))
    .on_stderr(move |line: &str| {
        l.fetch_add(1, Ordering::Relaxed);
        m.fetch_max(line.len(), Ordering::Relaxed);
    })
    .stderr_tail_bytes(4096);
    let mut p = spawn(&options).unwrap();
    assert_eq!(next(&mut p).await.unwrap(), json!({"done": true}));
    assert!(next(&mut p).await.is_none());
    let status = within(30, p.group.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(0));
    // 100 000 lines of 999, the 5 MiB line in 80 pieces of 64 KiB, "the end".
    assert_eq!(lines.load(Ordering::Relaxed), 100_000 + 80 + 1);
    assert_eq!(longest.load(Ordering::Relaxed), 64 * 1024);
    let tail = p.group.stderr_tail();
    assert!(tail.len() <= 4096, "{}", tail.len());
    assert!(tail.ends_with("\nthe end"), "{tail}");
}

#[tokio::test]
async fn a_panicking_stderr_callback_does_not_stop_the_draining() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s = Arc::clone(&seen);
    let options = sh("for i in 1 2 3; do echo err$i >&2; done; echo '{\"ok\":1}'").on_stderr(
        move |line: &str| {
            s.fetch_add(1, Ordering::Relaxed);
            assert_ne!(line, "err2", "user bug");
        },
    );
    let mut p = spawn(&options).unwrap();
    assert_eq!(next(&mut p).await.unwrap(), json!({"ok": 1}));
    within(10, p.group.shutdown(QUICK)).await;
    assert_eq!(seen.load(Ordering::Relaxed), 3);
    assert_eq!(p.group.stderr_tail(), "err1\nerr2\nerr3");
}

#[tokio::test]
async fn killed_by_a_signal_mid_stream() {
    let mut p = spawn(&py(
        "import time\ni = 0\nwhile True:\n    print('{\"i\":%d}' % i, flush=True)\n    i += 1\n    time.sleep(0.01)",
    ))
    .unwrap();
    for i in 0..3 {
        assert_eq!(next(&mut p).await.unwrap(), json!({"i": i}));
    }
    // SAFETY: a plain syscall on our own child.
    unsafe { libc::kill(p.group.pid() as i32, libc::SIGKILL) };
    while next(&mut p).await.is_some() {}
    let status = within(10, p.group.wait()).await;
    assert_eq!(signal_of(status), Some(libc::SIGKILL));
    assert_all_gone(p.group.pid(), &[]);
}

#[tokio::test]
async fn graceful_shutdown_returns_the_exit_code() {
    let mut p = spawn(&py("import sys\nsys.stdin.buffer.read()\nsys.exit(3)")).unwrap();
    p.writer.send(&json!({"type": "user"})).await.unwrap();
    let t = Instant::now();
    let status = within(10, p.group.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(3));
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    // Again: same status at once.
    assert_eq!(
        p.group.shutdown(ShutdownTimeouts::default()).await.code(),
        Some(3)
    );
    assert!(next(&mut p).await.is_none());
    assert_all_gone(p.group.pid(), &[]);
}

#[tokio::test]
async fn sigterm_ignored_means_sigkill_for_the_whole_group() {
    let mut p = spawn(&sh(
        "trap '' TERM; sleep 1000 & echo \"{\\\"gc\\\":$!}\"; while :; do sleep 0.05; done",
    ))
    .unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    let t = Instant::now();
    let status = within(10, p.group.shutdown(QUICK)).await;
    let took = t.elapsed();
    assert_eq!(signal_of(status), Some(libc::SIGKILL));
    assert!(took >= Duration::from_millis(550), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_all_gone(p.group.pid(), &[gc]);
    // The grandchild held stdout open; now it is gone, the reader ends.
    assert!(next(&mut p).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_is_bounded_while_a_send_is_stuck_on_a_full_pipe() {
    // Never reads stdin: a 4 MiB frame fills the pipe and the send blocks
    // holding the writer.
    let mut p = spawn(&py("import time\nprint('{}', flush=True)\ntime.sleep(60)")).unwrap();
    next(&mut p).await.unwrap();
    let writer = p.writer.clone();
    // Serialized here: the send must be writing when the shutdown starts.
    let big = serde_json::to_vec(&json!({"big": "b".repeat(4 << 20)})).unwrap();
    let stuck = tokio::spawn(async move { writer.send_raw(&big).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!stuck.is_finished());
    let t = Instant::now();
    let status = within(10, p.group.shutdown(QUICK)).await;
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(signal_of(status), Some(libc::SIGTERM));
    // The blocked send ends with an error once the child is gone.
    let sent = within(10, stuck).await.unwrap();
    assert!(matches!(sent, Err(SendError::Io(_))), "{sent:?}");
    assert_all_gone(p.group.pid(), &[]);
}

#[tokio::test]
async fn stragglers_are_ended_when_the_leader_exits() {
    // The leader exits 0 at once, but leaves a grandchild behind: the
    // reaper ends it, with or without a shutdown.
    let mut p = spawn(&sh("sleep 1000 & echo \"{\\\"gc\\\":$!}\"; exit 0")).unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    assert_eq!(within(10, p.group.wait()).await.code(), Some(0));
    within(10, p.group.wait_settled()).await;
    assert!(!is_running(gc));
    assert!(next(&mut p).await.is_none());
    assert_all_gone(p.group.pid(), &[gc]);
}

#[tokio::test]
async fn stderr_held_open_outside_the_group_stops_being_read() {
    // A helper that left the group keeps stderr open: the drain stops
    // shortly after the leader's exit anyway, with what was said.
    let mut p = spawn(&py(concat!(
        "import subprocess, sys\n",
        "h = subprocess.Popen(['sleep', '300'], start_new_session=True)\n",
        "sys.stderr.write('bye\\n'); sys.stderr.flush()\n",
        "print('{\"helper\":%d}' % h.pid, flush=True)\n",
    )))
    .unwrap();
    let helper = next(&mut p).await.unwrap()["helper"].as_i64().unwrap() as i32;
    within(10, p.group.wait()).await;
    assert!(p.group.stderr_finished(Duration::from_secs(3)).await);
    assert_eq!(p.group.stderr_tail(), "bye");
    assert!(is_running(helper));
    // SAFETY: a plain kill of the helper this test started.
    unsafe { libc::kill(helper, libc::SIGKILL) };
}

/// A child with a grandchild that keeps printing.
fn chatty() -> StdioOptions {
    sh(
        "sleep 1000 & echo \"{\\\"gc\\\":$!}\"; i=0; while :; do echo \"{\\\"i\\\":$i}\"; i=$((i+1)); sleep 0.01; done",
    )
}

#[tokio::test]
async fn drop_mid_stream_leaves_nothing() {
    let mut p = spawn(&chatty()).unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    for _ in 0..3 {
        next(&mut p).await.unwrap();
    }
    let pid = p.group.pid();
    drop(p);
    assert_all_gone(pid, &[gc]);
}

#[tokio::test]
async fn drop_of_the_group_alone_ends_the_reader() {
    let Process {
        mut reader, group, ..
    } = spawn(&chatty()).unwrap();
    let Some(Line::Text(first)) = within(10, reader.next_line()).await.unwrap() else {
        panic!()
    };
    let gc = serde_json::from_slice::<Value>(first).unwrap()["gc"]
        .as_i64()
        .unwrap() as i32;
    let pid = group.pid();
    drop(group);
    within(10, async {
        while reader.next_line().await.unwrap().is_some() {}
    })
    .await;
    assert_all_gone(pid, &[gc]);
}

#[test]
fn drop_after_the_runtime_is_gone() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (p, gc) = rt.block_on(async {
        let mut p = spawn(&chatty()).unwrap();
        let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
        (p, gc)
    });
    drop(rt);
    let pid = p.group.pid();
    drop(p); // no runtime here
    assert_all_gone(pid, &[gc]);
}

#[tokio::test]
async fn panic_in_user_code_kills_the_child() {
    let mut p = spawn(&chatty()).unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    let pid = p.group.pid();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _owned = p;
        panic!("a bug in user code");
    }));
    assert!(r.is_err());
    assert_all_gone(pid, &[gc]);
}

#[tokio::test]
async fn env_and_cwd_are_applied() {
    let dir = std::env::temp_dir().join(format!("mcp-process-cwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = py(
        "import os, json\nprint(json.dumps({'set': os.environ.get('MCP_PROCESS_TEST'), 'home': 'HOME' in os.environ, 'cwd': os.getcwd()}))",
    )
    .env_remove("HOME")
    .env_remove("MCP_PROCESS_TEST")
    .env("MCP_PROCESS_TEST", "yes")
    .cwd(&dir);
    let mut p = spawn(&options).unwrap();
    let v = next(&mut p).await.unwrap();
    assert_eq!(v["set"], "yes");
    assert_eq!(v["home"], false);
    let cwd = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(v["cwd"], cwd.to_str().unwrap());
    within(10, p.group.shutdown(QUICK)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn spawn_errors_say_what_is_wrong() {
    let e = spawn(&StdioOptions::new("/no/such/program")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    let e = spawn(&sh("exit 0").cwd("/no/such-dir")).unwrap_err();
    assert!(e.to_string().contains("no/such-dir"), "{e}");
}

#[test]
fn spawn_outside_a_runtime_is_an_error() {
    assert!(spawn(&sh("exit 0")).is_err());
}
