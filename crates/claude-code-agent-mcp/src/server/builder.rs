//! [`ServerBuilder`]: a server's name, version, tools and limits.

use std::sync::Mutex;
use std::time::Duration;

use std::future::Future;

use super::catalog::{Catalog, Names, Registry};
use super::completion::{self, CompletionHandler, CompletionRequest};
use super::limits::{self, DEFAULT_MAX_RESULT_CHARS, DEFAULT_PAGE_SIZE};
use super::request_state::{DEFAULT_REQUEST_STATE_TTL, RequestStateKey};
use super::round::Sealing;
use super::tasks::{TaskSettings, Tasks};
use super::{
    Prompt, Registered, Resource, ResourceTemplate, Server, ServerInner, Skill, Tool, stateless,
};

/// Builds a [`Server`]; start with [`Server::builder`].
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::{Server, Tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name { name: String }
///
/// let server = Server::builder("greeter", "1.0.0")
///     .instructions("Use greet to say hello.")
///     .tool(Tool::new("greet", "Say hello", |a: Name| async move { format!("Hello, {}!", a.name) }))
///     .tool_timeout(Duration::from_secs(10))
///     .max_result_chars(100_000)
///     .build();
/// assert_eq!(server.tool_names(), ["greet"]);
/// ```
#[must_use = "a builder does nothing until .build() is called"]
pub struct ServerBuilder {
    name: String,
    version: String,
    instructions: Option<String>,
    tools: Vec<Tool>,
    tool_timeout: Option<Duration>,
    progress_cap: Option<Duration>,
    max_result_chars: usize,
    page_size: usize,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
    skills: Vec<Skill>,
    completion: Option<std::sync::Arc<CompletionHandler>>,
    request_state_key: Option<RequestStateKey>,
    request_state_ttl: Duration,
    extensions: serde_json::Map<String, serde_json::Value>,
    tasks: TaskSettings,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("tools", &self.tools)
            .field("resources", &self.resources)
            .field("templates", &self.templates)
            .field("prompts", &self.prompts)
            .field("completion", &self.completion.is_some())
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Adds a resource (`resources/list`, `resources/read`); the server
    /// then advertises the `resources` capability (with `subscribe` and
    /// `listChanged`).
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds a skill (SEP-2640, see [`types::skills`](crate::types::skills)):
    /// its files are resources (`skill://<name>/<path>`), `skills/list`
    /// and `skills/get` describe it, `resources/directory/read` lists its
    /// directories, and the server declares the extension
    /// [`SKILLS_EXTENSION`](crate::types::SKILLS_EXTENSION) (with
    /// `{"directoryRead": true}` unless [`extension`](Self::extension)
    /// declared it). A skill with the name of an earlier one replaces it.
    pub fn skill(mut self, skill: Skill) -> Self {
        self.skills.retain(|s| s.name() != skill.name());
        self.skills.push(skill);
        self
    }

    /// Adds a resource template (`resources/templates/list`, and
    /// `resources/read` of the URIs it matches).
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds a prompt (`prompts/list`, `prompts/get`); the server then
    /// advertises the `prompts` capability.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Answers `completion/complete` with `handler`'s suggestions (at most
    /// [`MAX_COMPLETION_VALUES`](super::MAX_COMPLETION_VALUES) are sent) and
    /// advertises the `completions` capability. Without one, the request
    /// gets an empty completion.
    ///
    /// ```
    /// use claude_code_agent_mcp::Server;
    /// use claude_code_agent_mcp::server::CompletionRequest;
    ///
    /// let server = Server::builder("s", "1")
    ///     .completion(|req: CompletionRequest| async move {
    ///         ["red", "green", "blue"].iter().filter(|c| c.starts_with(&req.value))
    ///             .map(|c| c.to_string()).collect()
    ///     })
    ///     .build();
    /// # drop(server);
    /// ```
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completion = Some(completion::erase(handler));
        self
    }

    pub(super) fn new(name: String, version: String) -> Self {
        Self {
            name,
            version,
            instructions: None,
            tools: Vec::new(),
            tool_timeout: None,
            progress_cap: None,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            page_size: DEFAULT_PAGE_SIZE,
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            skills: Vec::new(),
            completion: None,
            request_state_key: None,
            request_state_ttl: DEFAULT_REQUEST_STATE_TTL,
            extensions: serde_json::Map::new(),
            tasks: TaskSettings {
                ttl: limits::DEFAULT_TASK_TTL,
                poll_interval: limits::DEFAULT_TASK_POLL_INTERVAL,
                lease: limits::DEFAULT_TASK_LEASE,
                max_tasks: limits::DEFAULT_MAX_TASKS,
                max_bytes: limits::DEFAULT_MAX_TASK_BYTES,
            },
        }
    }

    /// How long a task is kept after it was created (its `ttlMs`; default
    /// [`DEFAULT_TASK_TTL`](limits::DEFAULT_TASK_TTL), an hour): a task is
    /// never forgotten earlier, and may be at any time after. A task still
    /// running then is failed (its call stops at the tool's timeout
    /// anyway, which a task's tool sets longer, usually).
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.tasks.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How often clients are asked to poll a task (its `pollIntervalMs`;
    /// default [`DEFAULT_TASK_POLL_INTERVAL`](limits::DEFAULT_TASK_POLL_INTERVAL), 1 s).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.tasks.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// With an event store shared by replicas: how long a task is taken to
    /// be alive without word from the replica running it (default
    /// [`DEFAULT_TASK_LEASE`](limits::DEFAULT_TASK_LEASE), 30 s). The
    /// replica renews it every third of it, and also learns then of a
    /// cancel made through another replica; a task whose lease ran out is
    /// reported failed by the replica that reads it.
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.tasks.lease = lease.max(Duration::from_millis(3));
        self
    }

    /// The most tasks kept at once (default
    /// [`DEFAULT_MAX_TASKS`](limits::DEFAULT_MAX_TASKS), 1000): running,
    /// and ended within their TTL. Past it a call that would start a task
    /// fails with `-32603` saying so. With an event store of the transport's,
    /// the most tasks this server runs at once.
    pub fn max_tasks(mut self, tasks: usize) -> Self {
        self.tasks.max_tasks = tasks.max(1);
        self
    }

    /// The most bytes of task records (their results, mostly) kept in the
    /// server's memory (default
    /// [`DEFAULT_MAX_TASK_BYTES`](limits::DEFAULT_MAX_TASK_BYTES), 64 MiB).
    /// A task whose result would go past it fails (`-32603`, saying so)
    /// instead of completing. Results are capped one by one by
    /// [`max_result_chars`](Self::max_result_chars). Not used with an event
    /// store of the transport's, which keeps the records.
    pub fn max_task_bytes(mut self, bytes: usize) -> Self {
        self.tasks.max_bytes = bytes;
        self
    }

    /// Adds a tool. Tools are listed in the order they are added; a tool
    /// with the name of an earlier one replaces it (in its place).
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools, in order.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Sets the `instructions` the `initialize` result carries (hosts may
    /// show them to the model).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// How long a tool call may run before it is answered with an `isError`
    /// result and its handler dropped. Overrides the environment variable
    /// [`CLAUDE_AGENT_TOOL_TIMEOUT`](limits::TOOL_TIMEOUT_ENV) (seconds,
    /// clamped to 1..=300); default 60 s. A tool's own
    /// [`Tool::timeout`] overrides this. Resource, template, prompt and
    /// completion handlers get the same limit; one that outlives it is
    /// answered with a `-32603` error.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Lets progress keep tool calls alive: each
    /// [`ToolContext::progress`](super::ToolContext::progress) restarts the
    /// call's timeout, up to `max_total` after the call started. For tools
    /// that do not set their own ([`Tool::reset_timeout_on_progress`]);
    /// by default the timeout is fixed.
    pub fn reset_timeout_on_progress(mut self, max_total: Duration) -> Self {
        self.progress_cap = Some(max_total);
        self
    }

    /// Caps one tool result at `chars` characters (default
    /// [`DEFAULT_MAX_RESULT_CHARS`], 1 Mi). The cap covers the whole
    /// result: its text, and the JSON of its other parts (images, audio,
    /// embedded resources, `structuredContent`, `_meta`). Text past the cap
    /// is cut at a character boundary, other parts that do not fit are
    /// removed whole, and a note at the end says what was cut. A tool's own
    /// [`Tool::max_result_chars`] overrides this.
    pub fn max_result_chars(mut self, chars: usize) -> Self {
        self.max_result_chars = chars;
        self
    }

    /// How many items one `tools/list` (or resources, templates, prompts) page holds (default
    /// [`DEFAULT_PAGE_SIZE`], 1000; at least 1). Further pages are reached
    /// through the opaque `nextCursor`.
    pub fn page_size(mut self, tools: usize) -> Self {
        self.page_size = tools.max(1);
        self
    }

    /// Declares an MCP extension (SEP-2133) in the server's capabilities
    /// (`capabilities.extensions`, in `initialize` and `server/discover`):
    /// its identifier (`vendor-prefix/name`, e.g.
    /// [`APPS_EXTENSION`](crate::types::APPS_EXTENSION)) and its settings
    /// (a JSON object; `json!({})` for none). Declaring it again replaces
    /// the settings. What the client declared is in
    /// [`ToolContext::client_capabilities`](super::ToolContext::client_capabilities)
    /// ([`ClientCapabilities::extensions`](crate::types::ClientCapabilities::extensions)).
    ///
    /// # Panics
    ///
    /// When `id` has no vendor prefix and name, or `settings` is not an object.
    pub fn extension(mut self, id: &str, settings: serde_json::Value) -> Self {
        let settings = crate::types::checked_extension(id, settings);
        self.extensions.insert(id.to_owned(), settings.into());
        self
    }

    /// The key that seals the `requestState` of multi round-trip requests
    /// (stateless revision, see [`ToolContext::ask`](super::ToolContext::ask)).
    /// Give every replica of a server behind a load balancer the same key:
    /// a client's retry may reach any of them. Without one the server makes
    /// a random key when built, good for that process only.
    pub fn request_state_key(mut self, key: RequestStateKey) -> Self {
        self.request_state_key = Some(key);
        self
    }

    /// How long a `requestState` the server issues stays valid (default
    /// [`DEFAULT_REQUEST_STATE_TTL`], 10 minutes): the time a client has to
    /// answer a round of input (a person, for an elicitation) and retry.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// Builds the server. The tool timeout comes from
    /// [`tool_timeout`](Self::tool_timeout), else from the environment, read now.
    pub fn build(mut self) -> Server {
        if !self.skills.is_empty() {
            let id = crate::types::SKILLS_EXTENSION;
            self.extensions
                .entry(id)
                .or_insert_with(|| serde_json::json!({"directoryRead": true}));
        }
        for skill in &self.skills {
            self.resources.extend(skill.resources());
        }
        let skills = self.skills.iter().map(Skill::entry).collect();
        let mut tools = Names::with_capacity_and_hasher(self.tools.len(), Default::default());
        for tool in self.tools {
            let registered = Registered::new(tool);
            if let Some(old) = tools.insert(registered.tool.info.name.clone(), registered.into()) {
                let old: std::sync::Arc<Registered> = old;
                tracing::warn!(
                    server = %self.name,
                    tool = %old.tool.info.name,
                    "two tools share a name; the later one replaces the earlier"
                );
            }
        }
        let tasks = self.tasks;
        Server {
            inner: std::sync::Arc::new_cyclic(|me| ServerInner {
                tasks: Tasks::new(me.clone(), tasks),
                decoration: stateless::Decoration::new(&self.name, &self.version),
                extensions: self.extensions,
                sealing: Sealing {
                    key: self
                        .request_state_key
                        .unwrap_or_else(RequestStateKey::random),
                    ttl: self.request_state_ttl,
                },
                name: self.name,
                version: self.version,
                instructions: self.instructions,
                tools: Registry::new(tools),
                sessions: Mutex::new(Vec::new()),
                tool_timeout: self.tool_timeout.unwrap_or_else(limits::timeout_from_env),
                progress_cap: self.progress_cap,
                max_result_chars: self.max_result_chars,
                page_size: self.page_size,
                catalog: Catalog::new(
                    self.resources,
                    self.templates,
                    self.prompts,
                    skills,
                    self.completion,
                ),
            }),
        }
    }
}
