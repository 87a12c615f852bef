//! The benchmark's floor: the least an SDK must do per `tools/call`.
//!
//! Reads the fake CLI's control requests on stdin and answers each
//! `mcp_message` the way an SDK must — parse the line with `serde_json`
//! into a `Value`, build the JSON-RPC reply inside a `control_response`,
//! serialize it, write it and flush — with no runtime, no tasks, no schema
//! validation: one thread, one loop. The tool is the benchmark's `add`:
//! `{"a", "b", "pad"?, "reply_bytes"?}` → the text `sum=<a+b>` followed by
//! `reply_bytes` bytes of `x`.
//!
//! Spawned by `fake-claude` in responder mode (`FAKE_CLAUDE_RESPONDER`).

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::os::fd::FromRawFd;

use serde_json::{Value, json};

fn main() {
    if let Err(e) = run()
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("echo-responder: {e}");
        std::process::exit(1);
    }
}

fn run() -> io::Result<()> {
    // Raw fds: std's `Stdout` is line-buffered, which would cost big frames extra copies.
    // SAFETY: fds 0 and 1 are open for the whole process and used only here.
    let (stdin, stdout) = unsafe { (File::from_raw_fd(0), File::from_raw_fd(1)) };
    let mut input = BufReader::with_capacity(1 << 20, stdin);
    let mut output = BufWriter::with_capacity(1 << 20, stdout);
    let mut line = Vec::with_capacity(1 << 20);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let Ok(frame) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if frame.get("type").and_then(Value::as_str) != Some("control_request") {
            continue;
        }
        let request_id = frame.get("request_id").cloned().unwrap_or(Value::Null);
        let request = &frame["request"];
        let response = if request.get("subtype").and_then(Value::as_str) == Some("mcp_message") {
            let server = request
                .get("server_name")
                .and_then(Value::as_str)
                .unwrap_or("");
            json!({"subtype": "success", "request_id": request_id,
                "response": {"mcp_response": mcp_reply(server, &request["message"])}})
        } else {
            json!({"subtype": "error", "request_id": request_id,
                "error": "the echo responder only answers mcp_message"})
        };
        serde_json::to_writer(
            &mut output,
            &json!({"type": "control_response", "response": response}),
        )?;
        output.write_all(b"\n")?;
        output.flush()?;
        if line.capacity() > 16 << 20 {
            line = Vec::with_capacity(1 << 20);
        }
    }
}

fn mcp_reply(server: &str, message: &Value) -> Value {
    let Some(id) = message.get("id").cloned() else {
        // A notification: acknowledged with an empty result.
        return json!({"jsonrpc": "2.0", "result": {}});
    };
    let result = match message.get("method").and_then(Value::as_str) {
        Some("initialize") => json!({"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": server, "version": "1.0.0"}}),
        Some("tools/list") => json!({"tools": [{"name": "add", "description": "Add two numbers",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"},
                "pad": {"type": "string"}, "reply_bytes": {"type": "integer", "minimum": 0}},
                "required": ["a", "b"]}}]}),
        Some("tools/call") => {
            let args = &message["params"]["arguments"];
            let a = args.get("a").and_then(Value::as_f64).unwrap_or(0.0);
            let b = args.get("b").and_then(Value::as_f64).unwrap_or(0.0);
            let reply_bytes = args.get("reply_bytes").and_then(Value::as_u64).unwrap_or(0) as usize;
            // The same construction as the SDK subject's tool (crates/devtools/src/bin/bench-sdk.rs).
            let mut text = format!("sum={}", a + b);
            text.push_str(&"x".repeat(reply_bytes));
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        Some("ping") => json!({}),
        _ => {
            return json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "Method not found"}});
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}
