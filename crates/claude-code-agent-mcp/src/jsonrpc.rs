//! JSON-RPC 2.0: ids, error objects, and the one place replies are built.
//!
//! Every reply this crate produces goes through [`response`] or
//! [`error_response`], so every reply carries `"jsonrpc":"2.0"` and the
//! request's id exactly as it was sent (the Claude Code CLI silently drops a
//! reply without either, and the call then hangs).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The JSON-RPC version string every message carries.
pub const VERSION: &str = "2.0";

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method (or, for `tools/call`, the tool) does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error: a failure of the machinery itself.
pub const INTERNAL_ERROR: i64 = -32603;

/// A request id: a number or a string, kept exactly as the peer sent it.
///
/// Numbers keep their textual form (`1`, `-3`, `1.5`, `18446744073709551615`),
/// so the id of a reply always equals the id of its request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value; only numbers and strings are ids.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => Some(Self::Number(n.clone())),
            Value::String(s) => Some(Self::String(s.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Number(n) => Value::Number(n.clone()),
            Self::String(s) => Value::String(s.clone()),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n.into())
    }
}

impl From<u64> for RequestId {
    fn from(n: u64) -> Self {
        Self::Number(n.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A JSON-RPC error object: `code`, `message` and optional `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see the constants in this module).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Anything else the peer wants to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32601`: the method does not exist.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// `-32602`: invalid parameters.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// `-32600`: not a valid request.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }

    /// `-32603`: an internal failure.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

/// Builds a success reply: `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub fn response(id: &Value, result: Value) -> Value {
    let mut map = Map::with_capacity(3);
    map.insert("jsonrpc".into(), Value::String(VERSION.into()));
    map.insert("id".into(), id.clone());
    map.insert("result".into(), result);
    Value::Object(map)
}

/// Builds an error reply: `{"jsonrpc":"2.0","id":<id>,"error":{…}}`.
///
/// `id` is `null` when the request's id could not be read.
pub fn error_response(id: &Value, error: ErrorObject) -> Value {
    let mut map = Map::with_capacity(3);
    map.insert("jsonrpc".into(), Value::String(VERSION.into()));
    map.insert("id".into(), id.clone());
    map.insert(
        "error".into(),
        serde_json::to_value(error).unwrap_or(Value::Null),
    );
    Value::Object(map)
}

/// Builds a request: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`.
pub fn request(id: &RequestId, method: &str, params: Option<Value>) -> Value {
    let mut map = Map::with_capacity(4);
    map.insert("jsonrpc".into(), Value::String(VERSION.into()));
    map.insert("id".into(), id.to_value());
    map.insert("method".into(), Value::String(method.into()));
    if let Some(params) = params {
        map.insert("params".into(), params);
    }
    Value::Object(map)
}

/// Builds a notification: `{"jsonrpc":"2.0","method":…,"params":…}`.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut map = Map::with_capacity(3);
    map.insert("jsonrpc".into(), Value::String(VERSION.into()));
    map.insert("method".into(), Value::String(method.into()));
    if let Some(params) = params {
        map.insert("params".into(), params);
    }
    Value::Object(map)
}

/// What kind of JSON-RPC message a value is, judged by its envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A JSON-RPC 2.0 message with a string `method` and an `id` that is a
    /// number or a string: expects exactly one reply.
    Request,
    /// A JSON-RPC 2.0 message with a string `method` and no `id`: never
    /// gets a reply.
    Notification,
    /// Has `result` or `error` and no `method` (its envelope is checked by
    /// whoever routes it); never gets a reply.
    Response,
    /// Anything else: not an object, `"jsonrpc"` other than `"2.0"`, an id
    /// that is `null` or neither a number nor a string, a method that is not
    /// a string, or an object with neither `method`, `result` nor `error`.
    /// Answered with `-32600` (id `null` unless a usable one is there).
    Invalid,
}

/// The value at `path` (object keys, outermost first) inside `value`:
/// [`Value::pointer`] without parsing a pointer (which allocates two
/// strings per segment), for the paths read on every message.
pub(crate) fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// Classifies a message by its envelope.
///
/// Strict, as JSON-RPC 2.0 is: a message with a `method` and `"id": null`
/// is [`Kind::Invalid`], not a notification, and so is one whose
/// `"jsonrpc"` is not `"2.0"`.
pub fn kind(message: &Value) -> Kind {
    let Some(obj) = message.as_object() else {
        return Kind::Invalid;
    };
    match obj.get("method") {
        Some(Value::String(_)) => {
            if obj.get("jsonrpc").and_then(Value::as_str) != Some(VERSION) {
                return Kind::Invalid;
            }
            match obj.get("id") {
                None => Kind::Notification,
                Some(Value::Number(_) | Value::String(_)) => Kind::Request,
                Some(_) => Kind::Invalid,
            }
        }
        Some(_) => Kind::Invalid,
        None if obj.contains_key("result") || obj.contains_key("error") => Kind::Response,
        None => Kind::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reply_keeps_the_id_exactly() {
        for id in [
            json!(0),
            json!(-7),
            json!(1.5),
            json!("abc"),
            json!(u64::MAX),
        ] {
            let reply = response(&id, json!({}));
            assert_eq!(reply["id"], id);
            assert_eq!(reply["jsonrpc"], "2.0");
        }
    }

    #[test]
    fn classifies_messages() {
        let v = "2.0";
        assert_eq!(
            kind(&json!({"jsonrpc":v,"method":"ping","id":1})),
            Kind::Request
        );
        assert_eq!(kind(&json!({"jsonrpc":v,"method":"x"})), Kind::Notification);
        assert_eq!(kind(&json!({"id":1,"result":{}})), Kind::Response);
        // Strict: a null id, another version, or none is no valid message.
        assert_eq!(
            kind(&json!({"jsonrpc":v,"method":"x","id":null})),
            Kind::Invalid
        );
        assert_eq!(
            kind(&json!({"jsonrpc":v,"method":"x","id":true})),
            Kind::Invalid
        );
        assert_eq!(kind(&json!({"jsonrpc":"1.0","method":"x"})), Kind::Invalid);
        assert_eq!(kind(&json!({"method":"ping","id":1})), Kind::Invalid);
        assert_eq!(kind(&json!({"jsonrpc":v,"method":5})), Kind::Invalid);
        assert_eq!(kind(&json!([1])), Kind::Invalid);
    }

    #[test]
    fn error_displays_code_and_message() {
        let e = ErrorObject::new(-32601, "nope");
        assert_eq!(e.to_string(), "MCP error -32601: nope");
    }
}
