//! What a request is matched on, and the diff when nothing matches.
//!
//! Matched: the method, the path (not the query), and the body — model,
//! system prompt, messages, tools, tool results and every other field —
//! after these are taken out, since they change from run to run:
//! `metadata` (the CLI's user and session ids), every `cache_control`
//! marker, the CLI's temporary working and config folders (written
//! `<WORK_DIR>` and `<CONFIG_DIR>`), and dates (`YYYY-MM-DD`, written
//! `<DATE>`) in the system prompt. What the redaction patterns match is
//! written `[REDACTED]` before matching, as it is in the file. Headers are
//! not matched, and not kept.

use serde_json::Value;
use similar::TextDiff;

use super::format::Request;

/// What changes between runs of the same test, and what is never kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct Volatile {
    /// Paths written as placeholders: (path, placeholder).
    pub(crate) paths: Vec<(String, &'static str)>,
    /// The redaction patterns: a request is matched as it is written.
    pub(crate) patterns: Vec<regex_lite::Regex>,
}

impl Volatile {
    fn clean(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (path, placeholder) in &self.paths {
            if !path.is_empty() {
                text = text.replace(path.as_str(), placeholder);
            }
        }
        for p in &self.patterns {
            if p.is_match(&text) {
                text = p.replace_all(&text, super::REDACTED).into_owned();
            }
        }
        text
    }
}

/// The body as it is matched and kept.
pub(crate) fn normalize(body: &Value, volatile: &Volatile) -> Value {
    let mut body = body.clone();
    if let Value::Object(map) = &mut body {
        map.remove("metadata");
        if let Some(system) = map.get_mut("system") {
            dates_out(system);
        }
    }
    strip(&mut body, volatile);
    body
}

/// Drops `cache_control` keys and writes the volatile paths as placeholders.
fn strip(value: &mut Value, volatile: &Volatile) {
    match value {
        Value::Object(map) => {
            map.remove("cache_control");
            for v in map.values_mut() {
                strip(v, volatile);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip(v, volatile)),
        Value::String(s) => {
            let cleaned = machine_out(&volatile.clean(s));
            *s = match cli_text(&cleaned) {
                true => replace_dates(&cleaned),
                false => cleaned,
            };
        }
        _ => {}
    }
}

/// The lines of the environment section the CLI sends (in a system
/// reminder) that name the machine, and what they are written as.
const MACHINE_LINES: &[(&str, &str)] = &[
    (" - OS Version: ", "<OS_VERSION>"),
    (" - Shell: ", "<SHELL>"),
];

/// Writes the machine's lines of the environment section as placeholders.
fn machine_out(s: &str) -> String {
    if !MACHINE_LINES.iter().any(|(prefix, _)| s.contains(prefix)) {
        return s.to_owned();
    }
    let mut out: Vec<String> = Vec::new();
    for line in s.split('\n') {
        match MACHINE_LINES
            .iter()
            .find(|(prefix, _)| line.starts_with(prefix))
        {
            Some((prefix, placeholder)) => out.push(format!("{prefix}{placeholder}")),
            None => out.push(line.to_owned()),
        }
    }
    out.join("\n")
}

/// Whether a string of the conversation is the CLI's own (its environment
/// section, a system reminder), not the user's: its dates are volatile.
fn cli_text(s: &str) -> bool {
    s.starts_with("# Environment") || s.starts_with("<system-reminder>")
}

/// Writes every `YYYY-MM-DD` in the strings of `value` as `<DATE>`.
fn dates_out(value: &mut Value) {
    match value {
        Value::String(s) => *s = replace_dates(s),
        Value::Array(items) => items.iter_mut().for_each(dates_out),
        Value::Object(map) => map.values_mut().for_each(dates_out),
        _ => {}
    }
}

fn replace_dates(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let digits = |r: std::ops::Range<usize>| bytes[r].iter().all(u8::is_ascii_digit);
    while i < bytes.len() {
        let boundary = |j: usize| j >= bytes.len() || !bytes[j].is_ascii_alphanumeric();
        let starts = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if starts
            && i + 10 <= bytes.len()
            && digits(i..i + 4)
            && bytes[i + 4] == b'-'
            && digits(i + 5..i + 7)
            && bytes[i + 7] == b'-'
            && digits(i + 8..i + 10)
            && boundary(i + 10)
        {
            out.push_str("<DATE>");
            i += 10;
            continue;
        }
        let ch = s[i..].chars().next().expect("in bounds");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The request as the diff shows it.
fn pretty(request: &Request) -> String {
    format!(
        "{} {}\n{}\n",
        request.method,
        request.path,
        serde_json::to_string_pretty(&request.body).expect("JSON serializes")
    )
}

/// The unified diff from what the cassette holds to what was asked, and
/// how many lines differ.
pub(crate) fn diff(recorded: &Request, asked: &Request) -> (String, usize) {
    let (old, new) = (pretty(recorded), pretty(asked));
    let text = TextDiff::from_lines(&old, &new);
    let changed = text
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .count();
    let rendered = text
        .unified_diff()
        .context_radius(4)
        .header("the cassette holds", "the CLI asked")
        .to_string();
    (rendered, changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_changes_between_runs_is_taken_out() {
        let volatile = Volatile {
            paths: vec![("/tmp/work-1".into(), "<WORK_DIR>")],
            patterns: vec![regex_lite::Regex::new("secret-[0-9]+").unwrap()],
        };
        let body = json!({
            "model": "m", "metadata": {"user_id": "u"},
            "system": [{"type": "text", "text": "Today is 2026-12-04 in /tmp/work-1.\n - OS Version: Linux 6.1\n - Shell: zsh\n - Platform: linux", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "# Environment\nToday's date is 2026-12-04."},
                {"type": "text", "text": "ls /tmp/work-1 on 2026-12-04 secret-42", "cache_control": {}}]}],
        });
        let n = normalize(&body, &volatile);
        assert_eq!(
            n,
            json!({
                "model": "m",
                "system": [{"type": "text", "text": "Today is <DATE> in <WORK_DIR>.\n - OS Version: <OS_VERSION>\n - Shell: <SHELL>\n - Platform: linux"}],
                "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "# Environment\nToday's date is <DATE>."},
                    {"type": "text", "text": "ls <WORK_DIR> on 2026-12-04 [REDACTED]"}]}],
            })
        );
        assert_eq!(
            replace_dates("x2026-12-04 2026-12-045 2026-1-04 ü2026-12-04"),
            "x2026-12-04 2026-12-045 2026-1-04 ü<DATE>"
        );
    }

    #[test]
    fn the_diff_shows_what_changed() {
        let a = Request {
            method: "POST".into(),
            path: "/v1/messages".into(),
            body: json!({"model": "m", "prompt": "weather in Paris"}),
        };
        let b = Request {
            body: json!({"model": "m", "prompt": "weather in Rome"}),
            ..a.clone()
        };
        let (text, changed) = diff(&a, &b);
        assert_eq!(changed, 2, "{text}");
        assert!(
            text.contains("-  \"prompt\": \"weather in Paris\"")
                && text.contains("+  \"prompt\": \"weather in Rome\""),
            "{text}"
        );
        assert_eq!(diff(&a, &a).1, 0);
    }
}
