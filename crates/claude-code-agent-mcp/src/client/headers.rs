//! Mirroring tool arguments into `Mcp-Param-<Name>` headers (2026-07-28):
//! the client's side of the shared rules in
//! `transport::mcp_headers`.

use std::collections::HashMap;

use serde_json::Value;

use super::Error;
use crate::transport::mcp_headers::{self, InvalidHeaderValue, ParamHeaders};
use crate::types::ToolInfo;

/// Renders a header value; refuses control characters with an
/// [`ErrorKind::Refused`](super::ErrorKind::Refused) error whose source is
/// the [`InvalidHeaderValue`] (see [`mcp_headers::encode_header_value`]).
pub fn encode_header_value(name: &str, value: &str) -> Result<String, Error> {
    mcp_headers::encode_header_value(name, value).map_err(refused)
}

/// Nothing is sent: a header value holds a control character.
fn refused(e: InvalidHeaderValue) -> Error {
    Error::refused("the request was not sent: a header value holds a control character")
        .with_source(e)
}

/// The header parameters a call with `arguments` mirrors, as raw text.
pub(crate) fn header_params(
    annotations: &ParamHeaders,
    arguments: &Value,
) -> Result<Vec<(String, String)>, Error> {
    mcp_headers::header_params(annotations, arguments).map_err(refused)
}

/// The annotations of every tool of a `tools/list` listing that has some.
pub(crate) fn tool_header_maps(tools: &[ToolInfo]) -> HashMap<String, ParamHeaders> {
    tools
        .iter()
        .map(|t| (t.name.clone(), mcp_headers::annotations(&t.input_schema)))
        .filter(|(_, m)| !m.is_empty())
        .collect()
}
