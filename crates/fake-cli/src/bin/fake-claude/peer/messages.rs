//! The messages of a conversation, in the real CLI's shapes: `system/init`,
//! assistant text and tool uses, tool results, the turn's `result`.

use std::io;

use claude_code_agent_fake_cli::CLI_VERSION;
use serde_json::{Value, json};

use super::{Peer, normalize};

impl Peer {
    fn stamp(&mut self, mut v: Value) -> Value {
        v["session_id"] = json!(self.session_id);
        v["uuid"] = json!(self.uuid());
        v
    }

    /// `system/init`, at the start of every turn.
    pub fn emit_init(&mut self) -> io::Result<()> {
        let mut tools: Vec<String> = ["Task", "Bash", "Edit", "Read", "Write"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for s in &self.servers {
            for t in &s.tools {
                tools.push(format!("mcp__{}__{}", normalize(&s.name), normalize(t)));
            }
        }
        let servers: Vec<Value> = self
            .servers
            .iter()
            .map(|s| json!({"name": s.name, "status": if s.connected {"connected"} else {"failed"}, "source": "sdk"}))
            .collect();
        let v = json!({"type": "system", "subtype": "init",
            "cwd": std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
            "tools": tools, "mcp_servers": servers, "model": self.model,
            "permissionMode": "default", "slash_commands": ["compact", "context"],
            "terminal_slash_commands": [], "apiKeySource": "ANTHROPIC_API_KEY",
            "claude_code_version": CLI_VERSION, "output_style": "default",
            "agents": ["general-purpose"], "skills": [], "plugins": [],
            "capabilities": ["sdk_mcp_tools_list_changed"],
            "fast_mode_state": "off", "additional_directories": [], "analytics_disabled": true});
        let v = self.stamp(v);
        self.out.frame(&v)
    }

    fn assistant(&mut self, content: Value) -> Value {
        let id = format!("msg_{}", &self.uuid()[24..]);
        let v = json!({"type": "assistant", "message": {"id": id, "type": "message",
            "role": "assistant", "model": self.model, "content": content,
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 5}, "context_management": null},
            "parent_tool_use_id": null, "timestamp": "2026-01-01T00:00:00.000Z"});
        self.stamp(v)
    }

    /// An `assistant` message with one text block.
    pub fn emit_text(&mut self, text: &str) -> io::Result<()> {
        let v = self.assistant(json!([{"type": "text", "text": text}]));
        self.out.frame(&v)
    }

    /// An `assistant` message with one `tool_use` block for an MCP tool.
    pub fn emit_tool_use(
        &mut self,
        id: &str,
        server: &str,
        tool: &str,
        input: &Value,
    ) -> io::Result<()> {
        let name = format!("mcp__{}__{}", normalize(server), normalize(tool));
        let mut v =
            self.assistant(json!([{"type": "tool_use", "id": id, "name": name, "input": input}]));
        v["tool_use_meta"] = json!([{"id": id, "display_name": tool, "server_display_name": server, "tool_name": tool}]);
        self.out.frame(&v)
    }

    /// A `user` message carrying a tool result.
    pub fn emit_tool_result(&mut self, id: &str, content: Value, is_error: bool) -> io::Result<()> {
        let mut block = json!({"tool_use_id": id, "type": "tool_result", "content": content});
        if is_error {
            block["is_error"] = json!(true);
        }
        let v = json!({"type": "user", "message": {"role": "user", "content": [block]},
            "parent_tool_use_id": null, "timestamp": "2026-01-01T00:00:00.000Z",
            "tool_use_result": content});
        let v = self.stamp(v);
        self.out.frame(&v)
    }

    /// The `result` that ends a turn: `success` with `text`, or — when a
    /// check failed — `is_error: true` with the failures in `result` and `errors`.
    pub fn emit_result(&mut self, text: &str, num_turns: u64) -> io::Result<()> {
        let failed = !self.failures.is_empty();
        let result_text = if failed {
            format!("FAILED: {}", self.failures.join("; "))
        } else {
            text.to_owned()
        };
        let ms = self.started.elapsed().as_millis() as u64;
        let mut v = json!({"type": "result", "subtype": "success", "is_error": failed,
            "duration_ms": ms, "duration_api_ms": 1, "num_turns": num_turns,
            "result": result_text, "stop_reason": "end_turn", "total_cost_usd": 0.0,
            "usage": {"input_tokens": 20, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": 10, "service_tier": "standard"},
            "modelUsage": {}, "permission_denials": [],
            "terminal_reason": "completed", "fast_mode_state": "off"});
        if failed {
            v["errors"] = json!(self.failures);
        }
        let v = self.stamp(v);
        self.failures.clear();
        self.out.frame(&v)
    }
}
