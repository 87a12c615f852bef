//! Limits a server puts on tool calls: how long a call may run, how much text
//! a result may carry, and how many tools one `tools/list` page holds.

use std::time::Duration;

use crate::types::{CallToolResult, Content};

/// The environment variable giving the default tool timeout, in seconds.
///
/// Read once, when a server is built. Fractions are allowed; the value is
/// clamped to 1..=300 seconds. An unreadable value is ignored (with a
/// warning). [`ServerBuilder::tool_timeout`](super::ServerBuilder::tool_timeout)
/// and [`Tool::timeout`](super::Tool::timeout) override it.
pub const TOOL_TIMEOUT_ENV: &str = "CLAUDE_AGENT_TOOL_TIMEOUT";

/// The tool timeout when neither the server, the tool nor the environment sets one.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// The shortest timeout [`TOOL_TIMEOUT_ENV`] can ask for.
pub const MIN_ENV_TOOL_TIMEOUT: Duration = Duration::from_secs(1);

/// The longest timeout [`TOOL_TIMEOUT_ENV`] can ask for.
pub const MAX_ENV_TOOL_TIMEOUT: Duration = Duration::from_secs(300);

/// The default cap on the text of one tool result: 1 Mi characters (1,048,576).
///
/// Counted in Unicode scalar values over all text blocks of the result.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 1 << 20;

/// The default number of tools in one `tools/list` page.
///
/// Large enough that the Claude Code CLI sees every normal server's tools in
/// a single page; it does follow `nextCursor`, but one page is one round trip.
pub const DEFAULT_PAGE_SIZE: usize = 1000;

/// The tool timeout given the value of [`TOOL_TIMEOUT_ENV`] (if set).
///
/// `None`, an empty string, or a value that is not a finite number of
/// seconds gives [`DEFAULT_TOOL_TIMEOUT`]; any number is clamped to
/// [`MIN_ENV_TOOL_TIMEOUT`]..=[`MAX_ENV_TOOL_TIMEOUT`].
///
/// ```
/// use std::time::Duration;
/// use claude_agent_mcp::server::limits::timeout_from_env_value;
///
/// assert_eq!(timeout_from_env_value(Some("5")), Duration::from_secs(5));
/// assert_eq!(timeout_from_env_value(Some("0")), Duration::from_secs(1));
/// assert_eq!(timeout_from_env_value(Some("9000")), Duration::from_secs(300));
/// assert_eq!(timeout_from_env_value(Some("soon")), Duration::from_secs(60));
/// assert_eq!(timeout_from_env_value(None), Duration::from_secs(60));
/// ```
pub fn timeout_from_env_value(value: Option<&str>) -> Duration {
    let Some(raw) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return DEFAULT_TOOL_TIMEOUT;
    };
    match raw.parse::<f64>() {
        Ok(secs) if secs.is_finite() => Duration::from_secs_f64(secs.clamp(
            MIN_ENV_TOOL_TIMEOUT.as_secs_f64(),
            MAX_ENV_TOOL_TIMEOUT.as_secs_f64(),
        )),
        _ => {
            tracing::warn!(
                value = raw,
                "{TOOL_TIMEOUT_ENV} is not a number of seconds; using the default of 60 s"
            );
            DEFAULT_TOOL_TIMEOUT
        }
    }
}

/// The tool timeout from the process environment.
pub(crate) fn timeout_from_env() -> Duration {
    let value = std::env::var(TOOL_TIMEOUT_ENV).ok();
    timeout_from_env_value(value.as_deref())
}

/// A duration as people write it: `3s`, `1.5s`, `250ms`.
pub(crate) fn human(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// Cuts the text blocks of `result` so that together they hold at most
/// `limit` characters, cutting at a character boundary, and appends a note
/// saying how much was cut. Later text blocks past the limit are dropped;
/// other blocks are kept. Returns the number of characters cut.
pub(crate) fn cap_text(result: &mut CallToolResult, limit: usize, tool: &str) -> usize {
    // Fast path: no more bytes than the limit means no more characters.
    let total_bytes: usize = result.content.iter().filter_map(text_len).sum();
    if total_bytes <= limit {
        return 0;
    }
    let total_chars: usize = result
        .content
        .iter()
        .filter_map(Content::as_text)
        .map(|t| t.chars().count())
        .sum();
    if total_chars <= limit {
        return 0;
    }

    let mut budget = limit;
    let mut last_kept_text = None;
    let mut index = 0;
    result.content.retain_mut(|block| {
        let keep = match block {
            Content::Text { text, .. } => {
                if budget == 0 {
                    false
                } else {
                    match text.char_indices().nth(budget) {
                        // Longer than what is left: cut at the boundary.
                        Some((byte, _)) => {
                            text.truncate(byte);
                            budget = 0;
                        }
                        None => budget -= text.chars().count(),
                    }
                    last_kept_text = Some(index);
                    true
                }
            }
            _ => true,
        };
        if keep {
            index += 1;
        }
        keep
    });

    let cut = total_chars - limit;
    let note = format!(
        "\n\n[Output truncated: {cut} of {total_chars} characters were cut to stay within \
         the limit of {limit} characters.]"
    );
    match last_kept_text.and_then(|i| result.content.get_mut(i)) {
        Some(Content::Text { text, .. }) => text.push_str(&note),
        _ => result.content.push(Content::text(note.trim_start())),
    }
    tracing::warn!(
        tool,
        limit,
        total_chars,
        cut,
        "tool result exceeded the text limit and was truncated"
    );
    cut
}

fn text_len(block: &Content) -> Option<usize> {
    block.as_text().map(str::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations() {
        assert_eq!(human(Duration::from_secs(3)), "3s");
        assert_eq!(human(Duration::from_millis(250)), "250ms");
        assert_eq!(human(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn env_value_fractions_and_clamping() {
        assert_eq!(
            timeout_from_env_value(Some(" 2.5 ")),
            Duration::from_millis(2500)
        );
        assert_eq!(timeout_from_env_value(Some("-4")), MIN_ENV_TOOL_TIMEOUT);
        assert_eq!(timeout_from_env_value(Some("inf")), DEFAULT_TOOL_TIMEOUT);
        assert_eq!(timeout_from_env_value(Some("")), DEFAULT_TOOL_TIMEOUT);
    }

    #[test]
    fn cap_cuts_at_char_boundaries_across_blocks() {
        let mut r = CallToolResult::success(vec![
            Content::text("ééé"),
            Content::image("AAAA", "image/png"),
            Content::text("ààà"),
            Content::text("zzz"),
        ]);
        let cut = cap_text(&mut r, 4, "t");
        assert_eq!(cut, 5);
        assert_eq!(r.content.len(), 3, "{:?}", r.content);
        assert_eq!(r.content[0].as_text(), Some("ééé"));
        let second = r.content[2].as_text().unwrap();
        assert!(
            second.starts_with("à\n\n[Output truncated: 5 of 9"),
            "{second}"
        );
    }

    #[test]
    fn cap_leaves_short_results_alone() {
        let mut r = CallToolResult::text("ééé");
        // 6 bytes but 3 characters.
        assert_eq!(cap_text(&mut r, 3, "t"), 0);
        assert_eq!(r.content[0].as_text(), Some("ééé"));
    }
}
