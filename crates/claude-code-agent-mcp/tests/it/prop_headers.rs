//! Header values mirrored from tool arguments (`Mcp-Param-*`): every value,
//! control characters (CR, LF, NUL, …) included, becomes a valid header
//! value (base64-wrapped when it must be) that decodes back to the argument
//! exactly, so an argument cannot inject a header.

use claude_code_agent_mcp::__private::encode_header_value;
use proptest::prelude::*;

fn unbase64(s: &str) -> Vec<u8> {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes().take_while(|&c| c != b'=') {
        let v = A.iter().position(|&a| a == c).expect("base64 alphabet") as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,24}",
        "[ -~]{0,24}",
        "[a-z]{0,6}[\r\n\t\u{0}\u{7f}\u{85}][a-zA-Z: -]{0,12}",
        "=\\?base64\\?[a-z]{0,4}\\?=",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_value_becomes_a_valid_header_and_round_trips(value in text()) {
        let encoded = encode_header_value(&value);
        // A valid field value: visible ASCII and inner spaces only.
        prop_assert!(encoded.bytes().all(|b| (0x20..0x7f).contains(&b)), "{:?}", encoded);
        prop_assert_eq!(encoded.trim(), encoded.as_str());
        let decoded = match encoded.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
            Some(b64) => String::from_utf8(unbase64(b64)).unwrap(),
            None => {
                prop_assert!(!value.chars().any(char::is_control), "sent as it is: {:?}", value);
                encoded.clone()
            }
        };
        prop_assert_eq!(decoded, value);
    }
}
