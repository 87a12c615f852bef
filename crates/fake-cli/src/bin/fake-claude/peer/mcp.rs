//! The MCP side of the fake CLI: the handshake with each in-process server,
//! `tools/call` and other JSON-RPC requests inside `mcp_message`, and the
//! checks of their answers the real CLI makes.

use std::io;
use std::time::Duration;

use claude_code_agent_fake_cli::CLI_VERSION;
use serde_json::{Value, json};

use super::{Peer, Response};

impl Peer {
    /// The `mcp_message` control request carrying `message` for `server`.
    pub fn mcp_request(server: &str, message: Value) -> Value {
        json!({"subtype": "mcp_message", "server_name": server, "message": message})
    }

    /// Runs the MCP handshake with every declared server, as the real CLI:
    /// `initialize` (id 0), `notifications/initialized` (waiting for its
    /// acknowledgement), `tools/list` (id 1).
    pub fn handshake(&mut self) -> io::Result<()> {
        let timeout = Duration::from_secs(30);
        for i in 0..self.servers.len() {
            let name = self.servers[i].name.clone();
            // An accepted manifest replaces the live handshake; the first
            // call then uses id 2, as after a live one (docs/protocol.md §5.13).
            let s = &mut self.servers[i];
            if let Some(m) = s.manifest.as_ref()
                && manifest_verdict(m) == "parked"
            {
                s.tools = tool_names(m.pointer("/toolsListResult"));
                s.next_id = 2;
                s.connected = true;
                continue;
            }
            let init = json!({"method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "claude-code", "title": "Claude Code",
                    "description": "Anthropic's agentic coding tool",
                    "websiteUrl": "https://claude.com/claude-code", "version": CLI_VERSION}},
                "jsonrpc": "2.0", "id": 0});
            let r = self.request(Self::mcp_request(&name, init), timeout)?;
            if let Err(e) = check_mcp_result(r.as_ref(), 0).and_then(|res| {
                res.get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(|_| ())
                    .ok_or_else(|| format!("no protocolVersion in {res}"))
            }) {
                self.fail(format!("server {name}: initialize: {e}"));
                continue;
            }
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            match self.request(Self::mcp_request(&name, note), timeout)? {
                Some(r) if r.success => {}
                Some(r) => {
                    self.fail(format!(
                        "server {name}: notifications/initialized answered with an error: {:?}",
                        r.error
                    ));
                    continue;
                }
                None => {
                    self.fail(format!(
                        "server {name}: notifications/initialized not acknowledged"
                    ));
                    continue;
                }
            }
            let list = json!({"method": "tools/list", "jsonrpc": "2.0", "id": 1});
            let r = self.request(Self::mcp_request(&name, list), timeout)?;
            match check_mcp_result(r.as_ref(), 1) {
                Ok(result) => {
                    let s = &mut self.servers[i];
                    s.tools = tool_names(Some(&result));
                    s.next_id = 2;
                    s.connected = true;
                }
                Err(e) => self.fail(format!("server {name}: tools/list: {e}")),
            }
        }
        Ok(())
    }

    /// The server and tool a scenario uses: `params.server`/`params.tool`,
    /// else the first server's first tool.
    pub fn target(&self) -> Option<(usize, String)> {
        let server = match self.params.get("server").and_then(Value::as_str) {
            Some(name) => self.servers.iter().position(|s| s.name == name)?,
            None => (!self.servers.is_empty()).then_some(0)?,
        };
        let tool = match self.params.get("tool").and_then(Value::as_str) {
            Some(t) => t.to_owned(),
            None => self.servers[server].tools.first()?.clone(),
        };
        Some((server, tool))
    }

    /// The `tools/call` message for `server` (taking the next JSON-RPC id).
    pub fn tool_call(
        &mut self,
        server: usize,
        tool: &str,
        arguments: Value,
        tool_use_id: &str,
    ) -> (Value, u64) {
        let s = &mut self.servers[server];
        let id = s.next_id;
        s.next_id += 1;
        let message = json!({"method": "tools/call", "params": {"name": tool, "arguments": arguments,
            "_meta": {"claudecode/toolUseId": tool_use_id, "progressToken": id}},
            "jsonrpc": "2.0", "id": id});
        (Self::mcp_request(&s.name, message), id)
    }

    /// A JSON-RPC request (not a tool call) for `server`, taking the next id.
    pub fn jsonrpc_request(&mut self, server: usize, method: &str) -> (Value, u64) {
        let s = &mut self.servers[server];
        let id = s.next_id;
        s.next_id += 1;
        let message = json!({"method": method, "jsonrpc": "2.0", "id": id});
        (Self::mcp_request(&s.name, message), id)
    }
}

/// The result of a JSON-RPC reply in an `mcp_message` answer, checked the
/// way the real CLI checks it: success, `"jsonrpc":"2.0"`, the request's id.
pub fn check_mcp_result(r: Option<&Response>, id: u64) -> Result<Value, String> {
    let r = r.ok_or("no answer")?;
    if !r.success {
        return Err(format!("control error: {:?}", r.error));
    }
    let reply = r
        .payload
        .get("mcp_response")
        .ok_or_else(|| format!("no mcp_response in {}", r.payload))?;
    if reply.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(format!("reply without \"jsonrpc\":\"2.0\": {reply}"));
    }
    if reply.get("id").and_then(Value::as_u64) != Some(id) {
        return Err(format!("reply id {:?} is not {id}", reply.get("id")));
    }
    if let Some(e) = reply.get("error") {
        return Err(format!("JSON-RPC error {e}"));
    }
    reply
        .get("result")
        .cloned()
        .ok_or_else(|| format!("reply without result: {reply}"))
}

/// What the CLI does with a handshake manifest (docs/protocol.md §5.13): `"parked"` (used
/// instead of the live handshake) or why not.
pub fn manifest_verdict(manifest: &Value) -> &'static str {
    match manifest
        .pointer("/initializeResult/protocolVersion")
        .and_then(Value::as_str)
    {
        Some("2025-11-25") if manifest.pointer("/toolsListResult/tools").is_some() => "parked",
        Some("2025-11-25") => "invalid_manifest",
        _ => "protocol_version_mismatch",
    }
}

/// The tool names of a `tools/list` result.
fn tool_names(result: Option<&Value>) -> Vec<String> {
    result
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The names of the in-process servers in a `--mcp-config` value (a JSON
/// object `{"mcpServers": {name: {"type": "sdk", "name": …}}}` or a path
/// to a file holding one), in order.
pub fn sdk_servers_in_mcp_config(value: &str) -> Vec<String> {
    let text = if value.trim_start().starts_with('{') {
        value.to_owned()
    } else {
        std::fs::read_to_string(value).unwrap_or_default()
    };
    let Ok(config) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    config
        .get("mcpServers")
        .and_then(Value::as_object)
        .map(|servers| {
            servers
                .iter()
                .filter(|(_, c)| c.get("type").and_then(Value::as_str) == Some("sdk"))
                .map(|(name, c)| {
                    c.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or(name)
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The CLI's tool-name normalization (docs/protocol.md §5.11).
pub fn normalize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
