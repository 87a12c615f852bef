//! Whatever JSON arrives, `handle` never panics (not even when a resource,
//! prompt or completion handler does), never replies to a notification or
//! response, and answers every request — and every invalid message — exactly
//! once with its own id (`null` when it has no usable one).

use std::time::Duration;

use claude_code_agent_mcp::server::{
    CompletionRequest, Prompt, PromptRequest, Resource, ResourceRequest,
};
use claude_code_agent_mcp::{Json, RawResult, RequestContext, Server, Session, Tool};
use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Person {
    name: String,
    age: Option<u8>,
    tags: Vec<String>,
}

fn server() -> Server {
    Server::builder("fuzz", "1")
        .tool_timeout(Duration::from_secs(5))
        .tool(Tool::new("add", "", |x: Add| async move { x.a + x.b }))
        .tool(Tool::new("person", "", |p: Person| async move { Json(p) }).output_schema::<Person>())
        .tool(
            Tool::new("raw", "", |v: Value| async move { RawResult(v) })
                .input_schema(json!({"type":"object"})),
        )
        .tool(Tool::new("echo", "", |v: Value| async move { Json(v) }).input_schema(json!({})))
        .resource(Resource::new(
            "res://boom",
            "boom",
            |_: ResourceRequest| async {
                if true {
                    panic!("deliberate resource panic");
                }
                "never"
            },
        ))
        .resource(Resource::new(
            "res://ok",
            "ok",
            |_: ResourceRequest| async { "fine" },
        ))
        .prompt(Prompt::new("boom", |_: PromptRequest| async {
            if true {
                panic!("deliberate prompt panic");
            }
            String::new()
        }))
        .completion(|req: CompletionRequest| async move {
            if req.value == "boom" {
                panic!("deliberate completion panic");
            }
            vec![req.value]
        })
        .build()
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![Just("text"), Just("content"), Just("type"), Just("isError")]
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("name".to_owned()),
        Just("content".to_owned()),
        Just("result".to_owned()),
        Just("id".to_owned()),
        Just("method".to_owned()),
        "[a-z]{1,6}",
    ]
}

fn request_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        ".{0,16}".prop_map(Value::String),
    ]
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("initialize".to_owned()),
        Just("ping".to_owned()),
        Just("tools/list".to_owned()),
        Just("tools/call".to_owned()),
        Just("tools/call".to_owned()),
        Just("logging/setLevel".to_owned()),
        Just("notifications/cancelled".to_owned()),
        Just("resources/read".to_owned()),
        Just("prompts/get".to_owned()),
        Just("completion/complete".to_owned()),
        ".{0,20}",
    ]
}

fn params() -> impl Strategy<Value = Option<Value>> {
    let tool = prop_oneof![
        Just("add"),
        Just("person"),
        Just("raw"),
        Just("echo"),
        Just("missing")
    ];
    let call = (
        tool,
        prop::option::of(json_value()),
        prop::option::of(json_value()),
    )
        .prop_map(|(name, arguments, meta)| {
            let mut p = Map::new();
            p.insert("name".into(), name.into());
            if let Some(a) = arguments {
                p.insert("arguments".into(), a);
            }
            if let Some(m) = meta {
                p.insert("_meta".into(), m);
            }
            Value::Object(p)
        });
    prop::option::of(prop_oneof![
        call,
        json_value(),
        json_value().prop_map(|arguments| json!({"name":"add","arguments":arguments})),
        json_value().prop_map(|result| json!({"name":"raw","arguments":{"result":result}})),
        json_value().prop_map(|arguments| json!({"name":"person","arguments":arguments})),
        Just(json!({"name":"add","arguments":{"a":1,"b":2}})),
        ".{0,8}".prop_map(|c| json!({"cursor": c})),
        ".{0,12}".prop_map(|v| json!({"protocolVersion": v})),
        prop_oneof![Just("res://boom"), Just("res://ok"), Just("res://none")]
            .prop_map(|uri| json!({"uri": uri})),
        Just(json!({"name": "boom"})),
        prop_oneof![Just("boom"), Just("ok")].prop_map(|value| json!({
            "ref": {"type": "ref/prompt", "name": "boom"},
            "argument": {"name": "x", "value": value}})),
    ])
}

fn request() -> impl Strategy<Value = (Value, Value)> {
    (request_id(), method(), params(), prop::bool::weighted(0.9)).prop_map(
        |(id, method, params, with_version)| {
            let mut m = Map::new();
            if with_version {
                m.insert("jsonrpc".into(), "2.0".into());
            }
            m.insert("id".into(), id.clone());
            m.insert("method".into(), method.into());
            if let Some(p) = params {
                m.insert("params".into(), p);
            }
            (Value::Object(m), id)
        },
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

fn check_reply(reply: &Value, id: &Value) -> Result<(), TestCaseError> {
    prop_assert_eq!(&reply["jsonrpc"], "2.0", "{}", reply);
    prop_assert_eq!(&reply["id"], id, "{}", reply);
    let has_result = reply.get("result").is_some();
    let has_error = reply.get("error").is_some();
    prop_assert!(
        has_result != has_error,
        "exactly one of result/error: {}",
        reply
    );
    if has_error {
        prop_assert!(reply["error"]["code"].is_i64(), "{}", reply);
        prop_assert!(reply["error"]["message"].is_string(), "{}", reply);
    }
    if let Some(content) = reply["result"].get("content") {
        for block in content.as_array().unwrap() {
            if block["type"] == "text" {
                prop_assert!(
                    block["text"].is_string(),
                    "text must be a string: {}",
                    reply
                );
            }
        }
        prop_assert!(reply["result"]["isError"].is_boolean(), "{}", reply);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn request_like_messages_are_answered_with_their_own_id((message, id) in request()) {
        let server = server();
        let session = Session::new();
        let reply = runtime().block_on(server.handle(message.clone(), RequestContext::with_session(session.clone())));
        let reply = reply.ok_or_else(|| TestCaseError::fail(format!("no reply to {message}")))?;
        check_reply(&reply, &id)?;
        prop_assert_eq!(session.in_flight(), 0);
    }

    #[test]
    fn arbitrary_json_never_panics_and_replies_only_to_requests(message in json_value()) {
        let server = server();
        let reply = runtime().block_on(server.handle(message.clone(), RequestContext::new()));
        let obj = message.as_object();
        let method = obj.and_then(|o| o.get("method"));
        let id = obj.and_then(|o| o.get("id"));
        let answerable_id = id.filter(|id| id.is_number() || id.is_string());
        let version_ok = obj.and_then(|o| o.get("jsonrpc")) == Some(&json!("2.0"));
        let is_response =
            method.is_none() && obj.is_some_and(|o| o.contains_key("result") || o.contains_key("error"));
        let is_notification = method.is_some_and(Value::is_string) && id.is_none() && version_ok;
        match reply {
            // Notifications and responses: no reply.
            None => prop_assert!(is_notification || is_response, "no reply to {}", message),
            Some(reply) => {
                prop_assert!(!is_notification && !is_response, "{} -> {}", message, reply);
                check_reply(&reply, answerable_id.unwrap_or(&Value::Null))?;
                let valid_request = method.is_some_and(Value::is_string) && version_ok
                    && answerable_id.is_some();
                if !valid_request {
                    prop_assert_eq!(&reply["error"]["code"], &json!(-32600), "{} -> {}", message, reply);
                }
            }
        }
    }

    /// A request whose envelope is off — another `"jsonrpc"`, none, or a
    /// `null` id — is an invalid request (-32600), never a notification.
    #[test]
    fn requests_with_a_bad_envelope_are_invalid_requests(
        (message, id) in request(),
        version in prop_oneof![Just(None), Just(Some(json!("1.0"))), Just(Some(json!(2.0))), ".{0,4}".prop_map(|v| Some(json!(v)))],
        null_id in any::<bool>(),
    ) {
        let mut message = message;
        let obj = message.as_object_mut().unwrap();
        match &version {
            Some(v) => { obj.insert("jsonrpc".into(), v.clone()); }
            None => { obj.remove("jsonrpc"); }
        }
        if null_id {
            obj.insert("id".into(), Value::Null);
        }
        let bad = null_id || version.as_ref() != Some(&json!("2.0"));
        let reply = runtime().block_on(server().handle(message.clone(), RequestContext::new()));
        let reply = reply.ok_or_else(|| TestCaseError::fail(format!("no reply to {message}")))?;
        if bad {
            prop_assert_eq!(&reply["error"]["code"], &json!(-32600), "{} -> {}", message, reply);
            prop_assert_eq!(&reply["id"], if null_id { &Value::Null } else { &id }, "{}", reply);
        } else {
            check_reply(&reply, &id)?;
        }
    }
}

// ------------------------------------------------ raw tools: schema boundary

/// What the `strict` raw tool's schema allows, written out by hand.
fn strict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "mode": {"enum": ["read", "write"]},
            "n": {"type": "integer", "minimum": 0, "maximum": 10},
            "path": {"type": "string", "maxLength": 16, "pattern": "^[a-z/]*$"}
        },
        "required": ["mode"],
        "additionalProperties": false
    })
}

/// The same rules as [`strict_schema`], independently.
fn strict_allows(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    let mode_ok = matches!(
        o.get("mode").and_then(Value::as_str),
        Some("read" | "write")
    );
    let n_ok = o.get("n").is_none_or(|n| {
        // JSON Schema integers include 3.0.
        n.as_f64()
            .is_some_and(|f| f.fract() == 0.0 && (0.0..=10.0).contains(&f))
    });
    let path_ok = o.get("path").is_none_or(|p| {
        p.as_str().is_some_and(|s| {
            s.chars().count() <= 16 && s.chars().all(|c| c.is_ascii_lowercase() || c == '/')
        })
    });
    let keys_ok = o
        .keys()
        .all(|k| ["mode", "n", "path"].contains(&k.as_str()));
    mode_ok && n_ok && path_ok && keys_ok
}

fn strict_arguments() -> impl Strategy<Value = Value> {
    let near = (
        prop::option::of(prop_oneof![
            Just(json!("read")),
            Just(json!("write")),
            Just(json!("READ")),
            Just(json!(1)),
        ]),
        prop::option::of(prop_oneof![
            (-2i64..13).prop_map(Value::from),
            Just(json!(3.0)),
            Just(json!(2.5)),
            Just(json!("3")),
        ]),
        prop::option::of(prop_oneof![
            "[a-z/]{0,20}".prop_map(Value::from),
            Just(json!("../../etc/passwd")),
            Just(json!("/tmp\u{0}x")),
        ]),
        prop::option::of(json_value()),
    )
        .prop_map(|(mode, n, path, extra)| {
            let mut m = Map::new();
            for (k, v) in [("mode", mode), ("n", n), ("path", path), ("other", extra)] {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            Value::Object(m)
        });
    prop_oneof![4 => near, 1 => json_value()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A raw tool's handler only ever sees arguments its schema allows; the
    /// rest are refused with an `isError` result before it runs.
    #[test]
    fn raw_tool_handlers_only_see_arguments_their_schema_allows(
        arguments in strict_arguments(),
        id in request_id(),
    ) {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = std::sync::Arc::clone(&seen);
        let server = Server::builder("raw", "1")
            .tool(Tool::new("strict", "", move |v: Value| {
                record.lock().unwrap().push(v);
                async { "ran" }
            }).input_schema(strict_schema()))
            .build();
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "strict", "arguments": arguments}});
        let reply = runtime().block_on(server.handle(call, RequestContext::new())).unwrap();
        check_reply(&reply, &id)?;
        let allowed = strict_allows(&arguments);
        let seen = seen.lock().unwrap();
        prop_assert_eq!(seen.len(), usize::from(allowed), "{}", arguments);
        if allowed {
            prop_assert_eq!(&reply["result"]["isError"], &json!(false), "{}", reply);
            prop_assert_eq!(&seen[0], &arguments);
        } else if arguments.is_object() || arguments.is_null() {
            // (`null` counts as no arguments, like an absent member.)
            prop_assert_eq!(&reply["result"]["isError"], &json!(true), "{}", reply);
            let text = reply["result"]["content"][0]["text"].as_str().unwrap();
            prop_assert!(text.starts_with("Invalid arguments"), "{}", text);
        } else {
            // Not even an object: malformed params.
            prop_assert_eq!(&reply["error"]["code"], &json!(-32602), "{}", reply);
        }
    }
}

// ------------------------------------- notifications/cancelled racing calls

#[derive(Debug, Clone)]
struct Call {
    start: u64,
    sleep: u64,
}

/// Calls start and finish on even milliseconds, cancellations arrive on odd
/// ones, so under the paused clock every race has one right answer.
fn race() -> impl Strategy<Value = (Vec<Call>, Vec<(u64, usize)>, bool)> {
    (
        prop::collection::vec((0u64..20, 1u64..20), 1..6),
        prop::collection::vec((0u64..30, 0usize..8), 0..6),
        any::<bool>(),
    )
        .prop_map(|(calls, cancels, string_ids)| {
            let calls = calls
                .into_iter()
                .map(|(s, d)| Call {
                    start: 2 * s,
                    sleep: 2 * d,
                })
                .collect();
            let cancels = cancels.into_iter().map(|(t, i)| (2 * t + 1, i)).collect();
            (calls, cancels, string_ids)
        })
}

fn sleepy_server() -> Server {
    Server::builder("race", "1")
        .tool(
            Tool::new(
                "sleep",
                "",
                |v: Value, ctx: claude_code_agent_mcp::ToolContext| async move {
                    let ms = v["ms"].as_u64().unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    // Finished before any cancellation could be seen.
                    assert!(!ctx.is_cancelled() || ms == 0);
                    "done"
                },
            )
            .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}})),
        )
        .build()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Each call is answered once, with its own id; exactly the calls whose
    /// cancellation arrived before they ended (while they ran, or before
    /// they started: a cancel that overtook its request) report being
    /// cancelled; the notifications get no reply; nothing stays in flight.
    #[test]
    fn cancellations_racing_calls_end_exactly_the_running_ones((calls, cancels, string_ids) in race()) {
        let server = sleepy_server();
        let session = Session::new();
        let id_of = |i: usize| if string_ids { json!(format!("c{i}")) } else { json!(i) };
        let (call_replies, cancel_replies) = runtime().block_on(async {
            let call_tasks: Vec<_> = calls.iter().enumerate().map(|(i, c)| {
                let (server, ctx) = (server.clone(), RequestContext::with_session(session.clone()));
                let msg = json!({"jsonrpc": "2.0", "id": id_of(i), "method": "tools/call",
                                 "params": {"name": "sleep", "arguments": {"ms": c.sleep}}});
                let start = c.start;
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(start)).await;
                    server.handle(msg, ctx).await
                })
            }).collect();
            let cancel_tasks: Vec<_> = cancels.iter().map(|&(at, target)| {
                let (server, ctx) = (server.clone(), RequestContext::with_session(session.clone()));
                // Targets past the last call name no call at all.
                let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                 "params": {"requestId": id_of(target), "reason": "race"}});
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(at)).await;
                    server.handle(msg, ctx).await
                })
            }).collect();
            let mut calls_out = Vec::new();
            for t in call_tasks {
                calls_out.push(t.await.unwrap());
            }
            let mut cancels_out = Vec::new();
            for t in cancel_tasks {
                cancels_out.push(t.await.unwrap());
            }
            (calls_out, cancels_out)
        });
        prop_assert!(cancel_replies.iter().all(Option::is_none), "{:?}", cancel_replies);
        prop_assert_eq!(session.in_flight(), 0);
        for (i, (c, reply)) in calls.iter().zip(&call_replies).enumerate() {
            let reply = reply.as_ref().ok_or_else(|| TestCaseError::fail("a call got no reply"))?;
            check_reply(reply, &id_of(i))?;
            let cancelled = cancels
                .iter()
                .any(|&(at, target)| target == i && at < c.start + c.sleep);
            let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
            prop_assert_eq!(&reply["result"]["isError"], &json!(cancelled), "call {}: {}", i, reply);
            prop_assert_eq!(text.contains("cancelled"), cancelled, "call {}: {}", i, reply);
        }
    }
}
