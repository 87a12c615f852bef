//! What a client declared it supports, and what each request to a client
//! needs of it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The capabilities a client declared: the `capabilities` of its
/// `initialize`, or the `io.modelcontextprotocol/clientCapabilities` of a
/// stateless (2026-07-28) request's `_meta`. Kept as sent (unknown and
/// experimental capabilities included), with accessors for the ones a
/// server acts on.
///
/// ```
/// use claude_code_agent_mcp::types::ClientCapabilities;
/// use serde_json::json;
///
/// let caps = ClientCapabilities::from_value(&json!({"sampling": {}, "elicitation": {}}));
/// assert!(caps.sampling() && !caps.sampling_tools());
/// // An empty `elicitation` means form mode (2025-11-25).
/// assert!(caps.elicitation_form() && !caps.elicitation_url());
/// assert!(!caps.roots());
/// assert_eq!(
///     caps.missing_for("elicitation/create", &json!({"mode": "url"})),
///     Some("elicitation.url")
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientCapabilities(Map<String, Value>);

impl ClientCapabilities {
    /// Reads declared capabilities; anything but an object declares none.
    pub fn from_value(value: &Value) -> Self {
        Self(value.as_object().cloned().unwrap_or_default())
    }

    /// The capabilities as the client sent them.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    fn has(&self, key: &str) -> bool {
        self.0.get(key).is_some_and(|v| !v.is_null())
    }

    fn has_in(&self, key: &str, sub: &str) -> bool {
        self.0
            .get(key)
            .and_then(|v| v.get(sub))
            .is_some_and(|v| !v.is_null())
    }

    /// `sampling`: the client answers `sampling/createMessage`.
    pub fn sampling(&self) -> bool {
        self.has("sampling")
    }

    /// `sampling.tools`: sampling requests may carry `tools` and `toolChoice`.
    pub fn sampling_tools(&self) -> bool {
        self.has_in("sampling", "tools")
    }

    /// `elicitation` in form mode: `elicitation.form`, or an `elicitation`
    /// that names no mode (what revisions before 2025-11-25 declare).
    pub fn elicitation_form(&self) -> bool {
        self.has("elicitation")
            && (self.has_in("elicitation", "form") || !self.has_in("elicitation", "url"))
    }

    /// `elicitation.url`: the client answers URL-mode elicitations.
    pub fn elicitation_url(&self) -> bool {
        self.has_in("elicitation", "url")
    }

    /// `roots`: the client answers `roots/list`.
    pub fn roots(&self) -> bool {
        self.has("roots")
    }

    /// Whether these capabilities declare the extension `id` (an entry of
    /// `extensions`, e.g. [`TASKS_EXTENSION`](super::TASKS_EXTENSION)).
    pub fn extension(&self, id: &str) -> bool {
        self.0
            .get("extensions")
            .and_then(|e| e.get(id))
            .is_some_and(|v| !v.is_null())
    }

    /// The capability a request to the client needs that these do not
    /// declare (`"sampling"`, `"sampling.tools"`, `"elicitation"`,
    /// `"elicitation.form"`, `"elicitation.url"`, `"roots"`), or `None` when
    /// the request may be sent. Methods that need no capability (`ping`, and
    /// any this crate does not know) need none.
    pub fn missing_for(&self, method: &str, params: &Value) -> Option<&'static str> {
        let given = |key: &str| params.get(key).is_some_and(|v| !v.is_null());
        match method {
            "sampling/createMessage" if given("tools") || given("toolChoice") => {
                (!self.sampling_tools()).then_some("sampling.tools")
            }
            "sampling/createMessage" => (!self.sampling()).then_some("sampling"),
            "elicitation/create" if params.get("mode").and_then(Value::as_str) == Some("url") => {
                (!self.elicitation_url()).then_some("elicitation.url")
            }
            "elicitation/create" if !self.has("elicitation") => Some("elicitation"),
            "elicitation/create" => (!self.elicitation_form()).then_some("elicitation.form"),
            "roots/list" => (!self.roots()).then_some("roots"),
            _ => None,
        }
    }
}
