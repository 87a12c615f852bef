//! Content blocks of assistant and user messages.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::tools::BuiltinTool;
use crate::wire::{Wire, str_at, wire_struct};

wire_struct! {
    /// `{"type":"text","text":…}`.
    pub struct TextBlock tags { "type" = "text" } {
        /// The text.
        req text: String = "text",
    }
}

wire_struct! {
    /// `{"type":"thinking","thinking":…,"signature":…}` — extended thinking.
    pub struct ThinkingBlock tags { "type" = "thinking" } {
        /// The model's reasoning.
        req thinking: String = "thinking",
        /// Signature that lets the API verify the block when it is sent back.
        opt signature: String = "signature",
    }
}

wire_struct! {
    /// `{"type":"redacted_thinking","data":…}` — encrypted thinking.
    pub struct RedactedThinkingBlock tags { "type" = "redacted_thinking" } {
        /// Opaque encrypted payload.
        req data: String = "data",
    }
}

wire_struct! {
    /// `{"type":"tool_use","id":…,"name":…,"input":…}` — the model calls a tool.
    pub struct ToolUseBlock tags { "type" = "tool_use" } {
        /// The call id (`toolu_…`), echoed by the matching tool result.
        req id: String = "id",
        /// The tool's name (`mcp__<server>__<tool>` for MCP tools).
        req name: String = "name",
        /// The arguments.
        req input: Value = "input",
    }
}

impl ToolUseBlock {
    /// The call's input typed by the tool's name: [`BuiltinTool::Bash`]
    /// for `Bash`, …, [`BuiltinTool::Unknown`] for a tool this crate does
    /// not type (MCP tools among them) or an input that does not fit.
    pub fn builtin_tool(&self) -> BuiltinTool {
        BuiltinTool::parse(&self.name, &self.input)
    }
}

wire_struct! {
    /// `{"type":"server_tool_use",…}` — a tool the API runs itself
    /// (`web_search`, `web_fetch`, `code_execution`, `advisor`, …).
    pub struct ServerToolUseBlock tags { "type" = "server_tool_use" } {
        /// The call id (`srvtoolu_…`).
        req id: String = "id",
        /// The server tool's name.
        req name: String = "name",
        /// The arguments.
        opt input: Value = "input",
    }
}

wire_struct! {
    /// A server tool's result, e.g. `{"type":"web_search_tool_result",…}`:
    /// any block type ending in `_tool_result` other than `tool_result`.
    pub struct ServerToolResultBlock {
        /// The block type, e.g. `web_search_tool_result`.
        req kind: String = "type",
        /// The `server_tool_use` id this answers.
        opt tool_use_id: String = "tool_use_id",
        /// The result payload (shape depends on the tool).
        opt content: Value = "content",
    }
}

wire_struct! {
    /// `{"type":"tool_result","tool_use_id":…,"content":…,"is_error":…}`.
    pub struct ToolResultBlock tags { "type" = "tool_result" } {
        /// The `tool_use` id this answers.
        req tool_use_id: String = "tool_use_id",
        /// The result: a string or content blocks.
        opt content: MessageContent = "content",
        /// Whether the tool failed.
        opt is_error: bool = "is_error",
    }
}

wire_struct! {
    /// Where an image or document comes from: `{"type":"base64","media_type":…,"data":…}`,
    /// `{"type":"url","url":…}`, or another source kind.
    pub struct MediaSource {
        /// `base64`, `url`, `text`, `file`, …
        req kind: String = "type",
        /// MIME type, e.g. `image/png`.
        opt media_type: String = "media_type",
        /// Base64 (or plain text) payload.
        opt data: String = "data",
        /// URL of the media.
        opt url: String = "url",
    }
}

impl MediaSource {
    /// A base64-encoded source.
    pub fn base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            kind: "base64".into(),
            media_type: Some(media_type.into()),
            data: Some(data.into()),
            ..Self::default()
        }
    }

    /// A URL source.
    pub fn url(url: impl Into<String>) -> Self {
        Self {
            kind: "url".into(),
            url: Some(url.into()),
            ..Self::default()
        }
    }
}

wire_struct! {
    /// `{"type":"image","source":…}`.
    pub struct ImageBlock tags { "type" = "image" } {
        /// The image data.
        req source: MediaSource = "source",
    }
}

wire_struct! {
    /// `{"type":"document","source":…}` (PDF or text document).
    pub struct DocumentBlock tags { "type" = "document" } {
        /// The document data.
        req source: MediaSource = "source",
        /// Optional title.
        opt title: String = "title",
        /// Optional context about the document.
        opt context: String = "context",
    }
}

/// One content block of an assistant or user message. Unknown block types
/// (and known ones that lack a required field) are kept as
/// [`ContentBlock::Unknown`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text(TextBlock),
    /// Extended thinking.
    Thinking(ThinkingBlock),
    /// Redacted (encrypted) thinking.
    RedactedThinking(RedactedThinkingBlock),
    /// A tool call by the model.
    ToolUse(ToolUseBlock),
    /// The result of a tool call.
    ToolResult(ToolResultBlock),
    /// A call of a server-side tool.
    ServerToolUse(ServerToolUseBlock),
    /// The result of a server-side tool (`web_search_tool_result`, …).
    ServerToolResult(ServerToolResultBlock),
    /// An image.
    Image(ImageBlock),
    /// A document.
    Document(DocumentBlock),
    /// Any other block, as it came.
    Unknown(Value),
}

impl Default for ContentBlock {
    fn default() -> Self {
        Self::Unknown(Value::Null)
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextBlock {
            text: text.into(),
            ..TextBlock::default()
        })
    }

    /// A base64 image block, e.g. `ContentBlock::image_base64("image/png", data)`.
    pub fn image_base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Self::Image(ImageBlock {
            source: MediaSource::base64(media_type, data),
            ..ImageBlock::default()
        })
    }

    /// An image block from a URL.
    pub fn image_url(url: impl Into<String>) -> Self {
        Self::Image(ImageBlock {
            source: MediaSource::url(url),
            ..ImageBlock::default()
        })
    }

    /// A tool result block.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        content: impl Into<MessageContent>,
        is_error: bool,
    ) -> Self {
        Self::ToolResult(ToolResultBlock {
            tool_use_id: tool_use_id.into(),
            content: Some(content.into()),
            is_error: is_error.then_some(true),
            ..ToolResultBlock::default()
        })
    }

    /// Decodes a block; never fails.
    pub fn from_value(value: Value) -> Self {
        let kind = match &value {
            Value::Object(map) => str_at(map, "type"),
            _ => None,
        };
        let decoded = match kind {
            Some("text") => TextBlock::from_wire(value).map(Self::Text),
            Some("thinking") => ThinkingBlock::from_wire(value).map(Self::Thinking),
            Some("redacted_thinking") => {
                RedactedThinkingBlock::from_wire(value).map(Self::RedactedThinking)
            }
            Some("tool_use") => ToolUseBlock::from_wire(value).map(Self::ToolUse),
            Some("tool_result") => ToolResultBlock::from_wire(value).map(Self::ToolResult),
            Some("server_tool_use") => {
                ServerToolUseBlock::from_wire(value).map(Self::ServerToolUse)
            }
            Some("image") => ImageBlock::from_wire(value).map(Self::Image),
            Some("document") => DocumentBlock::from_wire(value).map(Self::Document),
            Some(k) if k.ends_with("_tool_result") => {
                ServerToolResultBlock::from_wire(value).map(Self::ServerToolResult)
            }
            _ => Err(value),
        };
        decoded.unwrap_or_else(Self::Unknown)
    }

    /// Encodes as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The block's `type` (`"text"`, `"tool_use"`, …), if it has one.
    pub fn block_type(&self) -> Option<&str> {
        Some(match self {
            Self::Text(_) => "text",
            Self::Thinking(_) => "thinking",
            Self::RedactedThinking(_) => "redacted_thinking",
            Self::ToolUse(_) => "tool_use",
            Self::ToolResult(_) => "tool_result",
            Self::ServerToolUse(_) => "server_tool_use",
            Self::ServerToolResult(b) => &b.kind,
            Self::Image(_) => "image",
            Self::Document(_) => "document",
            Self::Unknown(v) => return v.get("type").and_then(Value::as_str),
        })
    }

    /// The text of a [`ContentBlock::Text`].
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(b) => Some(&b.text),
            _ => None,
        }
    }

    /// The [`ContentBlock::ToolUse`] payload.
    pub fn as_tool_use(&self) -> Option<&ToolUseBlock> {
        match self {
            Self::ToolUse(b) => Some(b),
            _ => None,
        }
    }

    /// The [`ContentBlock::ToolResult`] payload.
    pub fn as_tool_result(&self) -> Option<&ToolResultBlock> {
        match self {
            Self::ToolResult(b) => Some(b),
            _ => None,
        }
    }
}

impl Wire for ContentBlock {
    fn from_wire(v: Value) -> Result<Self, Value> {
        Ok(Self::from_value(v))
    }
    fn accepts(_: &Value) -> bool {
        true
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(b) => b.serialize(s),
            Self::Thinking(b) => b.serialize(s),
            Self::RedactedThinking(b) => b.serialize(s),
            Self::ToolUse(b) => b.serialize(s),
            Self::ToolResult(b) => b.serialize(s),
            Self::ServerToolUse(b) => b.serialize(s),
            Self::ServerToolResult(b) => b.serialize(s),
            Self::Image(b) => b.serialize(s),
            Self::Document(b) => b.serialize(s),
            Self::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from_value(Value::deserialize(d)?))
    }
}

/// Message or tool-result content: a string or a list of blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    /// Plain text.
    Text(String),
    /// Content blocks (text, images, …).
    Blocks(Vec<ContentBlock>),
}

impl Default for MessageContent {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

impl MessageContent {
    /// All text in the content, blocks joined with `\n`.
    pub fn text(&self) -> String {
        match self {
            Self::Text(s) => s.clone(),
            Self::Blocks(blocks) => join_text(blocks),
        }
    }
}

impl From<String> for MessageContent {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<&str> for MessageContent {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<Vec<ContentBlock>> for MessageContent {
    fn from(blocks: Vec<ContentBlock>) -> Self {
        Self::Blocks(blocks)
    }
}

impl Wire for MessageContent {
    fn from_wire(v: Value) -> Result<Self, Value> {
        match v {
            Value::String(s) => Ok(Self::Text(s)),
            Value::Array(_) => Vec::<ContentBlock>::from_wire(v).map(Self::Blocks),
            other => Err(other),
        }
    }
    fn accepts(v: &Value) -> bool {
        v.is_string() || v.is_array()
    }
}

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(t) => t.serialize(s),
            Self::Blocks(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_wire(Value::deserialize(d)?).map_err(|_| {
            serde::de::Error::custom("tool result content must be a string or an array")
        })
    }
}

/// Joins the text blocks of `blocks` with `\n`.
pub(crate) fn join_text(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for text in blocks.iter().filter_map(ContentBlock::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}
