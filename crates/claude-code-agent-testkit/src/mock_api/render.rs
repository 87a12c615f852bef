//! Turning a scripted reply into the Messages API's JSON and SSE shapes.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::turn::{ApiError, Block};

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A random-looking id like the API's: `prefix` + `01` + 22 base62 characters.
pub(crate) fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut out = String::with_capacity(prefix.len() + 24);
    out.push_str(prefix);
    out.push_str("01");
    let mut produced = 0;
    let mut round = 0u64;
    while produced < 22 {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_u64(round);
        let mut v = h.finish();
        for _ in 0..10 {
            if produced == 22 {
                break;
            }
            out.push(BASE62[(v % 62) as usize] as char);
            v /= 62;
            produced += 1;
        }
        round += 1;
    }
    out
}

/// Rough token estimate used for usage numbers and count_tokens: characters / 4.
pub(crate) fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4).max(1)
}

/// A reply with ids resolved, ready to be rendered either way.
pub(crate) struct Rendered {
    pub message: Value,
    pub events: Vec<(&'static str, Value)>,
}

/// The characters of a streamed delta, as the API's few tokens a delta.
const CHUNK: usize = 24;
/// The most deltas a block is streamed in: a longer text gets longer deltas.
/// A 10 MiB text is 256 deltas of 40 KiB, not 437,000 of 24 characters,
/// each an SSE event for the mock to write and the CLI to parse (10 of the
/// 14 seconds of CPU of the 10 MiB round trip in the SDK's tests).
const MAX_DELTAS: usize = 256;

/// `s` cut on character boundaries into the deltas of its block.
fn chunks(s: &str) -> Vec<&str> {
    let size = CHUNK.max(s.len().div_ceil(MAX_DELTAS));
    let mut out = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (i, _) in s.char_indices() {
        if count == size {
            out.push(&s[start..i]);
            start = i;
            count = 0;
        }
        count += 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Resolves ids and signatures and produces both the full message and its SSE events.
pub(crate) fn render_reply(
    blocks: &[Block],
    stop_reason: &str,
    model: &str,
    input_tokens: u64,
) -> Rendered {
    let id = new_id("msg_");
    let mut content = Vec::new();
    let mut events: Vec<(&'static str, Value)> = Vec::new();
    let mut output_chars = 0usize;

    events.push((
        "message_start",
        json!({
            "type": "message_start",
            "message": {
                "id": id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                    "service_tier": "standard"
                }
            }
        }),
    ));
    events.push(("ping", json!({"type": "ping"})));

    for (index, block) in blocks.iter().enumerate() {
        let delta = |delta: Value| {
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        let start = |block: Value| {
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": block}),
            )
        };
        match block {
            Block::Text(text) => {
                output_chars += text.len();
                events.push(start(json!({"type": "text", "text": ""})));
                for c in chunks(text) {
                    events.push(delta(json!({"type": "text_delta", "text": c})));
                }
                content.push(json!({"type": "text", "text": text}));
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                output_chars += thinking.len();
                let signature = signature.clone().unwrap_or_else(|| new_id("sig_"));
                events.push(start(
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                ));
                for c in chunks(thinking) {
                    events.push(delta(json!({"type": "thinking_delta", "thinking": c})));
                }
                events.push(delta(
                    json!({"type": "signature_delta", "signature": signature}),
                ));
                content.push(
                    json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                );
            }
            Block::ToolUse { id, name, input } => {
                let id = id.clone().unwrap_or_else(|| new_id("toolu_"));
                let input_json = serde_json::to_string(input).unwrap_or_else(|_| "{}".into());
                output_chars += input_json.len() + name.len();
                events.push(start(
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                ));
                events.push(delta(
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                for c in chunks(&input_json) {
                    events.push(delta(
                        json!({"type": "input_json_delta", "partial_json": c}),
                    ));
                }
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            Block::Raw(raw) => {
                output_chars += raw.to_string().len();
                events.push(start(raw.clone()));
                content.push(raw.clone());
            }
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }

    let output_tokens = estimate_tokens(output_chars);
    events.push((
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output_tokens}
        }),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));

    let message = json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard"
        }
    });
    Rendered { message, events }
}

/// Anthropic's error body.
pub(crate) fn error_body(error: &ApiError, request_id: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": error.error_type, "message": error.message},
        "request_id": request_id
    })
}

/// One SSE frame.
pub(crate) fn sse_frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_look_real_and_differ() {
        let a = new_id("msg_");
        let b = new_id("msg_");
        assert!(a.starts_with("msg_01") && a.len() == 28, "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn chunks_split_on_char_boundaries() {
        let s = "é".repeat(50);
        let parts = chunks(&s);
        assert_eq!(parts.concat(), s);
        assert!(parts.len() == 3);
        assert!(chunks("").is_empty());
        let big = "é".repeat(100_000);
        let parts = chunks(&big);
        assert_eq!(parts.concat(), big);
        assert!(parts.len() <= MAX_DELTAS, "{} deltas", parts.len());
    }

    #[test]
    fn render_tool_use_reply() {
        let r = render_reply(
            &[
                Block::text("hi"),
                Block::tool_use("Bash", json!({"command": "ls"})),
            ],
            "tool_use",
            "claude-test",
            10,
        );
        assert_eq!(r.message["content"][1]["name"], "Bash");
        assert_eq!(r.message["content"][1]["input"]["command"], "ls");
        let tool_id = r.message["content"][1]["id"].as_str().unwrap();
        assert!(tool_id.starts_with("toolu_01"));
        let names: Vec<&str> = r.events.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(names.last(), Some(&"message_stop"));
        let json: String = r
            .events
            .iter()
            .filter_map(|(_, e)| e["delta"]["partial_json"].as_str())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&json).unwrap(),
            json!({"command": "ls"})
        );
    }
}
