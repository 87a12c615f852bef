//! The headers of the stateless revision (2026-07-28) that mirror a
//! request's body, one set of rules for both sides: the HTTP client writes
//! them (`client::HttpTransport`, feature `http-client`), the HTTP server checks
//! them against the body (`http_server`, feature `http-server`).
//!
//! * `Mcp-Method` carries the method, and `Mcp-Name` the name the request
//!   is about ([`name_field`]).
//! * A property of a tool's input schema annotated with
//!   `"x-mcp-header": "Name"` ([`X_MCP_HEADER`], found by [`annotations`])
//!   is mirrored into the header `Mcp-Param-Name` ([`header_params`],
//!   checked by [`check_param_headers`]). Values are rendered as text
//!   (`true`/`false`, numbers, strings; other values send no header).
//! * A value that would not survive a header as it is (control characters
//!   such as CR and LF, non-ASCII, edge whitespace, the wrapper itself)
//!   travels base64-wrapped as `=?base64?…?=` ([`encode_header_value`],
//!   [`decode_header_value`]): no argument can inject a header.
//!
//! ```
//! use claude_code_agent_mcp::__private::transport::mcp_headers::{annotations, header_params};
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {
//!     "region": {"type": "string", "x-mcp-header": "Region"}}});
//! let found = annotations(&schema);
//! let params = header_params(&found, &json!({"region": "eu-west"}));
//! assert_eq!(params, [("Region".to_owned(), "eu-west".to_owned())]);
//! ```

use serde_json::Value;

/// The annotation key in a property's schema.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// The prefix of the headers that mirror annotated arguments.
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";

/// The `x-mcp-header` annotations of one tool's input schema: (property
/// path, header name without [`PARAM_HEADER_PREFIX`]), sorted.
pub type ParamHeaders = Vec<(Vec<String>, String)>;

/// The field of `params` that `Mcp-Name` mirrors for `method`, if any.
pub fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // The Tasks extension: balancers route a task's requests by it.
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// Finds the annotated properties of an input schema (top-level and nested
/// `properties`). A name that is no valid header name is ignored, with a
/// warning, by both sides.
pub fn annotations(schema: &Value) -> ParamHeaders {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<String>, &Value)> = vec![(Vec::new(), schema)];
    while let Some((path, node)) = stack.pop() {
        if !path.is_empty()
            && let Some(name) = node.get(X_MCP_HEADER).and_then(Value::as_str)
        {
            if is_token(name) {
                out.push((path.clone(), name.to_owned()));
            } else {
                tracing::warn!(name, "ignoring an x-mcp-header that is no HTTP header name");
            }
        }
        if let Some(Value::Object(props)) = node.get("properties") {
            for (key, sub) in props {
                let mut p = path.clone();
                p.push(key.clone());
                stack.push((p, sub));
            }
        }
    }
    out.sort();
    out
}

/// Why a tool's `x-mcp-header` annotations make it invalid (a client
/// drops such a tool from its listing), or `None` when they are fine: an
/// annotation must be a non-empty HTTP token, unique regardless of case,
/// on a property of type `string`, `integer` or `boolean` that is reached
/// from the root through `properties` alone.
pub fn invalid_annotation(schema: &Value) -> Option<String> {
    fn count(node: &Value) -> usize {
        match node {
            Value::Object(map) => {
                usize::from(map.contains_key(X_MCP_HEADER)) + map.values().map(count).sum::<usize>()
            }
            Value::Array(items) => items.iter().map(count).sum(),
            _ => 0,
        }
    }
    let mut reached = 0;
    let mut seen: Vec<String> = Vec::new();
    let mut stack: Vec<(Vec<&str>, &Value)> = vec![(Vec::new(), schema)];
    while let Some((path, node)) = stack.pop() {
        if let Some(annotation) = node.get(X_MCP_HEADER) {
            reached += 1;
            let at = path.join(".");
            let Some(name) = annotation.as_str().filter(|n| is_token(n)) else {
                return Some(format!(
                    "the x-mcp-header of {at:?} is no HTTP header name: {annotation}"
                ));
            };
            let kind = node.get("type").and_then(Value::as_str);
            if path.is_empty() || !matches!(kind, Some("string" | "integer" | "boolean")) {
                return Some(format!(
                    "x-mcp-header {name:?} is on {at:?}, which is not a string, integer or boolean property"
                ));
            }
            if seen.iter().any(|s| s.eq_ignore_ascii_case(name)) {
                return Some(format!("x-mcp-header {name:?} is given twice"));
            }
            seen.push(name.to_owned());
        }
        if let Some(Value::Object(props)) = node.get("properties") {
            for (key, sub) in props {
                let mut p = path.clone();
                p.push(key);
                stack.push((p, sub));
            }
        }
    }
    (count(schema) != reached)
        .then(|| "an x-mcp-header is on a property not reached through properties alone".to_owned())
}

/// The annotated argument at `path`, as a header would carry it: `None`
/// when it is absent or not a scalar.
pub fn argument_text(arguments: &Value, path: &[String]) -> Option<String> {
    let value = path.iter().try_fold(arguments, |node, key| node.get(key))?;
    match value {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The header parameters a call with `arguments` mirrors, as raw text
/// (encoded when sent, with [`encode_header_value`]).
pub fn header_params(annotations: &ParamHeaders, arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, name) in annotations {
        if let Some(text) = argument_text(arguments, path) {
            out.push((name.clone(), text));
        }
    }
    out
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against its
/// arguments: each present exactly when its argument is, with its value.
/// `header` looks a header up by its (lower-case) name.
pub fn check_param_headers<'a>(
    annotations: &ParamHeaders,
    arguments: &Value,
    header: impl Fn(&str) -> Option<&'a str>,
) -> Result<(), String> {
    for (path, name) in annotations {
        let value = argument_text(arguments, path);
        let given = header(&format!("mcp-param-{}", name.to_ascii_lowercase()));
        match (given, value) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(format!(
                    "{PARAM_HEADER_PREFIX}{name} is set but the argument is absent"
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "the argument {:?} needs an {PARAM_HEADER_PREFIX}{name} header",
                    path.join(".")
                ));
            }
            (Some(raw), Some(value)) => match decode_header_value(raw) {
                None => return Err(format!("{PARAM_HEADER_PREFIX}{name} is not valid base64")),
                Some(decoded) if decoded == value => {}
                Some(_) => {
                    return Err(format!(
                        "{PARAM_HEADER_PREFIX}{name} does not match the argument {:?}",
                        path.join(".")
                    ));
                }
            },
        }
    }
    Ok(())
}

/// Renders a header value: as it is when it is visible ASCII with inner
/// spaces only, else base64-wrapped (control characters, non-ASCII, edge
/// whitespace, a value that looks wrapped already).
pub fn encode_header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

/// Decodes a header value: `=?base64?…?=` is strict base64 of UTF-8 text,
/// anything else literal (edge spaces and tabs trimmed). `None` when it
/// does not decode.
pub fn decode_header_value(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(base64_decode(encoded)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// Whether `name` is an RFC 9110 token (a valid header name).
pub fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(crate) fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let sextet = |c: u8| BASE64.iter().position(|&b| b == c).map(|v| v as u32);
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let chunks = bytes.len() / 4;
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != chunks) {
            return None;
        }
        let mut n = 0u32;
        for (j, &b) in chunk.iter().enumerate() {
            let v = if j >= 4 - pad { 0 } else { sextet(b)? };
            n |= v << (18 - 6 * j);
        }
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_annotations_and_renders_values() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "n":{"type":"integer","x-mcp-header":"N"},
            "flag":{"type":"boolean","x-mcp-header":"Flag"},
            "plain":{"type":"string"},
            "bad":{"type":"string","x-mcp-header":"Bad Name"},
            "nested":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}}}});
        let found = annotations(&schema);
        let names: Vec<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["Flag", "N", "Id", "Region"]);
        let arguments = json!({"region":"eu-west","n":7,"flag":true,"nested":{"id":"é"}});
        let params = header_params(&found, &arguments);
        assert_eq!(
            params,
            [
                ("Flag".to_owned(), "true".to_owned()),
                ("N".to_owned(), "7".to_owned()),
                ("Id".to_owned(), "é".to_owned()),
                ("Region".to_owned(), "eu-west".to_owned()),
            ]
        );
        assert_eq!(encode_header_value("é"), "=?base64?w6k=?=");
        // Absent values send no header.
        assert!(header_params(&found, &json!({})).is_empty());

        // What the client sends, the server accepts; anything else it refuses.
        let sent: Vec<(String, String)> = params
            .iter()
            .map(|(n, v)| {
                let value = encode_header_value(v);
                (format!("mcp-param-{}", n.to_ascii_lowercase()), value)
            })
            .collect();
        let lookup = |h: &str| sent.iter().find(|(n, _)| n == h).map(|(_, v)| v.as_str());
        assert_eq!(check_param_headers(&found, &arguments, lookup), Ok(()));
        let other = json!({"region":"us","n":7,"flag":true,"nested":{"id":"é"}});
        assert!(check_param_headers(&found, &other, lookup).is_err());
        assert!(check_param_headers(&found, &json!({}), lookup).is_err());
        assert!(check_param_headers(&found, &arguments, |_| None).is_err());
    }

    #[test]
    fn invalid_annotations_are_found() {
        let tool = |property: Value| json!({"type":"object","properties":{"p": property}});
        let ok = tool(json!({"type":"string","x-mcp-header":"Region"}));
        assert_eq!(invalid_annotation(&ok), None);
        let nested = json!({"type":"object","properties":{"o":{"type":"object",
            "properties":{"id":{"type":"integer","x-mcp-header":"Id"}}}}});
        assert_eq!(invalid_annotation(&nested), None);
        for bad in [
            tool(json!({"type":"string","x-mcp-header":""})),
            tool(json!({"type":"string","x-mcp-header":"My Region"})),
            tool(json!({"type":"string","x-mcp-header":"Région"})),
            tool(json!({"type":"string","x-mcp-header":"a:b"})),
            tool(json!({"type":"number","x-mcp-header":"Score"})),
            tool(json!({"type":"object","x-mcp-header":"Data"})),
            tool(json!({"type":"array","items":{"type":"string"},"x-mcp-header":"Items"})),
            tool(json!({"type":"array","items":{"type":"string","x-mcp-header":"Item"}})),
            tool(json!({"anyOf":[{"type":"string","x-mcp-header":"Any"}]})),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},
                "b":{"type":"string","x-mcp-header":"myfield"}}}),
        ] {
            assert!(invalid_annotation(&bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn control_characters_travel_wrapped() {
        for bad in ["a\r\nX-Evil: 1", "a\nb", "tab\there", "nul\0", "del\u{7f}"] {
            let encoded = encode_header_value(bad);
            assert!(encoded.starts_with("=?base64?"), "{encoded:?}");
            assert_eq!(decode_header_value(&encoded).as_deref(), Some(bad));
        }
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(encode_header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
    }

    #[test]
    fn base64_matches_rfc4648_both_ways() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc);
            assert_eq!(base64_decode(enc).unwrap(), raw.as_bytes());
        }
        assert!(base64_decode("YQ==YQ==").is_none());
    }

    #[test]
    fn header_values_decode() {
        assert_eq!(decode_header_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(decode_header_value("  plain ").unwrap(), "plain");
        assert_eq!(decode_header_value("=?base64?w6k=?=").unwrap(), "é");
        assert!(decode_header_value("=?base64?SGVsbG8?=").is_none());
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_none());
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").unwrap(),
            "=?base64?SGVsbG8="
        );
    }
}
