//! [`Harness`]: one test of an agent against the real, pinned CLI and a
//! scripted model, and the check at its end that nothing was left behind.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use claude_code_agent::Options;

use crate::cli::{CliEnv, CliError, pinned_cli_async};
use crate::mock_api::{MockModel, MockModelBuilder};

/// How long [`Harness::finish`] waits for the test's tasks to end.
const TASKS_WITHIN: Duration = Duration::from_secs(5);

/// Why a [`Harness`] could not start (the cause is the
/// [`source`](std::error::Error::source)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The pinned CLI could not be found or installed.
    #[error(
        "the pinned Claude Code CLI is not available (set CLAUDE_AGENT_TEST_CLI or let the testkit install it)"
    )]
    Cli(#[from] CliError),
    /// The mock could not bind its socket, or the temporary folders could not
    /// be created.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The error.
        source: std::io::Error,
    },
}

/// Everything one test of an agent needs: a [`MockModel`], the pinned CLI
/// ([`pinned_cli_async`]) in an isolated [`CliEnv`] (its own temporary
/// `CLAUDE_CONFIG_DIR` and working folder), SDK [`Options`] that run it
/// there, the CLI's stderr, and at the end a check that nothing is left:
/// [`finish`](Self::finish).
///
/// On Linux a watcher thread also records every CLI process of the test (its
/// live descendants whose environment names the test's config folder, read
/// from `/proc`), so that `finish` can
/// assert that none is left running or unreaped and that none ran in the
/// test's own process group. Elsewhere there is no process check, and
/// [`live_cli_pids`](Self::live_cli_pids) and
/// [`wait_for_cli_pid`](Self::wait_for_cli_pid) do not exist.
///
/// ```no_run
/// use claude_code_agent::{query, mcp::Tool, mcp::Server};
/// use claude_code_agent_testkit::transcript::{drain, tool_results, result_text};
/// use claude_code_agent_testkit::{Harness, MockModel, Turn};
/// use serde_json::{Value, json};
///
/// #[tokio::test]
/// async fn the_model_can_add() {
///     let h = Harness::start(
///         MockModel::builder()
///             .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
///             .turn(Turn::text("5")),
///     )
///     .await;
///     let add = Tool::new("add", "Add a and b", |v: Value| async move {
///         (v["a"].as_f64().unwrap_or(0.0) + v["b"].as_f64().unwrap_or(0.0)).to_string()
///     });
///     let options = h
///         .options()
///         .mcp_server(Server::builder("calc", "1.0.0").tool(add).build())
///         .allowed_tools(["mcp__calc__add"]);
///     let (messages, error) = drain(query("What is 2 + 3?", options)).await;
///     assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
///     assert_eq!(result_text(&tool_results(&messages)[0]), "5");
///     assert_eq!(h.mock().tool_results()[0].text(), "5");
///     h.finish().await;
/// }
/// # fn main() {}
/// ```
pub struct Harness {
    mock: MockModel,
    env: CliEnv,
    cli: PathBuf,
    stderr: Arc<Mutex<Vec<String>>>,
    #[cfg(target_os = "linux")]
    watch: crate::process::watch::ProcWatch,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("mock", &self.mock)
            .field("env", &self.env)
            .field("cli", &self.cli)
            .finish_non_exhaustive()
    }
}

impl Harness {
    /// Finds (or installs) the pinned CLI, starts the mock and prepares the
    /// environment.
    ///
    /// # Panics
    ///
    /// When that fails; see [`try_start`](Self::try_start).
    pub async fn start(mock: MockModelBuilder) -> Harness {
        Self::start_with_env(mock, &[]).await
    }

    /// Like [`start`](Self::start), with extra environment variables for the
    /// CLI (they override [`CliEnv`]'s).
    ///
    /// # Panics
    ///
    /// When that fails; see [`try_start`](Self::try_start).
    pub async fn start_with_env(mock: MockModelBuilder, vars: &[(&str, &str)]) -> Harness {
        match Self::try_start(mock, vars).await {
            Ok(h) => h,
            Err(e) => {
                let mut why = e.to_string();
                let mut cause = std::error::Error::source(&e);
                while let Some(c) = cause {
                    why = format!("{why}: {c}");
                    cause = c.source();
                }
                panic!("the test harness cannot start: {why}")
            }
        }
    }

    /// Like [`start_with_env`](Self::start_with_env), returning what failed.
    pub async fn try_start(
        mock: MockModelBuilder,
        vars: &[(&str, &str)],
    ) -> Result<Harness, HarnessError> {
        let cli = pinned_cli_async().await?;
        let mock = mock.try_start().await.map_err(|source| HarnessError::Io {
            context: "the mock model cannot bind 127.0.0.1:0",
            source,
        })?;
        let mut env = CliEnv::for_mock(&mock).map_err(|source| HarnessError::Io {
            context: "cannot create the CLI's temporary folders",
            source,
        })?;
        for (k, v) in vars {
            env = env.set(*k, *v);
        }
        Ok(Harness {
            #[cfg(target_os = "linux")]
            watch: crate::process::watch::ProcWatch::start(
                env.config_dir().to_string_lossy().into_owned(),
            ),
            mock,
            env,
            cli,
            stderr: Arc::new(Mutex::new(Vec::new())),
        })
    }

    /// The mock model: script more turns, read what the CLI sent.
    pub fn mock(&self) -> &MockModel {
        &self.mock
    }

    /// The CLI's environment (its config and working folders).
    pub fn env(&self) -> &CliEnv {
        &self.env
    }

    /// The pinned CLI.
    pub fn cli(&self) -> &Path {
        &self.cli
    }

    /// Options that run the pinned CLI in this environment, against the mock,
    /// with its stderr recorded ([`stderr_text`](Self::stderr_text)). Add
    /// your servers, tools and callbacks.
    pub fn options(&self) -> Options {
        let mut options = Options::new().cli_path(&self.cli).cwd(self.env.work_dir());
        for (k, v) in self.env.vars() {
            options = options.env(k, v);
        }
        let sink = self.stderr.clone();
        options.stderr(move |line| {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(line.to_owned())
        })
    }

    /// What the CLIs started with [`options`](Self::options) wrote to stderr
    /// so far, one line each.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// [`stderr_lines`](Self::stderr_lines) joined by `\n` (for assertion
    /// messages).
    pub fn stderr_text(&self) -> String {
        self.stderr_lines().join("\n")
    }

    /// The live CLI processes of this test (Linux only).
    #[cfg(target_os = "linux")]
    pub fn live_cli_pids(&self) -> Vec<i32> {
        self.watch.live().into_iter().map(|p| p.pid).collect()
    }

    /// Waits until exactly one CLI process of this test runs and returns its
    /// pid (Linux only).
    ///
    /// # Panics
    ///
    /// When there is not exactly one within 30 s.
    #[cfg(target_os = "linux")]
    pub async fn wait_for_cli_pid(&self) -> i32 {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let pids = self.live_cli_pids();
            if pids.len() == 1 {
                return pids[0];
            }
            assert!(
                std::time::Instant::now() < deadline,
                "expected one live CLI process, found {pids:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Ends the test: on Linux, asserts that no CLI process of the test is
    /// left (none of those seen is alive or a zombie, nothing lives in their
    /// process groups; they get 10 s to go) and that at least one was seen.
    /// Then stops the mock and asserts that no task is left on the test's
    /// runtime ([`tasks::assert_none_left`](crate::tasks::assert_none_left),
    /// within 5 s): the test must have ended or dropped its sessions and
    /// everything it spawned.
    ///
    /// # Panics
    ///
    /// On any of those leftovers, when no CLI process was ever seen (Linux),
    /// or outside a Tokio runtime.
    pub async fn finish(self) {
        #[cfg(target_os = "linux")]
        {
            let seen_any = self.watch.stop_and_check().await;
            assert!(seen_any, "the process watcher never saw a CLI process");
        }
        self.mock.shutdown();
        crate::tasks::assert_none_left(TASKS_WITHIN).await;
    }
}
