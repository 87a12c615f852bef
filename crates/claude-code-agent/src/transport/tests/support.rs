//! Helpers: temporary directories, fake CLIs, time limits.

use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::transport::SpawnConfig;

/// A directory removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "claude-code-agent-transport-{}-{}-{tag}",
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
