//! Lone surrogates decoded, envelopes read from broken text; and the
//! property tests over strings cut at every UTF-16 code unit, encoded as
//! JavaScript's `JSON.stringify` and Python's `json.dumps` encode them.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::fuzz::{check_cut, check_text, js_stringify, py_dumps};
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
    assert_eq!(
        s(r#""\ude00\ud83d""#),
        "\u{FFFD}\u{FFFD}",
        "a pair backwards"
    );
    assert_eq!(
        from_str::<Value>(r#"{"a":["\ud83d",{"\udc00":1}]}"#).unwrap(),
        json!({"a": ["\u{FFFD}", {"\u{FFFD}": 1}]})
    );
}

#[test]
fn escaped_backslashes_are_not_escapes() {
    assert_eq!(
        repair_lone_surrogates(b"\\"),
        None,
        "a backslash at the end"
    );
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
    let e = read(
        r#"{"method":"tools/call","params":{"a":NaN,"id":9,"s":"x\"}"},"jsonrpc":"2.0","id":4}"#,
    );
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

/// What the bytes of `any_bytes_are_decoded_as_the_fuzz_target_checks`
/// are made of.
const PIECES: &[&[u8]] = &[
    b"\\ud83d",
    b"\\uDE00",
    b"\\udbff\\udfff",
    b"\\\\",
    b"\\u",
    b"\\n",
    b"\\",
    b"d8",
    b"\"",
    b"{",
    b"}",
    b"[",
    b":",
    b",",
    b"1",
    b"x",
    b"\xff",
];

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

    /// Any bytes (rich in escapes and quotes): the checks of the fuzz
    /// target ([`check_text`]).
    #[test]
    fn any_bytes_are_decoded_as_the_fuzz_target_checks(
        pieces in prop::collection::vec(prop::sample::select(PIECES), 0..24),
    ) {
        let bytes = pieces.concat();
        check_text(&bytes);
        let mut quoted = b"\"".to_vec();
        quoted.extend_from_slice(&bytes);
        quoted.push(b'"');
        check_text(&quoted);
    }

    /// Any JavaScript string, lone surrogates included, cut anywhere
    /// ([`check_cut`]).
    #[test]
    fn any_js_string_cut_anywhere(units in prop::collection::vec(prop_oneof![
        0xD800u16..0xE000, 0u16..0x80, any::<u16>(),
    ], 0..24)) {
        check_cut(&units);
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
