//! Reading fields out of JSONL text without parsing it: the first and last
//! 64 KiB of a session file may cut lines in two, so listing finds
//! `"key":"value"` pairs by text, as the official SDKs do.

use serde_json::Value;

/// Unescapes the raw text of a JSON string value (kept as is when it does
/// not decode).
fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_owned();
    }
    match serde_json::from_str::<Value>(&format!("\"{raw}\"")) {
        Ok(Value::String(s)) => s,
        _ => raw.to_owned(),
    }
}

/// The end (index of the closing quote) of a JSON string whose text starts at
/// `start`, skipping escapes; `None` if the text ends first.
fn string_end(text: &str, start: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn patterns(key: &str) -> [String; 2] {
    [format!("\"{key}\":\""), format!("\"{key}\": \"")]
}

/// The value of the first `"key":"…"` (or `"key": "…"`) in `text`: the
/// compact form is looked for first, and only if it has no complete value
/// the spaced one.
pub(crate) fn first_string_field(text: &str, key: &str) -> Option<String> {
    for pattern in patterns(key) {
        let Some(idx) = text.find(&pattern) else {
            continue;
        };
        let start = idx + pattern.len();
        if let Some(end) = string_end(text, start) {
            return Some(unescape(&text[start..end]));
        }
    }
    None
}

/// The value of the last `"key":"…"` in `text`; as the Python SDK, a match
/// of the spaced form `"key": "…"` wins over any compact one.
pub(crate) fn last_string_field(text: &str, key: &str) -> Option<String> {
    let mut last = None;
    for pattern in patterns(key) {
        let mut from = 0;
        while let Some(rel) = text.get(from..).and_then(|t| t.find(&pattern)) {
            let start = from + rel + pattern.len();
            match string_end(text, start) {
                Some(end) => {
                    last = Some(unescape(&text[start..end]));
                    from = end + 1;
                }
                None => break,
            }
        }
    }
    last
}

/// `last_string_field`, treating an empty value as none.
pub(crate) fn last_non_empty(text: &str, key: &str) -> Option<String> {
    last_string_field(text, key).filter(|s| !s.is_empty())
}

/// `first_string_field`, treating an empty value as none.
pub(crate) fn first_non_empty(text: &str, key: &str) -> Option<String> {
    first_string_field(text, key).filter(|s| !s.is_empty())
}

/// Whether a prompt is something the CLI or an IDE wrote rather than a
/// person: command output, hook and tick markers, an interruption notice,
/// or nothing but an IDE's opened-file or selection context. `text` is
/// trimmed.
pub(crate) fn is_generated_prompt(text: &str) -> bool {
    const PREFIXES: [&str; 4] = [
        "<local-command-stdout>",
        "<session-start-hook>",
        "<tick>",
        "<goal>",
    ];
    if PREFIXES.iter().any(|p| text.starts_with(p)) {
        return true;
    }
    if let Some(rest) = text.strip_prefix("[Request interrupted by user") {
        return rest.contains(']');
    }
    for tag in ["ide_opened_file", "ide_selection"] {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        if text.len() >= open.len() + close.len()
            && text.starts_with(&open)
            && text.ends_with(&close)
        {
            return true;
        }
    }
    false
}

/// The name inside the first `<command-name>…</command-name>`.
fn command_name(text: &str) -> Option<&str> {
    const OPEN: &str = "<command-name>";
    let start = text.find(OPEN)? + OPEN.len();
    let len = text[start..].find("</command-name>")?;
    Some(&text[start..start + len])
}

/// Whether a raw line contains `"key":value` or `"key": value`.
fn has_pair(line: &str, key: &str, value: &str) -> bool {
    line.contains(&format!("\"{key}\":{value}")) || line.contains(&format!("\"{key}\": {value}"))
}

/// The first prompt a person wrote, from a session file's first 64 KiB:
/// the first user entry that is not a tool result, meta or a compaction
/// summary, whose text is not generated (see `is_generated_prompt`);
/// newlines become spaces, and more than 200 characters are cut to 200 (end
/// spaces dropped) and `…`. A slash command's name (`<command-name>`) is
/// the fallback. Empty when there is none.
pub(crate) fn first_prompt(head: &str) -> String {
    let mut command_fallback = String::new();
    for line in head.split('\n') {
        if !has_pair(line, "type", "\"user\"")
            || line.contains("\"tool_result\"")
            || has_pair(line, "isMeta", "true")
            || has_pair(line, "isCompactSummary", "true")
        {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if entry.get("type").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let Some(message) = entry.get("message").filter(|m| m.is_object()) else {
            continue;
        };
        let texts: Vec<&str> = match message.get("content") {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect(),
            _ => Vec::new(),
        };
        for raw in texts {
            let one_line = raw.replace('\n', " ");
            let text = one_line.trim();
            if text.is_empty() {
                continue;
            }
            if let Some(name) = command_name(text) {
                if command_fallback.is_empty() {
                    command_fallback = name.to_owned();
                }
                continue;
            }
            if is_generated_prompt(text) {
                continue;
            }
            if text.chars().count() > 200 {
                let cut: String = text.chars().take(200).collect();
                return format!("{}\u{2026}", cut.trim_end());
            }
            return text.to_owned();
        }
    }
    command_fallback
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_found_by_text() {
        let text = r#"{"a":"x","customTitle":"one"}
{"customTitle":"t\"wo\u00e9"}
{"customTitle":"cut"#;
        assert_eq!(first_string_field(text, "customTitle").unwrap(), "one");
        assert_eq!(last_string_field(text, "customTitle").unwrap(), "t\"woé");
        assert_eq!(first_string_field(text, "missing"), None);
        // the spaced form wins over compact ones, as in the Python SDK
        let mixed = "{\"k\": \"spaced\"}\n{\"k\":\"compact\"}";
        assert_eq!(last_string_field(mixed, "k").unwrap(), "spaced");
        assert_eq!(first_string_field(mixed, "k").unwrap(), "compact");
        assert_eq!(last_non_empty("{\"k\":\"\"}", "k"), None);
    }

    #[test]
    fn first_prompt_skips_what_no_person_typed() {
        let lines = [
            r#"{"type":"user","isMeta":true,"message":{"content":"meta"}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"r"}]}}"#,
            r#"{"type":"user","message":{"content":"<command-name>/review</command-name> x"}}"#,
            r#"{"type":"user","message":{"content":"<local-command-stdout>out"}}"#,
            r#"{"type":"user","message":{"content":"[Request interrupted by user for tool use]"}}"#,
            r#"{"type":"user","message":{"content":"  <ide_selection>sel</ide_selection> "}}"#,
            r#"{"type":"user","message":{"content":[{"type":"image"},{"type":"text","text":"line one\nline two"}]}}"#,
        ];
        assert_eq!(first_prompt(&lines.join("\n")), "line one line two");
        assert_eq!(first_prompt(&lines[..6].join("\n")), "/review");
        let long = format!(
            r#"{{"type":"user","message":{{"content":"{} {}"}}}}"#,
            "a".repeat(199),
            "b".repeat(10)
        );
        assert_eq!(first_prompt(&long), format!("{}\u{2026}", "a".repeat(199)));
        assert_eq!(
            first_prompt("{\"type\":\"user\",\"message\":{\"content\":\"cut"),
            ""
        );
    }
}
