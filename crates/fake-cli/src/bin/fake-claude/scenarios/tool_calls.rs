//! The `tool_calls` scenario: `n` calls of one tool, `in_flight` at once,
//! each optionally wrapped in hooks and preceded by a permission request,
//! every answer checked.

use std::collections::HashMap;
use std::io;
use std::time::Instant;

use serde_json::{Value, json};

use super::{Step, check_permission, first_hook_id};
use crate::peer::{Peer, Pumped, Response, check_mcp_result, normalize};
use crate::{param_ms, param_u64};

/// What one tool call of `tool_calls` is waiting for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    PreHook,
    Permission,
    Call,
    PostHook,
}

struct Chain {
    call: u64,
    stage: Stage,
    tool_use_id: String,
    input: Value,
    jsonrpc_id: u64,
    sent_at: Instant,
}

pub(super) fn tool_calls(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let Some((server, tool)) = peer.target() else {
        peer.fail("no in-process tool to call");
        peer.emit_result("", turn)?;
        return Ok(None);
    };
    let p = peer.params.clone();
    let n = param_u64(&p, "n", 1);
    let window = param_u64(&p, "in_flight", 1).max(1);
    let with_hooks = p.get("hooks").and_then(Value::as_bool).unwrap_or(false);
    let with_permission = p
        .get("permission")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let transcript = p.get("transcript").and_then(Value::as_bool).unwrap_or(true);
    let base_args = p
        .get("args")
        .cloned()
        .unwrap_or_else(|| json!({"a": 1, "b": 2}));
    let timeout = param_ms(&p, "timeout_ms", 60_000);
    let server_name = peer.servers[server].name.clone();
    let full_name = format!("mcp__{}__{}", normalize(&server_name), normalize(&tool));
    let (pre, post) = if with_hooks {
        let pre = first_hook_id(&peer.hooks, "PreToolUse");
        let post = first_hook_id(&peer.hooks, "PostToolUse");
        if pre.is_none() || post.is_none() {
            peer.fail("hooks: true but no PreToolUse/PostToolUse callback in initialize");
        }
        (pre, post)
    } else {
        (None, None)
    };

    let mut active: HashMap<String, Chain> = HashMap::new();
    let mut next_call = 0u64;
    let mut done = 0u64;
    let mut latencies: Vec<u64> = Vec::new();
    let mut results: Vec<(String, Value, bool)> = Vec::new();
    let mut counts: HashMap<&'static str, u64> = HashMap::new();
    let deadline = Instant::now() + timeout;

    let start_stage = |chain: &Chain, stage: Stage, peer: &mut Peer| -> io::Result<(Value, u64)> {
        let hook_input = |event: &str, extra: Value| {
            let mut input = json!({"session_id": peer.session_id, "transcript_path": "/tmp/fake.jsonl",
                "cwd": "/tmp", "permission_mode": "default", "hook_event_name": event,
                "tool_name": full_name, "tool_input": chain.input, "tool_use_id": chain.tool_use_id});
            if let (Some(o), Value::Object(e)) = (input.as_object_mut(), extra) {
                o.extend(e);
            }
            input
        };
        Ok(match stage {
            Stage::PreHook => (
                json!({"subtype": "hook_callback", "callback_id": pre, "tool_use_id": chain.tool_use_id,
                    "input": hook_input("PreToolUse", json!({}))}),
                0,
            ),
            Stage::PostHook => (
                json!({"subtype": "hook_callback", "callback_id": post, "tool_use_id": chain.tool_use_id,
                    "input": hook_input("PostToolUse", json!({"tool_response": [{"type": "text", "text": "ok"}], "duration_ms": 1}))}),
                0,
            ),
            Stage::Permission => (
                json!({"subtype": "can_use_tool", "tool_name": full_name,
                    "mcp_server": {"name": server_name, "source": "sdk"}, "display_name": tool,
                    "input": chain.input,
                    "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": full_name}], "behavior": "allow", "destination": "localSettings"}],
                    "tool_use_id": chain.tool_use_id}),
                0,
            ),
            Stage::Call => peer.tool_call(server, &tool, chain.input.clone(), &chain.tool_use_id),
        })
    };
    let first_stage = if with_hooks {
        Stage::PreHook
    } else if with_permission {
        Stage::Permission
    } else {
        Stage::Call
    };
    let after = |s: Stage| match s {
        Stage::PreHook if with_permission => Some(Stage::Permission),
        Stage::PreHook | Stage::Permission => Some(Stage::Call),
        Stage::Call if with_hooks => Some(Stage::PostHook),
        Stage::Call | Stage::PostHook => None,
    };

    while done < n {
        while next_call < n && (active.len() as u64) < window {
            let mut input = base_args.clone();
            if let Some(o) = input.as_object_mut() {
                o.entry("call").or_insert(json!(next_call));
            }
            let mut chain = Chain {
                call: next_call,
                stage: first_stage,
                tool_use_id: format!("toolu_{}", &peer.uuid()[24..]),
                input,
                jsonrpc_id: 0,
                sent_at: Instant::now(),
            };
            if transcript {
                peer.emit_tool_use(&chain.tool_use_id, &server_name, &tool, &chain.input)?;
            }
            let (request, id) = start_stage(&chain, first_stage, peer)?;
            chain.jsonrpc_id = id;
            chain.sent_at = Instant::now();
            let rid = peer.send_request(request)?;
            active.insert(rid, chain);
            next_call += 1;
        }
        let mut got: Vec<Response> = Vec::new();
        let pumped = peer.pump(Some(deadline), &mut |r| got.push(r.to_owned()))?;
        for r in got {
            let Some(mut chain) = active.remove(&r.request_id) else {
                continue;
            };
            let mut finished = false;
            match chain.stage {
                Stage::PreHook | Stage::PostHook => {
                    *counts.entry("hooks").or_default() += 1;
                    if !r.success || !r.payload.is_object() {
                        peer.fail(format!(
                            "call {}: hook answer {:?} {:?}",
                            chain.call, r.error, r.payload
                        ));
                    }
                }
                Stage::Permission => {
                    *counts.entry("permissions").or_default() += 1;
                    match check_permission(&r) {
                        Ok(Some(updated)) => chain.input = updated,
                        Ok(None) => {
                            *counts.entry("denied").or_default() += 1;
                            results.push((
                                chain.tool_use_id.clone(),
                                json!("Permission denied"),
                                true,
                            ));
                            finished = true;
                        }
                        Err(e) => {
                            peer.fail(format!("call {}: can_use_tool answer: {e}", chain.call));
                            finished = true;
                        }
                    }
                }
                Stage::Call => {
                    *counts.entry("calls").or_default() += 1;
                    latencies.push(r.at.duration_since(chain.sent_at).as_nanos() as u64);
                    match check_mcp_result(Some(&r), chain.jsonrpc_id) {
                        Ok(result) => {
                            let is_error =
                                result.get("isError").and_then(Value::as_bool) == Some(true);
                            if is_error {
                                *counts.entry("tool_errors").or_default() += 1;
                            }
                            let content = result.get("content").cloned().unwrap_or(json!([]));
                            results.push((chain.tool_use_id.clone(), content, is_error));
                        }
                        Err(e) => {
                            peer.fail(format!("call {}: tools/call answer: {e}", chain.call));
                            finished = true;
                        }
                    }
                }
            }
            if !finished {
                match after(chain.stage) {
                    Some(next) => {
                        chain.stage = next;
                        let (request, id) = start_stage(&chain, next, peer)?;
                        if next == Stage::Call {
                            chain.jsonrpc_id = id;
                        }
                        chain.sent_at = Instant::now();
                        let rid = peer.send_request(request)?;
                        active.insert(rid, chain);
                        continue;
                    }
                    None => finished = true,
                }
            }
            if finished {
                done += 1;
            }
        }
        match pumped {
            Pumped::Line => {}
            Pumped::Eof => return Ok(Some(0)),
            Pumped::Timeout => {
                peer.fail(format!(
                    "timed out after {timeout:?}: {done} of {n} calls done, {} waiting",
                    active.len()
                ));
                break;
            }
        }
    }
    if transcript {
        for (id, content, is_error) in &results {
            peer.emit_tool_result(id, content.clone(), *is_error)?;
        }
    }
    if let Some(path) = p.get("report").and_then(Value::as_str) {
        let mut ns = latencies.clone();
        let stats = claude_code_agent_fake_cli::report::Stats::from_ns(&mut ns);
        std::fs::write(
            path,
            serde_json::to_vec_pretty(&json!({"latencies_ns": latencies, "p50_us": stats.p50_us,
                "p99_us": stats.p99_us, "max_us": stats.max_us}))?,
        )?;
    }
    let c = |k: &str| counts.get(k).copied().unwrap_or(0);
    let summary = format!(
        "calls={} tool_errors={} hooks={} permissions={} denied={}",
        c("calls"),
        c("tool_errors"),
        c("hooks"),
        c("permissions"),
        c("denied")
    );
    peer.emit_text(&summary)?;
    peer.emit_result(&summary, 2)?;
    Ok(None)
}
