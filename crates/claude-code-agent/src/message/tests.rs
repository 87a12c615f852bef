//! Unit tests of the lossless decoding helpers.

use serde_json::{Value, json};

use super::{ContentBlock, Message, MessageContent, ResultMessage, UserInput};
use crate::wire::{AsWire, Wire, take_nul, take_opt};

fn ser<T: Wire>(t: &T) -> Value {
    serde_json::to_value(AsWire(t)).unwrap()
}

#[test]
fn f64_is_written_like_javascript() {
    assert_eq!(ser(&0.0f64), json!(0));
    assert_eq!(ser(&30.0f64), json!(30));
    assert_eq!(ser(&-2.0f64), json!(-2));
    assert_eq!(ser(&0.25f64), json!(0.25));
    assert!(f64::accepts(&json!(9007199254740992u64)));
    assert!(!f64::accepts(&json!(9007199254740993u64)));
    assert!(!f64::accepts(&json!("1")));
}

#[test]
fn vec_hands_back_the_whole_array_when_an_item_does_not_fit() {
    let v = json!(["a", "b", 3, "d"]);
    assert_eq!(Vec::<String>::from_wire(v.clone()), Err(v));
    assert_eq!(
        Vec::<String>::from_wire(json!(["a"])),
        Ok(vec!["a".to_owned()])
    );
}

#[test]
fn take_opt_leaves_nulls_and_odd_values_in_place() {
    let mut map = json!({"a": null, "b": 5, "c": "x"})
        .as_object()
        .unwrap()
        .clone();
    assert_eq!(take_opt::<String>(&mut map, "a"), None);
    assert_eq!(take_opt::<String>(&mut map, "b"), None);
    assert_eq!(take_opt::<String>(&mut map, "c"), Some("x".to_owned()));
    assert_eq!(take_opt::<String>(&mut map, "missing"), None);
    assert_eq!(Value::Object(map), json!({"a": null, "b": 5}));

    let mut map = json!({"a": null}).as_object().unwrap().clone();
    assert_eq!(take_nul::<String>(&mut map, "a"), None);
    assert!(map.is_empty(), "nul fields consume the null");
}

#[test]
fn decoded_structs_do_not_repeat_typed_keys_in_extra() {
    let Message::Result(r) = Message::from_value(json!({
        "type": "result", "subtype": "success", "is_error": false, "result": "ok", "new": 1
    })) else {
        panic!()
    };
    assert_eq!(r.extra.keys().collect::<Vec<_>>(), ["new"]);
    assert_eq!(r.result.as_deref(), Some("ok"));
}

#[test]
fn typed_fields_win_over_kept_nulls() {
    // A null stays in `extra`; setting the typed field replaces it on output.
    let mut r = ResultMessage::from_value(
        json!({"type": "result", "subtype": "success", "is_error": true, "result": null}),
    )
    .unwrap();
    assert_eq!(r.to_value()["result"], Value::Null);
    r.result = Some("now set".into());
    assert_eq!(r.to_value()["result"], json!("now set"));
}

#[test]
fn big_tool_results_are_moved_not_copied() {
    // Decoding hands out the very String allocation that was in the Value.
    let value = json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "x".repeat(1 << 20)}
    ]}});
    let ptr = value["message"]["content"][0]["content"]
        .as_str()
        .unwrap()
        .as_ptr();
    let Message::User(u) = Message::from_value(value) else {
        panic!()
    };
    let Some(MessageContent::Text(text)) = &u.tool_results().next().unwrap().content else {
        panic!()
    };
    assert_eq!(text.as_ptr(), ptr);
}

#[test]
fn user_input_text_shape() {
    assert_eq!(
        UserInput::text("hi").to_value(),
        json!({"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": null, "session_id": ""})
    );
    assert_eq!(
        ContentBlock::text("a").to_value(),
        json!({"type": "text", "text": "a"})
    );
}
