//! Limits a server puts on tool calls: how long a call may run, how large a
//! result may be (applied by `cap.rs`), how many tools one `tools/list`
//! page holds, how many messages one batch, how many tasks are kept and for
//! how long.

use std::time::Duration;

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

/// The default cap on one tool result: 1 Mi characters (1,048,576).
///
/// It covers the whole result: the characters of its text, plus the
/// characters of the JSON of everything else it carries (images, audio,
/// embedded resources, `structuredContent`, `_meta`, …). See
/// [`ServerBuilder::max_result_chars`](super::ServerBuilder::max_result_chars).
pub const DEFAULT_MAX_RESULT_CHARS: usize = 1 << 20;

/// The default number of tools in one `tools/list` page.
///
/// Large enough that the Claude Code CLI sees every normal server's tools in
/// a single page; it does follow `nextCursor`, but one page is one round trip.
pub const DEFAULT_PAGE_SIZE: usize = 1000;

/// The most messages one JSON-RPC batch may hold (batches exist only in
/// protocol revision 2025-03-26). As many as `serve_lines` serves at once.
pub const MAX_BATCH_LEN: usize = 1024;

/// The default number of tasks a server keeps at once (running, and ended
/// but within their TTL), and runs at once with an event store of its
/// transport's; see [`ServerBuilder::max_tasks`](super::ServerBuilder::max_tasks).
pub const DEFAULT_MAX_TASKS: usize = 1000;

/// The default bound on the bytes of the task records (results, mostly) a
/// server keeps in its own memory: 64 MiB; see
/// [`ServerBuilder::max_task_bytes`](super::ServerBuilder::max_task_bytes).
pub const DEFAULT_MAX_TASK_BYTES: usize = 64 << 20;

/// How long a task is kept after it was created, by default (its
/// `ttlMs`); see [`ServerBuilder::task_ttl`](super::ServerBuilder::task_ttl).
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// How often clients are asked to poll a task, by default (its
/// `pollIntervalMs`); see
/// [`ServerBuilder::task_poll_interval`](super::ServerBuilder::task_poll_interval).
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How long a task running with a shared store is taken to be alive
/// without word from its replica, by default; see
/// [`ServerBuilder::task_lease`](super::ServerBuilder::task_lease).
pub const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(30);

/// The tool timeout given the value of [`TOOL_TIMEOUT_ENV`] (if set).
///
/// `None`, an empty string, or a value that is not a finite number of
/// seconds gives [`DEFAULT_TOOL_TIMEOUT`]; any number is clamped to
/// [`MIN_ENV_TOOL_TIMEOUT`]..=[`MAX_ENV_TOOL_TIMEOUT`].
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_mcp::server::limits::timeout_from_env_value;
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
}
