//! Tools: a name, a description, an input schema and an async handler.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::{self, BoxFuture};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::context::{CallContext, ToolContext};
use super::result::IntoToolResult;
use super::schema;
use super::validate::CompiledSchema;
use crate::types::{CallToolResult, ToolAnnotations, ToolInfo};

/// The `_meta` key telling the Claude Code CLI how many characters of this
/// tool's result it may pass to the model inline (instead of saving a large
/// result to a file). See [`Tool::max_result_size_chars`].
pub const MAX_RESULT_SIZE_CHARS_META: &str = "anthropic/maxResultSizeChars";

/// The most characters the Claude Code CLI (2.1.332, measured) passes to
/// the model inline, whatever [`Tool::max_result_size_chars`] asks for:
/// 500,000 pass whole, 500,001 are saved to a file.
pub const CLI_MAX_RESULT_SIZE_CHARS: u64 = 500_000;

/// The type-erased handler: arguments, what the context is made of (made
/// only for a handler that takes one), "declares an output schema".
pub(crate) type ErasedHandler =
    dyn Fn(Value, CallContext<'_>, bool) -> BoxFuture<'static, CallToolResult> + Send + Sync;

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
/// // A handler that also wants the call's context, and may fail.
/// let div = Tool::new_with_context("divide", "a / b", |args: Add, ctx: ToolContext| async move {
///     ctx.progress(0.0, Some(1.0), Some("dividing"));
///     if args.b == 0.0 { Err("division by zero") } else { Ok(args.a / args.b) }
/// });
/// # let _ = div;
/// ```
///
/// Raw tools take a JSON schema and get the arguments as a [`serde_json::Value`]:
///
/// ```
/// use claude_code_agent_mcp::Tool;
/// use serde_json::{json, Value};
///
/// let echo = Tool::raw(
///     "echo",
///     "Echo the text",
///     json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
///     |args: Value| async move { args["text"].as_str().unwrap_or_default().to_owned() },
/// );
/// # let _ = echo;
/// ```
///
/// Arguments are validated against the input schema before the handler
/// runs (the schema is compiled once, here). What a handler may return is
/// described at [`IntoToolResult`].
pub struct Tool {
    pub(crate) info: ToolInfo,
    pub(crate) handler: Arc<ErasedHandler>,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress_cap: Option<Duration>,
    pub(crate) max_result_chars: Option<usize>,
}

impl Tool {
    /// A typed tool: `handler` takes the arguments deserialized as `T`; the
    /// input schema is derived from `T`.
    pub fn new<T, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        T: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(T) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        Self::typed(name, description, move |args: T, _: CallContext<'_>| {
            handler(args)
        })
    }

    /// A typed tool whose handler also gets the call's [`ToolContext`].
    pub fn new_with_context<T, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        T: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(T, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        Self::typed(name, description, move |args: T, ctx: CallContext<'_>| {
            handler(args, ctx.into_tool_context())
        })
    }

    /// A typed tool whose handler makes its context from the call's parts
    /// (or not).
    fn typed<T, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        T: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(T, CallContext<'_>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        let (input_schema, unit) = schema::generate::<T>();
        let erased = move |args: Value, ctx: CallContext<'_>, structured: bool| {
            // A unit type deserializes from `null`, not from `{}`.
            let args = if unit { Value::Null } else { args };
            match serde_json::from_value::<T>(args) {
                Ok(args) => {
                    let fut = handler(args, ctx);
                    async move { fut.await.into_call_tool_result(structured) }.boxed()
                }
                Err(e) => {
                    future::ready(CallToolResult::error(format!("Invalid arguments: {e}"))).boxed()
                }
            }
        };
        Self::from_parts(
            name.into(),
            description.into(),
            input_schema,
            Arc::new(erased),
        )
    }

    /// A raw tool: `input_schema` is a JSON schema (its root should be
    /// `{"type":"object", …}`), `handler` gets the arguments as JSON.
    ///
    /// A schema that does not compile is logged, and every call of the tool
    /// then fails with an `isError` result saying so.
    pub fn raw<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        Self::raw_parts(name, description, input_schema, move |args, _| {
            handler(args)
        })
    }

    /// A raw tool whose handler also gets the call's [`ToolContext`].
    pub fn raw_with_context<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        Self::raw_parts(name, description, input_schema, move |args, ctx| {
            handler(args, ctx.into_tool_context())
        })
    }

    /// A raw tool whose handler makes its context from the call's parts
    /// (or not).
    fn raw_parts<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value, CallContext<'_>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        let name = name.into();
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            tracing::warn!(tool = %name, "a tool's input schema should have \"type\":\"object\" at its root");
        }
        let erased = move |args: Value, ctx: CallContext<'_>, structured: bool| {
            let fut = handler(args, ctx);
            async move { fut.await.into_call_tool_result(structured) }.boxed()
        };
        Self::from_parts(name, description.into(), input_schema, Arc::new(erased))
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
    /// use serde_json::{json, Value};
    ///
    /// // Stopped after 30 s without progress, and after 10 min whatever happens.
    /// let crawl = Tool::raw_with_context("crawl", "Crawl a site", json!({"type":"object"}),
    ///     |_: Value, ctx: ToolContext| async move {
    ///         for page in 0..1000 {
    ///             // … fetch a page …
    ///             ctx.progress(f64::from(page), Some(1000.0), None);
    ///         }
    ///         "done"
    ///     })
    ///     .timeout(Duration::from_secs(30))
    ///     .reset_timeout_on_progress(Duration::from_secs(600));
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
            .finish_non_exhaustive()
    }
}
