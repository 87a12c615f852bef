//! Multi round-trip requests (2026-07-28, SEP-2322): what a server asks of
//! the client in an `input_required` result, and what the client answers
//! in its retry.
//!
//! ```
//! use claude_code_agent_mcp::types::{InputRequest, InputRequiredResult};
//! use serde_json::json;
//!
//! let result = InputRequiredResult::from_value(&json!({
//!     "resultType": "input_required",
//!     "inputRequests": {"name": {"method": "elicitation/create",
//!         "params": {"message": "Your name?", "requestedSchema": {"type": "object"}}}},
//!     "requestState": "opaque"
//! }))
//! .unwrap() // an input_required result…
//! .unwrap(); // …that decodes
//! assert_eq!(result.input_requests["name"].method, "elicitation/create");
//! assert_eq!(result.request_state.as_deref(), Some("opaque"));
//! assert_eq!(InputRequest::list_roots().method, "roots/list");
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The `resultType` of a result that asks for input before the request can
/// complete.
pub const INPUT_REQUIRED: &str = "input_required";

/// The `resultType` of a result that is final.
pub const COMPLETE: &str = "complete";

/// Whether a result (its JSON) is an `input_required` one.
pub fn is_input_required(result: &Map<String, Value>) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some(INPUT_REQUIRED)
}

/// One request a server needs the client to answer: `elicitation/create`,
/// `sampling/createMessage` or `roots/list`, as the session revisions send
/// them as requests of their own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputRequest {
    /// The method (`elicitation/create`, `sampling/createMessage`, `roots/list`).
    pub method: String,
    /// Its params (an object).
    #[serde(default)]
    pub params: Value,
}

impl InputRequest {
    /// A request for `method` with `params`.
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        Self {
            method: method.into(),
            params,
        }
    }

    /// A form-mode `elicitation/create`: `message` for the user and the
    /// schema of what to answer (an object schema of primitive properties).
    pub fn elicitation(message: impl Into<String>, requested_schema: Value) -> Self {
        Self::new(
            "elicitation/create",
            json!({"mode": "form", "message": message.into(), "requestedSchema": requested_schema}),
        )
    }

    /// A `sampling/createMessage` with these params (`messages`,
    /// `maxTokens`, …, as the specification has them).
    pub fn sampling(params: Value) -> Self {
        Self::new("sampling/createMessage", params)
    }

    /// A `sampling/createMessage` of one user text message.
    pub fn sampling_text(text: impl Into<String>, max_tokens: u32) -> Self {
        Self::sampling(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": text.into()}}],
            "maxTokens": max_tokens,
        }))
    }

    /// A `roots/list`.
    pub fn list_roots() -> Self {
        Self::new("roots/list", json!({}))
    }
}

/// A result with `resultType: "input_required"`: the requests the client
/// answers before it retries the original request with their answers
/// (`inputResponses`) and the `requestState`, echoed exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// What to answer, by the server's keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, InputRequest>,
    /// Opaque to the client: sent back unchanged on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Other fields (`resultType`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InputRequiredResult {
    /// Reads one from a result's JSON: `None` unless its `resultType` is
    /// `input_required`, an error when its fields are not of their types.
    pub fn from_value(result: &Value) -> Option<Result<Self, String>> {
        let map = result.as_object()?;
        if !is_input_required(map) {
            return None;
        }
        Some(
            serde_json::from_value(result.clone())
                .map_err(|e| format!("an input_required result that does not decode: {e}")),
        )
    }

    /// The result's JSON, `resultType` included.
    pub fn into_value(self) -> Value {
        let mut map = self.extra;
        map.insert("resultType".into(), INPUT_REQUIRED.into());
        if !self.input_requests.is_empty() {
            let requests = self.input_requests.into_iter();
            let requests =
                requests.map(|(k, r)| (k, json!({"method": r.method, "params": r.params})));
            map.insert("inputRequests".into(), Value::Object(requests.collect()));
        }
        if let Some(state) = self.request_state {
            map.insert("requestState".into(), state.into());
        }
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_required_result_round_trips() {
        let mut result = InputRequiredResult::default();
        result
            .input_requests
            .insert("roots".into(), InputRequest::list_roots());
        result.request_state = Some("s".into());
        let value = result.clone().into_value();
        assert_eq!(value["resultType"], INPUT_REQUIRED);
        assert_eq!(value["inputRequests"]["roots"]["method"], "roots/list");
        let back = InputRequiredResult::from_value(&value).unwrap().unwrap();
        assert_eq!(back.input_requests["roots"].method, "roots/list");
        assert_eq!(back.request_state, result.request_state);
        assert!(InputRequiredResult::from_value(&json!({"content": []})).is_none());
        let bad = json!({"resultType": INPUT_REQUIRED, "requestState": 3});
        assert!(InputRequiredResult::from_value(&bad).unwrap().is_err());
    }
}
