//! The client's one error type.

use serde_json::Value;

use crate::jsonrpc::ErrorObject;

/// Why a client call failed.
///
/// A JSON-RPC error object sent by the server is its own kind,
/// [`ClientError::JsonRpc`], displayed exactly `MCP error {code}: {message}`
/// and reachable through [`jsonrpc_error`](Self::jsonrpc_error). Every other
/// kind is a failure on this side (the transport, the response, a timeout)
/// and carries its message alone, so a caller can always tell the two apart.
///
/// ```
/// use claude_code_agent_mcp::client::ClientError;
/// use claude_code_agent_mcp::jsonrpc::ErrorObject;
///
/// let e = ClientError::JsonRpc(ErrorObject::new(-32601, "Method not found: x"));
/// assert_eq!(e.to_string(), "MCP error -32601: Method not found: x");
/// assert_eq!(e.code(), Some(-32601));
///
/// let t = ClientError::Timeout("request tools/call timed out after 5s".into());
/// assert!(t.jsonrpc_error().is_none());
/// assert_eq!(t.to_string(), "request tools/call timed out after 5s");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A JSON-RPC error object from the server: `code`, `message`, `data`.
    #[error("{0}")]
    JsonRpc(ErrorObject),
    /// The server answered with an `error` that is no JSON-RPC error object
    /// (a string, a number, an array, an object without a code); the text is
    /// the value itself or its JSON.
    #[error("{0}")]
    ErrorResponse(String),
    /// No usable response: no reply to a request, `"error": null` without a
    /// result, a result of the wrong shape, a body that is not JSON-RPC.
    #[error("{0}")]
    InvalidResponse(String),
    /// The transport failed: an I/O or HTTP failure, an in-process handler
    /// that panicked, a child that could not be started.
    #[error("{0}")]
    Transport(String),
    /// The transport is closed (the child exited, `close` was called).
    #[error("{0}")]
    Closed(String),
    /// The request got no answer in time (it was cancelled on the server).
    #[error("{0}")]
    Timeout(String),
    /// Refused before anything was sent: a method this transport cannot
    /// carry, or a header value it cannot send.
    #[error("{0}")]
    Refused(String),
}

impl ClientError {
    /// The server's JSON-RPC error object, if this is one.
    pub fn jsonrpc_error(&self) -> Option<&ErrorObject> {
        match self {
            Self::JsonRpc(e) => Some(e),
            _ => None,
        }
    }

    /// The JSON-RPC error code, if this is a server's JSON-RPC error.
    pub fn code(&self) -> Option<i64> {
        self.jsonrpc_error().map(|e| e.code)
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout(_))
    }

    /// Whether the transport is closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed(_))
    }

    pub(crate) fn transport(message: impl std::fmt::Display) -> Self {
        Self::Transport(message.to_string())
    }

    /// A message from the server that does not decode (`what` says where it
    /// came from: "a line on the MCP server's stdout", "an SSE event from
    /// …"): names the cause and shows the start of the text (at most
    /// [`EXCERPT_BYTES`]).
    pub(crate) fn undecodable(what: &str, text: &[u8], error: &serde_json::Error) -> Self {
        Self::InvalidResponse(format!(
            "{what} is not valid JSON ({error}): {}",
            crate::transport::lines::preview(text.trim_ascii(), EXCERPT_BYTES)
        ))
    }
}

/// How much of a message that does not decode an error shows.
pub(crate) const EXCERPT_BYTES: usize = 200;

/// Reads the outcome of a response: its `result`, or the error it carries.
///
/// * `error` a JSON-RPC error object (an integer `code`) → [`ClientError::JsonRpc`];
/// * `error` any other non-null value → [`ClientError::ErrorResponse`] with
///   the string itself or the value's JSON, and no code;
/// * `"error": null` (or none) beside a `result` → success;
/// * `"error": null` (or none) and no `result` → [`ClientError::InvalidResponse`].
pub fn response_outcome(
    mut response: serde_json::Map<String, Value>,
) -> Result<Value, ClientError> {
    match response.remove("error") {
        None | Some(Value::Null) => response.remove("result").ok_or_else(|| {
            ClientError::InvalidResponse(
                "MCP invalid response: a null error and no result".to_owned(),
            )
        }),
        Some(error) => Err(error_from_value(error)),
    }
}

fn error_from_value(error: Value) -> ClientError {
    if let Value::Object(map) = &error
        && let Some(code) = map.get("code").and_then(Value::as_i64)
    {
        let message = match map.get("message") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        let mut obj = ErrorObject::new(code, message);
        obj.data = map.get("data").cloned();
        return ClientError::JsonRpc(obj);
    }
    let text = match error {
        Value::String(s) => s,
        other => other.to_string(),
    };
    ClientError::ErrorResponse(format!("MCP error response: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome(v: Value) -> Result<Value, ClientError> {
        response_outcome(v.as_object().unwrap().clone())
    }

    #[test]
    fn odd_error_shapes() {
        let e = outcome(json!({"id":1,"error":{"code":-32602,"message":"bad","data":{"x":1}}}))
            .unwrap_err();
        assert_eq!(e.to_string(), "MCP error -32602: bad");
        assert_eq!(e.jsonrpc_error().unwrap().data, Some(json!({"x":1})));

        for (error, text) in [
            (json!("boom"), "MCP error response: boom"),
            (json!(42), "MCP error response: 42"),
            (json!([1, "a"]), "MCP error response: [1,\"a\"]"),
            (
                json!({"message":"no code"}),
                "MCP error response: {\"message\":\"no code\"}",
            ),
            (
                json!({"code":"x","message":"m"}),
                "MCP error response: {\"code\":\"x\",\"message\":\"m\"}",
            ),
        ] {
            let e = outcome(json!({"id":1,"error":error})).unwrap_err();
            assert!(matches!(e, ClientError::ErrorResponse(_)), "{e:?}");
            assert_eq!(e.to_string(), text);
            assert_eq!(e.code(), None);
        }

        assert_eq!(
            outcome(json!({"id":1,"error":null,"result":{"a":1}})).unwrap(),
            json!({"a":1})
        );
        let e = outcome(json!({"id":1,"error":null})).unwrap_err();
        assert!(matches!(e, ClientError::InvalidResponse(_)));
        assert!(e.jsonrpc_error().is_none());
        // A null result is still a result.
        assert_eq!(outcome(json!({"id":1,"result":null})).unwrap(), Value::Null);
    }
}
