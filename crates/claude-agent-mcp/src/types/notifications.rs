//! Payloads of server notifications: progress and logging.

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
