//! The scenarios (see the module documentation of [`super`]).

use std::io::{self, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::peer::{Peer, Response, check_mcp_result};
use super::{bench, param_ms, param_u64};

mod tool_calls;

use tool_calls::tool_calls;

/// Runs `scenario`; returns the exit code.
pub(super) fn run(
    scenario: &str,
    mut peer: Peer,
    peer_pid: i32,
    responder: bool,
) -> io::Result<i32> {
    if responder {
        let names: Vec<String> = peer
            .params
            .get("servers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        peer.servers = names
            .into_iter()
            .map(super::peer::SdkServer::named)
            .collect();
    } else if !peer.wait_initialize(param_ms(&peer.params, "init_timeout_ms", 60_000))? {
        return Ok(0);
    }
    peer.handshake()?;

    if scenario == "bench" {
        return bench_scenario(&mut peer, peer_pid, responder);
    }
    let mut turns = 0u64;
    while let Some(user) = peer.next_user(None)? {
        turns += 1;
        let done = match scenario {
            "chat" => chat(&mut peer, &user, turns),
            "tool_calls" => tool_calls(&mut peer, turns),
            "die_mid_tool_call" => die_mid_tool_call(&mut peer),
            "die_mid_stream" => die_mid_stream(&mut peer),
            "stdout_garbage" => stdout_garbage(&mut peer, turns),
            "huge_line" => huge_line(&mut peer, turns),
            "close_stdin" => close_stdin(&mut peer, turns),
            "stderr_flood" => stderr_flood(&mut peer, &user, turns),
            "unknown_messages" => unknown_messages(&mut peer, turns),
            "cancel_permission" => cancel_permission(&mut peer, turns),
            "cancel_tool" => cancel_tool(&mut peer, turns),
            "ping_during_slow_call" => ping_during_slow_call(&mut peer, turns),
            "callbacks" => callbacks(&mut peer, turns),
            "flood" => flood(&mut peer, turns),
            "echo_answers" => echo_answers(&mut peer, turns),
            other => {
                eprintln!("fake-claude: unknown scenario {other:?}");
                return Ok(2);
            }
        };
        if let Some(code) = done? {
            return Ok(code);
        }
    }
    Ok(0)
}

type Step = io::Result<Option<i32>>;

fn user_text(user: &Value) -> String {
    match user.pointer("/message/content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn chat(peer: &mut Peer, user: &Value, turn: u64) -> Step {
    // Not reading stdin for a while, as a busy CLI would not.
    std::thread::sleep(param_ms(&peer.params, "stall_ms", 0));
    peer.emit_init()?;
    let text = match peer.params.get("text").and_then(Value::as_str) {
        Some(t) => t.to_owned(),
        None => format!("You said: {}", user_text(user)),
    };
    peer.emit_text(&text)?;
    peer.emit_result(&text, turn)?;
    Ok(None)
}

fn bench_scenario(peer: &mut Peer, peer_pid: i32, responder: bool) -> io::Result<i32> {
    if !responder && peer.next_user(None)?.is_none() {
        return Ok(0);
    }
    let first_message_ns = super::now_ns();
    peer.emit_init()?;
    let tool_use = format!("toolu_{}", &peer.uuid()[24..]);
    if let Some((server, tool)) = peer.target() {
        let name = peer.servers[server].name.clone();
        peer.emit_tool_use(&tool_use, &name, &tool, &json!({"a": 1, "b": 2}))?;
    }
    let out = peer
        .params
        .get("report")
        .and_then(Value::as_str)
        .map(std::path::PathBuf::from);
    let report = bench::run(peer, peer_pid, first_message_ns, out.as_deref())?;
    let summary: Vec<String> = report
        .phases
        .iter()
        .map(|p| {
            format!(
                "{}: {:.0} calls/s, p50 {} µs",
                p.name, p.calls_per_s, p.p50_us
            )
        })
        .collect();
    let summary = summary.join("; ");
    peer.emit_tool_result(&tool_use, json!([{"type": "text", "text": summary}]), false)?;
    peer.failures.extend(report.failures.iter().cloned());
    peer.emit_result(&summary, 2)?;
    if responder {
        return Ok(if report.failures.is_empty() { 0 } else { 1 });
    }
    // Stay until the SDK closes stdin, as the real CLI does.
    while peer.next_user(None)?.is_some() {}
    Ok(0)
}

pub(super) fn first_hook_id(hooks: &Value, event: &str) -> Option<String> {
    hooks
        .get(event)?
        .as_array()?
        .iter()
        .find_map(|m| m.get("hookCallbackIds")?.as_array()?.first()?.as_str())
        .map(str::to_owned)
}

/// `Ok(Some(input))` for an allow (with its `updatedInput`), `Ok(None)` for
/// a deny; `Err` when the answer has the wrong shape.
pub(super) fn check_permission(r: &Response) -> Result<Option<Value>, String> {
    if !r.success {
        return Err(format!("control error {:?}", r.error));
    }
    match r.payload.get("behavior").and_then(Value::as_str) {
        Some("allow") => match r.payload.get("updatedInput") {
            Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
            other => Err(format!("allow without an updatedInput object: {other:?}")),
        },
        Some("deny") => match r.payload.get("message") {
            Some(Value::String(_)) => Ok(None),
            other => Err(format!("deny without a message: {other:?}")),
        },
        _ => Err(format!("no behavior in {}", r.payload)),
    }
}

fn die_mid_tool_call(peer: &mut Peer) -> Step {
    peer.emit_init()?;
    let (server, tool) = peer.target().ok_or_else(|| io::Error::other("no tool"))?;
    let tool_use = format!("toolu_{}", &peer.uuid()[24..]);
    let name = peer.servers[server].name.clone();
    let args = peer.params.get("args").cloned().unwrap_or(json!({}));
    peer.emit_tool_use(&tool_use, &name, &tool, &args)?;
    let (request, _) = peer.tool_call(server, &tool, args, &tool_use);
    peer.send_request(request)?;
    let delay = param_ms(&peer.params, "delay_ms", 200);
    peer.idle_until(Instant::now() + delay)?;
    kill_self()
}

fn die_mid_stream(peer: &mut Peer) -> Step {
    peer.emit_init()?;
    peer.emit_text("about to die")?;
    let mirror = param_u64(&peer.params, "mirror_bytes", 0);
    if mirror > 0 {
        // One transcript entry of that size, where `--session-mirror`
        // would write it: the SDK's mirror counts it against its limit.
        let config = std::env::var("CLAUDE_CONFIG_DIR").unwrap_or_default();
        let path = format!("{config}/projects/-fake/{}.jsonl", peer.session_id);
        let text = "x".repeat(usize::try_from(mirror).unwrap_or(usize::MAX));
        peer.out.frame(&json!({
            "type": "transcript_mirror",
            "filePath": path,
            "entries": [{"type": "user", "message": {"role": "user", "content": text}}],
        }))?;
    }
    peer.out
        .raw(br#"{"type":"assistant","message":{"id":"msg_cut","type":"message","content":[{"type":"text","text":"half a li"#)?;
    std::thread::sleep(param_ms(&peer.params, "wait_ms", 50));
    kill_self()
}

fn kill_self() -> ! {
    // SAFETY: signalling ourselves.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort()
}

fn stdout_garbage(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    peer.out.raw(b"this is not json at all\n")?;
    peer.out.raw(b"[SandboxDebug] sandbox initialised\n")?;
    peer.out
        .raw(b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te\n")?;
    peer.out
        .raw(b"{\"type\":\"assistant\",\"bad\":\"\xff\xfe\xfd\"}\n")?;
    peer.out.raw(b"\xc3\x28 invalid utf-8 \xa0\xa1\n")?;
    peer.out.raw(b"[1,2,3]\n")?;
    if peer.params.get("undecodable").and_then(Value::as_bool) == Some(true) {
        // JSON, but a number no f64 holds: serde cannot decode it.
        peer.out.raw(b"{\"type\":\"assistant\",\"n\":1e999}\n")?;
    }
    peer.out.raw(b"\n   \n\r\n")?;
    peer.emit_text("after the garbage")?;
    peer.emit_result("after the garbage", turn)?;
    Ok(None)
}

fn huge_line(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let bytes = param_u64(&peer.params, "bytes", 64 << 20) as usize;
    let mut line = Vec::with_capacity(bytes + 512);
    line.extend_from_slice(br#"{"type":"assistant","message":{"id":"msg_huge","type":"message","role":"assistant","model":"claude-fake-1","content":[{"type":"text","text":""#);
    line.resize(line.len() + bytes, b'x');
    let uuid = peer.uuid();
    writeln!(
        line,
        "\"}}],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}},\"parent_tool_use_id\":null,\"session_id\":\"{}\",\"uuid\":\"{uuid}\"}}",
        peer.session_id,
    )?;
    peer.out.raw(&line)?;
    drop(line);
    peer.emit_text("after the huge line")?;
    peer.emit_result("after the huge line", turn)?;
    Ok(None)
}

fn close_stdin(peer: &mut Peer, turn: u64) -> Step {
    peer.close_input();
    peer.emit_init()?;
    peer.emit_text("stdin is closed now")?;
    peer.emit_result("stdin is closed now", turn)?;
    std::thread::sleep(param_ms(&peer.params, "linger_ms", 1000));
    Ok(Some(0))
}

fn stderr_flood(peer: &mut Peer, user: &Value, turn: u64) -> Step {
    let mb = param_u64(&peer.params, "mb", 100);
    let mut line = vec![b'e'; 999];
    line.push(b'\n');
    let mut chunk = Vec::with_capacity(1 << 20);
    while chunk.len() + line.len() <= 1 << 20 {
        chunk.extend_from_slice(&line);
    }
    let total = mb * 1_000_000;
    let mut written = 0u64;
    let mut err = io::stderr().lock();
    while written < total {
        let n = chunk.len().min((total - written) as usize);
        err.write_all(&chunk[..n])?;
        written += n as u64;
    }
    err.flush()?;
    drop(err);
    chat(peer, user, turn)
}

fn unknown_messages(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let sid = peer.session_id.clone();
    peer.out
        .frame(&json!({"type": "brand_new_type", "session_id": sid, "payload": {"x": 1}}))?;
    peer.out.frame(&json!({"type": "system", "subtype": "brand_new_subtype", "session_id": sid, "detail": [1, 2]}))?;
    let uuid = peer.uuid();
    peer.out.frame(&json!({"type": "assistant", "session_id": sid, "parent_tool_use_id": null, "uuid": uuid,
        "message": {"id": "msg_u", "type": "message", "role": "assistant", "model": peer.model,
            "content": [{"type": "hologram", "data": "?"}, {"type": "text", "text": "known"}],
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}},
        "future_field": true}))?;
    // A stray answer to a request the SDK never made: to be ignored.
    peer.out.frame(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "never-asked", "response": {}}}))?;
    let r = peer.request(
        json!({"subtype": "brand_new_request", "x": 1}),
        Duration::from_secs(10),
    )?;
    match r {
        Some(r) if !r.success && r.error.as_deref().is_some_and(|e| !e.is_empty()) => {}
        other => peer.fail(format!(
            "an unknown control request must get a control error, got {other:?}"
        )),
    }
    peer.emit_text("after the unknown messages")?;
    peer.emit_result("after the unknown messages", turn)?;
    Ok(None)
}

fn cancel_permission(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let (server, tool) = peer.target().ok_or_else(|| io::Error::other("no tool"))?;
    let name = peer.servers[server].name.clone();
    let full = format!(
        "mcp__{}__{}",
        super::peer::normalize(&name),
        super::peer::normalize(&tool)
    );
    let tool_use = format!("toolu_{}", &peer.uuid()[24..]);
    peer.emit_tool_use(&tool_use, &name, &tool, &json!({"a": 1, "b": 2}))?;
    let id = peer.send_request(json!({"subtype": "can_use_tool", "tool_name": full,
        "mcp_server": {"name": name, "source": "sdk"}, "input": {"a": 1, "b": 2},
        "permission_suggestions": [], "tool_use_id": tool_use}))?;
    let delay = param_ms(&peer.params, "delay_ms", 300);
    peer.idle_until(Instant::now() + delay)?;
    if let Some(r) = peer.take_stashed(&id) {
        peer.fail(format!(
            "can_use_tool answered before it was withdrawn: {r:?}"
        ));
    }
    peer.out
        .frame(&json!({"type": "control_cancel_request", "request_id": id}))?;
    let quiet = param_ms(&peer.params, "quiet_ms", 700);
    peer.idle_until(Instant::now() + quiet)?;
    if let Some(r) = peer.take_stashed(&id) {
        peer.fail(format!("a withdrawn can_use_tool was answered: {r:?}"));
    }
    let uuid = peer.uuid();
    peer.out.frame(&json!({"type": "user", "session_id": peer.session_id, "uuid": uuid,
        "parent_tool_use_id": null,
        "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}]}}))?;
    peer.emit_result("permission request withdrawn", turn)?;
    Ok(None)
}

fn cancel_tool(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let (server, tool) = peer.target().ok_or_else(|| io::Error::other("no tool"))?;
    let name = peer.servers[server].name.clone();
    let tool_use = format!("toolu_{}", &peer.uuid()[24..]);
    let args = peer.params.get("args").cloned().unwrap_or(json!({}));
    peer.emit_tool_use(&tool_use, &name, &tool, &args)?;
    let (request, jsonrpc_id) = peer.tool_call(server, &tool, args, &tool_use);
    let call = peer.send_request(request)?;
    let delay = param_ms(&peer.params, "delay_ms", 300);
    peer.idle_until(Instant::now() + delay)?;
    if let Some(r) = peer.take_stashed(&call) {
        peer.fail(format!("the tool answered before it was cancelled: {r:?}"));
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": jsonrpc_id, "reason": "AbortError: remote-cancel"}});
    match peer.request(Peer::mcp_request(&name, note), Duration::from_secs(10))? {
        Some(r) if r.success => {}
        other => peer.fail(format!(
            "notifications/cancelled must be acknowledged with a success, got {other:?}"
        )),
    }
    // The SDK may still answer the call (an isError result); the CLI ignores it.
    let late = peer.await_response(&call, Duration::from_secs(5))?;
    let text = match &late {
        Some(r) => format!("late answer: {}", r.payload),
        None => "no late answer".to_owned(),
    };
    peer.emit_tool_result(&tool_use, json!("The tool call was cancelled."), true)?;
    peer.emit_result(&text, turn)?;
    Ok(None)
}

fn ping_during_slow_call(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let (server, tool) = peer.target().ok_or_else(|| io::Error::other("no tool"))?;
    let name = peer.servers[server].name.clone();
    let tool_use = format!("toolu_{}", &peer.uuid()[24..]);
    let args = peer.params.get("args").cloned().unwrap_or(json!({}));
    peer.emit_tool_use(&tool_use, &name, &tool, &args)?;
    let (request, call_id) = peer.tool_call(server, &tool, args, &tool_use);
    let call = peer.send_request(request)?;
    peer.idle_until(Instant::now() + param_ms(&peer.params, "delay_ms", 100))?;
    let max = param_ms(&peer.params, "max_ping_ms", 1000);
    let mut report = Vec::new();
    for method in ["ping", "tools/list"] {
        let (request, id) = peer.jsonrpc_request(server, method);
        let sent = Instant::now();
        let r = peer.request(request, max)?;
        let took = sent.elapsed();
        if let Err(e) = check_mcp_result(r.as_ref(), id) {
            peer.fail(format!("{method} during a slow call: {e} (after {took:?})"));
        }
        if peer.take_stashed(&call).is_some() {
            peer.fail(format!(
                "the slow call finished before {method} was answered"
            ));
        }
        report.push(format!("{method}_us={}", took.as_micros()));
    }
    let r = peer.await_response(&call, param_ms(&peer.params, "call_timeout_ms", 30_000))?;
    let content = match check_mcp_result(r.as_ref(), call_id) {
        Ok(result) => result.get("content").cloned().unwrap_or(json!([])),
        Err(e) => {
            peer.fail(format!("the slow call: {e}"));
            json!([])
        }
    };
    peer.emit_tool_result(&tool_use, content, false)?;
    let text = report.join(" ");
    peer.emit_result(&text, turn)?;
    Ok(None)
}

fn callbacks(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let expect_list = |key: &str| -> Vec<String> {
        peer.params
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let permission = expect_list("permission");
    let hooks = expect_list("hooks");
    let timeout = Duration::from_secs(10);
    for (round, expect) in permission.iter().enumerate() {
        let r = peer.request(
            json!({"subtype": "can_use_tool", "tool_name": "mcp__calc__add",
            "mcp_server": {"name": "calc", "source": "sdk"}, "display_name": "add",
            "input": {"a": 1, "b": 2, "round": round}, "permission_suggestions": [],
            "tool_use_id": format!("toolu_perm_{round}")}),
            timeout,
        )?;
        let outcome = match &r {
            None => Err("no answer".to_owned()),
            Some(r) if !r.success => {
                if r.error.as_deref().is_some_and(|e| !e.is_empty()) {
                    Ok("error")
                } else {
                    Err("a control error without text".to_owned())
                }
            }
            Some(r) => check_permission(r).map(|a| if a.is_some() { "allow" } else { "deny" }),
        };
        match outcome {
            Ok(got) if got == expect => {}
            Ok(got) => peer.fail(format!(
                "can_use_tool round {round}: expected {expect}, got {got}: {r:?}"
            )),
            Err(e) => peer.fail(format!("can_use_tool round {round}: {e}")),
        }
    }
    let hook_id = first_hook_id(&peer.hooks, "PreToolUse");
    if !hooks.is_empty() && hook_id.is_none() {
        peer.fail("no PreToolUse hook callback registered in initialize");
    }
    if let Some(hook_id) = hook_id {
        for (round, expect) in hooks.iter().enumerate() {
            let r = peer.request(
                json!({"subtype": "hook_callback", "callback_id": hook_id,
                "tool_use_id": format!("toolu_hook_{round}"),
                "input": {"session_id": peer.session_id, "transcript_path": "/tmp/fake.jsonl",
                    "cwd": "/tmp", "permission_mode": "default", "hook_event_name": "PreToolUse",
                    "tool_name": "mcp__calc__add", "tool_input": {"a": 1, "b": 2, "round": round},
                    "tool_use_id": format!("toolu_hook_{round}")}}),
                timeout,
            )?;
            let got = match &r {
                None => "no answer",
                Some(r) if !r.success && r.error.as_deref().is_some_and(|e| !e.is_empty()) => {
                    "error"
                }
                Some(r) if r.success && r.payload.is_object() => "ok",
                Some(_) => "malformed",
            };
            if got != expect {
                peer.fail(format!(
                    "hook_callback round {round}: expected {expect}, got {got}: {r:?}"
                ));
            }
        }
    }
    peer.emit_text("callbacks checked")?;
    peer.emit_result("callbacks checked", turn)?;
    Ok(None)
}

/// One `can_use_tool` (`tool_use_id` `toolu_echo`) unless `permission` is
/// false, then a `hook_callback` to the first callback registered for each
/// event of `hook_inputs` (an object: event name → input); the result's
/// text is the JSON array of the answers as they came (`{"can_use_tool":
/// payload}`, `{"hook": event, "answer": payload}`, or `{"error": text}`).
fn echo_answers(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let timeout = Duration::from_secs(10);
    let answer = |r: Option<Response>| match r {
        None => json!({"error": "no answer"}),
        Some(r) if !r.success => json!({"error": r.error}),
        Some(r) => r.payload,
    };
    let mut answers = Vec::new();
    if peer.params.get("permission") != Some(&Value::Bool(false)) {
        let r = peer.request(
            json!({"subtype": "can_use_tool", "tool_name": "mcp__calc__add",
            "mcp_server": {"name": "calc", "source": "sdk"}, "display_name": "add",
            "input": {"a": 1, "b": 2}, "permission_suggestions": [],
            "tool_use_id": "toolu_echo"}),
            timeout,
        )?;
        answers.push(json!({"can_use_tool": answer(r)}));
    }
    let inputs = peer
        .params
        .get("hook_inputs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (event, input) in inputs {
        let Some(hook_id) = first_hook_id(&peer.hooks, &event) else {
            answers.push(json!({"hook": event, "error": "no callback registered"}));
            continue;
        };
        let r = peer.request(
            json!({"subtype": "hook_callback", "callback_id": hook_id, "input": input}),
            timeout,
        )?;
        answers.push(json!({"hook": event, "answer": answer(r)}));
    }
    let text = Value::Array(answers).to_string();
    peer.emit_result(&text, turn)?;
    Ok(None)
}

/// `n` assistant texts of `bytes` bytes, then (when there is a tool) one
/// `tools/call` whose answer must come within `max_call_ms`, then
/// `hold_ms` of answering the SDK's requests; the result says how long the
/// call took.
fn flood(peer: &mut Peer, turn: u64) -> Step {
    peer.emit_init()?;
    let n = param_u64(&peer.params, "n", 100);
    let text = "x".repeat(param_u64(&peer.params, "bytes", 10_000) as usize);
    for _ in 0..n {
        peer.emit_text(&text)?;
    }
    let mut summary = format!("flooded {n}");
    if let Some((server, tool)) = peer.target() {
        let args = peer
            .params
            .get("args")
            .cloned()
            .unwrap_or(json!({"a": 1, "b": 2}));
        let (request, id) = peer.tool_call(server, &tool, args, "toolu_flood");
        let sent = Instant::now();
        let r = peer.request(request, param_ms(&peer.params, "max_call_ms", 5000))?;
        if let Err(e) = check_mcp_result(r.as_ref(), id) {
            peer.fail(format!("the call after the flood: {e}"));
        }
        summary.push_str(&format!(" call_ms={}", sent.elapsed().as_millis()));
    }
    peer.idle_until(Instant::now() + param_ms(&peer.params, "hold_ms", 0))?;
    peer.emit_result(&summary, turn)?;
    Ok(None)
}
