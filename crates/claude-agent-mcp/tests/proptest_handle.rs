//! Whatever JSON arrives, `handle` never panics, never replies to a
//! notification or response, and answers every request exactly once with
//! its own id.
mod common;

use std::time::Duration;

use claude_agent_mcp::{Json, RequestContext, Server, Session, Tool};
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
        .tool(Tool::raw(
            "raw",
            "",
            json!({"type":"object"}),
            |v: Value| async move { v },
        ))
        .tool(Tool::raw("echo", "", json!({}), |v: Value| async move {
            Json(v)
        }))
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
    ])
}

fn request() -> impl Strategy<Value = (Value, Value)> {
    (request_id(), method(), params(), any::<bool>()).prop_map(
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
        let id = obj.and_then(|o| o.get("id")).filter(|id| !id.is_null());
        let answerable_id = id.filter(|id| id.is_number() || id.is_string());
        match (method, reply) {
            // A notification: no reply.
            (Some(Value::String(_)), None) => prop_assert!(id.is_none(), "{}", message),
            // A response: no reply.
            (None, None) => {
                let o = obj.unwrap();
                prop_assert!(o.contains_key("result") || o.contains_key("error"), "{}", message);
            }
            (_, Some(reply)) => {
                check_reply(&reply, answerable_id.unwrap_or(&Value::Null))?;
                if answerable_id.is_none() {
                    prop_assert!(reply.get("error").is_some(), "{}", reply);
                }
            }
            (Some(_), None) => prop_assert!(false, "no reply to an invalid message: {}", message),
        }
    }
}
