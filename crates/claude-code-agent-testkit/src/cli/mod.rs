//! Finding (or installing) the Claude Code CLI under test, and the environment to run
//! it offline against a [`MockModel`](crate::MockModel).
//!
//! The CLI under test is the [`PINNED_CLI_VERSION`] unless `$CLAUDE_AGENT_TEST_CLI_VERSION`
//! ([`CLI_VERSION_ENV`]) names another: `oldest` ([`OLDEST_SUPPORTED_CLI_VERSION`]),
//! `pinned`, or a version number ([`tested_cli_version`]). Tests whose expectations
//! depend on the version ask `tested_cli_has` about a `CliChange` (feature `harness`).
//!
//! Lookup order of [`pinned_cli`]:
//!
//! 1. `$CLAUDE_AGENT_TEST_CLI` if set (must run and report the version under test, else
//!    an error — an explicit path is never silently replaced);
//! 2. the cache folder `$XDG_CACHE_HOME/claude-agent-rs/cli-<version>/` (default
//!    `~/.cache/claude-agent-rs/cli-<version>/`), i.e. the native binary
//!    `node_modules/@anthropic-ai/claude-code-<os>-<arch>/claude`;
//! 3. otherwise it installs `@anthropic-ai/claude-code@<version>` there with `npm` —
//!    or, if npm says that package has no such version (`ETARGET`), the platform
//!    package `@anthropic-ai/claude-code-<os>-<arch>@<version>`, which holds the same
//!    binary (the rule `scripts/install-cli` follows too):
//!    under an exclusive `flock` on `cli-<version>.lock`, into a staging folder that is
//!    renamed into place once the binary answers `--version`, so concurrent callers
//!    (parallel tests, several processes) install once and never see a half install.
//!
//! ```no_run
//! use claude_code_agent_testkit::cli::{pinned_cli, CliEnv};
//! use claude_code_agent_testkit::mock_api::{MockModel, Turn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cli = pinned_cli()?;
//! let mock = MockModel::builder().turn(Turn::text("hi")).start().await;
//! let env = CliEnv::for_mock(&mock)?;
//! let mut cmd = env.command(&cli); // stream-json flags, offline env, temp config dir, piped stdio
//! let child = cmd.spawn()?;
//! # drop(child);
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "harness")]
mod changes;
mod env;
mod install;

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

#[cfg(feature = "harness")]
pub use changes::{CliChange, tested_cli_has};
pub use env::{CliEnv, REMOVED_ENV_VARS};
pub use install::{install_into, install_version, install_version_with_npm, install_with_npm};

/// The Claude Code CLI version this project is tested against.
pub const PINNED_CLI_VERSION: &str = "2.1.337";

/// The oldest Claude Code CLI version the SDK supports (`scripts/test-cli-range` runs
/// the real-CLI tests against it); the SDK's `claude_code_agent::OLDEST_TESTED_CLI_VERSION`.
pub const OLDEST_SUPPORTED_CLI_VERSION: &str = "2.1.302";

/// Environment variable that, when set, names the CLI binary to use.
pub const CLI_PATH_ENV: &str = "CLAUDE_AGENT_TEST_CLI";

/// Environment variable that selects the CLI version under test: `pinned` (the
/// default), `oldest`, or a version number such as `2.1.310`.
pub const CLI_VERSION_ENV: &str = "CLAUDE_AGENT_TEST_CLI_VERSION";

/// Resolves a version name: `pinned` (or empty) and `oldest` to their numbers, any
/// other text to itself (trimmed).
pub fn resolve_version(name: &str) -> &str {
    match name.trim() {
        "" | "pinned" => PINNED_CLI_VERSION,
        "oldest" => OLDEST_SUPPORTED_CLI_VERSION,
        v => v,
    }
}

/// The CLI version the tests run against: [`PINNED_CLI_VERSION`] unless
/// `$CLAUDE_AGENT_TEST_CLI_VERSION` names another (see [`resolve_version`]). Read once
/// per process.
pub fn tested_cli_version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let name = std::env::var(CLI_VERSION_ENV).unwrap_or_default();
        resolve_version(&name).to_owned()
    })
}

/// The npm package that carries the CLI.
pub const CLI_NPM_PACKAGE: &str = "@anthropic-ai/claude-code";

/// Why the CLI could not be found or installed. An I/O cause is the
/// [`source`](std::error::Error::source), not repeated in the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Neither `XDG_CACHE_HOME` nor `HOME` is set.
    #[error("cannot locate a cache folder: neither XDG_CACHE_HOME nor HOME is set")]
    NoCacheDir,
    /// The binary could not be run.
    #[error("cannot run {path}")]
    Run {
        /// The binary.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The binary ran but is not the version under test.
    #[error("{path} reports version {found:?}, expected {expected}")]
    WrongVersion {
        /// The binary.
        path: PathBuf,
        /// What `--version` printed.
        found: String,
        /// [`tested_cli_version`].
        expected: String,
    },
    /// `$CLAUDE_AGENT_TEST_CLI` is set but unusable.
    #[error("{CLI_PATH_ENV}={path}: {reason}")]
    BadEnvPath {
        /// The value of the variable.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `npm` is not installed (or not on `PATH`).
    #[error(
        "npm is needed to install {CLI_NPM_PACKAGE} but could not be started; install Node.js/npm, or set {CLI_PATH_ENV} to a claude binary of the version under test"
    )]
    NpmNotFound {
        /// The spawn error.
        source: io::Error,
    },
    /// `npm` failed.
    #[error("`{command}` failed in {dir} ({status}):\n{output}")]
    NpmFailed {
        /// The command line.
        command: String,
        /// Where it ran.
        dir: PathBuf,
        /// Its exit status.
        status: String,
        /// Its stdout and stderr.
        output: String,
    },
    /// npm succeeded but no binary for this platform was found.
    #[error(
        "npm installed {CLI_NPM_PACKAGE} into {dir} but no native claude binary for this platform was found (looked for {candidates:?})"
    )]
    NoBinary {
        /// The install folder.
        dir: PathBuf,
        /// The paths tried.
        candidates: Vec<PathBuf>,
    },
    /// A file-system operation failed.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: io::Error,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> CliError {
    let context = context.into();
    move |source| CliError::Io { context, source }
}

/// `$XDG_CACHE_HOME/claude-agent-rs`, or `~/.cache/claude-agent-rs` (`~`:
/// `%USERPROFILE%` on Windows), where the SDK's `find_cli` looks too.
pub fn cache_root() -> Result<PathBuf, CliError> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| Path::new(x).is_absolute()) {
        return Ok(PathBuf::from(x).join("claude-agent-rs"));
    }
    let home = std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" })
        .filter(|h| !h.is_empty())
        .ok_or(CliError::NoCacheDir)?;
    Ok(PathBuf::from(home).join(".cache").join("claude-agent-rs"))
}

/// The folder the CLI under test is installed into: `<cache_root>/cli-<version>`.
pub fn install_dir() -> Result<PathBuf, CliError> {
    install_dir_for(tested_cli_version())
}

/// The folder a CLI version is installed into: `<cache_root>/cli-<version>`.
pub fn install_dir_for(version: &str) -> Result<PathBuf, CliError> {
    Ok(cache_root()?.join(format!("cli-{version}")))
}

/// Names of the platform packages that may hold the native binary on this machine,
/// best first.
fn platform_packages() -> Vec<String> {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let base = format!("claude-code-{os}-{arch}");
    if os == "linux" {
        vec![base.clone(), format!("{base}-musl")]
    } else {
        vec![base]
    }
}

/// Where the native binary may be inside an install folder, best first.
pub fn binary_candidates(install_dir: &Path) -> Vec<PathBuf> {
    let exe = if cfg!(windows) {
        "claude.exe"
    } else {
        "claude"
    };
    let scope = install_dir.join("node_modules").join("@anthropic-ai");
    let mut out: Vec<PathBuf> = platform_packages()
        .into_iter()
        .map(|p| scope.join(p).join(exe))
        .collect();
    // The wrapper package's postinstall links the native binary here.
    out.push(scope.join("claude-code").join("bin").join("claude.exe"));
    out
}

/// Runs `path --version` and returns the version it reports (the first word).
pub fn cli_version(path: &Path) -> Result<String, CliError> {
    let out = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .map_err(|source| CliError::Run {
            path: path.to_owned(),
            source,
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(CliError::Run {
            path: path.to_owned(),
            source: io::Error::other(format!(
                "--version exited with {}: {}{}",
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        });
    }
    Ok(stdout.split_whitespace().next().unwrap_or("").to_owned())
}

fn check_version(path: &Path, version: &str) -> Result<(), CliError> {
    let found = cli_version(path)?;
    if found == version {
        Ok(())
    } else {
        Err(CliError::WrongVersion {
            path: path.to_owned(),
            found,
            expected: version.to_owned(),
        })
    }
}

/// The binary inside `install_dir`, if one is there and reports the version under test.
pub fn find_in(install_dir: &Path) -> Option<PathBuf> {
    find_version_in(install_dir, tested_cli_version())
}

/// The binary inside `install_dir`, if one is there and reports `version`.
pub fn find_version_in(install_dir: &Path, version: &str) -> Option<PathBuf> {
    binary_candidates(install_dir)
        .into_iter()
        .find(|c| c.is_file() && check_version(c, version).is_ok())
}

/// Finds the CLI under test without installing: `$CLAUDE_AGENT_TEST_CLI`, then the
/// cache folder. `Ok(None)` when it is not installed.
///
/// Unlike `claude_code_agent::find_cli`, which takes whatever `claude` the SDK would run,
/// this accepts only the [`tested_cli_version`].
pub fn find_installed_cli() -> Result<Option<PathBuf>, CliError> {
    if let Some(p) = std::env::var_os(CLI_PATH_ENV).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(p);
        return match check_version(&path, tested_cli_version()) {
            Ok(()) => Ok(Some(path)),
            Err(e) => Err(CliError::BadEnvPath {
                path,
                reason: e.to_string(),
            }),
        };
    }
    Ok(find_in(&install_dir()?))
}

/// Finds the CLI under test ([`tested_cli_version`]: the pinned one unless
/// `$CLAUDE_AGENT_TEST_CLI_VERSION` says otherwise), installing it with npm into the
/// cache folder if needed.
///
/// The first successful result is remembered for the life of the process. Blocking
/// (npm can take a minute); from async code call it through
/// [`tokio::task::spawn_blocking`] or use [`pinned_cli_async`].
///
/// ```no_run
/// let cli = claude_code_agent_testkit::cli::pinned_cli().expect("claude CLI");
/// println!("using {}", cli.display());
/// ```
pub fn pinned_cli() -> Result<PathBuf, CliError> {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    if let Some(p) = FOUND.get() {
        return Ok(p.clone());
    }
    let path = match find_installed_cli()? {
        Some(p) => p,
        None => install_into(&install_dir()?)?,
    };
    Ok(FOUND.get_or_init(|| path).clone())
}

/// [`pinned_cli`] on Tokio's blocking pool.
pub async fn pinned_cli_async() -> Result<PathBuf, CliError> {
    match tokio::task::spawn_blocking(pinned_cli).await {
        Ok(r) => r,
        Err(e) => Err(CliError::Io {
            context: "CLI lookup task failed".into(),
            source: io::Error::other(e.to_string()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_include_platform_package() {
        let c = binary_candidates(Path::new("/x"));
        assert!(c[0].starts_with("/x/node_modules/@anthropic-ai"));
        assert!(c.last().unwrap().ends_with("claude-code/bin/claude.exe"));
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert!(c[0].ends_with("claude-code-linux-x64/claude"));
        }
    }

    #[test]
    fn env_set_overrides() {
        let env = CliEnv::new("http://a")
            .unwrap()
            .set("ANTHROPIC_API_KEY", "k2");
        let keys: Vec<_> = env
            .vars()
            .into_iter()
            .filter(|(k, _)| k == "ANTHROPIC_API_KEY")
            .collect();
        assert_eq!(keys, vec![("ANTHROPIC_API_KEY".into(), "k2".into())]);
        assert_ne!(env.config_dir(), env.work_dir());
    }

    #[test]
    fn version_of_a_non_binary_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(cli_version(&dir.path().join("nope")).is_err());
        assert!(find_in(dir.path()).is_none());
    }
}
