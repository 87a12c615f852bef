//! Helpers: temporary directories, fake CLIs, time limits, `/proc` checks.

use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::transport::SpawnConfig;
use crate::transport::child::{group_has_live_members, proc_stat};

/// A directory removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "claude-agent-transport-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    /// Writes a file (creating parent directories) with the given mode.
    pub(crate) fn file(&self, rel: &str, contents: &str, mode: u32) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, contents).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    /// An executable file.
    pub(crate) fn exe(&self, rel: &str) -> PathBuf {
        self.file(rel, "#!/bin/sh\nexit 0\n", 0o755)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The real Python interpreter (not a pyenv shim, which is a shell script).
pub(crate) fn python() -> &'static Path {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 is needed by these tests");
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

/// A fake CLI: `python3 -c <code>`.
pub(crate) fn py(code: &str) -> SpawnConfig {
    let mut cfg = SpawnConfig::new(python());
    cfg.args = vec!["-c".into(), code.into()];
    cfg
}

/// A fake CLI: `/bin/sh -c <script>`.
pub(crate) fn sh(script: &str) -> SpawnConfig {
    let mut cfg = SpawnConfig::new("/bin/sh");
    cfg.args = vec!["-c".into(), script.into()];
    cfg
}

/// Fails the test if `fut` takes longer than `secs`.
pub(crate) async fn within<F: Future>(secs: u64, fut: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(secs), fut)
        .await
        .unwrap_or_else(|_| panic!("timed out after {secs} s"))
}

/// Whether `pid` still runs (a zombie does not count).
pub(crate) fn is_running(pid: i32) -> bool {
    proc_stat(pid).is_some_and(|s| !s.is_dead())
}

/// Whether `pid` is a zombie child of this process (a reaping leak).
pub(crate) fn is_our_zombie(pid: i32) -> bool {
    proc_stat(pid).is_some_and(|s| s.is_dead() && s.ppid == std::process::id() as i32)
}

/// Waits (blocking, up to 5 s) until the group led by `pgid` has no running
/// member and its leader has been reaped; panics otherwise.
pub(crate) fn assert_all_gone(pgid: u32, others: &[i32]) {
    let pgid = pgid as i32;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let group_live = group_has_live_members(pgid);
        let others_live = others.iter().any(|&p| is_running(p));
        let leader_unreaped = is_our_zombie(pgid) || is_running(pgid);
        if !group_live && !others_live && !leader_unreaped {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "leftovers: group live {group_live}, others live {others_live}, leader unreaped {leader_unreaped} (pgid {pgid}, others {others:?})"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
