//! [`StdioOptions`]: how to start a process spoken to over stdio.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{ShutdownTimeouts, StderrCallback};
use crate::transport::lines::DEFAULT_MAX_LINE_BYTES;

/// The default size of the stderr tail kept to explain an exit: 64 KiB.
pub const DEFAULT_STDERR_TAIL_BYTES: usize = 64 * 1024;

/// How to start a process spoken to over stdio: an MCP server (for
/// [`StdioTransport`](crate::client::StdioTransport)) or the Claude Code CLI (the SDK fills one in).
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::client::StdioOptions;
///
/// let options = StdioOptions::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("LOG_LEVEL", "debug")
///     .max_line_bytes(16 << 20)
///     .shutdown_timeout(Duration::from_secs(2));
/// # drop(options);
/// ```
#[derive(Clone)]
pub struct StdioOptions {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) env_remove: Vec<OsString>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) max_line_bytes: usize,
    pub(crate) shutdown: ShutdownTimeouts,
    pub(crate) on_stderr: Option<StderrCallback>,
    pub(crate) stderr_tail_bytes: usize,
}

impl StdioOptions {
    /// Runs `program` (looked up on `PATH`).
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cwd: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            shutdown: ShutdownTimeouts::both(Duration::from_secs(2)),
            on_stderr: None,
            stderr_tail_bytes: DEFAULT_STDERR_TAIL_BYTES,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child (it inherits the rest).
    /// Setting wins over [`env_remove`](Self::env_remove).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Removes an inherited environment variable.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env_remove.push(key.into());
        self
    }

    /// The child's working directory (default: ours).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The cap on one stdout line (default [`DEFAULT_MAX_LINE_BYTES`]); a
    /// longer line is skipped with an error (its request, when its id can
    /// be read, fails) and reading goes on.
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line_bytes = max;
        self
    }

    /// How long each shutdown step waits: after closing stdin, then after
    /// SIGTERM, before SIGKILL (default 2 s).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown = ShutdownTimeouts::both(timeout);
        self
    }

    /// The shutdown steps' timeouts, each on its own.
    pub fn shutdown_timeouts(mut self, timeouts: ShutdownTimeouts) -> Self {
        self.shutdown = timeouts;
        self
    }

    /// Also hands each stderr line to `f` (it always goes to `tracing`);
    /// see [`StderrCallback`].
    pub fn on_stderr(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stderr = Some(Arc::new(f));
        self
    }

    /// [`on_stderr`](Self::on_stderr) with a shared callback, or none.
    pub fn stderr_callback(mut self, f: Option<StderrCallback>) -> Self {
        self.on_stderr = f;
        self
    }

    /// How many bytes of stderr are kept to explain an exit (default
    /// [`DEFAULT_STDERR_TAIL_BYTES`]).
    pub fn stderr_tail_bytes(mut self, bytes: usize) -> Self {
        self.stderr_tail_bytes = bytes;
        self
    }

    /// The program to run.
    pub fn program(&self) -> &std::ffi::OsStr {
        &self.program
    }
}

impl fmt::Debug for StdioOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioOptions")
            .field("program", &self.program)
            .field("args", &self.args)
            // Names only: values may be secrets.
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("env_remove", &self.env_remove)
            .field("cwd", &self.cwd)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("shutdown", &self.shutdown)
            .field("on_stderr", &self.on_stderr.is_some())
            .field("stderr_tail_bytes", &self.stderr_tail_bytes)
            .finish()
    }
}
