//! The checks the fuzz target `lenient_json` and the property tests run
//! on the lenient decoding (hidden feature `__fuzz`), and the encoders of
//! JavaScript and Python strings they compare it with.

use std::fmt::Write as _;

use serde::de::{Deserialize, Deserializer, Visitor};
use serde_json::Value;

use super::{envelope, from_slice, repair_lone_surrogates};
use crate::transport::{Parsed, parse_line};

/// The fuzz target: byte 0 even, the rest is any text
/// ([`check_text`]); odd, the rest is a JavaScript string, two bytes per
/// UTF-16 code unit, checked cut at every unit ([`check_cut`]).
pub fn check_lenient_json(input: &[u8]) {
    let [mode, rest @ ..] = input else { return };
    if mode & 1 == 0 {
        check_text(rest);
    } else {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
            .collect();
        check_cut(&units);
    }
}

/// Any text: the fast path decides whatever `serde_json` accepts, and
/// decides it alike; what only the lenient path accepts had lone
/// surrogate escapes, and nothing else, repaired (each `\uD800`–`\uDFFF`
/// group that became `\uFFFD`); a string decodes as
/// `serde_json`'s own non-validating reading of it (byte strings, where
/// it keeps lone surrogates as WTF-8) with each lone surrogate as
/// U+FFFD. Reading the envelope never panics.
pub fn check_text(text: &[u8]) {
    let strict = serde_json::from_slice::<Value>(text);
    let lenient = from_slice::<Value>(text);
    let repaired = repair_lone_surrogates(text);
    if let Some(fixed) = &repaired {
        assert!(strict.is_err(), "repaired text serde_json accepts");
        assert_eq!(fixed.len(), text.len());
        let mut i = 0;
        while i < text.len() {
            if fixed[i] == text[i] {
                i += 1;
                continue;
            }
            // A changed byte starts a group of four hex digits after `\u`
            // (`FFFD` may share digits with the group it replaces).
            let start = (i.saturating_sub(3)..=i)
                .find(|&s| {
                    s >= 2 && &text[s - 2..s] == b"\\u" && fixed.get(s..s + 4) == Some(b"FFFD")
                })
                .expect("a change outside a \\u group");
            let unit = std::str::from_utf8(&text[start..start + 4])
                .ok()
                .and_then(|h| u16::from_str_radix(h, 16).ok())
                .expect("four hex digits");
            assert!(
                (0xD800..=0xDFFF).contains(&unit),
                "not a surrogate: {unit:04X}"
            );
            i = start + 4;
        }
    }
    match (&strict, &lenient) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the fast path changed"),
        (Ok(_), Err(e)) => panic!("refused what serde_json accepts: {e}"),
        (Err(_), Ok(b)) => {
            let fixed = repaired.as_deref().expect("accepted without a repair");
            assert_eq!(&serde_json::from_slice::<Value>(fixed).unwrap(), b);
        }
        (Err(_), Err(_)) => {}
    }
    // (Byte strings take raw control characters and invalid UTF-8 too:
    // compared only without them.)
    let plain = std::str::from_utf8(text).is_ok() && !text.iter().any(|&b| b < 0x20);
    if plain && text.first() == Some(&b'"') {
        let wtf8 = serde_json::from_slice::<Wtf8>(text).map(|w| w.lossy());
        let ours = from_slice::<String>(text);
        match (wtf8, ours) {
            (Ok(want), Ok(got)) => assert_eq!(got, want),
            (Err(_), Err(_)) => {}
            (want, got) => panic!("serde_json's byte reading {want:?}, ours {got:?}"),
        }
    }
    let _ = envelope(text);
}

/// A JavaScript string (UTF-16 units, lone surrogates allowed) cut at
/// every unit and encoded as `JSON.stringify` and Python's `json.dumps`
/// encode it decodes to the cut string with each lone surrogate as
/// U+FFFD, alone and as a tool argument in a JSON-RPC line whose id is
/// read.
pub fn check_cut(units: &[u16]) {
    let units = &units[..units.len().min(64)];
    for cut in 0..=units.len() {
        let part = &units[..cut];
        let want = String::from_utf16_lossy(part);
        for encoded in [js_stringify(part), py_dumps(part)] {
            assert_eq!(
                from_slice::<String>(encoded.as_bytes()).unwrap(),
                want,
                "{encoded}"
            );
            let line = format!(
                r#"{{"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{encoded}}}}},"jsonrpc":"2.0","id":{cut}}}"#
            );
            let Parsed::Value(message) = parse_line::<Value>(line.as_bytes()) else {
                panic!("{line}");
            };
            assert_eq!(message["params"]["arguments"]["text"], want, "{line}");
            assert_eq!(envelope(line.as_bytes()).id, Some(cut.into()));
        }
    }
}

/// A string as JavaScript's `JSON.stringify` writes it: lone surrogates
/// (and control characters) as lowercase `\u` escapes, everything else as
/// itself, in UTF-8.
pub fn js_stringify(units: &[u16]) -> String {
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
/// default): everything outside printable ASCII as `\u` escapes of UTF-16
/// units.
pub fn py_dumps(units: &[u16]) -> String {
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

/// A JSON string read by `serde_json` as bytes: it does not validate
/// surrogates there, and keeps a lone one as its three WTF-8 bytes.
struct Wtf8(Vec<u8>);

impl Wtf8 {
    /// The text with each WTF-8 surrogate (`ED A0..BF xx`) as U+FFFD.
    fn lossy(&self) -> String {
        let mut out = Vec::with_capacity(self.0.len());
        let mut i = 0;
        while i < self.0.len() {
            if self.0[i] == 0xED && self.0.get(i + 1).is_some_and(|b| (0xA0..=0xBF).contains(b)) {
                out.extend_from_slice("\u{FFFD}".as_bytes());
                i += 3;
            } else {
                out.push(self.0[i]);
                i += 1;
            }
        }
        String::from_utf8(out).expect("valid UTF-8 besides surrogates")
    }
}

impl<'de> Deserialize<'de> for Wtf8 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl Visitor<'_> for Bytes {
            type Value = Wtf8;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Wtf8, E> {
                Ok(Wtf8(v.to_vec()))
            }
        }
        d.deserialize_bytes(Bytes)
    }
}
