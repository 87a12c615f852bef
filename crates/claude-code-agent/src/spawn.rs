//! Starting the CLI your way: [`CliCommand`] and
//! [`Options::spawn_with`](crate::Options::spawn_with).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::Arc;

/// The command that starts the CLI, for
/// [`Options::spawn_with`](crate::Options::spawn_with).
///
/// The SDK builds the command it would run — the CLI's path, its
/// arguments, the environment changes, the working directory — and hands
/// it to your function, which returns the command to run instead: the same
/// one under a wrapper (`nice`, `sudo -u`, a sandbox launcher), in a
/// container (`docker exec -i <container> claude …`), on another machine
/// (`ssh -T host claude …`). Whatever it returns must speak the CLI's
/// protocol on its stdin and stdout.
///
/// # What the SDK still guarantees, and what you own
///
/// The SDK starts the returned command exactly as it starts the CLI: as the
/// leader of a new process group (on Windows, in a Job Object of its own,
/// which stands for the group below), stdin, stdout and stderr piped,
/// reaped by a thread of its own. So for everything that runs **on this machine in
/// that process group** — the wrapper, and the CLI when the wrapper runs it
/// locally — every guarantee holds: shutdown closes stdin, waits, then
/// signals the whole group (SIGTERM, then SIGKILL); dropping a session
/// kills the group; nothing is left unreaped.
///
/// What the wrapper starts **elsewhere** is yours: a CLI inside a container
/// or on another host ends when its stdin closes (a normal shutdown), but
/// if the SDK has to kill the local `docker exec` or `ssh`, whether the
/// remote CLI dies with it depends on that tool (`ssh` closes the session
/// and the remote side gets SIGHUP; a `docker exec` process survives its
/// client unless the container is stopped). A wrapper that moves itself
/// out of the process group (`setsid`, a daemon) escapes the group kill.
///
/// Environment: [`CliCommand::env`] holds the variables the SDK sets for
/// the CLI (`CLAUDE_CODE_ENTRYPOINT`, those of
/// [`Options::env`](crate::Options::env), …) and
/// [`CliCommand::env_remove`] the inherited ones it removes. They apply to
/// the local process; a wrapper that does not pass its environment on
/// (`docker exec`, `ssh`) must be given them itself (`-e KEY=VALUE`,
/// `SendEnv`), or the remote CLI runs without them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CliCommand {
    /// The program to run.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables set on top of the inherited environment (after
    /// `env_remove`, so setting wins over removing).
    pub env: Vec<(OsString, OsString)>,
    /// Inherited variables removed.
    pub env_remove: Vec<OsString>,
    /// The working directory (`None`: this process's).
    pub cwd: Option<PathBuf>,
}

impl CliCommand {
    /// A command running `program` with no arguments, the inherited
    /// environment and working directory.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cwd: None,
        }
    }

    /// Runs this command under a wrapper: `wrapper wrapper_args… program
    /// args…`, with the same environment changes and working directory.
    ///
    /// ```
    /// use claude_code_agent::CliCommand;
    /// let cmd = CliCommand::new("claude").arg("--verbose").wrap("nice", ["-n", "5"]);
    /// assert_eq!(cmd.program, "nice");
    /// assert_eq!(cmd.args, ["-n", "5", "claude", "--verbose"]);
    /// ```
    pub fn wrap<I, S>(self, wrapper: impl Into<OsString>, wrapper_args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut args: Vec<OsString> = wrapper_args.into_iter().map(Into::into).collect();
        args.push(self.program);
        args.extend(self.args);
        Self {
            program: wrapper.into(),
            args,
            ..self
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// The value this command sets for `key`, if it sets one.
    pub fn env_value(&self, key: impl AsRef<OsStr>) -> Option<&OsStr> {
        let key = key.as_ref();
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_os_str())
    }
}

/// The function of [`Options::spawn_with`](crate::Options::spawn_with).
pub(crate) type SpawnFn =
    Arc<dyn Fn(CliCommand) -> std::io::Result<CliCommand> + Send + Sync + 'static>;
