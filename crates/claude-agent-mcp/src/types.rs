//! MCP wire types, with MCP's exact (camelCase) field names.
//!
//! Types a peer sends are open: an unknown content block decodes as
//! [`Content::Unknown`] instead of failing, and unknown fields are kept where
//! a type has a `extra` map.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The MCP protocol revisions this crate speaks, oldest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The newest protocol revision this crate speaks.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

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

/// Annotations on a content block (`audience`, `priority`, `lastModified`).
pub type Annotations = Map<String, Value>;

/// The contents of a resource: text or base64 binary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 binary contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceContents {
    /// Text contents at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            text: Some(text.into()),
            blob: None,
            meta: None,
        }
    }

    /// Base64 binary contents at `uri`.
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            text: None,
            blob: Some(blob.into()),
            meta: None,
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// A content block in a tool result (or a prompt message).
///
/// Serialized with `"type"` as the tag and MCP's field names. A block of a
/// type this crate does not know decodes as [`Content::Unknown`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// `{"type":"text","text":…}`
    Text {
        /// The text.
        text: String,
        /// Optional annotations.
        annotations: Option<Annotations>,
        /// Optional `_meta`.
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"image","data":<base64>,"mimeType":…}`
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `image/png`.
        mime_type: String,
        /// Optional annotations.
        annotations: Option<Annotations>,
        /// Optional `_meta`.
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"audio","data":<base64>,"mimeType":…}`
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        mime_type: String,
        /// Optional annotations.
        annotations: Option<Annotations>,
        /// Optional `_meta`.
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"resource","resource":{uri, mimeType, text|blob}}`
    Resource {
        /// The embedded resource.
        resource: ResourceContents,
        /// Optional annotations.
        annotations: Option<Annotations>,
        /// Optional `_meta`.
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"resource_link","uri":…,"name":…}` plus optional fields
    /// (`title`, `description`, `mimeType`, `size`, …) kept in `fields`.
    ResourceLink {
        /// The linked resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Other fields, with their MCP names.
        fields: Map<String, Value>,
    },
    /// A block of a type this crate does not model, kept as it was sent.
    Unknown(Value),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An embedded resource block.
    pub fn resource(resource: ResourceContents) -> Self {
        Self::Resource {
            resource,
            annotations: None,
            meta: None,
        }
    }

    /// A resource link block.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            fields: Map::new(),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The block as JSON.
    pub fn to_value(&self) -> Value {
        fn put(map: &mut Map<String, Value>, key: &str, v: &Option<Map<String, Value>>) {
            if let Some(v) = v {
                map.insert(key.into(), Value::Object(v.clone()));
            }
        }
        let mut map = Map::new();
        match self {
            Self::Text {
                text,
                annotations,
                meta,
            } => {
                map.insert("type".into(), "text".into());
                map.insert("text".into(), Value::String(text.clone()));
                put(&mut map, "annotations", annotations);
                put(&mut map, "_meta", meta);
            }
            Self::Image {
                data,
                mime_type,
                annotations,
                meta,
            }
            | Self::Audio {
                data,
                mime_type,
                annotations,
                meta,
            } => {
                let ty = if matches!(self, Self::Image { .. }) {
                    "image"
                } else {
                    "audio"
                };
                map.insert("type".into(), ty.into());
                map.insert("data".into(), Value::String(data.clone()));
                map.insert("mimeType".into(), Value::String(mime_type.clone()));
                put(&mut map, "annotations", annotations);
                put(&mut map, "_meta", meta);
            }
            Self::Resource {
                resource,
                annotations,
                meta,
            } => {
                map.insert("type".into(), "resource".into());
                map.insert(
                    "resource".into(),
                    serde_json::to_value(resource).unwrap_or(Value::Null),
                );
                put(&mut map, "annotations", annotations);
                put(&mut map, "_meta", meta);
            }
            Self::ResourceLink { uri, name, fields } => {
                map.insert("type".into(), "resource_link".into());
                map.insert("uri".into(), Value::String(uri.clone()));
                map.insert("name".into(), Value::String(name.clone()));
                for (k, v) in fields {
                    map.insert(k.clone(), v.clone());
                }
            }
            Self::Unknown(v) => return v.clone(),
        }
        Value::Object(map)
    }

    /// Reads a block from JSON. Unknown `type`s become [`Content::Unknown`];
    /// a known type with missing or mistyped fields is an error.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(mut map) = value else {
            return Err("a content block must be a JSON object".into());
        };
        let ty = match map.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => return Err("a content block needs a string \"type\"".into()),
        };
        fn take_str(map: &mut Map<String, Value>, key: &str, ty: &str) -> Result<String, String> {
            match map.remove(key) {
                Some(Value::String(s)) => Ok(s),
                Some(other) => Err(format!(
                    "{ty} block: \"{key}\" must be a string, not {}",
                    json_type_name(&other)
                )),
                None => Err(format!("{ty} block: missing \"{key}\"")),
            }
        }
        fn take_obj(map: &mut Map<String, Value>, key: &str) -> Option<Map<String, Value>> {
            match map.remove(key) {
                Some(Value::Object(o)) => Some(o),
                _ => None,
            }
        }
        Ok(match ty.as_str() {
            "text" => Self::Text {
                text: take_str(&mut map, "text", "text")?,
                annotations: take_obj(&mut map, "annotations"),
                meta: take_obj(&mut map, "_meta"),
            },
            "image" | "audio" => {
                let data = take_str(&mut map, "data", &ty)?;
                let mime_type = take_str(&mut map, "mimeType", &ty)?;
                let annotations = take_obj(&mut map, "annotations");
                let meta = take_obj(&mut map, "_meta");
                if ty == "image" {
                    Self::Image {
                        data,
                        mime_type,
                        annotations,
                        meta,
                    }
                } else {
                    Self::Audio {
                        data,
                        mime_type,
                        annotations,
                        meta,
                    }
                }
            }
            "resource" => {
                let resource = map
                    .remove("resource")
                    .ok_or_else(|| "resource block: missing \"resource\"".to_string())?;
                let resource: ResourceContents = serde_json::from_value(resource)
                    .map_err(|e| format!("resource block: {e}"))?;
                Self::Resource {
                    resource,
                    annotations: take_obj(&mut map, "annotations"),
                    meta: take_obj(&mut map, "_meta"),
                }
            }
            "resource_link" => {
                let uri = take_str(&mut map, "uri", &ty)?;
                let name = take_str(&mut map, "name", &ty)?;
                map.remove("type");
                Self::ResourceLink {
                    uri,
                    name,
                    fields: map,
                }
            }
            _ => Self::Unknown(Value::Object(map)),
        })
    }
}

/// The JSON type of a value, for error messages (`"a number"`, `"an array"`…).
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Content::from_value(Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::text(s)
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Self {
        Content::text(s)
    }
}

/// The result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_round_trips_with_mcp_names() {
        let blocks = json!([
            {"type":"text","text":"hi"},
            {"type":"image","data":"AAAA","mimeType":"image/png"},
            {"type":"audio","data":"AAAA","mimeType":"audio/wav"},
            {"type":"resource","resource":{"uri":"file:///x","mimeType":"text/plain","text":"t"}},
            {"type":"resource_link","uri":"file:///y","name":"y","mimeType":"text/plain"},
            {"type":"future_block","x":1}
        ]);
        let parsed: Vec<Content> = serde_json::from_value(blocks.clone()).unwrap();
        assert!(matches!(parsed[5], Content::Unknown(_)));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), blocks);
    }

    #[test]
    fn call_result_uses_camel_case() {
        let r = CallToolResult::error("boom").with_structured_content(json!({"a":1}));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["isError"], true);
        assert_eq!(v["structuredContent"]["a"], 1);
        assert!(v.get("is_error").is_none());
    }

    #[test]
    fn text_block_with_number_is_an_error_naming_the_field() {
        let err = Content::from_value(json!({"type":"text","text":42})).unwrap_err();
        assert!(err.contains("\"text\" must be a string"), "{err}");
    }
}
