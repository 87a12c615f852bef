//! Open enums and losslessness beyond the captures: unknown types, subtypes
//! and blocks, odd values in known fields, and random message-like JSON.

use claude_code_agent::__private::wire::{
    CliRequest, ControlResponse, Incoming, SdkControlRequest,
};
use claude_code_agent::message::{
    ContentBlock, Message, ResultMessage, ResultSubtype, SystemMessage, UserInput, UserMessage,
};
use claude_code_agent::protocol::{
    HookEvent, HookInput, HookOutput, McpServerConfig, McpStatusResponse, PermissionMode,
    PermissionResult, SdkRequest,
};

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn round_trips(v: &Value) {
    assert_eq!(&Message::from_value(v.clone()).to_value(), v);
    assert_eq!(&Incoming::from_value(v.clone()).to_value(), v);
}

#[test]
fn unknown_type_subtype_and_block_become_unknown() {
    let v = json!({"type": "totally_new", "x": 1});
    assert_eq!(Message::from_value(v.clone()), Message::Unknown(v.clone()));
    assert_eq!(
        Message::from_value(v.clone()).message_type(),
        Some("totally_new")
    );
    round_trips(&v);

    let v = json!({"type": "system", "subtype": "brand_new", "session_id": "s", "uuid": "u", "data": [1]});
    let m = Message::from_value(v.clone());
    assert!(matches!(&m, Message::System(SystemMessage::Unknown(raw)) if raw == &v));
    assert_eq!(m.session_id(), Some("s"));
    assert_eq!(m.uuid(), Some("u"));
    round_trips(&v);

    let v = json!({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "hi"},
        {"type": "future_block", "payload": {"a": 1}},
        {"type": "text"},
        "not even an object",
        {"type": "code_execution_tool_result", "tool_use_id": "srv_1", "content": {"stdout": "ok"}}
    ]}, "session_id": "s"});
    let Message::Assistant(a) = Message::from_value(v.clone()) else {
        panic!()
    };
    let blocks = a.content();
    assert_eq!(blocks[0].as_text(), Some("hi"));
    assert!(matches!(&blocks[1], ContentBlock::Unknown(b) if b["payload"]["a"] == 1));
    assert!(
        matches!(&blocks[2], ContentBlock::Unknown(_)),
        "text without `text` is kept raw"
    );
    assert!(matches!(
        &blocks[3],
        ContentBlock::Unknown(Value::String(_))
    ));
    assert!(
        matches!(&blocks[4], ContentBlock::ServerToolResult(r) if r.kind == "code_execution_tool_result")
    );
    assert_eq!(a.text(), "hi");
    round_trips(&v);

    let v = json!({"type": "control_request", "request_id": "r1", "request": {"subtype": "elicitation", "x": 1}});
    let Incoming::ControlRequest(r) = Incoming::from_value(v.clone()) else {
        panic!()
    };
    assert!(matches!(r.request, CliRequest::Unknown(_)));
    assert_eq!(r.request.subtype(), Some("elicitation"));
    round_trips(&v);

    let v = json!({"subtype": "Whatever", "hook_event_name": "FutureEvent", "session_id": "s"});
    let input = HookInput::from_value(v.clone());
    assert!(matches!(input, HookInput::Unknown(_)));
    assert_eq!(input.event(), HookEvent::Other("FutureEvent".into()));
    assert_eq!(input.session_id(), Some("s"));

    assert_eq!(
        PermissionMode::from("turbo"),
        PermissionMode::Other("turbo".into())
    );
    assert_eq!(
        serde_json::to_value(PermissionMode::Other("turbo".into())).unwrap(),
        json!("turbo")
    );
    assert_eq!(
        serde_json::to_value(PermissionMode::AcceptEdits).unwrap(),
        json!("acceptEdits")
    );
    let status: McpStatusResponse =
        serde_json::from_value(json!({"mcpServers": [{"name": "x", "status": "sleeping"}]}))
            .unwrap();
    assert_eq!(status.mcp_servers[0].status.as_str(), "sleeping");
    let subtype: ResultSubtype = serde_json::from_value(json!("error_new_limit")).unwrap();
    assert_eq!(subtype, ResultSubtype::Other("error_new_limit".into()));
}

#[test]
fn missing_required_fields_and_odd_values_keep_everything() {
    // `result` without `is_error`: not a typed ResultMessage, but kept.
    let v = json!({"type": "result", "subtype": "success", "result": "x"});
    assert!(matches!(
        Message::from_value(v.clone()),
        Message::Unknown(_)
    ));
    round_trips(&v);
    // Wrong-typed and null optional fields stay raw; typed fields are None.
    let v = json!({"type": "result", "subtype": "success", "is_error": false, "num_turns": "three",
                   "total_cost_usd": null, "result": null, "usage": 7, "modelUsage": {"m": 1},
                   "duration_ms": 1.5, "errors": ["a", 2]});
    let Message::Result(r) = Message::from_value(v.clone()) else {
        panic!()
    };
    assert_eq!(
        (r.num_turns, r.total_cost_usd, r.result.as_deref()),
        (None, None, None)
    );
    assert!(
        r.usage.is_none()
            && r.model_usage.is_none()
            && r.duration_ms.is_none()
            && r.errors.is_none()
    );
    assert_eq!(r.extra["num_turns"], json!("three"));
    round_trips(&v);
    // Numbers: JavaScript-style integers come back as integers; huge ones stay raw.
    let v = json!({"type": "result", "subtype": "success", "is_error": false, "total_cost_usd": 0});
    let Message::Result(r) = Message::from_value(v.clone()) else {
        panic!()
    };
    assert_eq!(r.total_cost_usd, Some(0.0));
    round_trips(&v);
    let v = json!({"type": "result", "subtype": "success", "is_error": false, "total_cost_usd": 9007199254740993u64});
    let Message::Result(r) = Message::from_value(v.clone()) else {
        panic!()
    };
    assert_eq!(r.total_cost_usd, None);
    round_trips(&v);
    // Malformed control envelopes are kept as unknown messages.
    for v in [
        json!({"type": "control_request", "request": {"subtype": "can_use_tool"}}),
        json!({"type": "control_response"}),
        json!({"type": "control_response", "response": {"subtype": "weird", "request_id": "1"}}),
        json!({"type": "control_cancel_request"}),
    ] {
        round_trips(&v);
    }
    let odd = Incoming::from_value(
        json!({"type": "control_response", "response": {"subtype": "weird", "request_id": "1"}}),
    );
    let Incoming::ControlResponse(r) = odd else {
        panic!("{odd:?}")
    };
    assert_eq!(r.request_id(), Some("1"));
    assert!(r.into_result().is_err());
}

#[test]
fn control_response_payloads() {
    // Missing payload is `{}`.
    let r = ControlResponse::from_value(json!({"type": "control_response",
        "response": {"subtype": "success", "request_id": "req_2"}}))
    .unwrap();
    assert_eq!(r.request_id(), Some("req_2"));
    assert_eq!(r.clone().into_result().unwrap(), json!({}));
    assert_eq!(
        r.to_value()["response"].get("response"),
        None,
        "absence is preserved"
    );
    let e = ControlResponse::from_value(json!({"type": "control_response", "response": {"subtype": "error",
        "request_id": "req_5", "error": "Cannot set permission mode", "error_code": "invalid_mode"}})).unwrap();
    let err = e.into_result().unwrap_err();
    assert_eq!(err.error_code.as_deref(), Some("invalid_mode"));
    assert_eq!(err.request_id, "req_5");
}

#[test]
fn builders_serialize_as_the_cli_expects() {
    assert_eq!(
        UserInput::text("hi").to_value(),
        json!({"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": null, "session_id": ""})
    );
    assert_eq!(
        PermissionResult::allow().to_value(),
        json!({"behavior": "allow"})
    );
    assert_eq!(
        serde_json::from_value::<PermissionResult>(
            json!({"behavior": "deny", "message": "m", "interrupt": true})
        )
        .unwrap(),
        PermissionResult::deny_and_interrupt("m")
    );
    assert!(serde_json::from_value::<PermissionResult>(json!({"behavior": "maybe"})).is_err());
    assert_eq!(HookOutput::default().to_value(), json!({}));
    assert_eq!(
        HookOutput::stop("enough")
            .with_system_message("bye")
            .suppress_output()
            .to_value(),
        json!({"continue": false, "stopReason": "enough", "systemMessage": "bye", "suppressOutput": true})
    );
    assert_eq!(
        HookOutput::allow_tool()
            .with_updated_input(json!({"a": 1}))
            .to_value(),
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"a": 1}}})
    );
    assert_eq!(
        HookOutput::ask_tool("check").to_value()["hookSpecificOutput"]["permissionDecision"],
        json!("ask")
    );
    assert_eq!(
        SdkControlRequest::new("r", SdkRequest::set_model(None)).to_value(),
        json!({"type": "control_request", "request_id": "r", "request": {"subtype": "set_model", "model": null}})
    );
    assert_eq!(
        McpServerConfig::stdio("node", ["server.js"])
            .env("K", "V")
            .to_value(),
        json!({"type": "stdio", "command": "node", "args": ["server.js"], "env": {"K": "V"}})
    );
    assert_eq!(
        ContentBlock::tool_result("t1", "boom", true).to_value(),
        json!({"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": true})
    );
    // Constructed messages decode back to themselves.
    let user = UserInput::blocks(vec![
        ContentBlock::text("a"),
        ContentBlock::image_url("https://x/y.png"),
    ])
    .uuid("u1");
    assert_eq!(UserInput::from_value(user.to_value()).unwrap(), user);
    let echoed = UserMessage::from_value(user.to_value()).unwrap();
    assert_eq!(echoed.text(), "a");
    assert_eq!(echoed.uuid.as_deref(), Some("u1"));
    let r = ResultMessage::from_value(
        json!({"type": "result", "subtype": "error_max_budget_usd", "is_error": true}),
    )
    .unwrap();
    assert_eq!(r.subtype, ResultSubtype::ErrorMaxBudgetUsd);
    assert!(r.is_error());
}

// ---------------------------------------------------------------- property test

/// Keys and strings our types look at, so random JSON often hits typed paths.
const KEYS: &[&str] = &[
    "type",
    "subtype",
    "message",
    "content",
    "text",
    "thinking",
    "signature",
    "id",
    "name",
    "input",
    "tool_use_id",
    "is_error",
    "session_id",
    "uuid",
    "parent_tool_use_id",
    "result",
    "usage",
    "input_tokens",
    "modelUsage",
    "costUSD",
    "total_cost_usd",
    "num_turns",
    "errors",
    "permission_denials",
    "tool_name",
    "event",
    "delta",
    "index",
    "content_block",
    "request_id",
    "request",
    "response",
    "error",
    "callback_id",
    "server_name",
    "mcp_servers",
    "status",
    "source",
    "media_type",
    "data",
    "permissionMode",
    "elapsed_time_seconds",
    "state",
    "tools",
    "x",
    "permission_suggestions",
    "rules",
    "toolName",
    "behavior",
    "mcp_server",
    "hooks",
    "hookCallbackIds",
    "matcher",
];
const STRINGS: &[&str] = &[
    "system",
    "init",
    "status",
    "assistant",
    "user",
    "result",
    "success",
    "stream_event",
    "tool_progress",
    "command_lifecycle",
    "keep_alive",
    "rate_limit_event",
    "control_request",
    "control_response",
    "control_cancel_request",
    "can_use_tool",
    "hook_callback",
    "mcp_message",
    "error",
    "text",
    "thinking",
    "tool_use",
    "tool_result",
    "image",
    "document",
    "server_tool_use",
    "web_search_tool_result",
    "content_block_delta",
    "text_delta",
    "message_start",
    "api_retry",
    "task_started",
    "hook_started",
    "default",
    "acceptEdits",
    "addRules",
    "allow",
    "queued",
    "connected",
    "base64",
    "PreToolUse",
    "Stop",
    "stdio",
    "sdk",
    "http",
    "initialize",
    "set_model",
    "mcp_status",
    "",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1000i32..1000).prop_map(|n| Value::from(n as f64 + 0.25)),
        prop::sample::select(STRINGS).prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// An object with a known top-level `type` (and often `subtype`).
///
/// (`SdkRequest` is left out: requests the SDK writes always carry keys like
/// `"hooks": null` and `"model": null`, so decoding one without them adds them.)
fn message_like() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(STRINGS),
        prop::option::of(prop::sample::select(STRINGS)),
        prop::collection::vec((prop::sample::select(KEYS), json_value()), 0..8),
    )
        .prop_map(|(t, sub, fields)| {
            let mut map: Map<String, Value> =
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            map.insert("type".into(), t.into());
            if let Some(s) = sub {
                map.insert("subtype".into(), s.into());
            }
            Value::Object(map)
        })
}

/// Real CLI lines (small ones), as seeds for mutation.
fn seeds() -> &'static [Value] {
    static SEEDS: OnceLock<Vec<Value>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seen = std::collections::HashSet::new();
        crate::support::captures::all_cli_lines()
            .into_iter()
            .map(|l| l.msg)
            .filter(|m| m.to_string().len() < 20_000)
            .filter(|m| {
                let t = m["type"].as_str().unwrap_or("").to_owned();
                let sub = m
                    .get("subtype")
                    .or_else(|| m.get("request").and_then(|r| r.get("subtype")));
                let key = format!(
                    "{t}/{}/{}",
                    sub.map(Value::to_string).unwrap_or_default(),
                    m.to_string().len() / 500
                );
                seen.insert(key)
            })
            .collect()
    })
}

/// One edit somewhere inside a value.
#[derive(Debug, Clone)]
struct Edit {
    path: Vec<usize>,
    key: &'static str,
    value: Value,
    op: u8,
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        prop::collection::vec(any::<usize>(), 0..6),
        prop::sample::select(KEYS),
        json_value(),
        0u8..4,
    )
        .prop_map(|(path, key, value, op)| Edit {
            path,
            key,
            value,
            op,
        })
}

fn apply(target: &mut Value, e: &Edit) {
    let mut cur = target;
    for &choice in &e.path {
        let next_is_container = match &*cur {
            Value::Object(m) if !m.is_empty() => m
                .values()
                .nth(choice % m.len())
                .is_some_and(|v| v.is_object() || v.is_array()),
            Value::Array(a) if !a.is_empty() => {
                a[choice % a.len()].is_object() || a[choice % a.len()].is_array()
            }
            _ => false,
        };
        if !next_is_container {
            break;
        }
        cur = match cur {
            Value::Object(m) => {
                let n = m.len();
                m.values_mut().nth(choice % n).unwrap()
            }
            Value::Array(a) => {
                let n = a.len();
                &mut a[choice % n]
            }
            _ => unreachable!(),
        };
    }
    let pick = e.path.last().copied().unwrap_or(0);
    match cur {
        Value::Object(m) => {
            let existing = (!m.is_empty()).then(|| m.keys().nth(pick % m.len()).unwrap().clone());
            match (e.op, existing) {
                (1, Some(k)) => {
                    m.insert(k, Value::Null);
                }
                (2, Some(k)) => {
                    m.remove(&k);
                }
                (3, Some(k)) => {
                    m.insert(k, e.value.clone());
                }
                _ => {
                    m.insert(e.key.to_owned(), e.value.clone());
                }
            }
        }
        Value::Array(a) => a.push(e.value.clone()),
        other => *other = e.value.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn mutated_capture_lines_round_trip(seed in any::<usize>(), edits in prop::collection::vec(edit(), 1..4)) {
        let seeds = seeds();
        let mut v = seeds[seed % seeds.len()].clone();
        for e in &edits {
            apply(&mut v, e);
        }
        prop_assert_eq!(Incoming::from_value(v.clone()).to_value(), v.clone());
        prop_assert_eq!(Message::from_value(v.clone()).to_value(), v.clone());
        if let Some(request) = v.get("request") {
            prop_assert_eq!(&CliRequest::from_value(request.clone()).to_value(), request);
            if let Some(input) = request.get("input") {
                prop_assert_eq!(&HookInput::from_value(input.clone()).to_value(), input);
            }
        }
    }

    #[test]
    fn random_messages_round_trip(v in message_like()) {
        prop_assert_eq!(Message::from_value(v.clone()).to_value(), v.clone());
        prop_assert_eq!(Incoming::from_value(v.clone()).to_value(), v.clone());
        prop_assert_eq!(CliRequest::from_value(v.clone()).to_value(), v.clone());
        prop_assert_eq!(HookInput::from_value(v.clone()).to_value(), v.clone());
        prop_assert_eq!(ContentBlock::from_value(v.clone()).to_value(), v.clone());
        prop_assert_eq!(McpServerConfig::from_value(v.clone()).to_value(), v);
    }

    #[test]
    fn random_values_round_trip(v in json_value()) {
        prop_assert_eq!(Message::from_value(v.clone()).to_value(), v.clone());
        prop_assert_eq!(Incoming::from_value(v.clone()).to_value(), v);
    }
}
