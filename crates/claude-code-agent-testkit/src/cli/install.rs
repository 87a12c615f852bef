//! Installing the pinned CLI with npm: once, under a lock, published by a
//! rename (see the [module docs](super)).

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::Path;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::{
    CLI_NPM_PACKAGE, CliError, binary_candidates, find_version_in, install_dir_for, io_err,
    platform_packages, tested_cli_version,
};

/// An exclusive advisory lock on a file, released on drop.
struct FileLock {
    _file: fs::File,
}

impl FileLock {
    fn acquire(path: &Path) -> Result<FileLock, CliError> {
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(io_err(format!("cannot open lock file {}", path.display())))?;
        #[cfg(unix)]
        {
            use std::io;
            use std::os::fd::AsRawFd;
            loop {
                // SAFETY: flock on a file descriptor we own; no memory is involved.
                let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
                if r == 0 {
                    break;
                }
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(CliError::Io {
                        context: format!("cannot lock {}", path.display()),
                        source: e,
                    });
                }
            }
        }
        Ok(FileLock { _file: file })
    }
}

/// The npm program: `$NPM` if set, else `npm`.
fn npm_program() -> OsString {
    std::env::var_os("NPM")
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "npm".into())
}

fn run_npm(npm: &OsStr, args: &[&str], dir: &Path) -> Result<(), CliError> {
    let out = Command::new(npm)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("npm_config_update_notifier", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_audit", "false")
        .output()
        .map_err(|source| CliError::NpmNotFound { source })?;
    if out.status.success() {
        return Ok(());
    }
    Err(CliError::NpmFailed {
        command: format!("{} {}", npm.to_string_lossy(), args.join(" ")),
        dir: dir.to_owned(),
        status: out.status.to_string(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    })
}

/// Installs the CLI under test ([`tested_cli_version`]) into `dir` with npm (`$NPM` if
/// set, else `npm` from `PATH`) unless a working install is already there, and returns
/// the binary's path. Safe to call concurrently from several threads and processes: see
/// the [module docs](super).
pub fn install_into(dir: &Path) -> Result<PathBuf, CliError> {
    install_with_npm(dir, &npm_program())
}

/// [`install_into`] with an explicit npm executable.
pub fn install_with_npm(dir: &Path, npm: &OsStr) -> Result<PathBuf, CliError> {
    install_version_with_npm(dir, tested_cli_version(), npm)
}

/// Finds CLI `version` in its cache folder (`<cache_root>/cli-<version>`), installing
/// it there with npm if needed, like the CLI under test.
pub fn install_version(version: &str) -> Result<PathBuf, CliError> {
    let dir = install_dir_for(version)?;
    match find_version_in(&dir, version) {
        Some(p) => Ok(p),
        None => install_version_with_npm(&dir, version, &npm_program()),
    }
}

/// `npm install`s CLI `version` into `dir` by the one rule (the same in
/// `scripts/install-cli`): the main package [`CLI_NPM_PACKAGE`]; if npm says it has no
/// such version (`ETARGET`), the platform package `@anthropic-ai/claude-code-<os>-<arch>`
/// of that version, which holds the same native binary and is sometimes published
/// without a main-package release.
fn install_package(npm: &OsStr, version: &str, dir: &Path) -> Result<(), CliError> {
    let install = |spec: &str| {
        run_npm(
            npm,
            &[
                "install",
                "--save-exact",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                spec,
            ],
            dir,
        )
    };
    match install(&format!("{CLI_NPM_PACKAGE}@{version}")) {
        Err(CliError::NpmFailed { output, .. }) if output.contains("ETARGET") => install(&format!(
            "@anthropic-ai/{}@{version}",
            platform_packages()[0]
        )),
        other => other,
    }
}

/// Installs CLI `version` into `dir` with the given npm, as [`install_into`] does.
pub fn install_version_with_npm(
    dir: &Path,
    version: &str,
    npm: &OsStr,
) -> Result<PathBuf, CliError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("cli-{version}"));
    fs::create_dir_all(parent).map_err(io_err(format!("cannot create {}", parent.display())))?;
    let _lock = FileLock::acquire(&parent.join(format!("{name}.lock")))?;

    // Somebody may have finished while we waited for the lock.
    if let Some(p) = find_version_in(dir, version) {
        return Ok(p);
    }

    let staging = tempfile::Builder::new()
        .prefix(&format!("{name}.staging-"))
        .tempdir_in(parent)
        .map_err(io_err(format!(
            "cannot create a staging folder in {}",
            parent.display()
        )))?;
    fs::write(
        staging.path().join("package.json"),
        format!(
            "{{\"name\":\"claude-agent-rs-cli\",\"version\":\"1.0.0\",\"private\":true,\"description\":\"Claude Code {version} for claude-agent-rs tests\"}}\n"
        ),
    )
    .map_err(io_err("cannot write package.json"))?;
    install_package(npm, version, staging.path())?;
    if find_version_in(staging.path(), version).is_none() {
        return Err(CliError::NoBinary {
            dir: staging.path().to_owned(),
            candidates: binary_candidates(staging.path()),
        });
    }

    // Move a broken previous install out of the way, then publish atomically.
    if dir.exists() {
        let old = parent.join(format!("{name}.old-{}", std::process::id()));
        fs::rename(dir, &old).map_err(io_err(format!("cannot move {} aside", dir.display())))?;
        let _ = fs::remove_dir_all(&old);
    }
    let staged = staging.keep();
    fs::rename(&staged, dir).map_err(|e| {
        let _ = fs::remove_dir_all(&staged);
        CliError::Io {
            context: format!("cannot move {} to {}", staged.display(), dir.display()),
            source: e,
        }
    })?;
    find_version_in(dir, version).ok_or_else(|| CliError::NoBinary {
        dir: dir.to_owned(),
        candidates: binary_candidates(dir),
    })
}
