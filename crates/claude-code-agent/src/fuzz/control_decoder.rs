//! The fuzz target `control_decoder`: the CLI's stdout messages
//! (`Incoming::from_slice` / `Message::from_value`) and the typed decoders
//! under them, on arbitrary bytes (mode byte even) and on structured JSON
//! built from the bytes (mode byte odd, `json_gen` with the protocol's
//! words).
//!
//! Checked: no panic; a line is decoded exactly when it is JSON (lone
//! surrogate escapes allowed, as JavaScript writes them); decoding
//! then encoding gives back an equal value — exactly, except that a float
//! with an integral value (`1.0`) in a field typed as a number comes back as
//! the integer (`1`), as JavaScript writes it.

use serde_json::Value;

use super::words::WORDS;
use crate::__private::wire::{CliRequest, ControlResponseBody, Incoming};
use crate::mcp::__private::fuzz::arbitrary::Unstructured;
use crate::mcp::__private::fuzz::json_gen;
use crate::mcp::__private::transport::json::from_slice;
use crate::message::{ContentBlock, Delta, Message, SystemMessage};
use crate::protocol::{HookInput, McpServerConfig, PermissionResult, SdkRequest};

/// Decodes the input as the module says and panics unless it round-trips.
pub fn control_decoder(input: &[u8]) {
    let [mode, rest @ ..] = input else { return };
    if mode & 1 == 0 {
        raw(rest);
    } else if let Ok(v) = json_gen::object(&mut Unstructured::new(rest), WORDS, 5) {
        structured(v);
    }
}

fn raw(line: &[u8]) {
    // JSON as the CLI writes it: lone surrogate escapes (a string cut
    // mid-emoji) are U+FFFD (checked on their own by `lenient_json`).
    let parsed = from_slice::<Value>(line);
    match Incoming::from_slice(line) {
        Ok(incoming) => {
            let v = parsed.expect("decoded a line serde_json rejects");
            assert_same(&incoming.to_value(), &v, "Incoming (bytes)");
            // Through bytes, as the writer would send it.
            let bytes = serde_json::to_vec(&incoming).expect("encode");
            let back: Value = serde_json::from_slice(&bytes).expect("re-parse");
            assert_same(&back, &v, "Incoming (re-encoded bytes)");
            let m = Message::from_slice(line).expect("Message::from_slice after Incoming");
            assert_same(&m.to_value(), &v, "Message (bytes)");
            structured(v);
        }
        Err(_) => assert!(parsed.is_err(), "refused a line that is JSON"),
    }
}

fn structured(v: Value) {
    let incoming = Incoming::from_value(v.clone());
    assert_same(&incoming.to_value(), &v, "Incoming");
    let message = Message::from_value(v.clone());
    assert_same(&message.to_value(), &v, "Message");
    let _ = (message.session_id(), message.uuid(), message.message_type());
    if let Incoming::ControlRequest(r) = &incoming {
        let _ = r.request.subtype();
    }
    if let Incoming::ControlResponse(r) = incoming {
        let _ = (r.request_id(), r.is_success());
        let _ = r.into_result();
    }
    // The typed decoders under the envelopes, on the value and its members.
    let mut parts = vec![v.clone()];
    if let Value::Object(map) = &v {
        parts.extend(map.values().filter(|x| x.is_object()).cloned());
    }
    for p in parts {
        assert_same(
            &CliRequest::from_value(p.clone()).to_value(),
            &p,
            "CliRequest",
        );
        assert_same(
            &HookInput::from_value(p.clone()).to_value(),
            &p,
            "HookInput",
        );
        assert_same(
            &ContentBlock::from_value(p.clone()).to_value(),
            &p,
            "ContentBlock",
        );
        // A config without `"type"` is stdio, and is written with it.
        let config = McpServerConfig::from_value(p.clone()).to_value();
        if p.get("type").is_some() {
            assert_same(&config, &p, "McpServerConfig");
        }
        // Its structs accept a missing `"type"` and write `"system"`, so only
        // values that `Message::from_value` would hand it.
        if p["type"] == "system" {
            assert_same(
                &SystemMessage::from_value(p.clone()).to_value(),
                &p,
                "SystemMessage",
            );
        }
        assert_same(
            &ControlResponseBody::from_value(p.clone()).to_value(),
            &p,
            "ControlResponseBody",
        );
        assert_same(&Delta::from_value(p.clone()).to_value(), &p, "Delta");
        let _ = HookInput::from_value(p.clone()).event();
        // Built by the SDK, not lossless by design (defaults are written).
        let _ = SdkRequest::from_value(p.clone()).to_value();
        if let Ok(r) = PermissionResult::from_value(p) {
            let _ = r.to_value();
        }
    }
}

/// Equal, except that an integral float may come back as that integer.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || ((x.is_f64() || y.is_f64())
                    && x.as_f64() == y.as_f64()
                    && x.as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f.abs() <= 9007199254740992.0))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

fn assert_same(got: &Value, want: &Value, what: &str) {
    assert!(
        same(got, want),
        "{what} did not round-trip:\n want {want}\n  got {got}"
    );
}
