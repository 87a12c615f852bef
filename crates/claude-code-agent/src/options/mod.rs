//! [`Options`]: everything a session can be configured with.
//!
//! * `mod.rs` — the struct, the builder contract, the core settings;
//! * `more.rs` — thinking, structured output, checkpointing, sandbox,
//!   plugins, skills and the other settings of the official SDKs;
//! * `types.rs` — their value types.

mod more;
mod types;

pub use types::{
    AskUserQuestionConfig, Plugin, SYSTEM_PROMPT_DYNAMIC_BOUNDARY, SandboxSettings, SettingSource,
    Skills, SystemPrompt, Thinking,
};

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::callbacks::{
    CanUseToolFn, HookFn, HookMatcher, PermissionContext, boxed_can_use_tool, boxed_hook,
};
use crate::cli_version::CliVersionPolicy;
use crate::mcp::Server;
use crate::protocol::InProcessServer;
use crate::protocol::{
    AgentDefinition, Effort, HookEvent, HookInput, HookOutput, InitializeRequest, McpServerConfig,
    PermissionMode, PermissionResult,
};
use crate::spawn::SpawnFn;
use crate::transport::ShutdownTimeouts;

/// The default cap on one line from the CLI: 256 MiB (the CLI's own limit on
/// its input lines is 256 Mi characters).
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// The default time to wait for the answer to a control request.
pub const DEFAULT_CONTROL_TIMEOUT: Duration = Duration::from_secs(60);

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
/// Built with chained setters; everything is optional, and every default is
/// the official SDKs' (nothing is passed to the CLI for a setting left
/// alone, so the CLI's own default applies).
///
/// **The builder contract.** A setter that takes one item *adds* it (its
/// name is singular: [`allow_tool`](Self::allow_tool),
/// [`disallow_tool`](Self::disallow_tool), [`add_dir`](Self::add_dir), [`env`](Self::env),
/// [`env_remove`](Self::env_remove), [`mcp_server`](Self::mcp_server),
/// [`mcp_server_config`](Self::mcp_server_config), [`hook`](Self::hook),
/// [`agent`](Self::agent), [`plugin`](Self::plugin),
/// [`extra_arg`](Self::extra_arg)); for a keyed item (an environment
/// variable, a server or agent name) the later call wins for that key. A
/// setter that takes a list or a single value *replaces* what an earlier
/// call set ([`tools`](Self::tools), [`allowed_tools`](Self::allowed_tools),
/// [`disallowed_tools`](Self::disallowed_tools),
/// [`mcp_servers`](Self::mcp_servers), [`betas`](Self::betas),
/// [`setting_sources`](Self::setting_sources), [`model`](Self::model), …).
/// Each setter's documentation says which it does.
///
/// ```
/// use claude_code_agent::{Options, PermissionMode};
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
    /// In call order; `None` removes the variable. The last entry for a key wins.
    pub(crate) env: Vec<(String, Option<String>)>,
    pub(crate) env_clear: bool,
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
    pub(crate) on_elicitation: Option<crate::callbacks::ElicitationFn>,
    pub(crate) on_user_dialog: Option<crate::callbacks::UserDialogFn>,
    pub(crate) hooks: Vec<(HookEvent, HookMatcher)>,
    pub(crate) agents: BTreeMap<String, AgentDefinition>,
    pub(crate) cli_path: Option<PathBuf>,
    pub(crate) extra_args: Vec<(String, Option<String>)>,
    pub(crate) stderr: Option<crate::transport::StderrCallback>,
    pub(crate) max_line_bytes: Option<usize>,
    pub(crate) control_timeout: Option<Duration>,
    pub(crate) max_buffered_bytes: Option<usize>,
    pub(crate) shutdown_timeouts: ShutdownTimeouts,
    pub(crate) thinking: Option<Thinking>,
    pub(crate) max_thinking_tokens: Option<u64>,
    pub(crate) effort: Option<Effort>,
    pub(crate) output_schema: Option<Value>,
    pub(crate) file_checkpointing: bool,
    pub(crate) sandbox: Option<SandboxSettings>,
    pub(crate) plugins: Vec<Plugin>,
    pub(crate) skills: Option<Skills>,
    pub(crate) betas: Vec<String>,
    pub(crate) permission_prompt_tool: Option<String>,
    pub(crate) allow_dangerously_skip_permissions: bool,
    pub(crate) include_hook_events: bool,
    pub(crate) resume_session_at: Option<String>,
    pub(crate) resume_drops_turn: Option<String>,
    pub(crate) task_budget: Option<u64>,
    pub(crate) main_agent: Option<String>,
    pub(crate) project_config_root: Option<PathBuf>,
    pub(crate) no_session_persistence: bool,
    pub(crate) managed_settings: Option<String>,
    pub(crate) permission_prompts: Option<String>,
    pub(crate) debug: bool,
    pub(crate) debug_file: Option<PathBuf>,
    /// Fields of the `initialize` request set by options (title, skills,
    /// tool aliases, …); the session adds hooks, agents and servers.
    pub(crate) initialize: InitializeRequest,
    pub(crate) spawn: Option<SpawnFn>,
    pub(crate) verbatim_prompts: bool,
    pub(crate) ask_user_question: Option<AskUserQuestionConfig>,
    pub(crate) mcp_servers_via_initialize: bool,
    pub(crate) plugins_via_initialize: bool,
    pub(crate) cli_version_policy: CliVersionPolicy,
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
            .field("on_elicitation", &self.on_elicitation.is_some())
            .field("on_user_dialog", &self.on_user_dialog.is_some())
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

    /// The model (`--model`), e.g. `claude-sonnet-4-5` or an alias like
    /// `sonnet`. Replaces.
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
    /// Replaces (see also [`tools_preset`](Self::tools_preset)).
    pub fn tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Tools allowed without asking (`--allowedTools`). MCP tools are named
    /// `mcp__<server>__<tool>`; `mcp__<server>` allows all of a server's
    /// tools.
    ///
    /// **Replaces** the list an earlier call set:
    /// `.allowed_tools(["Read"]).allowed_tools(["Grep"])` allows `Grep`
    /// only. [`allow_tool`](Self::allow_tool) adds one tool to the list.
    pub fn allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Adds one tool to those allowed without asking (see
    /// [`allowed_tools`](Self::allowed_tools), which replaces the list).
    pub fn allow_tool(mut self, tool: impl Into<String>) -> Self {
        self.allowed_tools.push(tool.into());
        self
    }

    /// Tools never allowed (`--disallowedTools`). **Replaces** the list an
    /// earlier call set; [`disallow_tool`](Self::disallow_tool) adds one.
    pub fn disallowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.disallowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Adds one tool to those never allowed (see
    /// [`disallowed_tools`](Self::disallowed_tools), which replaces the list).
    pub fn disallow_tool(mut self, tool: impl Into<String>) -> Self {
        self.disallowed_tools.push(tool.into());
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

    /// Sets an environment variable for the CLI, on top of the environment
    /// it inherits from this process. Adds; for the same key the later
    /// call (this or [`env_remove`](Self::env_remove)) wins. Variables the
    /// SDK sets itself (`CLAUDE_CODE_ENTRYPOINT`, …) can be overridden.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// Removes an inherited environment variable from the CLI's
    /// environment. Adds; for the same key the later call (this or
    /// [`env`](Self::env)) wins.
    pub fn env_remove(mut self, key: impl Into<String>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// Starts the CLI with none of this process's environment: only what
    /// [`env`](Self::env) and the SDK set (as the TypeScript SDK does when
    /// given `env`). The CLI then needs `PATH`, `HOME` and its credentials
    /// from [`env`](Self::env). Replaces.
    pub fn env_clear(mut self, clear: bool) -> Self {
        self.env_clear = clear;
        self
    }

    /// Settings as a JSON string or the path of a settings file
    /// (`--settings`). Replaces.
    pub fn settings(mut self, settings: impl Into<String>) -> Self {
        self.settings = Some(settings.into());
        self
    }

    /// Which settings files the CLI loads (`--setting-sources`); an empty
    /// list loads none. Unset, the CLI loads all. Replaces.
    pub fn setting_sources(mut self, sources: impl IntoIterator<Item = SettingSource>) -> Self {
        self.setting_sources = Some(sources.into_iter().collect());
        self
    }

    /// An in-process MCP server. The CLI sees its tools as
    /// `mcp__<server>__<tool>` and calls them through this process. Adds.
    pub fn mcp_server(mut self, server: Server) -> Self {
        self.mcp_servers.push(server.into());
        self
    }

    /// The in-process MCP servers. Replaces those an earlier
    /// [`mcp_server`](Self::mcp_server), `mcp_servers` or `rmcp_server` call set.
    pub fn mcp_servers(mut self, servers: impl IntoIterator<Item = Server>) -> Self {
        self.mcp_servers = servers.into_iter().map(Into::into).collect();
        self
    }

    /// An rmcp server (any `rmcp::ServerHandler`, `#[tool_router]` ones
    /// included) in process under `name`, served like
    /// [`mcp_server`](Self::mcp_server)'s. Adds. Feature `rmcp`.
    #[cfg(feature = "rmcp")]
    pub fn rmcp_server<H>(mut self, name: impl Into<String>, handler: H) -> Self
    where
        H: rmcp::ServerHandler,
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
    /// Adds; the later call wins for a name.
    ///
    /// ```
    /// use claude_code_agent::{McpServerConfig, Options};
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
    /// use claude_code_agent::{Options, PermissionResult};
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

    /// Runs `callback` on `event` for tools matching `matcher` (`None`:
    /// every tool). Adds.
    ///
    /// ```
    /// use claude_code_agent::{HookEvent, HookMatcher, HookOutput, Options};
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

    /// A custom subagent the model may delegate to (`initialize.agents`).
    /// Adds; the later call wins for a name. (The main thread's agent is
    /// [`main_agent`](Self::main_agent).)
    pub fn agent(mut self, name: impl Into<String>, agent: AgentDefinition) -> Self {
        self.agents.insert(name.into(), agent);
        self
    }

    /// The CLI executable to run, instead of searching for one.
    pub fn cli_path(mut self, path: impl AsRef<Path>) -> Self {
        self.cli_path = Some(path.as_ref().to_path_buf());
        self
    }

    /// An extra CLI flag, `--<flag>` or `--<flag>=<value>`. Adds (a flag
    /// may be given twice).
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
    /// [`DEFAULT_MAX_LINE_BYTES`]). A longer line is skipped, discarded as it
    /// arrives, and reported as a [`Message::SkippedLine`](crate::Message::SkippedLine)
    /// ([`SkipReason::TooLong`](crate::message::SkipReason::TooLong)); the
    /// session goes on.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = Some(bytes);
        self
    }

    /// How long to wait for the answer to a control request (default 60 s;
    /// the `initialize` handshake waits at least that long whatever this
    /// says). Replaces.
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

    /// What to do when the CLI's version (from its `initialize` answer) is
    /// outside [`OLDEST_TESTED_CLI_VERSION`](crate::OLDEST_TESTED_CLI_VERSION)`..=`[`NEWEST_TESTED_CLI_VERSION`](crate::NEWEST_TESTED_CLI_VERSION):
    /// warn once per process on stderr (the default), fail with
    /// [`Error::UntestedCliVersion`](crate::Error::UntestedCliVersion), or nothing.
    pub fn cli_version_policy(mut self, policy: CliVersionPolicy) -> Self {
        self.cli_version_policy = policy;
        self
    }
}
