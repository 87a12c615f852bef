//! The settings of the official SDKs beyond the core ones: thinking,
//! structured output, checkpointing, sandbox, plugins, skills, session and
//! prompt details, elicitation and dialog callbacks, the custom spawn hook. Every setter here *replaces*,
//! except [`plugin`](Options::plugin) and [`tool_alias`](Options::tool_alias),
//! which add.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{
    AskUserQuestionConfig, DEFAULT_CONTROL_TIMEOUT, DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_LINE_BYTES, McpConfig, Options, Plugin, SandboxSettings, Skills, SystemPrompt,
    Thinking,
};
use crate::callbacks::DialogContext;
use crate::protocol::{
    Effort, ElicitationRequest, ElicitationResponse, UserDialogRequest, UserDialogResult,
};
use crate::protocol::{InProcessServer, InitializeRequest, McpServerConfig};
use crate::spawn::CliCommand;

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
            init.plugins = Some(
                self.plugins
                    .iter()
                    .map(|p| {
                        let mut plugin = serde_json::Map::new();
                        plugin.insert("type".into(), "local".into());
                        plugin.insert("path".into(), p.path.to_string_lossy().into());
                        if p.skip_mcp_discovery {
                            plugin.insert("skipMcpDiscovery".into(), true.into());
                        }
                        Value::Object(plugin)
                    })
                    .collect(),
            );
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
