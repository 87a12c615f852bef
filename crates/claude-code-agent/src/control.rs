//! [`Control`]: the control requests of a running session, shared by
//! [`Client`](crate::Client) (which dereferences to it) and
//! [`Query`](crate::Query) (once started).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::options::Plugin;
use crate::protocol::{
    BackgroundTasksResponse, ContextDetail, ContextUsage, InitializeRequest, InitializeResponse,
    InterruptResponse, McpPermissionOverrideResponse, McpReadResourceResponse, McpServerConfig,
    McpSetServersResponse, McpStatusResponse, PermissionMode, ReadFileResponse,
    ReloadOutputStylesResponse, ReloadPluginsRequest, ReloadPluginsResponse, ReloadSkillsResponse,
    RewindFilesResult, SdkRequest, SetModelResponse, SetPermissionModeResponse, ThinkingDisplay,
};
use crate::session::{Connection, Session};

/// The arguments of [`Control::reload_plugins`] (TypeScript
/// `reloadPlugins({holdOnCacheImpact, addPlugins, refuseIfBusy})`); the
/// default reloads unconditionally.
///
/// ```
/// use claude_code_agent::{Plugin, ReloadPluginsOptions};
/// let options = ReloadPluginsOptions::new()
///     .hold_on_cache_impact(true)
///     .add_plugin(Plugin::local("/opt/plugins/lint"))
///     .refuse_if_busy(true);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReloadPluginsOptions {
    /// First run the check the interactive `/reload-plugins` makes: when
    /// applying would change the tool list while the conversation's prompt
    /// cache depends on it, nothing is applied and the answer carries
    /// `held: true` and `cache_impact`; ask again without it to apply
    /// anyway (`hold_on_cache_impact`).
    pub hold_on_cache_impact: bool,
    /// Plugins to load as well, as if each had been given with
    /// [`Options::plugin`](crate::Options::plugin) at launch; loaded plugins
    /// stay. Each path must be absolute (`add_plugins`).
    pub add_plugins: Vec<Plugin>,
    /// Reload nothing when the session is busy (a turn running or queued,
    /// an unanswered permission prompt, background agents or workflows): the
    /// request fails with [`Error::ControlError`] (error code
    /// `reload_plugins_busy`); ask again once idle. Only a CLI whose
    /// `system/init` lists the capability `reload_plugins_refuse_if_busy_v1`
    /// is sure to honour it (`refuse_if_busy`).
    pub refuse_if_busy: bool,
}

impl ReloadPluginsOptions {
    /// An unconditional reload, adding nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`hold_on_cache_impact`](Self::hold_on_cache_impact).
    pub fn hold_on_cache_impact(mut self, yes: bool) -> Self {
        self.hold_on_cache_impact = yes;
        self
    }

    /// Adds one of [`add_plugins`](Self::add_plugins).
    pub fn add_plugin(mut self, plugin: Plugin) -> Self {
        self.add_plugins.push(plugin);
        self
    }

    /// Sets [`refuse_if_busy`](Self::refuse_if_busy).
    pub fn refuse_if_busy(mut self, yes: bool) -> Self {
        self.refuse_if_busy = yes;
        self
    }
}

/// The control requests of one running session, and what the CLI said in
/// its `initialize` answer.
///
/// Cheap to clone; every method takes `&self`, so it can be used from any
/// task while another reads the messages. Once the session is over, every
/// request fails at once ([`Error::Closed`], or how the CLI ended).
/// Requests wait for their answer at most
/// [`Options::control_timeout`](crate::Options::control_timeout)
/// ([`Error::ControlTimeout`]); a refusal is an [`Error::ControlError`]
/// with the CLI's message.
#[derive(Clone)]
pub struct Control {
    conn: Arc<Connection>,
    init: Arc<InitializeResponse>,
    request: Arc<InitializeRequest>,
    pid: u32,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Control {
    pub(crate) fn new(session: &Session, init: InitializeResponse) -> Self {
        let conn = session.conn.clone();
        let pid = conn.pid();
        Self {
            conn,
            init: Arc::new(init),
            request: Arc::new(session.initialize_request().clone()),
            pid,
        }
    }

    /// Sends the session's `initialize` request again and returns the
    /// CLI's fresh answer (the cached [`initialize_response`](Self::initialize_response)
    /// stays the first one). The CLI re-applies the hooks, agents and
    /// in-process servers it names.
    pub async fn reinitialize(&self) -> Result<InitializeResponse> {
        self.typed(SdkRequest::Initialize((*self.request).clone()))
            .await
    }

    /// What the CLI said about itself in the handshake: its version, slash
    /// commands, models, agents, account, output styles, its own pid (as
    /// the CLI sees it: inside a container, the container's).
    pub fn initialize_response(&self) -> &InitializeResponse {
        &self.init
    }

    /// The pid of the process the SDK started: the CLI, or the wrapper of
    /// [`Options::spawn_with`](crate::Options::spawn_with).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    async fn typed<T: serde::de::DeserializeOwned>(&self, request: SdkRequest) -> Result<T> {
        self.conn.request_typed(request).await
    }

    async fn unit(&self, request: SdkRequest) -> Result<()> {
        self.conn.request(request).await.map(drop)
    }

    /// Sends any control request and returns the CLI's answer as JSON.
    ///
    /// ```no_run
    /// # async fn run(client: claude_code_agent::Client) -> claude_code_agent::Result<()> {
    /// use claude_code_agent::protocol::SdkRequest;
    /// let settings = client.control_request(SdkRequest::get_settings()).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn control_request(&self, request: impl Into<SdkRequest>) -> Result<Value> {
        self.conn.request(request.into()).await
    }

    /// Stops the current turn. The CLI answers with the prompts still queued.
    pub async fn interrupt(&self) -> Result<InterruptResponse> {
        self.typed(SdkRequest::interrupt()).await
    }

    /// Stops the current turn and, with `cancel_queued`, drops the prompts
    /// queued behind it (answered in
    /// [`cancelled`](InterruptResponse::cancelled)).
    pub async fn interrupt_with(&self, cancel_queued: bool) -> Result<InterruptResponse> {
        self.typed(SdkRequest::interrupt_and_cancel_queued(cancel_queued))
            .await
    }

    /// Changes the permission mode for the rest of the session. Returns the
    /// mode now in effect, as the CLI reports it (`None` if it does not say).
    /// A mode the CLI does not know is an [`Error::ControlError`] with code
    /// `invalid_mode`.
    pub async fn set_permission_mode(
        &self,
        mode: PermissionMode,
    ) -> Result<Option<PermissionMode>> {
        let r: SetPermissionModeResponse =
            self.typed(SdkRequest::set_permission_mode(mode)).await?;
        Ok(r.mode)
    }

    /// Changes the model; `None` goes back to the CLI's default model (not
    /// the one the session started with). Returns the model now in use.
    pub async fn set_model(&self, model: Option<&str>) -> Result<Option<String>> {
        let r: SetModelResponse = self
            .typed(SdkRequest::set_model(model.map(str::to_owned)))
            .await?;
        Ok(r.model)
    }

    /// Changes the thinking budget for the rest of the session (`None`: the
    /// model's default), and optionally how thinking is shown.
    pub async fn set_max_thinking_tokens(
        &self,
        tokens: Option<u64>,
        display: Option<ThinkingDisplay>,
    ) -> Result<()> {
        self.unit(SdkRequest::set_max_thinking_tokens_with_display(
            tokens, display,
        ))
        .await
    }

    /// How full the context window is, and with what (`detail`: `None` or
    /// [`ContextDetail::Summary`] as the official SDKs send by default;
    /// `Full` makes the CLI count tokens through the API).
    pub async fn get_context_usage(&self, detail: Option<ContextDetail>) -> Result<ContextUsage> {
        self.typed(SdkRequest::get_context_usage_detail(detail))
            .await
    }

    /// Puts the files the CLI's tools changed back as they were before the
    /// user message `user_message_id` (its [`UserInput::uuid`](crate::UserInput::uuid)).
    /// Needs [`Options::enable_file_checkpointing`](crate::Options::enable_file_checkpointing);
    /// without it the answer is `can_rewind: false` with the error
    /// `File rewinding is not enabled.`. With `dry_run` only reports what
    /// would change.
    pub async fn rewind_files(
        &self,
        user_message_id: &str,
        dry_run: bool,
    ) -> Result<RewindFilesResult> {
        self.typed(SdkRequest::rewind_files(user_message_id, dry_run))
            .await
    }

    /// Stops a background task (a `task_id` of a `task_started` message).
    /// The CLI answers success even for an id it does not know.
    pub async fn stop_task(&self, task_id: &str) -> Result<()> {
        self.unit(SdkRequest::stop_task(task_id)).await
    }

    /// Moves running foreground work (a Bash command, a subagent) to the
    /// background; only `tool_use_id`'s when given.
    pub async fn background_tasks(
        &self,
        tool_use_id: Option<&str>,
    ) -> Result<BackgroundTasksResponse> {
        self.typed(SdkRequest::background_tasks(tool_use_id.map(str::to_owned)))
            .await
    }

    /// Merges settings into the flag-settings layer for the rest of the
    /// session (as `--settings` would have).
    pub async fn apply_flag_settings(&self, settings: Value) -> Result<()> {
        self.unit(SdkRequest::apply_flag_settings(settings)).await
    }

    /// Writes settings to a settings file (`source`: `userSettings`,
    /// `projectSettings`, `localSettings`); the CLI accepts only a few keys.
    pub async fn update_settings(&self, source: &str, settings: Value) -> Result<()> {
        self.unit(SdkRequest::update_settings(source, settings))
            .await
    }

    /// Reads a file through the CLI, under its Read permission rules (a
    /// path they do not allow is refused: `read denied: <path>`).
    pub async fn read_file(
        &self,
        path: &str,
        max_bytes: Option<u64>,
        base64: bool,
    ) -> Result<ReadFileResponse> {
        self.typed(SdkRequest::read_file(path, max_bytes, base64))
            .await
    }

    /// Reloads plugins; answers with the commands, agents, plugins and MCP
    /// servers now available (TypeScript `reloadPlugins(options)`).
    /// `ReloadPluginsOptions::default()` reloads unconditionally, as before;
    /// see [`ReloadPluginsOptions`] for holding a reload that would change
    /// the tool list under a cached prompt, adding plugins, and refusing
    /// while the session is busy.
    pub async fn reload_plugins(
        &self,
        options: ReloadPluginsOptions,
    ) -> Result<ReloadPluginsResponse> {
        // As the TypeScript SDK writes it: the flags only when true, the
        // plugins only when there are some.
        let request = ReloadPluginsRequest {
            hold_on_cache_impact: options.hold_on_cache_impact.then_some(true),
            add_plugins: (!options.add_plugins.is_empty())
                .then(|| options.add_plugins.iter().map(Plugin::to_wire).collect()),
            refuse_if_busy: options.refuse_if_busy.then_some(true),
            ..Default::default()
        };
        self.typed(SdkRequest::ReloadPlugins(request)).await
    }

    /// Reloads skills.
    pub async fn reload_skills(&self) -> Result<ReloadSkillsResponse> {
        self.typed(SdkRequest::reload_skills()).await
    }

    /// Reloads output styles.
    pub async fn reload_output_styles(&self) -> Result<ReloadOutputStylesResponse> {
        self.typed(SdkRequest::reload_output_styles()).await
    }

    /// Tells the CLI that `path` was read when it had this modification
    /// time (milliseconds since the epoch), so editing it needs no fresh Read.
    pub async fn seed_read_state(&self, path: &str, mtime_ms: u64) -> Result<()> {
        self.unit(SdkRequest::seed_read_state(path, mtime_ms)).await
    }

    /// A tighter permission mode (`default` or `auto`) for one MCP
    /// server's tools; `None` removes it.
    pub async fn set_mcp_permission_mode_override(
        &self,
        server: &str,
        mode: Option<&str>,
    ) -> Result<McpPermissionOverrideResponse> {
        self.typed(SdkRequest::set_mcp_permission_mode_override(
            server,
            mode.map(str::to_owned),
        ))
        .await
    }

    /// Reads a resource of an external MCP server through the CLI (it
    /// refuses in-process servers: read those directly).
    pub async fn mcp_read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<McpReadResourceResponse> {
        self.typed(SdkRequest::mcp_read_resource(server, uri)).await
    }

    /// The state of every MCP server. In-process servers still in their
    /// handshake are left out by the CLI.
    pub async fn mcp_status(&self) -> Result<McpStatusResponse> {
        self.typed(SdkRequest::mcp_status()).await
    }

    /// Reconnects an MCP server: the CLI drops its connection and opens a
    /// new one (a fresh `initialize` and `tools/list`).
    ///
    /// For an in-process server CLI 2.1.332 refuses `mcp_reconnect`
    /// ("SDK servers should be handled in print.ts"), so this toggles it off
    /// and on instead, with a fresh server-side session in between; the CLI
    /// answers the second toggle once the new handshake is done. While it is
    /// off, the CLI lists the server in `disabledMcpServers` of its config
    /// directory's `.claude.json`; if the session ends between the two
    /// steps, it stays listed there.
    ///
    /// ```no_run
    /// # async fn run(client: claude_code_agent::Client) -> claude_code_agent::Result<()> {
    /// client.reconnect_mcp_server("my-app").await?;
    /// # Ok(()) }
    /// ```
    pub async fn reconnect_mcp_server(&self, name: &str) -> Result<()> {
        if self.conn.bridge.contains(name) {
            self.unit(SdkRequest::mcp_toggle(name, false)).await?;
            self.conn.bridge.renew_session(name);
            self.unit(SdkRequest::mcp_toggle(name, true)).await
        } else {
            self.unit(SdkRequest::mcp_reconnect(name)).await
        }
    }

    /// Disables or enables an MCP server. Enabling runs a fresh handshake.
    /// The CLI remembers a disabled server in its config directory.
    pub async fn toggle_mcp_server(&self, name: &str, enabled: bool) -> Result<()> {
        self.unit(SdkRequest::mcp_toggle(name, enabled)).await
    }

    /// Replaces the whole set of dynamic MCP servers (including those given
    /// at start): servers not named here are removed. In-process servers
    /// ([`McpServerConfig::InProcess`], or a [`Server`](crate::mcp::Server)
    /// as is) are served by this session and must be listed under their
    /// own name. When the CLI refuses the request (or it fails), the
    /// in-process servers stay as they were.
    pub async fn set_mcp_servers<I, S, C>(&self, servers: I) -> Result<McpSetServersResponse>
    where
        I: IntoIterator<Item = (S, C)>,
        S: Into<String>,
        C: Into<McpServerConfig>,
    {
        let mut wire = BTreeMap::new();
        let mut in_process = Vec::new();
        for (name, config) in servers {
            let name = name.into();
            let config = config.into();
            if let McpServerConfig::InProcess(server) = &config {
                if server.name() != name {
                    return Err(Error::InvalidOptions(format!(
                        "in-process server {:?} must be listed under its own name, not {name:?}",
                        server.name()
                    )));
                }
                in_process.push(server.clone());
            }
            wire.insert(name, config);
        }
        let bridge = &self.conn.bridge;
        let names: Vec<String> = in_process.iter().map(|s| s.name().to_owned()).collect();
        // The new servers must be served before the CLI connects to them,
        // which it does while answering.
        let before = bridge.snapshot();
        for server in in_process {
            bridge.insert(server);
        }
        let response = self.typed(SdkRequest::mcp_set_servers(wire)).await;
        match &response {
            Ok(_) => bridge.retain(&names),
            Err(_) => bridge.restore(before),
        }
        response
    }
}
