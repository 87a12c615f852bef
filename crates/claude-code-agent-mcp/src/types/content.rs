//! Content blocks: what a tool result (or a prompt message) is made of.

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

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
        self.clone().into_value()
    }

    /// The block as JSON, consuming it (no copy of its text or data).
    ///
    /// A [`Content::Unknown`] block whose `type` is `"text"` has its `text`
    /// turned into a JSON string: peers reject a text block whose text is a
    /// number.
    pub fn into_value(self) -> Value {
        fn put(map: &mut Map<String, Value>, key: &str, v: Option<Map<String, Value>>) {
            if let Some(v) = v {
                map.insert(key.into(), Value::Object(v));
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
                map.insert("text".into(), Value::String(text));
                put(&mut map, "annotations", annotations);
                put(&mut map, "_meta", meta);
            }
            Self::Image {
                data,
                mime_type,
                annotations,
                meta,
            } => {
                map.insert("type".into(), "image".into());
                map.insert("data".into(), Value::String(data));
                map.insert("mimeType".into(), Value::String(mime_type));
                put(&mut map, "annotations", annotations);
                put(&mut map, "_meta", meta);
            }
            Self::Audio {
                data,
                mime_type,
                annotations,
                meta,
            } => {
                map.insert("type".into(), "audio".into());
                map.insert("data".into(), Value::String(data));
                map.insert("mimeType".into(), Value::String(mime_type));
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
                map.insert("uri".into(), Value::String(uri));
                map.insert("name".into(), Value::String(name));
                map.extend(fields);
            }
            Self::Unknown(mut v) => {
                stringify_text_field(&mut v);
                return v;
            }
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
                let resource: ResourceContents =
                    serde_json::from_value(resource).map_err(|e| format!("resource block: {e}"))?;
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

/// Makes the `text` of a `{"type":"text"}` block a JSON string: a number or
/// boolean becomes its JSON text, `null` the empty string, anything else its
/// JSON encoding. Other values are left alone.
///
/// The Claude Code CLI rejects a whole result whose text block holds a number.
pub fn stringify_text_field(block: &mut Value) {
    let Some(map) = block.as_object_mut() else {
        return;
    };
    if map.get("type").and_then(Value::as_str) != Some("text") {
        return;
    }
    if let Some(text) = map.get_mut("text") {
        let as_string = match &*text {
            Value::String(_) => return,
            Value::Null => String::new(),
            other => other.to_string(),
        };
        *text = Value::String(as_string);
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BlockVisitor)
    }
}

const NOT_AN_OBJECT: &str = "a content block must be a JSON object";

/// Decodes one block as [`Content::from_value`] does, without the
/// [`Value`] in between for the usual block (a text block whose `type`
/// comes first, as peers write it: the client decodes one per tool call).
/// Any other block is read into a [`Value`] and goes through
/// `from_value`. A text block naming its `type` twice is an error.
struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(NOT_AN_OBJECT)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        let first = map.next_key::<String>()?;
        let first_value = match first {
            Some(_) => map.next_value::<Value>()?,
            None => Value::Null,
        };
        if first.as_deref() == Some("type") && first_value.as_str() == Some("text") {
            let (mut text, mut annotations, mut meta) = (None, None, None);
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "text" => text = Some(map.next_value::<Value>()?),
                    "annotations" => annotations = Some(map.next_value::<Value>()?),
                    "_meta" => meta = Some(map.next_value::<Value>()?),
                    "type" => return Err(A::Error::duplicate_field("type")),
                    _ => drop(map.next_value::<IgnoredAny>()?),
                }
            }
            let object = |v: Option<Value>| match v {
                Some(Value::Object(o)) => Some(o),
                _ => None,
            };
            return match text {
                Some(Value::String(text)) => Ok(Content::Text {
                    text,
                    annotations: object(annotations),
                    meta: object(meta),
                }),
                Some(other) => Err(A::Error::custom(format!(
                    "text block: \"text\" must be a string, not {}",
                    json_type_name(&other)
                ))),
                None => Err(A::Error::custom("text block: missing \"text\"")),
            };
        }
        let mut object = Map::new();
        if let Some(first) = first {
            object.insert(first, first_value);
        }
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value()?;
            object.insert(key, value);
        }
        Content::from_value(Value::Object(object)).map_err(A::Error::custom)
    }

    // Not an object: what `from_value` says of it.
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Content, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Content, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Content, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Content, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Content, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Content, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Content, E> {
        Err(E::custom(NOT_AN_OBJECT))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Content, A::Error> {
        Err(A::Error::custom(NOT_AN_OBJECT))
    }
}

/// Decodes a list of blocks into a vector that starts with room for one
/// (serde's own starts with room for four, a kilobyte of `Content`, which
/// costs the allocator more than the usual single block).
pub(crate) struct Blocks;

impl<'de> DeserializeSeed<'de> for Blocks {
    type Value = Vec<Content>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Content>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Blocks {
    type Value = Vec<Content>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Content>, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1).clamp(1, 64));
        while let Some(block) = seq.next_element()? {
            blocks.push(block);
        }
        Ok(blocks)
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
    fn blocks_decode_from_text_as_from_values() {
        let text = r#"[{"type":"text","text":"hi","annotations":{"priority":1},"_meta":5,"x":[1]},
            {"text":"late type","type":"text"},
            {"type":"image","data":"AAAA","mimeType":"image/png"},
            {"type":"future_block","b":1,"a":2},
            {"type":"text","text":"twice","text":"last"}]"#;
        let value: Value = serde_json::from_str(text).unwrap();
        let expected: Vec<Content> = value
            .as_array()
            .unwrap()
            .iter()
            .map(|v| Content::from_value(v.clone()).unwrap())
            .collect();
        let parsed: Vec<Content> = serde_json::from_str(text).unwrap();
        assert_eq!(parsed, expected);
        assert_eq!(parsed[4].as_text(), Some("last"));
        let Content::Unknown(unknown) = &parsed[3] else {
            panic!()
        };
        assert_eq!(
            unknown.to_string(),
            r#"{"type":"future_block","b":1,"a":2}"#
        );
        for (bad, why) in [
            (
                r#"{"type":"text","text":42}"#,
                "\"text\" must be a string, not a number",
            ),
            (r#"{"type":"text"}"#, "missing \"text\""),
            (
                r#"{"type":"text","text":"a","type":"image"}"#,
                "duplicate field",
            ),
            (r#"[1]"#, "must be a JSON object"),
            (r#"null"#, "must be a JSON object"),
            (r#"{}"#, "needs a string \"type\""),
        ] {
            let err = serde_json::from_str::<Content>(bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn text_block_with_number_is_an_error_naming_the_field() {
        let err = Content::from_value(json!({"type":"text","text":42})).unwrap_err();
        assert!(err.contains("\"text\" must be a string"), "{err}");
    }

    #[test]
    fn into_value_matches_serde_and_stringifies_unknown_text() {
        let blocks = vec![
            Content::text("hi"),
            Content::image("AAAA", "image/png"),
            Content::resource(ResourceContents::text("file:///x", "t")),
            Content::resource_link("file:///y", "y"),
        ];
        for block in blocks {
            assert_eq!(
                block.clone().into_value(),
                serde_json::to_value(&block).unwrap()
            );
        }
        let odd = Content::Unknown(json!({"type":"text","text":5}));
        assert_eq!(odd.into_value(), json!({"type":"text","text":"5"}));
    }
}
