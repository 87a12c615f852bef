//! Mirroring tool arguments into `Mcp-Param-<Name>` headers (2026-07-28):
//! the client's side of the shared rules in
//! [`transport::mcp_headers`](crate::transport::mcp_headers).

use std::collections::HashMap;

use serde_json::Value;

use super::ClientError;
use crate::transport::mcp_headers::{self, ParamHeaders};
use crate::types::ToolInfo;

pub use crate::transport::mcp_headers::X_MCP_HEADER;

/// Renders a header value; refuses control characters with
/// [`ClientError::Refused`] (see
/// [`mcp_headers::encode_header_value`]).
pub fn encode_header_value(name: &str, value: &str) -> Result<String, ClientError> {
    mcp_headers::encode_header_value(name, value).map_err(|e| ClientError::Refused(e.to_string()))
}

/// The header parameters a call with `arguments` mirrors, as raw text.
pub(crate) fn header_params(
    annotations: &ParamHeaders,
    arguments: &Value,
) -> Result<Vec<(String, String)>, ClientError> {
    mcp_headers::header_params(annotations, arguments)
        .map_err(|e| ClientError::Refused(e.to_string()))
}

/// The annotations of every tool of a `tools/list` listing that has some.
pub(crate) fn tool_header_maps(tools: &[ToolInfo]) -> HashMap<String, ParamHeaders> {
    tools
        .iter()
        .map(|t| (t.name.clone(), mcp_headers::annotations(&t.input_schema)))
        .filter(|(_, m)| !m.is_empty())
        .collect()
}
