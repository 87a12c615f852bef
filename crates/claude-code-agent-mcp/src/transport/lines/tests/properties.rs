//! The reader under random chunking (with cancelled reads), random
//! garbage between the messages and a random line cap, checked against
//! the line-by-line model of [`super::super::fuzz`] (the one the fuzz
//! target `ndjson_reader` uses) and against what each generated line
//! is known to be.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::fuzz::{ReaderItem, check_ndjson_reader};

/// A line's bytes (no `\n`) and what it is, if it fits under the cap.
#[derive(Debug, Clone)]
struct Line {
    bytes: Vec<u8>,
    object: Option<Value>,
}

fn object_line() -> impl Strategy<Value = Line> {
    (
        any::<u32>(),
        "[a-zé\"\\\\/ \t]{0,80}",
        0usize..400,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(n, s, pad, spaces, crlf)| {
            let v = json!({"type": "assistant", "n": n, "s": s, "pad": "p".repeat(pad)});
            let mut bytes = Vec::new();
            if spaces {
                bytes.extend_from_slice(b" \t ");
            }
            bytes.extend_from_slice(v.to_string().as_bytes());
            if crlf {
                bytes.push(b'\r');
            }
            Line {
                bytes,
                object: Some(v),
            }
        })
}

/// Bytes that are never a JSON object line: they start with something
/// other than `{` (after whitespace), or with `{` and a raw control
/// character.
fn garbage_line() -> impl Strategy<Value = Line> {
    let prefix = prop_oneof![
        Just(b"[SandboxDebug] ".to_vec()),
        Just(b"[1,2]".to_vec()),
        Just(b"42".to_vec()),
        Just(b"\"str\"".to_vec()),
        Just(b"null".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just(b"{\x01".to_vec()),
        Just(b"  {\"truncated\": [1, \x02".to_vec()),
        Just(b"\x1b[31mred".to_vec()),
    ];
    let tail = prop::collection::vec(
        any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
        0..120,
    );
    (prefix, tail).prop_map(|(mut bytes, tail)| {
        bytes.extend(tail);
        Line {
            bytes,
            object: None,
        }
    })
}

fn blank_line() -> impl Strategy<Value = Line> {
    prop_oneof![Just(""), Just("\r"), Just("   "), Just("\t \r")].prop_map(|s| Line {
        bytes: s.as_bytes().to_vec(),
        object: None,
    })
}

fn any_line() -> impl Strategy<Value = Line> {
    prop_oneof![
        4 => object_line(),
        3 => garbage_line(),
        1 => blank_line(),
    ]
}

/// Read sizes; a 0 is a pending read that drops the `next_line` future.
fn chunks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(
        prop_oneof![Just(0usize), 1usize..8, 1usize..600, Just(1 << 20)],
        0..12,
    )
}

/// What the reader must yield: one `TooLong` per line over the cap, the
/// object of every object line under it, one `Protocol` for a garbage
/// line that starts with `{` (a message that was lost), nothing for
/// anything else.
fn expected(lines: &[Line], cap: usize) -> Vec<ReaderItem> {
    lines
        .iter()
        .filter_map(|l| {
            if l.bytes.len() > cap {
                Some(ReaderItem::TooLong)
            } else if let Some(object) = &l.object {
                Some(ReaderItem::Object(object.clone()))
            } else {
                (l.bytes.trim_ascii().first() == Some(&b'{')).then_some(ReaderItem::Protocol)
            }
        })
        .collect()
}

fn join(lines: &[Line], final_newline: bool) -> Vec<u8> {
    let mut data = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        data.extend_from_slice(&l.bytes);
        if i + 1 < lines.len() || final_newline {
            data.push(b'\n');
        }
    }
    data
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn garbage_cap_and_chunking_never_lose_or_invent_a_message(
        lines in prop::collection::vec(any_line(), 0..40),
        cap in prop_oneof![0usize..64, 64usize..700, Just(1 << 20)],
        chunks in chunks(),
        final_newline in any::<bool>(),
    ) {
        let data = join(&lines, final_newline);
        let got = check_ndjson_reader(&data, &chunks, cap);
        prop_assert_eq!(got, expected(&lines, cap));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Lines around the reader's buffer size, so it grows, moves the
    /// pending line to the front and skips over-long lines across reads.
    #[test]
    fn lines_larger_than_the_read_buffer(
        sizes in prop::collection::vec(0usize..600_000, 1..5),
        cap in 200_000usize..500_000,
        chunk in prop_oneof![1000usize..70_000, Just(1 << 20)],
    ) {
        let lines: Vec<Line> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let v = json!({"i": i, "data": "z".repeat(n)});
                Line { bytes: v.to_string().into_bytes(), object: Some(v) }
            })
            .collect();
        let data = join(&lines, true);
        let got = check_ndjson_reader(&data, &[chunk, 0], cap);
        prop_assert_eq!(got, expected(&lines, cap));
    }
}

#[test]
fn an_over_long_line_is_one_error_and_the_next_line_arrives() {
    let data = b"{\"a\":1}\n{\"long\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n{\"b\":2}\n";
    for chunk in [1, 2, 3, 7, 64] {
        let got = check_ndjson_reader(data, &[chunk, 0], 16);
        assert_eq!(
            got,
            [
                ReaderItem::Object(json!({"a": 1})),
                ReaderItem::TooLong,
                ReaderItem::Object(json!({"b": 2})),
            ],
            "chunk {chunk}"
        );
    }
}

/// Lines serde_json refuses though they look like objects (a number out
/// of range, nesting past its recursion limit) are each reported, and
/// the stream goes on.
#[test]
fn unparsable_objects_are_reported_and_the_stream_goes_on() {
    let deep = format!("{}{}", "{\"a\":[".repeat(200), "]}".repeat(200));
    let data = format!("{{\"n\":1e999}}\n{deep}\n{{\"ok\":true}}\n");
    for chunk in [1, 9, 4096] {
        let got = check_ndjson_reader(data.as_bytes(), &[chunk], 1 << 20);
        assert_eq!(
            got,
            [
                ReaderItem::Protocol,
                ReaderItem::Protocol,
                ReaderItem::Object(json!({"ok": true}))
            ],
            "chunk {chunk}"
        );
    }
}
