//! The environment that runs the CLI offline against a mock.

use std::io;
use std::path::Path;
use std::process::{Command, Stdio};

use tempfile::TempDir;

use crate::mock_api::MockModel;

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
/// use claude_code_agent_testkit::cli::CliEnv;
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
            .prefix("claude-code-agent-test-config-")
            .tempdir()?;
        let work_dir = tempfile::Builder::new()
            .prefix("claude-code-agent-test-work-")
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
