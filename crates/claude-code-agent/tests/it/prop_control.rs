//! Control envelopes (`control_request`, `control_response`,
//! `control_cancel_request`) generated from their wire shapes, well-formed and
//! not, decoded from bytes as the reader hands them over.
//!
//! Complements `messages_lossless.rs` (conversation messages and random
//! JSON): here each generated envelope knows how it must be classified, and
//! the round trip goes through bytes (compact and pretty, CRLF-free).

use claude_code_agent::__private::wire::{CliRequest, ControlResponseBody, Incoming};
use claude_code_agent::message::Message;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// How an envelope must be classified.
#[derive(Debug, Clone, PartialEq)]
enum Class {
    Request {
        id: String,
        subtype: Option<&'static str>,
    },
    Response {
        id: String,
        success: bool,
    },
    Cancel {
        id: String,
    },
    Unknown,
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1000i32..1000).prop_map(|n| Value::from(f64::from(n) + 0.25)),
        "[a-z_]{0,8}".prop_map(Value::from),
        ".{0,6}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Extra members, none of them a key the envelopes model.
fn extra() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("x_[a-z]{1,6}", json_value(), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        "req_[0-9]{1,3}_[a-f0-9]{8}",
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        ".{0,10}",
    ]
}

fn jsonrpc() -> impl Strategy<Value = Value> {
    (any::<u32>(), prop_oneof![Just("tools/call"), Just("initialize"), Just("notifications/initialized")], json_value())
        .prop_map(|(id, method, params)| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// A `request` object: its subtype if well-formed, else `None`.
fn cli_request() -> impl Strategy<Value = (Value, Option<&'static str>)> {
    prop_oneof![
        (
            ".{1,12}",
            // A required field that is null counts as missing (the request
            // then decodes as unknown: see the malformed cases below).
            json_value().prop_filter("input is present", |v| !v.is_null()),
            prop::option::of("toolu_[a-z0-9]{6}")
        )
            .prop_map(|(tool, input, use_id)| {
                let mut r = json!({"subtype": "can_use_tool", "tool_name": tool, "input": input});
                if let Some(u) = use_id {
                    r["tool_use_id"] = u.into();
                }
                (r, Some("can_use_tool"))
            }),
        (
            "hook_[0-9]",
            prop_oneof![Just("PreToolUse"), Just("Stop"), Just("FutureEvent")],
            json_value()
        )
            .prop_map(|(cb, event, x)| {
                let input = json!({"hook_event_name": event, "session_id": "s", "x": x});
                (
                    json!({"subtype": "hook_callback", "callback_id": cb, "input": input}),
                    Some("hook_callback"),
                )
            }),
        ("[a-z]{1,8}", jsonrpc()).prop_map(|(server, message)| {
            (
                json!({"subtype": "mcp_message", "server_name": server, "message": message}),
                Some("mcp_message"),
            )
        }),
        // Malformed known subtypes: a required field missing or mistyped.
        Just((json!({"subtype": "can_use_tool", "input": {}}), None)),
        Just((
            json!({"subtype": "can_use_tool", "tool_name": " ", "input": null}),
            None
        )),
        Just((
            json!({"subtype": "mcp_message", "server_name": 7, "message": {}}),
            None
        )),
        json_value().prop_map(|v| (
            json!({"subtype": "hook_callback", "callback_id": null, "input": v}),
            None
        )),
        // A subtype this SDK does not know.
        ("elicitation|[a-z_]{3,10}", json_value())
            .prop_map(|(s, v)| (json!({"subtype": s, "payload": v}), None)),
    ]
}

fn envelope() -> impl Strategy<Value = (Value, Class)> {
    let request = (id(), cli_request(), extra()).prop_map(|(id, (request, subtype), extra)| {
        let mut v = json!({"type": "control_request", "request_id": id, "request": request});
        v.as_object_mut().unwrap().extend(extra);
        (v, Class::Request { id, subtype })
    });
    let response = (id(), any::<bool>(), prop::option::of(json_value()), extra()).prop_map(
        |(id, success, payload, extra)| {
            let mut body = if success {
                json!({"subtype": "success", "request_id": id})
            } else {
                json!({"subtype": "error", "request_id": id, "error": "no"})
            };
            if let Some(p) = payload {
                body[if success { "response" } else { "error_code" }] = p;
            }
            let mut v = json!({"type": "control_response", "response": body});
            v.as_object_mut().unwrap().extend(extra);
            (v, Class::Response { id, success })
        },
    );
    let cancel = (id(), extra()).prop_map(|(id, extra)| {
        let mut v = json!({"type": "control_cancel_request", "request_id": id});
        v.as_object_mut().unwrap().extend(extra);
        (v, Class::Cancel { id })
    });
    // Malformed envelopes: kept whole as `Message::Unknown`.
    let malformed = prop_oneof![
        (any::<i64>(), json_value())
            .prop_map(|(n, r)| json!({"type": "control_request", "request_id": n, "request": r})),
        json_value().prop_map(|r| json!({"type": "control_request", "request": r})),
        any::<u64>().prop_map(|n| json!({"type": "control_cancel_request", "request_id": n})),
    ]
    .prop_map(|v| (v, Class::Unknown));
    // A body that is not an object is an answer without an id: the session
    // matches it to nothing (`into_result` calls it malformed).
    let odd_body = id().prop_map(|id| {
        let v = json!({"type": "control_response", "response": id});
        (
            v,
            Class::Response {
                id: String::new(),
                success: false,
            },
        )
    });
    prop_oneof![3 => request, 2 => response, 1 => cancel, 1 => malformed, 1 => odd_body]
}

fn classify(incoming: &Incoming) -> Class {
    match incoming {
        Incoming::ControlRequest(r) => Class::Request {
            id: r.request_id.clone(),
            subtype: match &r.request {
                CliRequest::CanUseTool(_) => Some("can_use_tool"),
                CliRequest::HookCallback(_) => Some("hook_callback"),
                CliRequest::McpMessage(_) => Some("mcp_message"),
                _ => None,
            },
        },
        Incoming::ControlResponse(r) => Class::Response {
            id: r.request_id().unwrap_or_default().to_owned(),
            success: matches!(r.response, ControlResponseBody::Success(_)),
        },
        Incoming::ControlCancel(c) => Class::Cancel {
            id: c.request_id.clone(),
        },
        Incoming::Message(Message::Unknown(_)) => Class::Unknown,
        other => panic!("an envelope decoded as a conversation message: {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn envelopes_classify_and_round_trip_through_bytes((v, class) in envelope(), pretty in any::<bool>()) {
        let bytes = if pretty { serde_json::to_vec_pretty(&v) } else { serde_json::to_vec(&v) }.unwrap();
        let incoming = Incoming::from_slice(&bytes).unwrap();
        prop_assert_eq!(classify(&incoming), class);
        prop_assert_eq!(&incoming.to_value(), &v);
        // What the SDK would write back decodes to the same thing.
        let again = Incoming::from_slice(&serde_json::to_vec(&incoming).unwrap()).unwrap();
        prop_assert_eq!(&again, &incoming);
        prop_assert_eq!(Incoming::from_value(v.clone()), incoming);
        // The request inside decodes alone the same way.
        if let Some(request) = v.get("request").filter(|_| v["request_id"].is_string()) {
            prop_assert_eq!(&CliRequest::from_value(request.clone()).to_value(), request);
        }
    }

    #[test]
    fn bytes_that_are_not_json_are_an_error_never_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let json = serde_json::from_slice::<Value>(&bytes);
        match Incoming::from_slice(&bytes) {
            Ok(incoming) => prop_assert_eq!(incoming.to_value(), json.unwrap()),
            Err(e) => {
                prop_assert!(json.is_err(), "{}", e);
            }
        }
    }
}

/// The one place where decoding normalizes: a float with an integral value in
/// a field typed as a number is written back as an integer, as the CLI (a
/// JavaScript program) writes it. The fuzz target allows exactly this.
#[test]
fn integral_floats_in_number_fields_come_back_as_integers() {
    let v = json!({"type": "result", "subtype": "success", "is_error": false,
                   "session_id": "s", "total_cost_usd": 1.0, "duration_ms": 12});
    let back = Message::from_value(v.clone()).to_value();
    assert_eq!(back["total_cost_usd"], json!(1));
    assert_ne!(back, v);
    let mut expected = v;
    expected["total_cost_usd"] = json!(1);
    assert_eq!(back, expected);
}
