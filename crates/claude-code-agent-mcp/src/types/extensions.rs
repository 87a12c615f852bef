//! MCP extensions (SEP-2133): what a client or a server declares under
//! `capabilities.extensions`, an identifier (`vendor-prefix/name`, as
//! `_meta` keys are named) to that extension's settings object (empty: no
//! settings). An extension is in use when both sides declare it.
//!
//! ```
//! use claude_code_agent_mcp::types::{APPS_EXTENSION, Extensions};
//! use serde_json::json;
//!
//! let capabilities = json!({"tools": {}, "extensions": {
//!     "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]},
//!     "com.example/other": {}
//! }});
//! let declared = Extensions::of(capabilities.as_object().unwrap());
//! assert_eq!(declared.get(APPS_EXTENSION).unwrap()["mimeTypes"][0], "text/html;profile=mcp-app");
//! assert!(declared.contains("com.example/other"));
//! assert_eq!(declared.ids().collect::<Vec<_>>(), [APPS_EXTENSION, "com.example/other"]);
//! ```

use serde_json::{Map, Value};

/// The identifier of MCP Apps (SEP-1865): tools linked to `ui://`
/// resources a host renders (see [`apps`](super::apps)).
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The identifier of the Skills extension (SEP-2640): skills served as
/// resources, listed by `skills/list` (see [`skills`](super::skills)).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The extensions one side declared, as it sent them: known or not, each
/// identifier with its settings. Settings that are not an object are kept
/// but not returned by [`get`](Self::get).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extensions(Map<String, Value>);

impl Extensions {
    /// The `extensions` of a capabilities object (none when absent or not
    /// an object).
    pub fn of(capabilities: &Map<String, Value>) -> Self {
        match capabilities.get("extensions") {
            Some(Value::Object(extensions)) => Self(extensions.clone()),
            _ => Self::default(),
        }
    }

    /// The settings of extension `id`, if it is declared with an object.
    pub fn get(&self, id: &str) -> Option<&Map<String, Value>> {
        self.0.get(id)?.as_object()
    }

    /// Whether extension `id` is declared (with settings of any shape).
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// The declared identifiers, in the order they were sent.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Whether none is declared.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The declarations as sent.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
}

/// Checks an extension declaration made in code: `id` has a vendor prefix
/// and a name (`com.example/name`), the settings are an object.
///
/// # Panics
///
/// Saying what is wrong, when either is not so.
pub(crate) fn checked(id: &str, settings: Value) -> Map<String, Value> {
    let well_formed = id.split_once('/').is_some_and(|(prefix, name)| {
        let label = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        };
        prefix.split('.').all(|l| !l.is_empty() && label(l)) && label(name)
    });
    assert!(
        well_formed,
        "extension identifier {id:?} is not of the form `vendor-prefix/name` (e.g. `com.example/my-extension`)"
    );
    match settings {
        Value::Object(settings) => settings,
        other => panic!("the settings of extension {id:?} must be a JSON object, not {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declarations_are_checked() {
        assert!(checked("io.modelcontextprotocol/ui", json!({})).is_empty());
        assert!(checked("com.example/x_1", json!({"a": 1})).contains_key("a"));
        for bad in ["ui", "/ui", "io.modelcontextprotocol/", "a..b/c", "a b/c"] {
            let panicked = std::panic::catch_unwind(|| checked(bad, json!({})));
            assert!(panicked.is_err(), "{bad:?} was taken");
        }
        assert!(std::panic::catch_unwind(|| checked("a/b", json!([]))).is_err());
        let caps = json!({"extensions": {"a/b": [], "c/d": {"x": 1}}});
        let declared = Extensions::of(caps.as_object().unwrap());
        assert!(declared.contains("a/b") && declared.get("a/b").is_none());
        assert_eq!(declared.get("c/d").unwrap()["x"], 1);
        assert!(Extensions::of(&Map::new()).is_empty());
    }
}
