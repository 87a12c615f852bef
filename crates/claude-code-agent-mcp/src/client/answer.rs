//! What a request gets back: a `result` as a [`Value`], or still as the
//! JSON text it arrived in, to be decoded once, straight into the type the
//! caller wants (no [`Value`] tree built and taken apart on the way).
//!
//! A transport that receives text ([`Inbox::deliver_text`](super::Inbox::deliver_text):
//! the stdio client's lines) hands a successful response over as text
//! ([`response_text`] finds one); the rest of what arrives is parsed into a
//! [`Value`] as before.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Error;

/// The `result` of a successful response.
#[derive(Debug)]
pub(crate) enum Answer {
    /// Parsed already (in process, HTTP, or a response off the fast path).
    Value(Value),
    /// The JSON text of the result, as it arrived.
    Text(Box<RawValue>),
}

impl Answer {
    /// The result as a [`Value`].
    pub(crate) fn into_value(self) -> Result<Value, Error> {
        match self {
            Self::Value(value) => Ok(value),
            Self::Text(text) => crate::transport::json::from_str(text.get())
                .map_err(|e| Error::invalid_response("unusable result").with_source(e)),
        }
    }

    /// Whether the result is a tool's with `isError` (read for a span:
    /// only when one is recorded).
    pub(crate) fn is_tool_error(&self) -> bool {
        #[derive(Deserialize)]
        struct IsError {
            #[serde(rename = "isError", default)]
            is_error: bool,
        }
        match self {
            Self::Value(value) => value.get("isError") == Some(&Value::Bool(true)),
            Self::Text(text) => {
                serde_json::from_str::<IsError>(text.get()).is_ok_and(|r| r.is_error)
            }
        }
    }

    /// The result decoded as the answer to `method`.
    pub(crate) fn decode<T: DeserializeOwned>(self, method: &str) -> Result<T, Error> {
        match self {
            Self::Value(value) => serde_json::from_value(value),
            // Lone surrogates pass the fast path's scan (it reads the
            // result as raw text) and decode here.
            Self::Text(text) => crate::transport::json::from_str(text.get()),
        }
        .map_err(|e| Error::invalid_response(format!("{method}: unusable result")).with_source(e))
    }
}

/// The fields of a JSON-RPC message the fast path looks at; the others
/// (`jsonrpc`, anything a peer adds) are skipped unread.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// When `text` is a successful response to one of our requests — a JSON
/// object with a numeric `id`, a `result`, no `method` and no (or a null)
/// `error` — its id and the text of its result. Anything else (requests,
/// notifications, errors, batches, string ids, text that is not JSON, a
/// key given twice) is `None`: the caller parses it as a [`Value`] and
/// judges it as before, so the fast path changes no outcome.
pub(crate) fn response_text(text: &[u8]) -> Option<(u64, Box<RawValue>)> {
    let envelope: Envelope<'_> = serde_json::from_slice(text).ok()?;
    if envelope.method.is_some() || envelope.error.is_some() {
        return None;
    }
    let id = envelope.id?.get().parse::<u64>().ok()?;
    Some((id, envelope.result?.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_plain_successful_responses_take_the_fast_path() {
        let (id, result) =
            response_text(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"x":[1,{"y":2}]}}"#)
                .unwrap();
        assert_eq!(id, 7);
        assert_eq!(
            Answer::Text(result).into_value().unwrap(),
            json!({"content":[],"x":[1,{"y":2}]})
        );
        let (_, result) =
            response_text(br#"{"result":{"a":1},"error":null,"id":3,"jsonrpc":"2.0"}"#).unwrap();
        assert_eq!(result.get(), r#"{"a":1}"#);
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-1,"message":"no"}}"#,
            br#"{"jsonrpc":"2.0","id":"1","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":-1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"method":"x"}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":{"a":2}}"#,
            br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}"#,
            b"not json",
        ] {
            assert!(
                response_text(other).is_none(),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn a_text_answer_decodes_like_a_value_answer() {
        let text = r#"{"content":[{"type":"text","text":"3"}],"isError":false,"extra":1}"#;
        let raw = RawValue::from_string(text.to_owned()).unwrap();
        let from_text: crate::types::CallToolResult = Answer::Text(raw).decode("x").unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        let from_value: crate::types::CallToolResult = Answer::Value(value).decode("x").unwrap();
        assert_eq!(from_text, from_value);
        let raw = RawValue::from_string(r#"{"isError":"no"}"#.to_owned()).unwrap();
        let err = Answer::Text(raw)
            .decode::<crate::types::CallToolResult>("tools/call")
            .unwrap_err();
        assert_eq!(err.to_string(), "tools/call: unusable result");
        let serde =
            std::error::Error::source(&err).and_then(|s| s.downcast_ref::<serde_json::Error>());
        assert!(serde.is_some_and(|e| e.is_data()), "{err:?}");
    }
}
