//! Mirroring tool arguments into `Mcp-Param-<Name>` headers (2026-07-28):
//! the client's side of the shared rules in
//! `transport::mcp_headers`.

use std::collections::HashMap;

use serde_json::Value;

use crate::transport::mcp_headers::{self, ParamHeaders};
use crate::types::ToolInfo;

/// The header parameters a call with `arguments` mirrors, as raw text.
pub(crate) fn header_params(
    annotations: &ParamHeaders,
    arguments: &Value,
) -> Vec<(String, String)> {
    mcp_headers::header_params(annotations, arguments)
}

/// The annotations of every tool of a `tools/list` listing that has some.
pub(crate) fn tool_header_maps(tools: &[ToolInfo]) -> HashMap<String, ParamHeaders> {
    tools
        .iter()
        .map(|t| (t.name.clone(), mcp_headers::annotations(&t.input_schema)))
        .filter(|(_, m)| !m.is_empty())
        .collect()
}
