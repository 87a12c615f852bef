//! Real child processes: framing through pipes, stderr, signals, shutdown,
//! and that nothing is left behind on any path.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::{TempDir, assert_all_gone, py, sh, within};
use crate::error::Error;
use crate::transport::{Process, ShutdownTimeouts, SpawnConfig, spawn};

const QUICK: ShutdownTimeouts = ShutdownTimeouts {
    after_stdin_close: Duration::from_millis(300),
    after_sigterm: Duration::from_millis(300),
};

async fn next(p: &mut Process) -> Option<Value> {
    within(60, p.reader.next_line()).await.map(|r| r.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_64_mib_both_ways() {
    let mut p = spawn(py(
        "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n    sys.stdout.buffer.flush()",
    ))
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
    let status = within(10, p.child.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(0));
    assert_all_gone(p.child.pid(), &[]);
}

#[tokio::test]
async fn hundred_mib_line_from_the_cli() {
    let mut p = spawn(py(
        "import sys\nw = sys.stdout.buffer\nw.write(b'{\"a\":\"' + b'x' * (100 << 20) + b'\"}\\n{\"after\":1}\\n')\nw.flush()",
    ))
    .unwrap();
    let t = Instant::now();
    let v = next(&mut p).await.unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "process: 100 MiB line read in {:.0} ms ({:.0} MiB/s)",
        secs * 1000.0,
        100.0 / secs
    );
    assert_eq!(v["a"].as_str().unwrap().len(), 100 << 20);
    assert_eq!(next(&mut p).await.unwrap(), json!({"after": 1}));
    assert!(next(&mut p).await.is_none());
    assert_eq!(within(10, p.child.wait()).await.code(), Some(0));
}

#[tokio::test]
async fn over_cap_line_then_a_normal_line_from_the_cli() {
    let mut cfg = py(
        "import sys\nw = sys.stdout.buffer\nw.write(b'{\"a\":\"' + b'x' * (8 << 20) + b'\"}\\n{\"next\":1}\\n')\nw.flush()",
    );
    cfg.max_line_bytes = 1 << 20;
    let mut p = spawn(cfg).unwrap();
    match within(30, p.reader.next_line()).await {
        Some(Err(Error::LineTooLong { limit })) => assert_eq!(limit, 1 << 20),
        other => panic!("{other:?}"),
    }
    assert_eq!(next(&mut p).await.unwrap(), json!({"next": 1}));
    assert!(next(&mut p).await.is_none());
}

#[tokio::test]
async fn garbage_from_the_cli_is_skipped() {
    let mut p = spawn(py(concat!(
        "import sys\nw = sys.stdout.buffer\n",
        "w.write(b'[SandboxDebug] hello\\n\\xff\\xfe\\x00 bin\\n{\"truncated\": \\n\\r\\n\\n')\n",
        "w.write(b'{\"ok\":1}\\r\\n{\"bad\":\"\\xff\"}\\n{\"ok\":2}')\n",
    )))
    .unwrap();
    assert_eq!(next(&mut p).await.unwrap(), json!({"ok": 1}));
    assert_eq!(next(&mut p).await.unwrap(), json!({"ok": 2}));
    assert!(next(&mut p).await.is_none());
}

#[tokio::test]
async fn cli_closing_stdin_early_gives_errors_not_a_crash() {
    let mut p = spawn(py(
        "import os, time\nos.close(0)\nprint('{\"closed\":true}', flush=True)\ntime.sleep(60)",
    ))
    .unwrap();
    assert_eq!(next(&mut p).await.unwrap(), json!({"closed": true}));
    // EPIPE, not SIGPIPE: this process survives and gets an error.
    match p.writer.send(&json!({"type": "user"})).await {
        Err(Error::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        p.writer.send(&json!({})).await,
        Err(Error::Closed)
    ));
    let status = within(10, p.child.shutdown(QUICK)).await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM)
    );
    assert_all_gone(p.child.pid(), &[]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_flood_does_not_block_and_stays_bounded() {
    let lines = Arc::new(AtomicUsize::new(0));
    let longest = Arc::new(AtomicUsize::new(0));
    let mut cfg = py(concat!(
        "import sys\ne = sys.stderr.buffer\n",
        "chunk = (b'e' * 999 + b'\\n') * 1000\n",
        "for i in range(50): e.write(chunk)\n",
        "e.write(b'L' * (5 << 20) + b'\\n')\n", // one 5 MiB line
        "for i in range(50): e.write(chunk)\n",
        "e.write(b'the end\\n'); e.flush()\n",
        "print('{\"done\":true}', flush=True)\n",
    ));
    let (l, m) = (Arc::clone(&lines), Arc::clone(&longest));
    cfg.stderr_callback = Some(Arc::new(move |line: &str| {
        l.fetch_add(1, Ordering::Relaxed);
        m.fetch_max(line.len(), Ordering::Relaxed);
    }));
    cfg.stderr_tail_bytes = 4096;
    let mut p = spawn(cfg).unwrap();
    assert_eq!(next(&mut p).await.unwrap(), json!({"done": true}));
    assert!(next(&mut p).await.is_none());
    let status = within(30, p.child.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(0));
    // 100 000 lines of 999, the 5 MiB line in 80 pieces of 64 KiB, "the end".
    assert_eq!(lines.load(Ordering::Relaxed), 100_000 + 80 + 1);
    assert_eq!(longest.load(Ordering::Relaxed), 64 * 1024);
    let tail = p.child.stderr_tail();
    assert!(tail.len() <= 4096, "{}", tail.len());
    assert!(tail.ends_with("\nthe end"), "{tail}");
}

#[tokio::test]
async fn a_panicking_stderr_callback_does_not_stop_the_draining() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s = Arc::clone(&seen);
    let mut cfg = sh("for i in 1 2 3; do echo err$i >&2; done; echo '{\"ok\":1}'");
    cfg.stderr_callback = Some(Arc::new(move |line: &str| {
        s.fetch_add(1, Ordering::Relaxed);
        assert_ne!(line, "err2", "user bug");
    }));
    let mut p = spawn(cfg).unwrap();
    assert_eq!(next(&mut p).await.unwrap(), json!({"ok": 1}));
    within(10, p.child.shutdown(QUICK)).await;
    assert_eq!(seen.load(Ordering::Relaxed), 3);
    assert_eq!(p.child.stderr_tail(), "err1\nerr2\nerr3");
}

#[tokio::test]
async fn killed_by_a_signal_mid_stream() {
    let mut p = spawn(py(
        "import time\ni = 0\nwhile True:\n    print('{\"i\":%d}' % i, flush=True)\n    i += 1\n    time.sleep(0.01)",
    ))
    .unwrap();
    for i in 0..3 {
        assert_eq!(next(&mut p).await.unwrap(), json!({"i": i}));
    }
    // SAFETY: a plain syscall on our own child.
    unsafe { libc::kill(p.child.pid() as i32, libc::SIGKILL) };
    while next(&mut p).await.is_some() {}
    let status = within(10, p.child.wait()).await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    match p.child.exit_error(Duration::from_secs(1)).await {
        Error::CliExited { code, signal, .. } => {
            assert_eq!((code, signal), (None, Some(libc::SIGKILL)));
        }
        other => panic!("{other:?}"),
    }
    assert_all_gone(p.child.pid(), &[]);
}

#[tokio::test]
async fn exit_error_carries_code_and_stderr() {
    let mut p = spawn(sh("echo 'Error: bad flag --nope' >&2; exit 1")).unwrap();
    assert!(next(&mut p).await.is_none());
    match p.child.exit_error(Duration::from_secs(5)).await {
        Error::CliExited {
            code,
            signal,
            stderr_tail,
        } => {
            assert_eq!((code, signal), (Some(1), None));
            assert_eq!(stderr_tail, "Error: bad flag --nope");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn graceful_shutdown_returns_the_exit_code() {
    let mut p = spawn(py("import sys\nsys.stdin.buffer.read()\nsys.exit(3)")).unwrap();
    p.writer.send(&json!({"type": "user"})).await.unwrap();
    let t = Instant::now();
    let status = within(10, p.child.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(3));
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    // Again: same status at once.
    assert_eq!(
        p.child.shutdown(ShutdownTimeouts::default()).await.code(),
        Some(3)
    );
    assert!(next(&mut p).await.is_none());
    assert_all_gone(p.child.pid(), &[]);
}

#[tokio::test]
async fn sigterm_ignored_means_sigkill_for_the_whole_group() {
    let mut p = spawn(sh(
        "trap '' TERM; sleep 1000 & echo \"{\\\"gc\\\":$!}\"; while :; do sleep 0.05; done",
    ))
    .unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    let t = Instant::now();
    let status = within(10, p.child.shutdown(QUICK)).await;
    let took = t.elapsed();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    assert!(took >= Duration::from_millis(550), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_all_gone(p.child.pid(), &[gc]);
    // The grandchild held stdout open; now it is gone, the reader ends.
    assert!(next(&mut p).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_is_bounded_while_a_send_is_stuck_on_a_full_pipe() {
    // Never reads stdin: a 4 MiB frame fills the pipe and the send blocks
    // holding the writer's lock.
    let mut p = spawn(py("import time\nprint('{}', flush=True)\ntime.sleep(60)")).unwrap();
    next(&mut p).await.unwrap();
    let writer = p.writer.clone();
    let stuck =
        tokio::spawn(async move { writer.send(&json!({"big": "b".repeat(4 << 20)})).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!stuck.is_finished());
    let t = Instant::now();
    let status = within(10, p.child.shutdown(QUICK)).await;
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM)
    );
    // The blocked send ends with an error once the CLI is gone.
    assert!(matches!(
        within(10, stuck).await.unwrap(),
        Err(Error::Io(_))
    ));
    assert_all_gone(p.child.pid(), &[]);
}

#[tokio::test]
async fn stragglers_are_killed_after_a_normal_exit() {
    // The leader exits 0 when stdin closes, but leaves a grandchild behind.
    let mut p = spawn(sh(
        "sleep 1000 & echo \"{\\\"gc\\\":$!}\"; cat >/dev/null; exit 0",
    ))
    .unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    assert!(super::support::is_running(gc));
    let status = within(10, p.child.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(0));
    assert_all_gone(p.child.pid(), &[gc]);
    assert!(next(&mut p).await.is_none());
}

/// A CLI with a grandchild that keeps printing.
fn chatty() -> SpawnConfig {
    sh(
        "sleep 1000 & echo \"{\\\"gc\\\":$!}\"; i=0; while :; do echo \"{\\\"i\\\":$i}\"; i=$((i+1)); sleep 0.01; done",
    )
}

#[tokio::test]
async fn drop_mid_stream_leaves_nothing() {
    let mut p = spawn(chatty()).unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    for _ in 0..3 {
        next(&mut p).await.unwrap();
    }
    let pid = p.child.pid();
    drop(p);
    assert_all_gone(pid, &[gc]);
}

#[tokio::test]
async fn drop_of_the_child_alone_ends_the_reader() {
    let Process {
        mut reader, child, ..
    } = spawn(chatty()).unwrap();
    let gc = within(10, reader.next_line()).await.unwrap().unwrap()["gc"]
        .as_i64()
        .unwrap() as i32;
    let pid = child.pid();
    drop(child);
    within(10, async { while reader.next_line().await.is_some() {} }).await;
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
        let mut p = spawn(chatty()).unwrap();
        let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
        (p, gc)
    });
    drop(rt);
    let pid = p.child.pid();
    drop(p); // no runtime here
    assert_all_gone(pid, &[gc]);
}

#[tokio::test]
async fn panic_in_user_code_kills_the_cli() {
    let mut p = spawn(chatty()).unwrap();
    let gc = next(&mut p).await.unwrap()["gc"].as_i64().unwrap() as i32;
    let pid = p.child.pid();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _owned = p;
        panic!("a bug in user code");
    }));
    assert!(r.is_err());
    assert_all_gone(pid, &[gc]);
}

#[tokio::test]
async fn env_and_cwd_are_applied() {
    let dir = TempDir::new("cwd");
    let mut cfg = py(
        "import os, json\nprint(json.dumps({'set': os.environ.get('CA_TRANSPORT_TEST'), 'home': 'HOME' in os.environ, 'cwd': os.getcwd()}))",
    );
    cfg.env = vec![("CA_TRANSPORT_TEST".into(), "yes".into())];
    cfg.env_remove = vec!["HOME".into(), "CA_TRANSPORT_TEST".into()];
    cfg.cwd = Some(dir.path().to_path_buf());
    let mut p = spawn(cfg).unwrap();
    let v = next(&mut p).await.unwrap();
    assert_eq!(v["set"], "yes");
    assert_eq!(v["home"], false);
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(v["cwd"], cwd.to_str().unwrap());
    within(10, p.child.shutdown(QUICK)).await;
}

#[tokio::test]
async fn spawn_errors_name_the_program() {
    let dir = TempDir::new("spawn-err");
    let missing = dir.path().join("no-such-cli");
    let not_exec = dir.file("not-exec", "#!/bin/sh\n", 0o644);
    for program in [missing, not_exec] {
        match spawn(SpawnConfig::new(&program)) {
            Err(e @ Error::Spawn { .. }) => {
                assert!(
                    e.to_string().contains(&program.display().to_string()),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    let mut cfg = sh("exit 0");
    cfg.cwd = Some(dir.path().join("no-such-dir"));
    match spawn(cfg) {
        Err(e @ Error::Spawn { .. }) => assert!(e.to_string().contains("no-such-dir"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn spawn_outside_a_runtime_is_an_error() {
    assert!(matches!(spawn(sh("exit 0")), Err(Error::Spawn { .. })));
}

/// The real CLI, if installed: initialize round trip, then a graceful end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_cli_initialize_and_graceful_shutdown() {
    let Ok(cli) = crate::transport::find_cli(None) else {
        eprintln!("skipped: no Claude Code CLI installed");
        return;
    };
    let config_dir = TempDir::new("real-cli");
    let mut cfg = SpawnConfig::new(cli);
    cfg.args = [
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
    ]
    .map(Into::into)
    .to_vec();
    cfg.env = [
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
    ]
    .map(|(k, v)| (k.into(), v.into()))
    .to_vec();
    cfg.env
        .push(("CLAUDE_CONFIG_DIR".into(), config_dir.path().into()));
    cfg.env_remove = vec!["CLAUDECODE".into()];
    cfg.cwd = Some(config_dir.path().to_path_buf());
    let mut p = spawn(cfg).unwrap();
    p.writer
        .send(&json!({"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize"}}))
        .await
        .unwrap();
    let resp = loop {
        let v = next(&mut p).await.expect("the CLI answers initialize");
        if v["type"] == "control_response" {
            break v;
        }
    };
    assert_eq!(resp["response"]["request_id"], "req_1");
    assert_eq!(resp["response"]["subtype"], "success");
    let status = within(20, p.child.shutdown(ShutdownTimeouts::default())).await;
    assert_eq!(status.code(), Some(0), "stderr: {}", p.child.stderr_tail());
    assert_all_gone(p.child.pid(), &[]);
}
