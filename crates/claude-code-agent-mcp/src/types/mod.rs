//! MCP wire types, with MCP's exact (camelCase) field names.
//!
//! Types a peer sends are open: an unknown content block decodes as
//! [`Content::Unknown`] instead of failing, and unknown fields are kept where
//! a type has a `extra` map.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub mod apps;
mod capabilities;
mod content;
mod extensions;
mod input;
mod notifications;
mod prompts;
mod resources;
mod shared_map;
pub mod skills;
mod tasks;

pub use capabilities::ClientCapabilities;
pub use content::{Annotations, Content, ResourceContents, json_type_name, stringify_text_field};
pub(crate) use extensions::checked as checked_extension;
pub use extensions::{APPS_EXTENSION, Extensions, SKILLS_EXTENSION};
pub use input::{COMPLETE, INPUT_REQUIRED, InputRequest, InputRequiredResult, is_input_required};
pub use notifications::{LogLevel, LoggingMessage, ProgressNotification, SubscriptionFilter};
pub use prompts::{GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate,
};
pub use shared_map::SharedMap;
pub(crate) use tasks::iso8601;
pub use tasks::{TASKS_EXTENSION, Task, TaskStatus, ToolCallOutcome, tasks_extension_capability};

/// Every MCP protocol revision this crate speaks, oldest first: the
/// session revisions ([`SESSION_PROTOCOL_VERSIONS`]), then the stateless
/// one ([`STATELESS_PROTOCOL_VERSION`]).
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    STATELESS_PROTOCOL_VERSION,
];

/// The newest protocol revision this crate speaks, 2026-07-28: the one a
/// client speaks when the server offers it (`server/discover`), and a
/// server answers at.
pub const LATEST_PROTOCOL_VERSION: &str = STATELESS_PROTOCOL_VERSION;

/// The revisions that open a session with `initialize`, oldest first: what
/// `initialize` negotiates, and what a session's `MCP-Protocol-Version`
/// header may name.
pub const SESSION_PROTOCOL_VERSIONS: &[&str] =
    &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The newest session revision: what `initialize` asks for and answers by
/// default.
pub const LATEST_SESSION_PROTOCOL_VERSION: &str = "2025-11-25";

/// The stateless protocol revision (no `initialize`; `server/discover`, and
/// every request carries its protocol version, client info and capabilities
/// in `_meta`). The client speaks it when a server offers it.
pub const STATELESS_PROTOCOL_VERSION: &str = "2026-07-28";

/// `_meta` key of a stateless request's protocol version.
pub const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a stateless request's client info.
pub const CLIENT_INFO_META: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of a stateless request's client capabilities.
pub const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the level a stateless request wants log messages at.
pub const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's name and version on stateless results.
pub const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tying a notification to its `subscriptions/listen` stream.
pub const SUBSCRIPTION_ID_META: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether a request whose params carry this `_meta` is of the stateless
/// revision: it names its protocol version.
pub(crate) fn is_stateless_meta(meta: &Map<String, Value>) -> bool {
    meta.contains_key(PROTOCOL_VERSION_META)
}

/// JSON-RPC error (stateless revision): HTTP headers disagree with the
/// body, or a required one is missing or malformed (HTTP 400).
pub const HEADER_MISMATCH: i64 = -32020;
/// JSON-RPC error (stateless revision): serving the request needs a client
/// capability the request's `clientCapabilities` does not declare (HTTP 400).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// JSON-RPC error (stateless revision): the request's protocol version is
/// not spoken here (HTTP 400); `data.supported` lists those that are.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A name and version: `serverInfo` or `clientInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Other fields (`description`, `websiteUrl`, `icons`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
            extra: Map::new(),
        }
    }
}

/// Hints about a tool's behaviour (all optional; MCP's `ToolAnnotations`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment. The Claude Code CLI runs
    /// several read-only calls concurrently; others one at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same input has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches outside a closed world (the internet, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets `readOnlyHint`.
    pub fn read_only(mut self, v: bool) -> Self {
        self.read_only_hint = Some(v);
        self
    }
    /// Sets `destructiveHint`.
    pub fn destructive(mut self, v: bool) -> Self {
        self.destructive_hint = Some(v);
        self
    }
    /// Sets `idempotentHint`.
    pub fn idempotent(mut self, v: bool) -> Self {
        self.idempotent_hint = Some(v);
        self
    }
    /// Sets `openWorldHint`.
    pub fn open_world(mut self, v: bool) -> Self {
        self.open_world_hint = Some(v);
        self
    }
}

/// A tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolInfo {
    /// The tool's name, unique within its server.
    pub name: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; the model reads this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON schema of the arguments (root `type: "object"`).
    pub input_schema: Value,
    /// JSON schema of `structuredContent`, when the tool declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// `_meta` (for example `anthropic/maxResultSizeChars`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Other fields (`icons`, `execution`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolInfo {
    /// The MCP Apps view the tool's results are shown in, and who may call
    /// it (`_meta.ui`; see [`apps`]), if the tool says.
    pub fn ui(&self) -> Option<apps::UiToolMeta> {
        apps::UiToolMeta::from_tool_meta(self.meta.as_ref()?)
    }
}

/// The result of `tools/call`.
///
/// Decoded by hand (what `#[serde(flatten)]` would do, without buffering
/// every field first): the client decodes one per call.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// The content blocks the model sees.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output matching the tool's output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// `true` when the tool failed; the content then says why.
    #[serde(default)]
    pub is_error: bool,
    /// `_meta`. A [`SharedMap`]: the stateless revision's server identity,
    /// the same on every result, is shared rather than copied into each.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<SharedMap>,
    /// Other fields a peer sent, kept as they were (the stateless
    /// revision's `resultType` among them). A [`SharedMap`]: no allocation
    /// when empty, shared when every result carries the same.
    #[serde(flatten)]
    pub extra: SharedMap,
}

impl<'de> Deserialize<'de> for CallToolResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};

        /// A key: one of the fields, or another kept in `extra`.
        enum Key {
            Content,
            StructuredContent,
            IsError,
            Meta,
            Other(String),
        }
        impl<'de> Deserialize<'de> for Key {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct KeyVisitor;
                impl Visitor<'_> for KeyVisitor {
                    type Value = Key;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a field name")
                    }
                    fn visit_str<E: Error>(self, key: &str) -> Result<Key, E> {
                        Ok(match key {
                            "content" => Key::Content,
                            "structuredContent" => Key::StructuredContent,
                            "isError" => Key::IsError,
                            "_meta" => Key::Meta,
                            other => Key::Other(other.to_owned()),
                        })
                    }
                }
                d.deserialize_identifier(KeyVisitor)
            }
        }

        struct ResultVisitor;
        impl<'de> Visitor<'de> for ResultVisitor {
            type Value = CallToolResult;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tools/call result (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallToolResult, A::Error> {
                let mut result = CallToolResult::default();
                let mut seen = [false; 4];
                let mut first = |i: usize, name: &'static str| {
                    if std::mem::replace(&mut seen[i], true) {
                        Err(A::Error::duplicate_field(name))
                    } else {
                        Ok(())
                    }
                };
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Content => {
                            first(0, "content")?;
                            result.content = map.next_value_seed(content::Blocks)?;
                        }
                        Key::StructuredContent => {
                            first(1, "structuredContent")?;
                            result.structured_content = map.next_value()?;
                        }
                        Key::IsError => {
                            first(2, "isError")?;
                            result.is_error = map.next_value()?;
                        }
                        Key::Meta => {
                            first(3, "_meta")?;
                            result.meta = map.next_value()?;
                        }
                        Key::Other(key) => {
                            result.extra.insert(key, map.next_value()?);
                        }
                    }
                }
                Ok(result)
            }
        }
        d.deserialize_map(ResultVisitor)
    }
}

impl CallToolResult {
    /// A successful result with these blocks.
    pub fn success(content: Vec<Content>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// An error result with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            is_error: true,
            ..Self::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::success(vec![Content::text(text)])
    }

    /// Sets `structuredContent`.
    pub fn with_structured_content(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Sets `_meta` (a [`serde_json::Map`] or a [`SharedMap`]).
    pub fn with_meta(mut self, meta: impl Into<SharedMap>) -> Self {
        self.meta = Some(meta.into());
        self
    }

    /// The result as JSON with MCP's field names, consuming it (no copy of
    /// its text). `isError` is always present, but in an `input_required`
    /// result (the stateless revision's question to the client,
    /// [`InputRequiredResult`]), which has no content.
    pub fn into_value(self) -> Value {
        let asks = self.is_input_required() && self.content.is_empty() && !self.is_error;
        let mut map = Map::with_capacity(4);
        if !asks {
            let content = self.content.into_iter().map(Content::into_value);
            map.insert("content".into(), Value::Array(content.collect()));
        }
        if let Some(structured) = self.structured_content {
            map.insert("structuredContent".into(), structured);
        }
        if !asks {
            map.insert("isError".into(), Value::Bool(self.is_error));
        }
        if let Some(meta) = self.meta {
            map.insert("_meta".into(), Value::Object(meta.into_map()));
        }
        for (k, v) in self.extra.into_map() {
            map.entry(k).or_insert(v);
        }
        Value::Object(map)
    }

    /// Whether this is no result yet but a question (`resultType:
    /// "input_required"`, stateless revision): read it with
    /// [`InputRequiredResult::from_value`]. The client answers such
    /// results itself.
    pub fn is_input_required(&self) -> bool {
        self.extra.get("resultType").and_then(Value::as_str) == Some(INPUT_REQUIRED)
    }

    /// The concatenated text of the text blocks.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for c in &self.content {
            if let Some(t) = c.as_text() {
                out.push_str(t);
            }
        }
        out
    }
}

/// The result of `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult {
    /// One page of tools.
    pub tools: Vec<ToolInfo>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other fields (`_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The revision both sides will speak.
    pub protocol_version: String,
    /// What the server offers (`tools`, `resources`, `prompts`, `logging`, …).
    pub capabilities: Map<String, Value>,
    /// The server's name and version.
    pub server_info: Implementation,
    /// How to use this server; hosts may put it in the model's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `server/discover` (protocol revision 2026-07-28).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// The revisions the server speaks.
    #[serde(default)]
    pub supported_versions: Vec<String>,
    /// What the server offers.
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    /// The server's name and version, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Implementation>,
    /// How to use this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Other fields (`resultType`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_result_uses_camel_case() {
        let r = CallToolResult::error("boom").with_structured_content(json!({"a":1}));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["isError"], true);
        assert_eq!(v["structuredContent"]["a"], 1);
        assert!(v.get("is_error").is_none());
    }

    #[test]
    fn call_result_meta_is_a_map_to_read_and_write() {
        let mut meta = Map::new();
        meta.insert("k".into(), json!(1));
        let mut r = CallToolResult::text("x").with_meta(meta);
        let shared = r.clone();
        r.meta.as_mut().unwrap().insert("l".into(), json!(2));
        assert_eq!(shared.meta.as_deref().unwrap().len(), 1);
        let v = r.into_value();
        assert_eq!(v["_meta"], json!({"k": 1, "l": 2}));
        let back: CallToolResult = serde_json::from_value(v).unwrap();
        assert_eq!(back.meta.unwrap()["l"], 2);
        assert!(back.extra.is_empty());
    }

    #[test]
    fn call_result_keeps_unknown_fields() {
        let v = json!({"content":[],"isError":false,"task":{"id":"t"}});
        let r: CallToolResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.extra["task"]["id"], "t");
        assert_eq!(r.into_value(), v);
    }
}
