//! Tools: a name, a description, an input schema and an async handler.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::handler::{self, ErasedHandler, ToolHandler};
use super::result::IntoToolResult;
use super::schema;
use super::validate::CompiledSchema;
use crate::types::{ToolAnnotations, ToolInfo};

/// The `_meta` key telling the Claude Code CLI how many characters of this
/// tool's result it may pass to the model inline (instead of saving a large
/// result to a file). See [`Tool::max_result_size_chars`].
pub const MAX_RESULT_SIZE_CHARS_META: &str = "anthropic/maxResultSizeChars";

/// The most characters the Claude Code CLI (2.1.332, measured) passes to
/// the model inline, whatever [`Tool::max_result_size_chars`] asks for:
/// 500,000 pass whole, 500,001 are saved to a file.
pub const CLI_MAX_RESULT_SIZE_CHARS: u64 = 500_000;

/// Whether a tool's calls run as tasks (the Tasks extension,
/// `io.modelcontextprotocol/tasks`). The extension is the stateless
/// revision's (2026-07-28): a request opts in by declaring it in its
/// `_meta` client capabilities; the server decides, per call, from this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never: every call is answered with its result (the default).
    #[default]
    Forbidden,
    /// When the request declares the extension, the call is answered at
    /// once with a task; otherwise it runs as a plain call.
    Optional,
    /// Only as a task: a request that does not declare the extension (any
    /// request of the session-based revisions) is refused with `-32021`
    /// (missing required client capability), naming the extension.
    Required,
}

/// A tool the model can call: name, description, input schema and an async
/// handler, plus optional title, annotations, `_meta` and output schema.
///
/// Typed tools take their arguments as a Rust type; the input schema is
/// derived from it (see [`tool_schema_for`](super::tool_schema_for)):
///
/// ```
/// use claude_code_agent_mcp::{Json, Tool, ToolContext};
/// use claude_code_agent_mcp::types::ToolAnnotations;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add {
///     /// The first number.
///     a: f64,
///     /// The second number.
///     b: f64,
/// }
///
/// let add = Tool::new("add", "Add two numbers", |args: Add| async move {
///     args.a + args.b
/// })
/// .annotations(ToolAnnotations::new().read_only(true));
/// assert_eq!(add.info().input_schema["required"], serde_json::json!(["a", "b"]));
///
/// // A handler that also takes the call's context (so it gets one), and may fail.
/// let div = Tool::new("divide", "a / b", |args: Add, ctx: ToolContext| async move {
///     ctx.progress(0.0, Some(1.0), Some("dividing"));
///     if args.b == 0.0 { Err("division by zero") } else { Ok(args.a / args.b) }
/// });
/// # let _ = div;
/// ```
///
/// Raw tools get the arguments as a [`serde_json::Value`] (as sent, not
/// converted) and describe them with a JSON schema of their own:
///
/// ```
/// use claude_code_agent_mcp::Tool;
/// use serde_json::{json, Value};
///
/// let echo = Tool::new("echo", "Echo the text", |args: Value| async move {
///     args["text"].as_str().unwrap_or_default().to_owned()
/// })
/// .input_schema(json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}));
/// # let _ = echo;
/// ```
///
/// Arguments are validated against the input schema before the handler
/// runs (the schema is compiled once, when set). Which functions are
/// handlers is described at [`ToolHandler`](super::ToolHandler), what a
/// handler may return at [`IntoToolResult`](super::IntoToolResult) (a
/// complete result object as JSON: [`RawResult`](super::RawResult)).
pub struct Tool {
    pub(crate) info: ToolInfo,
    pub(crate) handler: Arc<ErasedHandler>,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress_cap: Option<Duration>,
    pub(crate) max_result_chars: Option<usize>,
    pub(crate) task_support: TaskSupport,
}

impl Tool {
    /// A tool named `name`, described by `description`, whose calls
    /// `handler` answers.
    ///
    /// Whether the handler also gets the call's [`ToolContext`](super::ToolContext)
    /// is decided by its signature: `|args: T| …` gets none (and none is
    /// built), `|args: T, ctx: ToolContext| …` gets one (see
    /// [`ToolHandler`]). The input schema is derived from `T`; with raw
    /// arguments (`T` is [`serde_json::Value`] or a `Map`) it accepts any
    /// object until [`input_schema`](Self::input_schema) sets one.
    ///
    /// A wrong handler fails to compile with what is wrong: "`X` cannot be
    /// returned from a tool handler" (see [`IntoToolResult`]), "the trait
    /// bound `X: JsonSchema` is not satisfied", "future cannot be sent
    /// between threads safely", or "… is not a tool handler" for the wrong
    /// parameters.
    pub fn new<M, H>(name: impl Into<String>, description: impl Into<String>, handler: H) -> Self
    where
        H: ToolHandler<M> + Send + Sync + 'static,
        H::Args: DeserializeOwned + JsonSchema + Send + 'static,
        H::Future: Send + 'static,
        H::Output: IntoToolResult,
    {
        let (input_schema, handler) = handler::erase(handler);
        Self::from_parts(name.into(), description.into(), input_schema, handler)
    }

    /// Replaces the input schema with `schema`, a JSON schema (its root
    /// should be `{"type":"object", …}`): the way to describe raw
    /// arguments (a handler taking a [`serde_json::Value`]).
    ///
    /// Arguments are checked against this schema before the handler runs.
    /// A typed handler still deserializes its `T` from them: arguments the
    /// schema allows but `T` does not are an `isError` result.
    ///
    /// A schema that does not compile is logged, and every call of the tool
    /// then fails with an `isError` result saying so.
    pub fn input_schema(mut self, schema: Value) -> Self {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            tracing::warn!(tool = %self.info.name, "a tool's input schema should have \"type\":\"object\" at its root");
        }
        self.input = CompiledSchema::compile(&schema, "input schema", &self.info.name);
        self.info.input_schema = schema;
        self
    }

    fn from_parts(
        name: String,
        description: String,
        input_schema: Value,
        handler: Arc<ErasedHandler>,
    ) -> Self {
        let input = CompiledSchema::compile(&input_schema, "input schema", &name);
        Self {
            info: ToolInfo {
                name,
                title: None,
                description: Some(description),
                input_schema,
                output_schema: None,
                annotations: None,
                meta: None,
                extra: Map::new(),
            },
            handler,
            input,
            output: None,
            timeout: None,
            progress_cap: None,
            max_result_chars: None,
            task_support: TaskSupport::Forbidden,
        }
    }

    /// Sets the human-readable `title`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the behaviour hints (`readOnlyHint`, `destructiveHint`, …).
    ///
    /// The Claude Code CLI runs several calls of read-only tools at once and
    /// other tools one at a time.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.info.annotations = Some(annotations);
        self
    }

    /// Adds one `_meta` entry to the tool's `tools/list` description.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.info
            .meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value.into());
        self
    }

    /// Links the tool to an MCP Apps view (`_meta.ui`, see
    /// [`types::apps`](crate::types::apps)): a host that renders apps shows
    /// the tool's results in the `ui://` resource named there (serve it
    /// with [`Resource::ui`](super::Resource::ui)). The tool's results
    /// still carry text for hosts that do not.
    ///
    /// ```
    /// use claude_code_agent_mcp::Tool;
    /// use claude_code_agent_mcp::types::apps::UiToolMeta;
    ///
    /// let tool = Tool::new("weather", "The weather", |_: ()| async { "sunny" })
    ///     .ui(UiToolMeta::new("ui://weather/view.html"));
    /// let link = tool.info().ui().unwrap();
    /// assert_eq!(link.resource_uri.as_deref(), Some("ui://weather/view.html"));
    /// ```
    pub fn ui(self, link: crate::types::apps::UiToolMeta) -> Self {
        let link = serde_json::to_value(link).unwrap_or_default();
        self.meta("ui", link)
    }

    /// Tells the Claude Code CLI it may pass results of up to `chars`
    /// characters to the model inline (`_meta["anthropic/maxResultSizeChars"]`).
    ///
    /// Two limits apply to a result, in this order (see "Limits" in
    /// `docs/mcp-servers.md`):
    /// 1. this server's own cut, [`Tool::max_result_chars`] (default
    ///    [`DEFAULT_MAX_RESULT_CHARS`](super::limits::DEFAULT_MAX_RESULT_CHARS),
    ///    1 Mi): text past it is cut and never leaves the process;
    /// 2. the CLI's inline limit, this hint: by default the CLI saves a
    ///    result over 50,000 characters to a file and shows the model a
    ///    2 KB preview and the file's path.
    ///
    /// The Claude Code CLI (2.1.332) honours this hint only up to
    /// [`CLI_MAX_RESULT_SIZE_CHARS`] (500,000): any larger value acts as
    /// 500,000, so no result over 500,000 characters reaches the model
    /// whole. A larger value is still sent (a later CLI may honour it) and a
    /// warning is logged. For a result of `n <= 500_000` characters to reach
    /// the model whole, set this to at least `n` and keep
    /// [`Tool::max_result_chars`] at least `n` (the default is).
    pub fn max_result_size_chars(self, chars: u64) -> Self {
        if chars > CLI_MAX_RESULT_SIZE_CHARS {
            tracing::warn!(
                tool = self.name(),
                chars,
                "max_result_size_chars: the Claude Code CLI passes at most {} characters \
                 inline; larger results are saved to a file",
                CLI_MAX_RESULT_SIZE_CHARS
            );
        }
        self.meta(MAX_RESULT_SIZE_CHARS_META, chars)
    }

    /// Caps this tool's results at `chars` characters, all their parts
    /// counted (overriding the server's
    /// [`max_result_chars`](super::ServerBuilder::max_result_chars), which
    /// says how): this server's own cut, applied before the result leaves
    /// the process. Whether the CLI then shows the model the result inline
    /// or as a file is decided by [`Tool::max_result_size_chars`].
    pub fn max_result_chars(mut self, chars: usize) -> Self {
        self.max_result_chars = Some(chars);
        self
    }

    /// Limits how long one call may run (overriding the server's
    /// [`tool_timeout`](super::ServerBuilder::tool_timeout)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Lets progress keep a call alive: each
    /// [`ToolContext::progress`](super::ToolContext::progress) restarts the
    /// timeout, up to `max_total` after the call started (overriding the
    /// server's [`reset_timeout_on_progress`](super::ServerBuilder::reset_timeout_on_progress)).
    /// By default the timeout is fixed.
    ///
    /// Every `progress` call counts, whether or not the client asked for
    /// progress notifications: it says the tool is alive. A `max_total`
    /// below the timeout is raised to it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use claude_code_agent_mcp::{Tool, ToolContext};
    ///
    /// // Stopped after 30 s without progress, and after 10 min whatever happens.
    /// let crawl = Tool::new("crawl", "Crawl a site", |_: (), ctx: ToolContext| async move {
    ///     for page in 0..1000 {
    ///         // … fetch a page …
    ///         ctx.progress(f64::from(page), Some(1000.0), None);
    ///     }
    ///     "done"
    /// })
    /// .timeout(Duration::from_secs(30))
    /// .reset_timeout_on_progress(Duration::from_secs(600));
    /// # let _ = crawl;
    /// ```
    pub fn reset_timeout_on_progress(mut self, max_total: Duration) -> Self {
        self.progress_cap = Some(max_total);
        self
    }

    /// Declares the output schema, derived from `O`.
    ///
    /// The tool's [`Json`](super::Json) results then also go out as
    /// `structuredContent`, which is checked against the schema: a result
    /// that does not match, or a successful result without structured
    /// content, becomes an `isError` result.
    pub fn output_schema<O: JsonSchema + ?Sized>(self) -> Self {
        self.output_schema_value(schema::tool_schema_for::<O>())
    }

    /// Declares the output schema as raw JSON schema (root `"type":"object"`).
    pub fn output_schema_value(mut self, schema: Value) -> Self {
        self.output = Some(CompiledSchema::compile(
            &schema,
            "output schema",
            &self.info.name,
        ));
        self.info.output_schema = Some(schema);
        self
    }

    /// Whether the tool's calls run as tasks (the Tasks extension,
    /// `io.modelcontextprotocol/tasks`, of the 2026-07-28 revision): with
    /// [`TaskSupport::Optional`] or [`TaskSupport::Required`], a call whose
    /// request declares the extension is answered at once with a task that
    /// the client polls (`tasks/get`), and the handler runs on, under the
    /// tool's [`timeout`](Self::timeout) as any call. See "Long-running
    /// tools as tasks" in `docs/mcp-servers.md`.
    ///
    /// In a task, the handler's requests to the client
    /// ([`ToolContext::request`](super::ToolContext::request), elicitations
    /// and sampling) become the task's `inputRequests`, answered by the
    /// client's `tasks/update`; its progress and log messages go nowhere;
    /// a panic fails the task with `-32603` (in a plain call it is an
    /// `isError` result).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The tool as `tools/list` describes it.
    pub fn info(&self) -> &ToolInfo {
        &self.info
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("info", &self.info)
            .field("timeout", &self.timeout)
            .field("progress_cap", &self.progress_cap)
            .field("max_result_chars", &self.max_result_chars)
            .field("task_support", &self.task_support)
            .finish_non_exhaustive()
    }
}
