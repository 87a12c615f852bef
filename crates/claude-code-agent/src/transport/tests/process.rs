//! The CLI transport with real child processes: the mapping onto this
//! crate's terms (skipped lines, `Error::Io`, `Closed`, `CliExited`,
//! `Spawn`), the spawn configuration, and the real CLI. The
//! process hygiene itself is tested with the shared process group
//! (`claude_code_agent_mcp::__private::transport::process`).

use std::time::Duration;

use claude_code_agent_mcp::__private::transport::process::{group_has_live_members, proc_stat};
use serde_json::{Value, json};

use super::support::{TempDir, py, sh, within};
use crate::error::Error;
use crate::message::{SkipReason, SkippedLine};
use crate::transport::{Process, Read, ShutdownTimeouts, SpawnConfig, spawn};

const QUICK: ShutdownTimeouts = ShutdownTimeouts::both(Duration::from_millis(300));

async fn next(p: &mut Process) -> Option<Value> {
    match within(60, p.reader.next_line()).await? {
        Ok(Read::Value(value)) => Some(value),
        other => panic!("expected a value, got {other:?}"),
    }
}

/// The next item, which must be the report of a line that does not parse:
/// its excerpt.
async fn report(p: &mut Process) -> String {
    match within(60, p.reader.next_line()).await {
        Some(Ok(Read::Skipped(SkippedLine {
            reason: SkipReason::Invalid(_),
            excerpt,
            ..
        }))) => excerpt,
        other => panic!("expected the report of a skipped line, got {other:?}"),
    }
}

/// Waits (blocking, up to 5 s) until the group led by `pgid` has no running
/// member and its leader has been reaped; panics otherwise.
fn assert_all_gone(pgid: u32, others: &[i32]) {
    let pgid = pgid as i32;
    let running = |pid: i32| proc_stat(pid).is_some_and(|s| !s.is_dead());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let group_live = group_has_live_members(pgid);
        let others_live = others.iter().any(|&p| running(p));
        let leader_unreaped = proc_stat(pgid).is_some_and(|s| s.ppid == std::process::id() as i32);
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

#[tokio::test]
async fn over_cap_line_then_a_normal_line_from_the_cli() {
    let mut cfg = py(
        "import sys\nw = sys.stdout.buffer\nw.write(b'{\"a\":\"' + b'x' * (8 << 20) + b'\"}\\n{\"next\":1}\\n')\nw.flush()",
    );
    cfg.max_line_bytes = 1 << 20;
    let mut p = spawn(cfg).unwrap();
    match within(30, p.reader.next_line()).await {
        Some(Ok(Read::Skipped(SkippedLine {
            reason: SkipReason::TooLong { limit },
            excerpt,
            len,
            ..
        }))) => {
            assert_eq!(limit, 1 << 20);
            assert_eq!(len, (8 << 20) + 8);
            assert_eq!(excerpt, format!("{{\"a\":\"{}", "x".repeat(250)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(next(&mut p).await.unwrap(), json!({"next": 1}));
    assert!(next(&mut p).await.is_none());
}

#[tokio::test]
async fn garbage_from_the_cli_is_skipped_and_broken_objects_reported() {
    let mut p = spawn(py(concat!(
        "import sys\nw = sys.stdout.buffer\n",
        "w.write(b'[SandboxDebug] hello\\n\\xff\\xfe\\x00 bin\\n{\"truncated\": \\n\\r\\n\\n')\n",
        "w.write(b'{\"ok\":1}\\r\\n{\"bad\":\"\\xff\"}\\n{\"ok\":2}')\n",
    )))
    .unwrap();
    assert_eq!(report(&mut p).await, "{\"truncated\":");
    assert_eq!(next(&mut p).await.unwrap(), json!({"ok": 1}));
    assert_eq!(report(&mut p).await, "{\"bad\":\"\u{fffd}\"}");
    assert_eq!(next(&mut p).await.unwrap(), json!({"ok": 2}));
    assert!(next(&mut p).await.is_none());
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
async fn the_spawn_config_reaches_the_child() {
    // Setting wins over removing; HOME is removed; the working directory
    // and the arguments are applied.
    let dir = TempDir::new("cwd");
    let mut cfg = sh(
        "echo \"{\\\"set\\\":\\\"$CA_TRANSPORT_TEST\\\",\\\"home\\\":\\\"${HOME-none}\\\",\\\"cwd\\\":\\\"$(pwd -P)\\\",\\\"arg\\\":\\\"$0\\\"}\"",
    );
    cfg.args.push("first".into());
    cfg.env = vec![("CA_TRANSPORT_TEST".into(), "yes".into())];
    cfg.env_remove = vec!["HOME".into(), "CA_TRANSPORT_TEST".into()];
    cfg.cwd = Some(dir.path().to_path_buf());
    let mut p = spawn(cfg).unwrap();
    let v = next(&mut p).await.unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        v,
        json!({"set": "yes", "home": "none", "cwd": cwd.to_str().unwrap(), "arg": "first"})
    );
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
        // The message names the program; the cause, the folder.
        Err(Error::Spawn { program, source }) => {
            assert_eq!(program, std::path::Path::new("/bin/sh"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            assert!(source.to_string().contains("no-such-dir"), "{source}");
        }
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
