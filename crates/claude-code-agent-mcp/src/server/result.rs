//! What a tool handler may return, and how each kind becomes a `tools/call` result.

use std::borrow::Cow;
use std::fmt::Display;

use serde::Serialize;
use serde_json::Value;

use crate::types::{CallToolResult, Content, json_type_name, stringify_text_field};

/// A value a tool handler can return: anything that converts into a
/// [`CallToolResult`].
///
/// | handler returns | result |
/// |---|---|
/// | `String`, `&'static str`, `Cow<str>` | one text block |
/// | integers, floats, `bool`, `char` | one text block with the value's text |
/// | [`Json(v)`](Json) (`v: Serialize`, a [`serde_json::Value`] too) | one text block with `v` as JSON, plus `structuredContent` when the tool declares an output schema |
/// | [`Content`], `Vec<Content>` | those blocks |
/// | [`CallToolResult`] | as is |
/// | [`RawResult`] | a complete result object as JSON (`content`, `isError`, `structuredContent`, `_meta`), checked: a malformed one becomes an error result saying what is wrong |
/// | `Result<T, E>` (`E: Display`) | `Ok(t)` as `t`; `Err(e)` an `isError` result with `e`'s text |
/// | `Option<T>` | `Some(t)` as `t`; `None` no content |
/// | `()` | no content |
///
/// A bare [`serde_json::Value`] is not a result: it could be a value to
/// send as JSON or a whole result object (`{"content": [...]}`), so the
/// handler says which, with `Json(value)` or `RawResult(value)`:
///
/// ```compile_fail,E0277
/// use claude_code_agent_mcp::Tool;
///
/// let tool = Tool::new("user", "A user", |_: ()| async { serde_json::json!({"name": "Alice"}) });
/// ```
///
/// Implement it for your own types to return them directly.
///
/// ```
/// use claude_code_agent_mcp::{CallToolResult, IntoToolResult};
///
/// struct Celsius(f64);
///
/// impl IntoToolResult for Celsius {
///     fn into_call_tool_result(self, _structured: bool) -> CallToolResult {
///         CallToolResult::text(format!("{:.1} °C", self.0))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool handler",
    label = "not an `IntoToolResult`",
    note = "a handler returns text (`String`, `&str`, a number), `Json(value)` (sent as JSON), \
            `Content` or `Vec<Content>`, a `CallToolResult`, `RawResult(json)` (a whole result \
            object), or a `Result` or `Option` of one of these",
    note = "a `serde_json::Value` says what it is: `Json(value)` sends it as JSON text, \
            `RawResult(value)` as a complete result (`{{\"content\": [...]}}`)"
)]
pub trait IntoToolResult {
    /// Converts into the wire result. `structured` is `true` when the tool
    /// declares an output schema, so a structured value should also go into
    /// `structuredContent`.
    fn into_call_tool_result(self, structured: bool) -> CallToolResult;
}

/// A serializable value returned as JSON.
///
/// The result holds the value's JSON as one text block; when the tool
/// declares an output schema (see [`Tool::output_schema`](super::Tool::output_schema))
/// the value is also sent as `structuredContent`, which the Claude Code CLI
/// shows to the model instead of the text.
///
/// ```
/// use claude_code_agent_mcp::{Json, IntoToolResult};
///
/// let r = Json(serde_json::json!({"mean": 2.5})).into_call_tool_result(true);
/// assert_eq!(r.text_content(), r#"{"mean":2.5}"#);
/// assert_eq!(r.structured_content.unwrap()["mean"], 2.5);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_call_tool_result(self, structured: bool) -> CallToolResult {
        let serialized = if structured {
            serde_json::to_value(&self.0).map(|value| {
                let text = value.to_string();
                CallToolResult::text(text).with_structured_content(value)
            })
        } else {
            serde_json::to_string(&self.0).map(CallToolResult::text)
        };
        serialized.unwrap_or_else(|e| {
            CallToolResult::error(format!("The tool's result could not be serialized: {e}"))
        })
    }
}

impl IntoToolResult for CallToolResult {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        self
    }
}

impl IntoToolResult for Content {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        CallToolResult::success(vec![self])
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        CallToolResult::success(self)
    }
}

impl IntoToolResult for String {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for Cow<'static, str> {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        CallToolResult::text(self.into_owned())
    }
}

impl IntoToolResult for () {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        CallToolResult::success(Vec::new())
    }
}

macro_rules! display_as_text {
    ($($t:ty),* $(,)?) => {$(
        impl IntoToolResult for $t {
            fn into_call_tool_result(self, _: bool) -> CallToolResult {
                CallToolResult::text(self.to_string())
            }
        }
    )*};
}

display_as_text!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, bool, char
);

impl IntoToolResult for f64 {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        CallToolResult::text(f64_text(self))
    }
}

/// `x` as `Display` writes it; a whole number below 2^53 (what arithmetic
/// tools mostly return) through the integer formatter, which is cheaper
/// and writes the same digits (`Display` never uses an exponent).
fn f64_text(x: f64) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if x.fract() == 0.0 && x.abs() < EXACT && !(x == 0.0 && x.is_sign_negative()) {
        (x as i64).to_string()
    } else {
        x.to_string()
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn into_call_tool_result(self, structured: bool) -> CallToolResult {
        match self {
            Ok(value) => value.into_call_tool_result(structured),
            Err(error) => CallToolResult::error(error.to_string()),
        }
    }
}

impl<T: IntoToolResult> IntoToolResult for Option<T> {
    fn into_call_tool_result(self, structured: bool) -> CallToolResult {
        match self {
            Some(value) => value.into_call_tool_result(structured),
            None => CallToolResult::success(Vec::new()),
        }
    }
}

/// A complete `tools/call` result as JSON, taken as it is: the way to
/// return one from a handler. (To send a [`Value`] as JSON text, return
/// [`Json(value)`](Json); a bare `Value` is not a result, see
/// [`IntoToolResult`].)
///
/// It must be an object with a `content` array of typed content blocks, and
/// may have `isError`, `structuredContent` and `_meta`. A text block's
/// non-string `text` is turned into a string (the Claude Code CLI refuses a
/// number there). Anything malformed becomes an error result that says
/// what is wrong.
///
/// ```
/// use claude_code_agent_mcp::server::RawResult;
/// use claude_code_agent_mcp::IntoToolResult;
/// use serde_json::json;
///
/// let raw = RawResult(json!({"content":[{"type":"text","text":"half done"}],"isError":true}));
/// let r = raw.into_call_tool_result(false);
/// assert!(r.is_error);
/// assert_eq!(r.text_content(), "half done");
///
/// // Compare: `Json` sends the same object as JSON text.
/// let json = claude_code_agent_mcp::Json(json!({"content":[]})).into_call_tool_result(false);
/// assert_eq!(json.text_content(), r#"{"content":[]}"#);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RawResult(pub Value);

impl IntoToolResult for RawResult {
    fn into_call_tool_result(self, _: bool) -> CallToolResult {
        raw_result(self.0).unwrap_or_else(|why| {
            CallToolResult::error(format!("The tool returned a malformed result: {why}"))
        })
    }
}

/// Content blocks read from JSON, each text block's `text` made a string.
fn content_parts(blocks: Vec<Value>) -> Result<Vec<Content>, String> {
    blocks
        .into_iter()
        .enumerate()
        .map(|(i, mut block)| {
            stringify_text_field(&mut block);
            Content::from_value(block).map_err(|e| format!("content[{i}]: {e}"))
        })
        .collect()
}

fn raw_result(value: Value) -> Result<CallToolResult, String> {
    const SHAPE: &str = "a result must be an object with a \"content\" array of typed \
                         content blocks, e.g. {\"content\":[{\"type\":\"text\",\"text\":\"…\"}]}";
    let Value::Object(mut map) = value else {
        return Err(format!("got {}; {SHAPE}", json_type_name(&value)));
    };
    let blocks = match map.remove("content") {
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(format!(
                "\"content\" is {}; {SHAPE}",
                json_type_name(&other)
            ));
        }
        None => return Err(format!("no \"content\"; {SHAPE}")),
    };
    let content = content_parts(blocks)?;
    let is_error = match map.remove("isError") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(other) => {
            return Err(format!(
                "\"isError\" must be a boolean, not {}",
                json_type_name(&other)
            ));
        }
    };
    let meta = match map.remove("_meta") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.into()),
        Some(other) => {
            return Err(format!(
                "\"_meta\" must be an object, not {}",
                json_type_name(&other)
            ));
        }
    };
    let mut result = CallToolResult::success(content);
    result.is_error = is_error;
    result.structured_content = map.remove("structuredContent").filter(|v| !v.is_null());
    result.meta = meta;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(r: impl IntoToolResult) -> Value {
        r.into_call_tool_result(false).into_value()
    }

    #[test]
    fn floats_read_as_display_writes_them() {
        for x in [
            0.0,
            -0.0,
            3.0,
            -3.0,
            2.5,
            1e15,
            -1e15,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1e21,
            1e-7,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
        ] {
            assert_eq!(f64_text(x), x.to_string(), "{x:?}");
        }
    }

    #[test]
    fn scalars_become_text() {
        assert_eq!(wire(7u8)["content"][0]["text"], "7");
        assert_eq!(wire(2.5f64)["content"][0]["text"], "2.5");
        assert_eq!(wire(true)["content"][0]["text"], "true");
        assert_eq!(wire("hi")["content"][0]["text"], "hi");
        assert_eq!(wire(())["content"], json!([]));
        assert_eq!(wire(None::<String>)["content"], json!([]));
    }

    #[test]
    fn err_is_an_error_result_with_its_text() {
        let r: Result<i32, String> = Err("division by zero".into());
        let v = wire(r);
        assert_eq!(v["isError"], true);
        assert_eq!(v["content"][0]["text"], "division by zero");
    }

    #[test]
    fn raw_results_are_checked() {
        let ok = wire(RawResult(
            json!({"content":[{"type":"text","text":42}],"isError":false}),
        ));
        assert_eq!(ok["content"][0]["text"], "42");
        assert_eq!(ok["isError"], false);

        for bad in [
            json!("plain"),
            json!({}),
            json!({"content":"plain"}),
            json!({"content":[{"text":"no type"}]}),
            json!({"content":[],"isError":"yes"}),
        ] {
            let v = wire(RawResult(bad.clone()));
            assert_eq!(v["isError"], true, "{bad}");
            let text = v["content"][0]["text"].as_str().unwrap();
            assert!(
                text.starts_with("The tool returned a malformed result"),
                "{text}"
            );
        }
    }

    #[test]
    fn json_is_structured_only_when_asked() {
        let plain = Json(json!({"a":1})).into_call_tool_result(false);
        assert!(plain.structured_content.is_none());
        assert_eq!(plain.text_content(), r#"{"a":1}"#);
        let structured = Json(json!({"a":1})).into_call_tool_result(true);
        assert_eq!(structured.structured_content, Some(json!({"a":1})));
    }
}
