//! Payloads of server notifications: progress and logging, and the
//! logging levels.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `notifications/progress` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotification {
    /// The token the request carried in `_meta.progressToken`.
    pub progress_token: Value,
    /// Progress so far (increases with each notification).
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `notifications/message` params: one log record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoggingMessage {
    /// The level (`debug` … `emergency`), as sent.
    pub level: String,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The record: any JSON.
    #[serde(default)]
    pub data: Value,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which notifications a `subscriptions/listen` stream (the stateless
/// 2026-07-28 revision) carries: the `notifications` filter a client asks
/// for, and the part of it the server's acknowledgement agrees to.
///
/// ```
/// use claude_code_agent_mcp::types::SubscriptionFilter;
/// use serde_json::json;
///
/// let filter = SubscriptionFilter::new()
///     .tools_list_changed()
///     .resource("file:///config.json");
/// assert_eq!(
///     serde_json::to_value(&filter).unwrap(),
///     json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///config.json"]})
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these tasks (the Tasks extension); in an
    /// acknowledgement, the tasks the server agreed to tell of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_false(b: &bool) -> bool {
    !b
}

impl SubscriptionFilter {
    /// Nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for `notifications/tools/list_changed`.
    pub fn tools_list_changed(mut self) -> Self {
        self.tools_list_changed = true;
        self
    }

    /// Asks for `notifications/prompts/list_changed`.
    pub fn prompts_list_changed(mut self) -> Self {
        self.prompts_list_changed = true;
        self
    }

    /// Asks for `notifications/resources/list_changed`.
    pub fn resources_list_changed(mut self) -> Self {
        self.resources_list_changed = true;
        self
    }

    /// Asks for `notifications/resources/updated` about `uri`.
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.resource_subscriptions
            .get_or_insert_with(Vec::new)
            .push(uri.into());
        self
    }

    /// Asks for `notifications/tasks` about the task `task_id` (the Tasks
    /// extension: the request then declares it). A server tells of tasks
    /// it runs itself, the caller's, until they end.
    pub fn task(mut self, task_id: impl Into<String>) -> Self {
        self.task_ids
            .get_or_insert_with(Vec::new)
            .push(task_id.into());
        self
    }
}

/// MCP's logging levels (RFC 5424 severities), least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum LogLevel {
    /// `debug`
    Debug = 0,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    const ALL: [LogLevel; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// The level's wire name (`"warning"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    pub(crate) fn from_index(i: u8) -> Self {
        Self::ALL
            .get(usize::from(i))
            .copied()
            .unwrap_or(Self::Debug)
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown log level {s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip_and_order() {
        for l in LogLevel::ALL {
            assert_eq!(l.as_str().parse::<LogLevel>().unwrap(), l);
            assert_eq!(LogLevel::from_index(l as u8), l);
        }
        assert!(LogLevel::Warning > LogLevel::Info);
        assert!("loud".parse::<LogLevel>().is_err());
    }
}
