//! [`ServerBuilder`]: a server's name, version, tools and limits.

use std::sync::{Mutex, RwLock};
use std::time::Duration;

use indexmap::IndexMap;

use super::limits::{self, DEFAULT_MAX_RESULT_CHARS, DEFAULT_PAGE_SIZE};
use super::{Registered, Server, ServerInner, Tool};

/// Builds a [`Server`]; start with [`Server::builder`].
///
/// ```
/// use std::time::Duration;
/// use claude_agent_mcp::{Server, Tool};
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
#[derive(Debug)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct ServerBuilder {
    name: String,
    version: String,
    instructions: Option<String>,
    tools: Vec<Tool>,
    tool_timeout: Option<Duration>,
    max_result_chars: usize,
    page_size: usize,
}

impl ServerBuilder {
    pub(super) fn new(name: String, version: String) -> Self {
        Self {
            name,
            version,
            instructions: None,
            tools: Vec::new(),
            tool_timeout: None,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            page_size: DEFAULT_PAGE_SIZE,
        }
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
    /// [`Tool::timeout`] overrides this.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Caps the text of one tool result at `chars` characters (default
    /// [`DEFAULT_MAX_RESULT_CHARS`], 1 Mi). Longer text is cut at a
    /// character boundary and a note says how much was cut. A tool's own
    /// [`Tool::max_result_chars`] overrides this.
    pub fn max_result_chars(mut self, chars: usize) -> Self {
        self.max_result_chars = chars;
        self
    }

    /// How many tools one `tools/list` page holds (default
    /// [`DEFAULT_PAGE_SIZE`], 1000; at least 1). Further pages are reached
    /// through the opaque `nextCursor`.
    pub fn page_size(mut self, tools: usize) -> Self {
        self.page_size = tools.max(1);
        self
    }

    /// Builds the server. The tool timeout comes from
    /// [`tool_timeout`](Self::tool_timeout), else from the environment, read now.
    pub fn build(self) -> Server {
        let mut tools = IndexMap::with_capacity(self.tools.len());
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
        Server {
            inner: std::sync::Arc::new(ServerInner {
                name: self.name,
                version: self.version,
                instructions: self.instructions,
                tools: RwLock::new(tools),
                sessions: Mutex::new(Vec::new()),
                tool_timeout: self.tool_timeout.unwrap_or_else(limits::timeout_from_env),
                max_result_chars: self.max_result_chars,
                page_size: self.page_size,
            }),
        }
    }
}
