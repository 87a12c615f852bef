//! Lone surrogates decoded, envelopes read from broken text; and the
//! property tests over strings cut at every UTF-16 code unit, encoded as
//! JavaScript's `JSON.stringify` and Python's `json.dumps` encode them.

use std::fmt::Write as _;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::transport::{Parsed, parse_line};

fn s(text: &str) -> String {
    from_str::<String>(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn lone_surrogates_decode_to_the_replacement_character() {
    assert!(serde_json::from_str::<String>(r#""ab\ud83d""#).is_err());
    assert_eq!(s(r#""ab\ud83d""#), "ab\u{FFFD}");
    assert_eq!(s(r#""\ude00cd""#), "\u{FFFD}cd", "a trailing half");
    assert_eq!(s(r#""\uD83D\uDE00""#), "😀", "a pair stays a pair");
    assert_eq!(
        s(r#""\ud83d\ud83d\ude00""#),
        "\u{FFFD}😀",
        "a lead before a pair"
    );
    assert_eq!(s(r#""\ud83d\n""#), "\u{FFFD}\n", "a lead before an escape");
    assert_eq!(s(r#""\ud83d\u0041""#), "\u{FFFD}A");
    assert_eq!(s(r#""\ude00\ud83d""#), "\u{FFFD}\u{FFFD}", "a pair backwards");
    assert_eq!(
        from_str::<Value>(r#"{"a":["\ud83d",{"\udc00":1}]}"#).unwrap(),
        json!({"a": ["\u{FFFD}", {"\u{FFFD}": 1}]})
    );
}

#[test]
fn escaped_backslashes_are_not_escapes() {
    assert_eq!(repair_lone_surrogates(b"\\"), None, "a backslash at the end");
    assert_eq!(repair_lone_surrogates(b"\\ud8"), None, "a cut escape");
    assert_eq!(s(r#""\\ud83d""#), "\\ud83d");
    assert_eq!(s(r#""\\\ud83d""#), "\\\u{FFFD}");
    assert_eq!(s(r#""\\\\ud83d\ud83d""#), "\\\\ud83d\u{FFFD}");
    assert_eq!(repair_lone_surrogates(br#""\\ud83d""#), None);
    assert_eq!(
        repair_lone_surrogates(br#"{"a":"\ud83d","b":"\\udc00"}"#).as_deref(),
        Some(&br#"{"a":"\uFFFD","b":"\\udc00"}"#[..])
    );
}

#[test]
fn other_errors_are_still_errors() {
    // Broken besides the surrogate: the error is the repaired text's, at
    // the same position (the repair keeps the length).
    let e = from_str::<Value>(r#"{"a":"\ud83d",}"#).unwrap_err();
    assert!(e.to_string().contains("trailing comma"), "{e}");
    assert_eq!(e.column(), 15);
    for bad in [r#""\ud83""#, r#""\ud83d"#, r#""\x""#, "{", "nul"] {
        assert!(from_str::<Value>(bad).is_err(), "{bad}");
    }
    // A type mismatch is not repaired into a success.
    assert!(from_str::<u32>(r#""\ud83d""#).is_err());
}

#[test]
fn envelopes_are_read_from_text_that_does_not_decode() {
    let read = |t: &str| envelope(t.as_bytes());
    // The TypeScript SDK writes `id` after `params`; a value broken before it.
    let e = read(r#"{"method":"tools/call","params":{"a":NaN,"id":9,"s":"x\"}"},"jsonrpc":"2.0","id":4}"#);
    assert_eq!(e.id, Some(json!(4)));
    assert!(e.method && !e.answer);
    assert_eq!(e.request_id(), Some(&json!(4)));
    assert_eq!(e.response_id(), None);
    let e = read(r#" { "jsonrpc" : "2.0" , "id" : "a\"1" , "result" : {"x": [1, 2}"#);
    assert_eq!(e.id, Some(json!("a\"1")));
    assert!(e.answer && !e.method);
    assert_eq!(e.request_id(), None, "a response's id is not the peer's");
    assert_eq!(e.response_id(), Some(&json!("a\"1")));
    assert_eq!(read(r#"{"\u0069d":12,"method":"x""#).id, Some(json!(12)));
    // Cut: an id is taken only when complete.
    assert_eq!(read(r#"{"jsonrpc":"2.0","id":12"#).id, None);
    assert_eq!(read(r#"{"jsonrpc":"2.0","id":"ab"#).id, None);
    assert_eq!(read(r#"{"jsonrpc":"2.0","id":12,"#).id, Some(json!(12)));
    assert_eq!(read(r#"{"params":{"id":1},"method":"x""#).id, None);
    assert_eq!(read(r#"{"id":null,"method":"x"}"#).id, None);
    assert_eq!(read(r#"{"id":[1],"method":"x"}"#).id, None);
    assert_eq!(read(r#"[{"id":1}]"#), Envelope::default());
    assert_eq!(read("not json"), Envelope::default());
    assert_eq!(read(r#"{"id":1.5e3}"#).id, Some(json!(1.5e3)));
    // Unknown kind (cut before method/result): answered with the id.
    assert_eq!(
        read(r#"{"jsonrpc":"2.0","id":3,"par"#).request_id(),
        Some(&json!(3))
    );
}

/// A string as JavaScript's `JSON.stringify` writes it: lone surrogates
/// (and control characters) as lowercase `\u` escapes, everything else
/// as itself, in UTF-8.
fn js_stringify(units: &[u16]) -> String {
    let mut out = String::from("\"");
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\u{8}') => out.push_str("\\b"),
            Ok('\u{c}') => out.push_str("\\f"),
            Ok('\n') => out.push_str("\\n"),
            Ok('\r') => out.push_str("\\r"),
            Ok('\t') => out.push_str("\\t"),
            Ok(c) if c < ' ' => write!(out, "\\u{:04x}", c as u32).unwrap(),
            Ok(c) => out.push(c),
            Err(e) => write!(out, "\\u{:04x}", e.unpaired_surrogate()).unwrap(),
        }
    }
    out.push('"');
    out
}

/// A string as Python's `json.dumps` writes it (`ensure_ascii`, the
/// default): everything outside ASCII as `\u` escapes of UTF-16 units.
fn py_dumps(units: &[u16]) -> String {
    let mut out = String::from("\"");
    for &u in units {
        match u {
            0x22 => out.push_str("\\\""),
            0x5C => out.push_str("\\\\"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            0x20..=0x7E => out.push(char::from(u as u8)),
            _ => write!(out, "\\u{u:04x}").unwrap(),
        }
    }
    out.push('"');
    out
}

/// Text with multi-byte characters, emoji (with modifiers and joiners),
/// quotes, backslashes and text that looks like escapes.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("a"),
        Just("Zz 09"),
        Just("é"),
        Just("中文"),
        Just("😀"),
        Just("👍🏽"),
        Just("👨‍👩‍👧"),
        Just("🇫🇷"),
        Just("𝄞"),
        Just("\""),
        Just("\\"),
        Just("\\ud83d"),
        Just("\\\\u"),
        Just("u"),
        Just("d83d"),
        Just("\n\t"),
        Just("\u{1}"),
        Just("\u{FFFD}"),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Cut at every UTF-16 code unit and encoded as JavaScript and Python
    /// encode it, a string decodes to the cut string with each lone half
    /// as U+FFFD (what `String::from_utf16_lossy` makes of it), alone and
    /// as a tool argument in a JSON-RPC line; the fast path agrees wherever
    /// it accepts the text, and the line's id is read either way.
    #[test]
    fn every_cut_decodes_as_the_peers_meant_it(original in text(), id in 0u32..1_000_000) {
        let units: Vec<u16> = original.encode_utf16().collect();
        for cut in 0..=units.len() {
            let part = &units[..cut];
            let want = String::from_utf16_lossy(part);
            for encoded in [js_stringify(part), py_dumps(part)] {
                prop_assert_eq!(&from_str::<String>(&encoded).unwrap(), &want, "{}", encoded);
                if let Ok(fast) = serde_json::from_str::<String>(&encoded) {
                    prop_assert_eq!(&fast, &want);
                }
                let line = format!(
                    r#"{{"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{encoded}}}}},"jsonrpc":"2.0","id":{id}}}"#
                );
                let Parsed::Value(message) = parse_line::<Value>(line.as_bytes()) else {
                    panic!("{line}");
                };
                prop_assert_eq!(&message["params"]["arguments"]["text"], &json!(want));
                prop_assert_eq!(envelope(line.as_bytes()).id, Some(json!(id)));
            }
        }
    }

    /// Any bytes: no panic, the length kept, only surrogate escapes
    /// changed; the envelope is read without a panic.
    #[test]
    fn any_bytes_are_safe(bytes in prop::collection::vec(prop_oneof![
        Just(b'\\'), Just(b'u'), Just(b'd'), Just(b'8'), Just(b'"'), Just(b'{'), Just(b'}'),
        Just(b':'), Just(b','), any::<u8>(),
    ], 0..64)) {
        if let Some(repaired) = repair_lone_surrogates(&bytes) {
            prop_assert_eq!(repaired.len(), bytes.len());
            prop_assert_ne!(&repaired, &bytes);
        }
        let _ = envelope(&bytes);
        let _ = from_slice::<Value>(&bytes);
    }

    /// Text `serde_json` writes never needs repair.
    #[test]
    fn what_serde_writes_is_left_alone(original in text(), raw in ".{0,40}") {
        let mut map = serde_json::Map::new();
        map.insert(raw.clone(), json!([raw]));
        for value in [json!(original), Value::Object(map)] {
            let encoded = value.to_string();
            prop_assert_eq!(repair_lone_surrogates(encoded.as_bytes()), None);
            prop_assert_eq!(from_str::<Value>(&encoded).unwrap(), value);
        }
    }
}
