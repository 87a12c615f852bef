//! Finding (or installing) the pinned Claude Code CLI, and the environment to run it
//! offline against a [`MockModel`].
//!
//! Lookup order of [`pinned_cli`]:
//!
//! 1. `$CLAUDE_AGENT_TEST_CLI` if set (must run and report [`PINNED_CLI_VERSION`], else
//!    an error — an explicit path is never silently replaced);
//! 2. the cache folder `$XDG_CACHE_HOME/claude-agent-rs/cli-<version>/` (default
//!    `~/.cache/claude-agent-rs/cli-<version>/`), i.e. the native binary
//!    `node_modules/@anthropic-ai/claude-code-<os>-<arch>/claude`;
//! 3. otherwise it installs `@anthropic-ai/claude-code@<version>` there with `npm`:
//!    under an exclusive `flock` on `cli-<version>.lock`, into a staging folder that is
//!    renamed into place once the binary answers `--version`, so concurrent callers
//!    (parallel tests, several processes) install once and never see a half install.
//!
//! ```no_run
//! use claude_agent_testkit::cli::{pinned_cli, CliEnv};
//! use claude_agent_testkit::mock_api::{MockModel, Turn};
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

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use tempfile::TempDir;

use crate::mock_api::MockModel;

/// The Claude Code CLI version this project is tested against.
pub const PINNED_CLI_VERSION: &str = "2.1.332";

/// Environment variable that, when set, names the CLI binary to use.
pub const CLI_PATH_ENV: &str = "CLAUDE_AGENT_TEST_CLI";

/// The npm package that carries the CLI.
pub const CLI_NPM_PACKAGE: &str = "@anthropic-ai/claude-code";

/// Why the CLI could not be found or installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Neither `XDG_CACHE_HOME` nor `HOME` is set.
    #[error("cannot locate a cache folder: neither XDG_CACHE_HOME nor HOME is set")]
    NoCacheDir,
    /// The binary could not be run.
    #[error("cannot run {path}: {source}")]
    Run {
        /// The binary.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The binary ran but is not the pinned version.
    #[error("{path} reports version {found:?}, expected {expected}")]
    WrongVersion {
        /// The binary.
        path: PathBuf,
        /// What `--version` printed.
        found: String,
        /// [`PINNED_CLI_VERSION`].
        expected: &'static str,
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
        "npm is needed to install {CLI_NPM_PACKAGE}@{PINNED_CLI_VERSION} but could not be started ({source}); install Node.js/npm, or set {CLI_PATH_ENV} to a claude {PINNED_CLI_VERSION} binary"
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
    #[error("{context}: {source}")]
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

/// `$XDG_CACHE_HOME/claude-agent-rs`, or `~/.cache/claude-agent-rs`.
pub fn cache_root() -> Result<PathBuf, CliError> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| Path::new(x).is_absolute()) {
        return Ok(PathBuf::from(x).join("claude-agent-rs"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or(CliError::NoCacheDir)?;
    Ok(PathBuf::from(home).join(".cache").join("claude-agent-rs"))
}

/// The folder the pinned CLI is installed into: `<cache_root>/cli-<version>`.
pub fn install_dir() -> Result<PathBuf, CliError> {
    Ok(cache_root()?.join(format!("cli-{PINNED_CLI_VERSION}")))
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

fn check_pinned(path: &Path) -> Result<(), CliError> {
    let found = cli_version(path)?;
    if found == PINNED_CLI_VERSION {
        Ok(())
    } else {
        Err(CliError::WrongVersion {
            path: path.to_owned(),
            found,
            expected: PINNED_CLI_VERSION,
        })
    }
}

/// The pinned binary inside `install_dir`, if one is there and reports the pinned version.
pub fn find_in(install_dir: &Path) -> Option<PathBuf> {
    binary_candidates(install_dir)
        .into_iter()
        .find(|c| c.is_file() && check_pinned(c).is_ok())
}

/// Finds the pinned CLI without installing: `$CLAUDE_AGENT_TEST_CLI`, then the cache
/// folder. `Ok(None)` when it is not installed.
///
/// Unlike `claude_agent::find_cli`, which takes whatever `claude` the SDK would run,
/// this accepts only the [`PINNED_CLI_VERSION`].
pub fn find_installed_cli() -> Result<Option<PathBuf>, CliError> {
    if let Some(p) = std::env::var_os(CLI_PATH_ENV).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(p);
        return match check_pinned(&path) {
            Ok(()) => Ok(Some(path)),
            Err(e) => Err(CliError::BadEnvPath {
                path,
                reason: e.to_string(),
            }),
        };
    }
    Ok(find_in(&install_dir()?))
}

/// Finds the pinned CLI, installing it with npm into the cache folder if needed.
///
/// The first successful result is remembered for the life of the process. Blocking
/// (npm can take a minute); from async code call it through
/// [`tokio::task::spawn_blocking`] or use [`pinned_cli_async`].
///
/// ```no_run
/// let cli = claude_agent_testkit::cli::pinned_cli().expect("claude CLI");
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

/// Installs the pinned CLI into `dir` with npm (`$NPM` if set, else `npm` from `PATH`)
/// unless a working install is already there, and returns the binary's path. Safe to
/// call concurrently from several threads and processes: see the [module docs](self).
pub fn install_into(dir: &Path) -> Result<PathBuf, CliError> {
    install_with_npm(dir, &npm_program())
}

/// [`install_into`] with an explicit npm executable.
pub fn install_with_npm(dir: &Path, npm: &OsStr) -> Result<PathBuf, CliError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("cli-{PINNED_CLI_VERSION}"));
    fs::create_dir_all(parent).map_err(io_err(format!("cannot create {}", parent.display())))?;
    let _lock = FileLock::acquire(&parent.join(format!("{name}.lock")))?;

    // Somebody may have finished while we waited for the lock.
    if let Some(p) = find_in(dir) {
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
            "{{\"name\":\"claude-agent-rs-cli\",\"version\":\"1.0.0\",\"private\":true,\"description\":\"Claude Code {PINNED_CLI_VERSION} for claude-agent-rs tests\"}}\n"
        ),
    )
    .map_err(io_err("cannot write package.json"))?;
    let spec = format!("{CLI_NPM_PACKAGE}@{PINNED_CLI_VERSION}");
    run_npm(
        npm,
        &[
            "install",
            "--save-exact",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            &spec,
        ],
        staging.path(),
    )?;
    if find_in(staging.path()).is_none() {
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
    find_in(dir).ok_or_else(|| CliError::NoBinary {
        dir: dir.to_owned(),
        candidates: binary_candidates(dir),
    })
}

/// Environment variables removed from the CLI's environment by [`CliEnv`], because an
/// inherited value would send it elsewhere or change its behaviour.
pub const REMOVED_ENV_VARS: &[&str] = &[
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDECODE",
    "CLAUDE_CODE_SSE_PORT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NODE_OPTIONS",
    "DEBUG",
];

/// The environment to run the CLI offline against a mock API: the variables below plus
/// a fresh temporary `CLAUDE_CONFIG_DIR` and working folder, both deleted on drop.
///
/// | variable | value |
/// |---|---|
/// | `ANTHROPIC_BASE_URL` | the mock's URL |
/// | `ANTHROPIC_API_KEY` | `sk-test` |
/// | `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_TELEMETRY`, `DISABLE_AUTOUPDATER` | `1` |
/// | `ENABLE_TOOL_SEARCH` | `false` (MCP tools are offered to the model directly) |
/// | `CLAUDE_CONFIG_DIR` | a temporary folder |
/// | `NO_PROXY` | `127.0.0.1,localhost` |
///
/// [`REMOVED_ENV_VARS`] are removed. Add or override with [`set`](Self::set).
///
/// ```
/// use claude_agent_testkit::cli::CliEnv;
///
/// let env = CliEnv::new("http://127.0.0.1:9").unwrap().set("IS_SANDBOX", "1");
/// let vars = env.vars();
/// assert!(vars.iter().any(|(k, v)| k == "ANTHROPIC_BASE_URL" && v == "http://127.0.0.1:9"));
/// assert!(env.config_dir().is_dir());
/// let dir = env.config_dir().to_owned();
/// drop(env);
/// assert!(!dir.exists());
/// ```
#[derive(Debug)]
pub struct CliEnv {
    config_dir: TempDir,
    work_dir: TempDir,
    vars: Vec<(String, String)>,
}

impl CliEnv {
    /// The offline environment for a mock API at `base_url`.
    pub fn new(base_url: impl Into<String>) -> io::Result<CliEnv> {
        let config_dir = tempfile::Builder::new()
            .prefix("claude-agent-test-config-")
            .tempdir()?;
        let work_dir = tempfile::Builder::new()
            .prefix("claude-agent-test-work-")
            .tempdir()?;
        let vars = vec![
            ("ANTHROPIC_BASE_URL".to_owned(), base_url.into()),
            ("ANTHROPIC_API_KEY".to_owned(), "sk-test".to_owned()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                "1".to_owned(),
            ),
            ("DISABLE_TELEMETRY".to_owned(), "1".to_owned()),
            ("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned()),
            ("ENABLE_TOOL_SEARCH".to_owned(), "false".to_owned()),
            ("NO_PROXY".to_owned(), "127.0.0.1,localhost".to_owned()),
            (
                "CLAUDE_CONFIG_DIR".to_owned(),
                config_dir.path().to_string_lossy().into_owned(),
            ),
        ];
        Ok(CliEnv {
            config_dir,
            work_dir,
            vars,
        })
    }

    /// The offline environment for this mock.
    pub fn for_mock(mock: &MockModel) -> io::Result<CliEnv> {
        CliEnv::new(mock.url())
    }

    /// Sets (or overrides) a variable.
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> CliEnv {
        let key = key.into();
        let value = value.into();
        match self.vars.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.vars.push((key, value)),
        }
        self
    }

    /// The temporary `CLAUDE_CONFIG_DIR`.
    pub fn config_dir(&self) -> &Path {
        self.config_dir.path()
    }

    /// A temporary, empty working folder for the CLI (so that it does not pick up a
    /// `CLAUDE.md` or settings from the folder the tests run in).
    pub fn work_dir(&self) -> &Path {
        self.work_dir.path()
    }

    /// The variables to set.
    pub fn vars(&self) -> Vec<(String, String)> {
        self.vars.clone()
    }

    /// Applies the environment (removals, variables) and the working folder to a Tokio command.
    pub fn apply(&self, cmd: &mut tokio::process::Command) {
        for k in REMOVED_ENV_VARS {
            cmd.env_remove(k);
        }
        cmd.envs(self.vars.iter().map(|(k, v)| (k, v)));
        cmd.current_dir(self.work_dir());
    }

    /// Applies the environment (removals, variables) and the working folder to a std command.
    pub fn apply_std(&self, cmd: &mut Command) {
        for k in REMOVED_ENV_VARS {
            cmd.env_remove(k);
        }
        cmd.envs(self.vars.iter().map(|(k, v)| (k, v)));
        cmd.current_dir(self.work_dir());
    }

    /// A Tokio command running `cli --output-format stream-json --verbose --input-format
    /// stream-json` in this environment, with piped stdin/stdout/stderr and
    /// `kill_on_drop(true)`. Add more arguments before spawning.
    pub fn command(&self, cli: &Path) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(cli);
        cmd.args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
        ]);
        self.apply(&mut cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
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
