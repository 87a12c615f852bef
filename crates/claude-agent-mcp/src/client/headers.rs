//! Mirroring tool arguments into `Mcp-Param-<Name>` headers (2026-07-28).
//!
//! A property of a tool's input schema that carries `"x-mcp-header": "Name"`
//! is sent, besides the body, as the HTTP header `Mcp-Param-Name`. Values
//! are rendered as text (`true`/`false`, numbers, strings); a value with
//! CR, LF or another control character is refused before anything is
//! sent; other values that would not survive a header (non-ASCII, edge
//! whitespace) are sent base64-wrapped as `=?base64?…?=`.

use serde_json::Value;

use super::ClientError;

/// `x-mcp-header` annotations of one tool: (property path, header name).
pub(crate) type HeaderMap = Vec<(Vec<String>, String)>;

/// The annotation key in a property's schema.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// Finds the annotated properties of an input schema (following nested
/// `properties` only).
pub(crate) fn header_map(schema: &Value) -> HeaderMap {
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

/// The header parameters a call with `arguments` mirrors, as raw text
/// (the transport encodes them with [`encode_header_value`]).
pub(crate) fn header_params(
    map: &HeaderMap,
    arguments: &Value,
) -> Result<Vec<(String, String)>, ClientError> {
    let mut out = Vec::new();
    for (path, name) in map {
        let mut node = arguments;
        let mut found = true;
        for key in path {
            match node.get(key) {
                Some(next) => node = next,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found {
            continue;
        }
        let text = match node {
            Value::Null | Value::Array(_) | Value::Object(_) => continue,
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.clone(),
        };
        // Checked now, so nothing is sent; encoded by the transport.
        encode_header_value(name, &text)?;
        out.push((name.clone(), text));
    }
    Ok(out)
}

/// Renders a header value; refuses control characters.
pub fn encode_header_value(name: &str, value: &str) -> Result<String, ClientError> {
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(ClientError::Refused(format!(
            "header Mcp-Param-{name}: the value contains the control character {c:?} and cannot be sent"
        )));
    }
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    Ok(if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    })
}

/// Whether `name` is an RFC 9110 token (a valid header name).
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Header maps of every tool in a `tools/list` listing.
pub(crate) fn tool_header_maps(
    tools: &[crate::types::ToolInfo],
) -> std::collections::HashMap<String, HeaderMap> {
    tools
        .iter()
        .map(|t| (t.name.clone(), header_map(&t.input_schema)))
        .filter(|(_, m)| !m.is_empty())
        .collect()
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
        let map = header_map(&schema);
        let names: Vec<&str> = map.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["Flag", "N", "Id", "Region"]);
        let params = header_params(
            &map,
            &json!({"region":"eu-west","n":7,"flag":true,"nested":{"id":"é"}}),
        )
        .unwrap();
        assert_eq!(
            params,
            [
                ("Flag".to_owned(), "true".to_owned()),
                ("N".to_owned(), "7".to_owned()),
                ("Id".to_owned(), "é".to_owned()),
                ("Region".to_owned(), "eu-west".to_owned()),
            ]
        );
        assert_eq!(encode_header_value("Id", "é").unwrap(), "=?base64?w6k=?=");
        // Absent values send no header.
        assert!(header_params(&map, &json!({})).unwrap().is_empty());
    }

    #[test]
    fn refuses_control_characters() {
        for bad in ["a\r\nX-Evil: 1", "a\nb", "tab\there", "nul\0", "del\u{7f}"] {
            let e = encode_header_value("Region", bad).unwrap_err();
            assert!(matches!(e, ClientError::Refused(_)), "{bad:?}");
            assert!(e.jsonrpc_error().is_none());
        }
        assert_eq!(
            encode_header_value("X", " padded").unwrap(),
            "=?base64?IHBhZGRlZA==?="
        );
    }

    #[test]
    fn base64_matches_rfc4648() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc);
        }
    }
}
