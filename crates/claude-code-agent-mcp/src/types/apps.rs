//! MCP Apps (SEP-1865, extension [`APPS_EXTENSION`]): a tool names an
//! interactive view, an HTML document served as a `ui://` resource of
//! type [`UI_MIME_TYPE`], in its `_meta.ui.resourceUri`; a host that
//! declared the extension reads the resource and renders the tool's
//! results in it (in a sandboxed frame: the host's business, not the
//! protocol's). A host without it uses the tool as any other.
//!
//! On a server: [`Tool::ui`](crate::Tool::ui) links a tool,
//! [`Resource::ui`](crate::server::Resource::ui) serves a view, and
//! [`ServerBuilder::extension`](crate::server::ServerBuilder::extension)
//! declares the extension. On a client:
//! [`ClientOptions::extension`](crate::client::ClientOptions::extension)
//! with [`client_settings`] declares it, [`ToolInfo::ui`](super::ToolInfo::ui)
//! reads a tool's link.
//!
//! ```
//! use claude_code_agent_mcp::types::apps::{UiToolMeta, Visibility};
//! use serde_json::json;
//!
//! let meta = UiToolMeta::from_tool_meta(&json!({
//!     "ui": {"resourceUri": "ui://weather/view.html", "visibility": ["app"]}
//! }).as_object().unwrap().clone()).unwrap();
//! assert_eq!(meta.resource_uri.as_deref(), Some("ui://weather/view.html"));
//! assert!(!meta.visible_to_model() && meta.callable_by_app());
//! assert_eq!(meta.visibility.unwrap(), [Visibility::App]);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use super::extensions::APPS_EXTENSION;

/// The MIME type of an MCP App's view (HTML).
pub const UI_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of views.
pub const UI_SCHEME: &str = "ui://";

/// The settings a host declares the extension with: it renders
/// [`UI_MIME_TYPE`] views.
pub fn client_settings() -> Value {
    json!({"mimeTypes": [UI_MIME_TYPE]})
}

/// Whether extension settings a client declared (its
/// `extensions["io.modelcontextprotocol/ui"]`) say it renders HTML views.
pub fn renders_html(settings: &Map<String, Value>) -> bool {
    settings
        .get("mimeTypes")
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == UI_MIME_TYPE))
}

/// Who may call a tool linked to a view.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Visibility {
    /// The model (the host lists the tool to it).
    Model,
    /// The view, from the same server's connection.
    App,
    /// Something this crate does not know, as sent.
    Unknown(Value),
}

impl Serialize for Visibility {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Model => s.serialize_str("model"),
            Self::App => s.serialize_str("app"),
            Self::Unknown(other) => other.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Visibility {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) if s == "model" => Self::Model,
            Value::String(s) if s == "app" => Self::App,
            other => Self::Unknown(other),
        })
    }
}

/// A tool's `_meta.ui`: the view its results are shown in, and who may
/// call it (both when unsaid).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiToolMeta {
    /// The `ui://` resource of the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool (default: the model and the view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl UiToolMeta {
    /// A link to the view at `resource_uri`.
    pub fn new(resource_uri: impl Into<String>) -> Self {
        Self {
            resource_uri: Some(resource_uri.into()),
            ..Self::default()
        }
    }

    /// Says who may call the tool (`visibility`).
    pub fn visibility(mut self, who: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(who.into_iter().collect());
        self
    }

    /// The link in a tool's `_meta`: `ui`, else the deprecated flat
    /// `ui/resourceUri`; `None` without either (or with a `ui` that does
    /// not decode).
    pub fn from_tool_meta(meta: &Map<String, Value>) -> Option<Self> {
        if let Some(ui) = meta.get("ui") {
            return serde_json::from_value(ui.clone()).ok();
        }
        let flat = meta.get("ui/resourceUri")?.as_str()?;
        Some(Self::new(flat))
    }

    /// Whether the host lists the tool to the model.
    pub fn visible_to_model(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::Model))
    }

    /// Whether the view may call the tool.
    pub fn callable_by_app(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::App))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_decode_old_and_new_and_keep_what_is_unknown() {
        let flat = json!({"ui/resourceUri": "ui://a"});
        let meta = UiToolMeta::from_tool_meta(flat.as_object().unwrap()).unwrap();
        assert_eq!(meta.resource_uri.as_deref(), Some("ui://a"));
        assert!(meta.visible_to_model() && meta.callable_by_app());
        let odd = json!({"ui": {"visibility": ["model", "elsewhere"], "future": 1}});
        let meta = UiToolMeta::from_tool_meta(odd.as_object().unwrap()).unwrap();
        assert_eq!(
            meta.visibility.as_deref().unwrap(),
            [Visibility::Model, Visibility::Unknown(json!("elsewhere"))]
        );
        assert_eq!(serde_json::to_value(&meta).unwrap(), odd["ui"]);
        assert!(UiToolMeta::from_tool_meta(&Map::new()).is_none());
        assert!(renders_html(client_settings().as_object().unwrap()));
        assert!(!renders_html(&Map::new()));
    }
}
