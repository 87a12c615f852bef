//! Control envelopes (`control_request`, `control_response`,
//! `control_cancel_request`) and the classification of a stdout line.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::requests::{CliRequest, McpMessageRequest, SdkRequest};
use crate::message::Message;
use crate::wire::{Wire, str_at, wire_enum, wire_struct};

wire_struct! {
    /// `{"type":"control_request","request_id":…,"request":{"subtype":…}}` sent
    /// by the CLI.
    pub struct ControlRequest tags { "type" = "control_request" } {
        /// The sender's id, echoed in the response.
        req request_id: String = "request_id",
        /// The request.
        req request: CliRequest = "request",
    }
}

impl ControlRequest {
    /// An `mcp_message` request decoded straight from its line, with no
    /// `Value` built for the envelope ([`McpMessageLine`]). Equal to what
    /// [`Incoming::from_value`] makes of the same line.
    ///
    /// `None` for every other line, and for an `mcp_message` line this
    /// shape does not hold exactly (a field it does not model, an escape
    /// in a tag, a request id that is not a string): those take the
    /// general path, which keeps everything.
    pub(crate) fn mcp_message_from_slice(line: &[u8]) -> Option<Self> {
        McpMessageLine::from_slice(line)?.into_control_request()
    }
}

/// An `mcp_message` control request, the line of every in-process tool
/// call (the bridge's hot path), decoded straight from its line: the
/// envelope into its fields, the JSON-RPC message kept as its text, for
/// the bridge to decode into what it needs (a tool call straight into its
/// typed form, anything else into a `Value`).
pub(crate) struct McpMessageLine {
    pub(crate) request_id: String,
    pub(crate) server_name: String,
    pub(crate) message: Box<serde_json::value::RawValue>,
}

impl McpMessageLine {
    /// `line` as an `mcp_message` request, if it has exactly this shape
    /// (see [`ControlRequest::mcp_message_from_slice`]).
    pub(crate) fn from_slice(line: &[u8]) -> Option<Self> {
        /// The CLI writes `type` first; a line that does not start so is
        /// not worth a try.
        const START: &[u8] = br#"{"type":"control_request","#;
        if !line.trim_ascii_start().starts_with(START) {
            return None;
        }
        let McpLine {
            kind,
            request_id,
            request,
        } = serde_json::from_slice(line).ok()?;
        // A null message is a missing one (the general path's rule).
        if kind != "control_request"
            || request.subtype != "mcp_message"
            || request.message.get() == "null"
        {
            return None;
        }
        Some(Self {
            request_id,
            server_name: request.server_name,
            message: request.message,
        })
    }

    /// The request in its general form, the message decoded into a
    /// `Value`; `None` if it does not decode.
    pub(crate) fn into_control_request(self) -> Option<ControlRequest> {
        let message =
            crate::mcp::__private::transport::json::from_slice(self.message.get().as_bytes())
                .ok()?;
        Some(ControlRequest {
            request_id: self.request_id,
            request: CliRequest::McpMessage(McpMessageRequest::new(self.server_name, message)),
            ..ControlRequest::default()
        })
    }
}

/// The exact shape of an `mcp_message` control request
/// ([`McpMessageLine::from_slice`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    request_id: String,
    request: McpLineRequest<'a>,
}

/// `request` of an [`McpLine`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpLineRequest<'a> {
    #[serde(borrow)]
    subtype: &'a str,
    server_name: String,
    message: Box<serde_json::value::RawValue>,
}

wire_struct! {
    /// A `control_request` the SDK sends to the CLI.
    ///
    /// ```
    /// use claude_code_agent::__private::wire::SdkControlRequest;
    /// use claude_code_agent::protocol::SdkRequest;
    /// use serde_json::json;
    /// let r = SdkControlRequest::new("req_1", SdkRequest::mcp_status());
    /// assert_eq!(r.to_value(), json!({"type": "control_request", "request_id": "req_1",
    ///                                 "request": {"subtype": "mcp_status"}}));
    /// ```
    pub struct SdkControlRequest tags { "type" = "control_request" } {
        /// A unique id.
        req request_id: String = "request_id",
        /// The request.
        req request: SdkRequest = "request",
    }
}

impl SdkControlRequest {
    /// A request with the given id.
    pub fn new(request_id: impl Into<String>, request: impl Into<SdkRequest>) -> Self {
        Self {
            request_id: request_id.into(),
            request: request.into(),
            ..Self::default()
        }
    }
}

wire_struct! {
    /// `{"subtype":"success","request_id":…,"response":{…}}`.
    pub struct ControlSuccess tags { "subtype" = "success" } {
        /// The request's id.
        req request_id: String = "request_id",
        /// The payload; the CLI sometimes omits it (treat as `{}`).
        opt response: Value = "response",
    }
}

wire_struct! {
    /// `{"subtype":"error","request_id":…,"error":…,"error_code":…}`.
    pub struct ControlError tags { "subtype" = "error" } {
        /// The request's id.
        req request_id: String = "request_id",
        /// The error text.
        opt error: String = "error",
        /// `unsupported_request`, `invalid_mode`, …
        opt error_code: String = "error_code",
    }
}

wire_enum! {
    /// The `response` object of a `control_response`.
    pub enum ControlResponseBody on "subtype" {
        /// Success.
        "success" => Success(ControlSuccess),
        /// Failure.
        "error" => Error(ControlError),
    }
}

wire_struct! {
    /// `{"type":"control_response","response":{…}}`, in either direction.
    ///
    /// ```
    /// use claude_code_agent::__private::wire::ControlResponse;
    /// use serde_json::json;
    /// let ok = ControlResponse::success("abc", json!({"behavior": "allow"}));
    /// assert_eq!(ok.to_value(), json!({"type": "control_response", "response":
    ///     {"subtype": "success", "request_id": "abc", "response": {"behavior": "allow"}}}));
    /// let err = ControlResponse::error("abc", "callback exploded");
    /// assert_eq!(err.to_value(), json!({"type": "control_response", "response":
    ///     {"subtype": "error", "request_id": "abc", "error": "callback exploded"}}));
    /// ```
    pub struct ControlResponse tags { "type" = "control_response" } {
        /// Success or error.
        req response: ControlResponseBody = "response",
    }
}

impl ControlResponse {
    /// A success with a payload.
    pub fn success(request_id: impl Into<String>, payload: impl Into<Value>) -> Self {
        Self::from_body(ControlResponseBody::Success(ControlSuccess {
            request_id: request_id.into(),
            response: Some(payload.into()),
            ..ControlSuccess::default()
        }))
    }

    /// An error.
    pub fn error(request_id: impl Into<String>, message: impl Into<String>) -> Self {
        Self::from_body(ControlResponseBody::Error(ControlError {
            request_id: request_id.into(),
            error: Some(message.into()),
            ..ControlError::default()
        }))
    }

    fn from_body(response: ControlResponseBody) -> Self {
        Self {
            response,
            ..Self::default()
        }
    }

    /// The id of the request this answers.
    pub fn request_id(&self) -> Option<&str> {
        match &self.response {
            ControlResponseBody::Success(s) => Some(&s.request_id),
            ControlResponseBody::Error(e) => Some(&e.request_id),
            ControlResponseBody::Unknown(v) => v.get("request_id").and_then(Value::as_str),
        }
    }

    /// Whether this is a success.
    pub fn is_success(&self) -> bool {
        matches!(self.response, ControlResponseBody::Success(_))
    }

    /// The payload (`{}` when the CLI left it out) or the error. A body that
    /// is neither success nor error becomes an error saying so.
    #[allow(
        clippy::result_large_err,
        reason = "the error is the CLI's answer, handed over whole"
    )]
    pub fn into_result(self) -> Result<Value, ControlError> {
        match self.response {
            ControlResponseBody::Success(s) => Ok(s
                .response
                .unwrap_or_else(|| Value::Object(Default::default()))),
            ControlResponseBody::Error(e) => Err(e),
            ControlResponseBody::Unknown(v) => Err(ControlError {
                request_id: v
                    .get("request_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                error: Some(format!("malformed control response: {v}")),
                ..ControlError::default()
            }),
        }
    }
}

wire_struct! {
    /// `{"type":"control_cancel_request","request_id":…}`: the sender withdraws
    /// one of its requests; no reply is expected.
    pub struct ControlCancelRequest tags { "type" = "control_cancel_request" } {
        /// The withdrawn request's id.
        req request_id: String = "request_id",
    }
}

impl ControlCancelRequest {
    /// Withdraws `request_id`.
    pub fn new(request_id: impl Into<String>) -> Self {
        Self {
            request_id: request_id.into(),
            ..Self::default()
        }
    }
}

/// One line of the CLI's stdout, classified.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Incoming {
    /// A request from the CLI; answer it with a [`ControlResponse`].
    ControlRequest(ControlRequest),
    /// An answer to one of the SDK's requests (or an echo of the SDK's own
    /// answers with `--replay-user-messages`: ignore unknown ids).
    ControlResponse(ControlResponse),
    /// The CLI withdraws one of its requests.
    ControlCancel(ControlCancelRequest),
    /// Anything else: a conversation message (possibly `Message::Unknown`,
    /// also for malformed control envelopes).
    Message(Message),
}

impl Incoming {
    /// Classifies one JSON value; never fails.
    pub fn from_value(value: Value) -> Self {
        let kind = match &value {
            Value::Object(map) => str_at(map, "type"),
            _ => None,
        };
        let control = matches!(
            kind,
            Some("control_request" | "control_response" | "control_cancel_request")
        );
        let decoded = match kind {
            Some("control_request") => ControlRequest::from_wire(value).map(Self::ControlRequest),
            Some("control_response") => {
                ControlResponse::from_wire(value).map(Self::ControlResponse)
            }
            Some("control_cancel_request") => {
                ControlCancelRequest::from_wire(value).map(Self::ControlCancel)
            }
            _ => Err(value),
        };
        decoded.unwrap_or_else(|value| {
            if control {
                // A malformed envelope: keep it whole rather than guess.
                Self::Message(Message::Unknown(value))
            } else {
                Self::Message(Message::from_value(value))
            }
        })
    }

    /// Parses and classifies one line (lone surrogate escapes, which the
    /// CLI writes for a string cut mid-emoji, decode to U+FFFD).
    pub fn from_slice(line: &[u8]) -> serde_json::Result<Self> {
        if let Some(request) = ControlRequest::mcp_message_from_slice(line) {
            return Ok(Self::ControlRequest(request));
        }
        let value: Value = crate::mcp::__private::transport::json::from_slice(line)?;
        Ok(Self::from_value(value))
    }

    /// Encodes as JSON; equal to the value it was decoded from.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Incoming {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::ControlRequest(r) => r.serialize(s),
            Self::ControlResponse(r) => r.serialize(s),
            Self::ControlCancel(r) => r.serialize(s),
            Self::Message(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Incoming {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from_value(Value::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The line of a tool call as the CLI writes it (compact, `type` first).
    fn tool_call(request: Value) -> Vec<u8> {
        serde_json::to_vec(
            &json!({"type": "control_request", "request_id": "r1", "request": request}),
        )
        .unwrap()
    }

    fn general(line: &[u8]) -> Incoming {
        Incoming::from_value(serde_json::from_slice(line).unwrap())
    }

    #[test]
    fn the_cli_s_tool_call_takes_the_typed_path_and_decodes_as_the_general_one() {
        let message = json!({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2},
            "_meta": {"claudecode/toolUseId": "toolu_1", "progressToken": 2}}, "jsonrpc": "2.0", "id": 2});
        let line =
            tool_call(json!({"subtype": "mcp_message", "server_name": "calc", "message": message}));
        let fast = ControlRequest::mcp_message_from_slice(&line).expect("the typed path");
        assert_eq!(Incoming::ControlRequest(fast), general(&line));
        assert_eq!(Incoming::from_slice(&line).unwrap(), general(&line));
    }

    #[test]
    fn lines_the_typed_path_does_not_hold_exactly_take_the_general_one() {
        let message = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut unusual = vec![
            // fields the typed path does not model, outside and inside
            serde_json::to_vec(&json!({"type": "control_request", "request_id": "r1", "x": 1,
                "request": {"subtype": "mcp_message", "server_name": "s", "message": message}})).unwrap(),
            tool_call(json!({"subtype": "mcp_message", "server_name": "s", "message": message, "y": 2})),
            // a null message is a missing one; another subtype; a numeric id
            tool_call(json!({"subtype": "mcp_message", "server_name": "s", "message": null})),
            tool_call(json!({"subtype": "can_use_tool", "tool_name": "Bash", "input": {}})),
            br#"{"type":"control_request","request_id":7,"request":{"subtype":"mcp_message","server_name":"s","message":{}}}"#.to_vec(),
            // an escaped tag
            br#"{"type":"control_request","request_id":"r","request":{"subtype":"mcp\u005fmessage","server_name":"s","message":{}}}"#.to_vec(),
        ];
        for line in &mut unusual {
            assert!(
                ControlRequest::mcp_message_from_slice(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
            assert_eq!(Incoming::from_slice(line).unwrap(), general(line));
        }
    }

    #[test]
    fn a_string_the_cli_cut_mid_emoji_decodes_to_the_replacement_character() {
        // JSON.stringify writes the half emoji as a lone surrogate escape.
        let line = br#"{"type":"control_request","request_id":"r1","request":{"subtype":"mcp_message","server_name":"s","message":{"method":"tools/call","params":{"name":"echo","arguments":{"text":"ab\ud83d"}},"jsonrpc":"2.0","id":3}}}"#;
        assert!(serde_json::from_slice::<Value>(line).is_err());
        let Incoming::ControlRequest(ControlRequest {
            request: CliRequest::McpMessage(request),
            ..
        }) = Incoming::from_slice(line).unwrap()
        else {
            panic!("not a tool call");
        };
        assert_eq!(request.message["params"]["arguments"]["text"], "ab\u{FFFD}");
        let text =
            br#"{"type":"assistant","message":{"content":[{"type":"text","text":"\udc00x"}]}}"#;
        let message = crate::Message::from_slice(text).unwrap();
        assert_eq!(
            message.to_value()["message"]["content"][0]["text"],
            "\u{FFFD}x"
        );
    }
}
