//! [`Options`]: everything a session can be configured with.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::callbacks::{
    CanUseToolFn, HookFn, HookMatcher, PermissionContext, boxed_can_use_tool, boxed_hook,
};
use crate::mcp::Server;
use crate::protocol::InProcessServer;
use crate::protocol::{
    AgentDefinition, HookEvent, HookInput, HookOutput, McpServerConfig, PermissionMode,
    PermissionResult,
};
use crate::transport::ShutdownTimeouts;

/// The default cap on one line from the CLI: 256 MiB (the CLI's own limit on
/// its input lines is 256 Mi characters).
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// The default time to wait for the answer to a control request.
pub const DEFAULT_CONTROL_TIMEOUT: Duration = Duration::from_secs(60);

/// The system prompt the CLI runs with.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub enum SystemPrompt {
    /// No system prompt beyond the CLI's one identity line (`--system-prompt ""`),
    /// as the official SDKs do by default.
    #[default]
    Empty,
    /// This text replaces the system prompt.
    Text(String),
    /// Claude Code's full default prompt, optionally with text appended.
    Preset {
        /// Appended to the preset (`--append-system-prompt`).
        append: Option<String>,
    },
}

/// Which settings files the CLI loads (`--setting-sources`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingSource {
    /// The user's settings (`~/.claude/settings.json`).
    User,
    /// The project's shared settings (`.claude/settings.json`).
    Project,
    /// The project's local settings (`.claude/settings.local.json`).
    Local,
}

impl SettingSource {
    fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }
}

/// The default budget for messages read from the CLI but not yet by you:
/// 256 MiB (as much as one line may hold).
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 256 * 1024 * 1024;

/// Where `--mcp-config` comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum McpConfig {
    /// A JSON file of the form `{"mcpServers": {...}}`.
    Path(PathBuf),
    /// Servers by name (in-process ones are served through the bridge, not
    /// listed in `--mcp-config`).
    Servers(BTreeMap<String, McpServerConfig>),
    /// A JSON value of the form `{"mcpServers": {...}}`, passed as given.
    Json(Value),
}

/// Configuration for [`query`](crate::query()) and [`Client`](crate::Client).
///
/// Built with chained setters; everything is optional.
///
/// ```
/// use claude_agent::{Options, PermissionMode};
///
/// let options = Options::new()
///     .model("claude-sonnet-4-5")
///     .allowed_tools(["mcp__calc__add"])
///     .permission_mode(PermissionMode::AcceptEdits)
///     .max_turns(4);
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct Options {
    pub(crate) model: Option<String>,
    pub(crate) fallback_model: Option<String>,
    pub(crate) system_prompt: SystemPrompt,
    pub(crate) tools: Option<Vec<String>>,
    pub(crate) allowed_tools: Vec<String>,
    pub(crate) disallowed_tools: Vec<String>,
    pub(crate) permission_mode: Option<PermissionMode>,
    pub(crate) max_turns: Option<u32>,
    pub(crate) max_budget_usd: Option<f64>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) add_dirs: Vec<PathBuf>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) settings: Option<String>,
    pub(crate) setting_sources: Option<Vec<SettingSource>>,
    pub(crate) mcp_servers: Vec<InProcessServer>,
    pub(crate) mcp_config: Option<McpConfig>,
    pub(crate) strict_mcp_config: bool,
    pub(crate) resume: Option<String>,
    pub(crate) continue_conversation: bool,
    pub(crate) fork_session: bool,
    pub(crate) session_id: Option<String>,
    pub(crate) include_partial_messages: bool,
    pub(crate) can_use_tool: Option<CanUseToolFn>,
    pub(crate) hooks: Vec<(HookEvent, HookMatcher)>,
    pub(crate) agents: BTreeMap<String, AgentDefinition>,
    pub(crate) cli_path: Option<PathBuf>,
    pub(crate) extra_args: Vec<(String, Option<String>)>,
    pub(crate) stderr: Option<crate::transport::StderrCallback>,
    pub(crate) max_line_bytes: Option<usize>,
    pub(crate) control_timeout: Option<Duration>,
    pub(crate) max_buffered_bytes: Option<usize>,
    pub(crate) shutdown_timeouts: ShutdownTimeouts,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("model", &self.model)
            .field("system_prompt", &self.system_prompt)
            .field("allowed_tools", &self.allowed_tools)
            .field("permission_mode", &self.permission_mode)
            .field(
                "mcp_servers",
                &self
                    .mcp_servers
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>(),
            )
            .field("can_use_tool", &self.can_use_tool.is_some())
            .field("hooks", &self.hooks.len())
            .field("cli_path", &self.cli_path)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Options with every setting at its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model (`--model`), e.g. `claude-sonnet-4-5` or an alias like `sonnet`.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The model to fall back to when the main one is overloaded (`--fallback-model`).
    pub fn fallback_model(mut self, model: impl Into<String>) -> Self {
        self.fallback_model = Some(model.into());
        self
    }

    /// Replaces the system prompt with `text`.
    pub fn system_prompt(mut self, text: impl Into<String>) -> Self {
        self.system_prompt = SystemPrompt::Text(text.into());
        self
    }

    /// Uses Claude Code's full default system prompt.
    pub fn system_prompt_preset(mut self) -> Self {
        self.system_prompt = SystemPrompt::Preset { append: None };
        self
    }

    /// Uses Claude Code's default system prompt with `text` appended.
    pub fn append_system_prompt(mut self, text: impl Into<String>) -> Self {
        self.system_prompt = SystemPrompt::Preset {
            append: Some(text.into()),
        };
        self
    }

    /// Sets the system prompt in any of its forms.
    pub fn system_prompt_config(mut self, prompt: SystemPrompt) -> Self {
        self.system_prompt = prompt;
        self
    }

    /// The base set of built-in tools (`--tools`); an empty list means none.
    pub fn tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Tools allowed without asking (`--allowedTools`). MCP tools are named
    /// `mcp__<server>__<tool>`; `mcp__<server>` allows all of a server's tools.
    pub fn allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Tools never allowed (`--disallowedTools`).
    pub fn disallowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.disallowed_tools
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// The permission mode (`--permission-mode`). When running as root the
    /// CLI refuses `bypassPermissions` unless `IS_SANDBOX=1` is in its environment.
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = Some(mode);
        self
    }

    /// The most model turns per query (`--max-turns`).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns);
        self
    }

    /// The most to spend, in US dollars (`--max-budget-usd`).
    pub fn max_budget_usd(mut self, usd: f64) -> Self {
        self.max_budget_usd = Some(usd);
        self
    }

    /// The working directory of the CLI.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Another directory the CLI may work in (`--add-dir`); may be repeated.
    pub fn add_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.add_dirs.push(dir.into());
        self
    }

    /// An environment variable for the CLI; may be repeated.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Settings as a JSON string or the path of a settings file (`--settings`).
    pub fn settings(mut self, settings: impl Into<String>) -> Self {
        self.settings = Some(settings.into());
        self
    }

    /// Which settings files the CLI loads (`--setting-sources`).
    pub fn setting_sources(mut self, sources: impl IntoIterator<Item = SettingSource>) -> Self {
        self.setting_sources = Some(sources.into_iter().collect());
        self
    }

    /// An in-process MCP server. The CLI sees its tools as
    /// `mcp__<server>__<tool>` and calls them through this process.
    pub fn mcp_server(mut self, server: Server) -> Self {
        self.mcp_servers.push(server.into());
        self
    }

    /// Several in-process MCP servers.
    pub fn mcp_servers(mut self, servers: impl IntoIterator<Item = Server>) -> Self {
        self.mcp_servers.extend(servers.into_iter().map(Into::into));
        self
    }

    /// An rmcp server (any `rmcp::ServerHandler`, `#[tool_router]` ones
    /// included) in process under `name`, served like
    /// [`mcp_server`](Self::mcp_server)'s. Feature `rmcp`.
    #[cfg(feature = "rmcp")]
    pub fn rmcp_server<H>(mut self, name: impl Into<String>, handler: H) -> Self
    where
        H: crate::mcp::rmcp_server::rmcp::ServerHandler,
    {
        let server = crate::mcp::rmcp_server::RmcpServer::new(handler);
        self.mcp_servers.push(InProcessServer::new(name, server));
        self
    }

    /// External MCP servers from a JSON file of the form
    /// `{"mcpServers": {...}}` (`--mcp-config`). Replaces what
    /// [`mcp_config_json`](Self::mcp_config_json) or
    /// [`mcp_server_config`](Self::mcp_server_config) set.
    pub fn mcp_config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.mcp_config = Some(McpConfig::Path(path.into()));
        self
    }

    /// External MCP servers as a JSON value of the form
    /// `{"mcpServers": {...}}`, passed to the CLI as given (`--mcp-config`).
    /// Replaces what [`mcp_config_file`](Self::mcp_config_file) or
    /// [`mcp_server_config`](Self::mcp_server_config) set.
    pub fn mcp_config_json(mut self, config: Value) -> Self {
        self.mcp_config = Some(McpConfig::Json(config));
        self
    }

    /// One MCP server by name: external (stdio, SSE or HTTP, run by the CLI
    /// itself) or in process (an [`McpServerConfig::InProcess`], which must
    /// be named after its server, as [`mcp_server`](Self::mcp_server) does).
    ///
    /// ```
    /// use claude_agent::{McpServerConfig, Options};
    /// let options = Options::new().mcp_server_config(
    ///     "files",
    ///     McpServerConfig::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]),
    /// );
    /// # let _ = options;
    /// ```
    pub fn mcp_server_config(
        mut self,
        name: impl Into<String>,
        config: impl Into<McpServerConfig>,
    ) -> Self {
        let (name, config) = (name.into(), config.into());
        match &mut self.mcp_config {
            Some(McpConfig::Servers(map)) => {
                map.insert(name, config);
            }
            _ => {
                self.mcp_config = Some(McpConfig::Servers(BTreeMap::from([(name, config)])));
            }
        }
        self
    }

    /// Only the MCP servers given here, none from settings files (`--strict-mcp-config`).
    pub fn strict_mcp_config(mut self, strict: bool) -> Self {
        self.strict_mcp_config = strict;
        self
    }

    /// Resumes the session with this id (`--resume`).
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.resume = Some(session_id.into());
        self
    }

    /// Continues the most recent session in the working directory (`--continue`).
    pub fn continue_conversation(mut self, yes: bool) -> Self {
        self.continue_conversation = yes;
        self
    }

    /// When resuming, starts a new session id instead of reusing the old one (`--fork-session`).
    pub fn fork_session(mut self, yes: bool) -> Self {
        self.fork_session = yes;
        self
    }

    /// The id (a UUID) of the new session (`--session-id`).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Streams partial messages ([`Message::StreamEvent`](crate::Message)) as the model writes.
    pub fn include_partial_messages(mut self, yes: bool) -> Self {
        self.include_partial_messages = yes;
        self
    }

    /// Asks `callback` before every tool use that is not already allowed.
    ///
    /// ```
    /// use claude_agent::{Options, PermissionResult};
    ///
    /// let options = Options::new().can_use_tool(|tool, _input, _ctx| async move {
    ///     if tool.starts_with("mcp__calc__") {
    ///         PermissionResult::allow()
    ///     } else {
    ///         PermissionResult::deny("only calculator tools")
    ///     }
    /// });
    /// # let _ = options;
    /// ```
    pub fn can_use_tool<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(String, Value, PermissionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PermissionResult> + Send + 'static,
    {
        self.can_use_tool = Some(boxed_can_use_tool(callback));
        self
    }

    /// Runs `callback` on `event` for tools matching `matcher` (`None`: every tool).
    ///
    /// ```
    /// use claude_agent::{HookEvent, HookMatcher, HookOutput, Options};
    ///
    /// let options = Options::new().hook(
    ///     HookEvent::PreToolUse,
    ///     HookMatcher::new(Some("Bash")),
    ///     |_input, _ctx| async move { HookOutput::deny_tool("no shell here") },
    /// );
    /// # let _ = options;
    /// ```
    pub fn hook<F, Fut>(mut self, event: HookEvent, matcher: HookMatcher, callback: F) -> Self
    where
        F: Fn(HookInput, crate::callbacks::HookContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HookOutput> + Send + 'static,
    {
        let callback: HookFn = boxed_hook(callback);
        self.hooks.push((event, matcher.with_callback(callback)));
        self
    }

    /// A custom subagent the model may delegate to.
    pub fn agent(mut self, name: impl Into<String>, agent: AgentDefinition) -> Self {
        self.agents.insert(name.into(), agent);
        self
    }

    /// The CLI executable to run, instead of searching for one.
    pub fn cli_path(mut self, path: impl AsRef<Path>) -> Self {
        self.cli_path = Some(path.as_ref().to_path_buf());
        self
    }

    /// An extra CLI flag, `--<flag>` or `--<flag>=<value>`.
    pub fn extra_arg(mut self, flag: impl Into<String>, value: Option<String>) -> Self {
        self.extra_args.push((flag.into(), value));
        self
    }

    /// Called with each line the CLI writes to stderr.
    pub fn stderr(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.stderr = Some(Arc::new(callback));
        self
    }

    /// The longest line accepted from the CLI, in bytes (default
    /// [`DEFAULT_MAX_LINE_BYTES`]). A longer line is skipped and reported as
    /// [`Error::LineTooLong`](crate::Error::LineTooLong); the session goes on.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = Some(bytes);
        self
    }

    /// How long to wait for the answer to a control request (default 60 s).
    pub fn control_timeout(mut self, timeout: Duration) -> Self {
        self.control_timeout = Some(timeout);
        self
    }

    /// How many bytes of messages the SDK keeps for you while you do not
    /// read them (default [`DEFAULT_MAX_BUFFERED_BYTES`]). The SDK reads the
    /// CLI's output all the time, so that tool calls and control requests
    /// are served however slowly you read; messages wait in a queue of this
    /// size. When one more would pass it, the session ends with
    /// [`Error::MessageBufferFull`](crate::Error::MessageBufferFull), after
    /// the messages queued before it: memory stays bounded and no message
    /// is dropped silently. One message is always accepted, however big.
    pub fn max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_bytes = Some(bytes);
        self
    }

    /// How long shutdown waits before escalating to SIGTERM and SIGKILL.
    pub fn shutdown_timeouts(mut self, timeouts: ShutdownTimeouts) -> Self {
        self.shutdown_timeouts = timeouts;
        self
    }

    pub(crate) fn effective_max_line_bytes(&self) -> usize {
        self.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES)
    }

    pub(crate) fn effective_max_buffered_bytes(&self) -> usize {
        self.max_buffered_bytes
            .unwrap_or(DEFAULT_MAX_BUFFERED_BYTES)
    }

    /// Every in-process server: those of [`mcp_server`](Self::mcp_server)
    /// and the `InProcess` ones of [`mcp_server_config`](Self::mcp_server_config).
    pub(crate) fn in_process_servers(&self) -> crate::Result<Vec<InProcessServer>> {
        let mut servers = self.mcp_servers.clone();
        if let Some(McpConfig::Servers(map)) = &self.mcp_config {
            for (name, config) in map {
                if let McpServerConfig::InProcess(server) = config {
                    if server.name() != name {
                        return Err(crate::Error::InvalidOptions(format!(
                            "in-process server {:?} must be listed under its own name, not {name:?}",
                            server.name()
                        )));
                    }
                    servers.push(server.clone());
                }
            }
        }
        Ok(servers)
    }

    pub(crate) fn effective_control_timeout(&self) -> Duration {
        self.control_timeout.unwrap_or(DEFAULT_CONTROL_TIMEOUT)
    }

    pub(crate) fn setting_sources_arg(&self) -> Option<String> {
        self.setting_sources
            .as_ref()
            .map(|s| s.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(","))
    }
}
