//! [`Options`]: everything a session can be configured with.
//!
//! * `mod.rs` — the struct, the builder contract, the core settings, then
//!   thinking, structured output, checkpointing, sandbox, plugins, skills
//!   and the other settings of the official SDKs;
//! * `types.rs` — their value types.

mod types;

pub use types::{
    AskUserQuestionConfig, CliTelemetry, Plugin, SYSTEM_PROMPT_DYNAMIC_BOUNDARY, SandboxSettings,
    SettingSource, Skills, SystemPrompt, Thinking,
};

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::callbacks::{
    CanUseToolFn, DialogContext, HookFn, HookMatcher, PermissionContext, boxed_can_use_tool,
    boxed_hook,
};
use crate::cli_version::CliVersionPolicy;
use crate::mcp::Server;
use crate::protocol::InProcessServer;
use crate::protocol::{
    AgentDefinition, Effort, ElicitationRequest, ElicitationResponse, HookEvent, HookInput,
    HookOutput, InitializeRequest, McpServerConfig, PermissionMode, PermissionResult,
    UserDialogRequest, UserDialogResult,
};
use crate::spawn::{CliCommand, SpawnFn};
use crate::transport::ShutdownTimeouts;

/// The default cap on one line from the CLI: 256 MiB (the CLI's own limit on
/// its input lines is 256 Mi characters).
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// The default time to wait for the answer to a control request.
pub const DEFAULT_CONTROL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default budget for messages read from the CLI but not yet by you:
/// 256 MiB (as much as one line may hold).
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 256 * 1024 * 1024;

/// The default limit of a session's transcript with a session store: 64 MiB.
pub const DEFAULT_MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;

/// The default time a session store may take for one call.
pub const DEFAULT_SESSION_STORE_TIMEOUT: Duration = Duration::from_secs(60);

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
    pub(crate) cli_telemetry: Option<CliTelemetry>,
    pub(crate) mcp_servers_via_initialize: bool,
    pub(crate) plugins_via_initialize: bool,
    pub(crate) cli_version_policy: CliVersionPolicy,
    pub(crate) session_store: Option<crate::sessions::store::SharedStore>,
    pub(crate) session_store_flush: crate::sessions::SessionStoreFlush,
    pub(crate) max_transcript_bytes: Option<u64>,
    pub(crate) session_store_timeout: Option<Duration>,
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
    ///
    /// [`BuiltinTool::parse`](crate::tools::BuiltinTool::parse) reads a
    /// built-in tool's input as its type:
    ///
    /// ```
    /// use claude_code_agent::tools::BuiltinTool;
    /// use claude_code_agent::{Options, PermissionResult};
    ///
    /// let options = Options::new().can_use_tool(|tool, input, _ctx| async move {
    ///     match BuiltinTool::parse(&tool, &input) {
    ///         BuiltinTool::Bash(bash) if bash.command.starts_with("git ") => PermissionResult::allow(),
    ///         BuiltinTool::Edit(edit) if edit.file_path.contains("/src/") => PermissionResult::allow(),
    ///         _ => PermissionResult::deny("only git, and edits under src/"),
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

    /// Keeps every session's transcript in `store` too, so that another
    /// machine resumes it (docs/sessions.md). The CLI still writes its own
    /// files (in `CLAUDE_CONFIG_DIR`, which may be a fresh temporary folder
    /// per session) and sends each batch of entries it writes on stdout
    /// (`--session-mirror`); the SDK appends them to the store, all of a
    /// turn before its `Result` reaches you. With
    /// [`resume`](Self::resume), the session is first loaded from the store
    /// into the CLI's projects folder (replacing any copy there); with
    /// [`continue_conversation`](Self::continue_conversation), the store's
    /// newest session of the working directory is resumed.
    ///
    /// A store that fails (after three tries) or does not answer within
    /// [`session_store_timeout`](Self::session_store_timeout) ends the
    /// session with [`Error::SessionStore`](crate::Error::SessionStore), and
    /// a transcript past [`max_transcript_bytes`](Self::max_transcript_bytes)
    /// with [`Error::TranscriptTooLarge`](crate::Error::TranscriptTooLarge):
    /// never a transcript silently lost. Not with
    /// [`persist_session(false)`](Self::persist_session).
    ///
    /// ```
    /// use claude_code_agent::Options;
    /// use claude_code_agent::sessions::DirSessionStore;
    ///
    /// let options = Options::new()
    ///     .session_store(DirSessionStore::new("/mnt/shared/sessions"))
    ///     .resume("0b0f6c2e-3f43-4d43-9f5b-0d4bb1a6a8f3");
    /// # let _ = options;
    /// ```
    pub fn session_store(mut self, store: impl crate::sessions::SessionStore) -> Self {
        self.session_store = Some(std::sync::Arc::new(store));
        self
    }

    /// When the transcript's new entries are appended to the
    /// [`session_store`](Self::session_store) (default
    /// [`SessionStoreFlush::Batched`](crate::sessions::SessionStoreFlush::Batched)).
    pub fn session_store_flush(mut self, flush: crate::sessions::SessionStoreFlush) -> Self {
        self.session_store_flush = flush;
        self
    }

    /// The largest transcript a session with a
    /// [`session_store`](Self::session_store) may have, as JSONL, each of
    /// its subagents' counted apart (default
    /// [`DEFAULT_MAX_TRANSCRIPT_BYTES`]). Past it, the session ends with
    /// [`Error::TranscriptTooLarge`](crate::Error::TranscriptTooLarge).
    pub fn max_transcript_bytes(mut self, bytes: u64) -> Self {
        self.max_transcript_bytes = Some(bytes);
        self
    }

    /// How long one call of the [`session_store`](Self::session_store) may
    /// take (default [`DEFAULT_SESSION_STORE_TIMEOUT`]).
    pub fn session_store_timeout(mut self, timeout: Duration) -> Self {
        self.session_store_timeout = Some(timeout);
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

// ---------------------------------------------------------------------------
// The settings of the official SDKs beyond the core ones: thinking,
// structured output, checkpointing, sandbox, plugins, skills, session and
// prompt details, elicitation and dialog callbacks, the custom spawn hook. Every setter here *replaces*,
// except [`plugin`](Options::plugin) and [`tool_alias`](Options::tool_alias),
// which add.

impl Options {
    /// Extended thinking (`--thinking`, `--max-thinking-tokens`,
    /// `--thinking-display`); takes precedence over
    /// [`max_thinking_tokens`](Self::max_thinking_tokens). Unset: the
    /// model's default. Replaces.
    pub fn thinking(mut self, thinking: Thinking) -> Self {
        self.thinking = Some(thinking);
        self
    }

    /// The thinking budget in tokens (`--max-thinking-tokens`; `0` turns
    /// thinking off, `--thinking=disabled`, as the TypeScript SDK does).
    /// Deprecated in both official SDKs in favour of
    /// [`thinking`](Self::thinking). Replaces.
    pub fn max_thinking_tokens(mut self, tokens: u64) -> Self {
        self.max_thinking_tokens = Some(tokens);
        self
    }

    /// How hard the model works (`--effort`). Unset: the CLI's default
    /// (`medium` on models with effort levels). Replaces.
    pub fn effort(mut self, effort: Effort) -> Self {
        self.effort = Some(effort);
        self
    }

    /// Structured output: the final answer must match this JSON schema
    /// (`--json-schema`). The model answers through the CLI's
    /// `StructuredOutput` tool; the value arrives in
    /// [`ResultMessage::structured_output`](crate::ResultMessage). Replaces.
    pub fn output_format(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// [`output_format`](Self::output_format) with the schema derived from
    /// `T` (decode the answer with
    /// [`ResultMessage::structured_output`](crate::ResultMessage) and
    /// `serde_json::from_value::<T>`).
    ///
    /// ```
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Answer { n: u32 }
    /// let options = claude_code_agent::Options::new().output_type::<Answer>();
    /// # let _ = options;
    /// ```
    pub fn output_type<T: schemars::JsonSchema + ?Sized>(self) -> Self {
        self.output_format(crate::mcp::server::tool_schema_for::<T>())
    }

    /// File checkpointing: the CLI records the files its tools change, so
    /// that [`rewind_files`](crate::Control::rewind_files) can put them back
    /// (env `CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=true`). Off by
    /// default. Send prompts with a [`UserInput::uuid`](crate::UserInput::uuid)
    /// to have an id to rewind to. Replaces.
    pub fn enable_file_checkpointing(mut self, yes: bool) -> Self {
        self.file_checkpointing = yes;
        self
    }

    /// Sandboxing of the commands the CLI runs, merged into the `--settings`
    /// JSON as `"sandbox"` (a [`settings`](Self::settings) file is read and
    /// merged, as the Python SDK does). With `enabled` and no
    /// `fail_if_unavailable`, that is set to `true` (the TypeScript SDK's
    /// default): a CLI that cannot sandbox then fails instead of running
    /// commands unsandboxed. Replaces.
    pub fn sandbox(mut self, sandbox: SandboxSettings) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// A plugin to load (`--plugin-dir`, or `--plugin-dir-no-mcp`). Adds.
    pub fn plugin(mut self, plugin: Plugin) -> Self {
        self.plugins.push(plugin);
        self
    }

    /// Which skills the model may use: allows the `Skill` tool (all) or
    /// `Skill(<name>)` for each name, offers only the named ones
    /// (`initialize.skills`), and — when
    /// [`setting_sources`](Self::setting_sources) is unset — loads the user
    /// and project settings, where skills live. Names with `(`, `)`, `,`,
    /// control characters, a leading `/`, `*` or surrounding spaces are
    /// refused, as the official SDKs do. Replaces.
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills = Some(skills);
        self
    }

    /// Beta features of the Messages API (`--betas`, e.g.
    /// `context-1m-2025-08-07`): sent in the `anthropic-beta` header.
    /// Replaces.
    pub fn betas<I, S>(mut self, betas: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.betas = betas.into_iter().map(Into::into).collect();
        self
    }

    /// The MCP tool that answers permission prompts
    /// (`--permission-prompt-tool`). Cannot be combined with
    /// [`can_use_tool`](Self::can_use_tool). Replaces.
    pub fn permission_prompt_tool_name(mut self, tool: impl Into<String>) -> Self {
        self.permission_prompt_tool = Some(tool.into());
        self
    }

    /// Allows switching to `bypassPermissions` later
    /// (`--allow-dangerously-skip-permissions`). Running as root the CLI
    /// refuses this flag (exit 1) unless `IS_SANDBOX=1` is in its
    /// environment. Replaces.
    pub fn allow_dangerously_skip_permissions(mut self, yes: bool) -> Self {
        self.allow_dangerously_skip_permissions = yes;
        self
    }

    /// Hook lifecycle messages (`--include-hook-events`): `system`
    /// `hook_started` / `hook_response` for hooks from settings files (not
    /// for the SDK's callback hooks). Replaces.
    pub fn include_hook_events(mut self, yes: bool) -> Self {
        self.include_hook_events = yes;
        self
    }

    /// Resumes only up to this message of the [`resume`](Self::resume)d
    /// session (`--resume-session-at`; needs `resume`). Replaces.
    pub fn resume_session_at(mut self, message_uuid: impl Into<String>) -> Self {
        self.resume_session_at = Some(message_uuid.into());
        self
    }

    /// Drops this turn when resuming at
    /// [`resume_session_at`](Self::resume_session_at)
    /// (`--resume-drops-turn`; needs it). Replaces.
    pub fn resume_drops_turn(mut self, message_uuid: impl Into<String>) -> Self {
        self.resume_drops_turn = Some(message_uuid.into());
        self
    }

    /// A token budget the model is told about for the task
    /// (`--task-budget`; the API's `output_config.task_budget`). Replaces.
    pub fn task_budget(mut self, total_tokens: u64) -> Self {
        self.task_budget = Some(total_tokens);
        self
    }

    /// Runs the main thread as this agent (`--agent`): its prompt, tools
    /// and model. It may be one defined with [`agent`](Self::agent) or in
    /// the settings. The CLI ignores a name it does not know. Replaces.
    pub fn main_agent(mut self, name: impl Into<String>) -> Self {
        self.main_agent = Some(name.into());
        self
    }

    /// The system prompt is read from this file (`--system-prompt-file`).
    /// Replaces any system prompt set before.
    pub fn system_prompt_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.system_prompt = SystemPrompt::File(path.into());
        self
    }

    /// The session's title (`initialize.title`); the CLI answers with a
    /// `system` `session_title_changed` message. Replaces.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.initialize.title = Some(title.into());
        self
    }

    /// A trusted folder whose `.claude` settings are used instead of the
    /// working directory's (`--project-config-root`). Replaces.
    pub fn project_config_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project_config_root = Some(dir.into());
        self
    }

    /// Claude Code's default set of built-in tools (`--tools=default`).
    /// Replaces [`tools`](Self::tools).
    pub fn tools_preset(mut self) -> Self {
        self.tools = Some(vec!["default".to_owned()]);
        self
    }

    /// Whether the CLI writes the session to disk (default `true`;
    /// `false` passes `--no-session-persistence`: the session cannot be
    /// resumed). Replaces.
    pub fn persist_session(mut self, yes: bool) -> Self {
        self.no_session_persistence = !yes;
        self
    }

    /// Managed (policy-tier) settings as JSON (`--managed-settings`); the
    /// CLI keeps only their restrictive parts. Replaces.
    pub fn managed_settings(mut self, settings: impl Into<String>) -> Self {
        self.managed_settings = Some(settings.into());
        self
    }

    /// Who answers permission prompts: `host` (the default: this SDK, or
    /// the CLI's rules) or `none` (`--permission-prompts`). Replaces.
    pub fn permission_prompts(mut self, who: impl Into<String>) -> Self {
        self.permission_prompts = Some(who.into());
        self
    }

    /// The CLI's debug log (`--debug`, to its stderr). Replaces.
    pub fn debug(mut self, yes: bool) -> Self {
        self.debug = yes;
        self
    }

    /// The CLI's debug log, written to this file (`--debug-file`).
    /// Replaces.
    pub fn debug_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.debug_file = Some(path.into());
        self
    }

    /// Names the application using the SDK, for the CLI's analytics
    /// (env `CLAUDE_AGENT_SDK_CLIENT_APP`). Replaces.
    pub fn client_app(self, name: impl Into<String>) -> Self {
        self.env("CLAUDE_AGENT_SDK_CLIENT_APP", name)
    }

    /// Prompt suggestions after each turn (`initialize.promptSuggestions`;
    /// `prompt_suggestion` messages). Off by default. Replaces.
    pub fn prompt_suggestions(mut self, yes: bool) -> Self {
        self.initialize.prompt_suggestions = Some(yes);
        self
    }

    /// Instructions the model follows in plan mode
    /// (`initialize.planModeInstructions`). Replaces.
    pub fn plan_mode_instructions(mut self, text: impl Into<String>) -> Self {
        self.initialize.plan_mode_instructions = Some(text.into());
        self
    }

    /// Whether the system prompt is computed once and kept for the session
    /// (`initialize.systemPromptSnapshot`; the CLI's default is on).
    /// Replaces.
    pub fn system_prompt_snapshot(mut self, yes: bool) -> Self {
        self.initialize.system_prompt_snapshot = Some(yes);
        self
    }

    /// Leaves the per-session sections (working directory, date, git
    /// status…) out of the system prompt, so it caches across sessions
    /// (`initialize.excludeDynamicSections`). Replaces.
    pub fn exclude_dynamic_sections(mut self, yes: bool) -> Self {
        self.initialize.exclude_dynamic_sections = Some(yes);
        self
    }

    /// A tool name the model may emit for another tool
    /// (`initialize.toolAliases`; one hop). Adds; the later call wins for
    /// an alias.
    pub fn tool_alias(mut self, alias: impl Into<String>, tool: impl Into<String>) -> Self {
        self.initialize
            .tool_aliases
            .get_or_insert_with(Default::default)
            .insert(alias.into(), tool.into());
        self
    }

    /// Periodic summaries of running subagents
    /// (`initialize.agentProgressSummaries`). Off by default. Replaces.
    pub fn agent_progress_summaries(mut self, yes: bool) -> Self {
        self.initialize.agent_progress_summaries = Some(yes);
        self
    }

    /// Subagents' text reaches the stream as messages
    /// (`initialize.forwardSubagentText`). Off by default. Replaces.
    pub fn forward_subagent_text(mut self, yes: bool) -> Self {
        self.initialize.forward_subagent_text = Some(yes);
        self
    }

    /// Background tasks are stopped one by one
    /// ([`stop_task`](crate::Control::stop_task)); an interrupt leaves them
    /// running (`initialize.perTaskStopAffordance`). Off by default.
    /// Replaces.
    pub fn per_task_stop_affordance(mut self, yes: bool) -> Self {
        self.initialize.per_task_stop_affordance = Some(yes);
        self
    }

    /// Answers MCP servers' requests for input (`elicitation/create`, which
    /// the CLI forwards as an `elicitation` control request when no
    /// `Elicitation` hook answered it). Without it every elicitation is
    /// declined, as in the TypeScript SDK. Replaces.
    ///
    /// The CLI forwards elicitations of the external servers it runs
    /// (stdio, HTTP); it declares no elicitation capability to in-process
    /// servers, so theirs cannot be asked (docs/parity/options.md).
    ///
    /// ```
    /// use claude_code_agent::Options;
    /// use claude_code_agent::protocol::{ElicitationMode, ElicitationResponse};
    /// use serde_json::json;
    ///
    /// let options = Options::new().on_elicitation(|request, _ctx| async move {
    ///     match request.mode {
    ///         Some(ElicitationMode::Url) => ElicitationResponse::decline(),
    ///         _ => ElicitationResponse::accept(json!({"name": "Ada"})),
    ///     }
    /// });
    /// ```
    pub fn on_elicitation<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(ElicitationRequest, DialogContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ElicitationResponse> + Send + 'static,
    {
        self.on_elicitation = Some(Arc::new(move |request, ctx| {
            Box::pin(callback(request, ctx))
        }));
        self
    }

    /// Shows the CLI's dialogs (`request_user_dialog`) of the given kinds
    /// (`initialize.supportedDialogKinds`, e.g. `refusal_fallback_prompt`):
    /// the CLI sends only kinds declared here, and without any (the
    /// default, as in the TypeScript SDK) it sends none and each flow takes
    /// its no-dialog path. Answer [`UserDialogResult::Cancelled`] for what
    /// you cannot show. Replaces.
    pub fn on_user_dialog<K, F, Fut>(mut self, kinds: K, callback: F) -> Self
    where
        K: IntoIterator,
        K::Item: Into<String>,
        F: Fn(UserDialogRequest, DialogContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = UserDialogResult> + Send + 'static,
    {
        self.initialize.supported_dialog_kinds = Some(kinds.into_iter().map(Into::into).collect());
        self.on_user_dialog = Some(Arc::new(move |request, ctx| {
            Box::pin(callback(request, ctx))
        }));
        self
    }

    /// How the built-in `AskUserQuestion` tool asks (environment
    /// `CLAUDE_CODE_QUESTION_PREVIEW_FORMAT`, `CLAUDE_CODE_QUESTION_EXTENDED`,
    /// `CLAUDE_CODE_QUESTION_OPTIONAL_DESCRIPTIONS`, as the TypeScript SDK's
    /// `toolConfig` sets them). Replaces.
    pub fn ask_user_question(mut self, config: AskUserQuestionConfig) -> Self {
        self.ask_user_question = Some(config);
        self
    }

    /// Makes the CLI export its own OpenTelemetry traces
    /// ([`CliTelemetry`]: the variables it sets, where the spans go).
    /// With feature `opentelemetry` the CLI's spans are children of the
    /// session's span whether or not this is set (the session's trace
    /// context reaches the CLI as `TRACEPARENT`); this says whether the
    /// CLI exports them. Replaces.
    pub fn cli_telemetry(mut self, telemetry: CliTelemetry) -> Self {
        self.cli_telemetry = Some(telemetry);
        self
    }

    /// Delivers the external MCP servers of
    /// [`mcp_server_config`](Self::mcp_server_config) in the `initialize`
    /// request instead of `--mcp-config`, so that their `env` and
    /// `headers` stay off the command line (the TypeScript SDK's
    /// `mcpServersDelivery: 'initialize'`; the CLI then waits for
    /// `initialize` before it starts, `--await-initialize`). Off by
    /// default. Replaces.
    pub fn mcp_servers_via_initialize(mut self, yes: bool) -> Self {
        self.mcp_servers_via_initialize = yes;
        self
    }

    /// Delivers the [`plugin`](Self::plugin)s in the `initialize` request
    /// instead of `--plugin-dir` (the TypeScript SDK's `pluginDelivery:
    /// 'initialize'`). Off by default. Replaces.
    pub fn plugins_via_initialize(mut self, yes: bool) -> Self {
        self.plugins_via_initialize = yes;
        self
    }

    /// Sends every prompt as written (`client_composed: true` on each user
    /// message): no `@path` mention expansion, no slash-command dispatch,
    /// and none of the context the CLI attaches at the start of a turn.
    /// For prompts assembled from text the end user did not type. Off by
    /// default. Replaces.
    pub fn verbatim_prompts(mut self, yes: bool) -> Self {
        self.verbatim_prompts = yes;
        self
    }

    /// Starts the CLI your way: `spawn` gets the command the SDK would run
    /// ([`CliCommand`]: program, arguments, environment changes, working
    /// directory) and returns the one to run instead — the CLI inside a
    /// container (`docker exec -i`), on another machine (`ssh -T`), under a
    /// wrapper. See [`CliCommand`] for what the SDK still guarantees and
    /// what the wrapper then owns. Replaces.
    ///
    /// ```
    /// use claude_code_agent::{CliCommand, Options};
    /// let options = Options::new().spawn_with(|cmd: CliCommand| {
    ///     // Run the CLI under `nice`.
    ///     Ok(cmd.wrap("nice", ["-n", "10"]))
    /// });
    /// # let _ = options;
    /// ```
    pub fn spawn_with<F>(mut self, spawn: F) -> Self
    where
        F: Fn(CliCommand) -> std::io::Result<CliCommand> + Send + Sync + 'static,
    {
        self.spawn = Some(std::sync::Arc::new(spawn));
        self
    }
}

/// What the session and the command line read from the options.
impl Options {
    pub(crate) fn effective_max_line_bytes(&self) -> usize {
        self.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES)
    }

    /// The CLI's configuration folder: `CLAUDE_CONFIG_DIR` as the CLI will
    /// see it (from [`env`](Self::env), else this process's unless
    /// [`env_clear`](Self::env_clear)), else `~/.claude`.
    pub(crate) fn cli_config_dir(&self) -> Option<PathBuf> {
        let set = self
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "CLAUDE_CONFIG_DIR")
            .map(|(_, v)| v.clone());
        let from_env = match set {
            Some(v) => v.map(Into::into),
            None if self.env_clear => None,
            None => std::env::var_os("CLAUDE_CONFIG_DIR"),
        };
        if let Some(dir) = from_env.filter(|d: &std::ffi::OsString| !d.is_empty()) {
            return Some(PathBuf::from(dir));
        }
        crate::sessions::home_config_dir()
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

    /// The `initialize` fields set by options (the session adds hooks,
    /// agents and servers).
    pub(crate) fn initialize_request(&self) -> InitializeRequest {
        let mut init = self.initialize.clone();
        if let SystemPrompt::Blocks(blocks) = &self.system_prompt {
            init.system_prompt = Some(blocks.clone());
        }
        if self.mcp_servers_via_initialize
            && let Some(McpConfig::Servers(servers)) = &self.mcp_config
        {
            let external: std::collections::BTreeMap<_, _> = servers
                .iter()
                .filter(|(_, c)| !matches!(c, McpServerConfig::InProcess(_)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            init.mcp_servers = (!external.is_empty()).then_some(external);
        }
        if self.plugins_via_initialize && !self.plugins.is_empty() {
            init.plugins = Some(self.plugins.iter().map(Plugin::to_wire).collect());
        }
        if let Some(Skills::Named(names)) = &self.skills {
            init.skills = Some(names.clone());
        }
        init
    }

    pub(crate) fn setting_sources_arg(&self) -> Option<String> {
        self.setting_sources
            .as_ref()
            .map(|s| s.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(","))
    }
}
