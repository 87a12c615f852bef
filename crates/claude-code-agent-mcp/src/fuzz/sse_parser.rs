//! The fuzz target `sse_parser`: the MCP HTTP client's Server-Sent Events
//! parser ([`SseParser`]) on arbitrary bytes fed in arbitrary chunks (empty
//! chunks included).
//!
//! Input: the low 3 bits of byte 0 say how many chunk-size bytes follow; the
//! rest is the stream, fed in those sizes (cycled). Checked: no panic; the
//! events, last event id and retry time do not depend on the chunking and
//! equal those of a line-by-line model of the event-stream rules over the
//! whole stream.
//!
//! Found here and fixed (`fuzz/regressions/sse_parser/`): an empty `feed`
//! between a chunk ending in CR and one starting with LF made that LF a
//! second line end. Empty chunks are fed unless `FUZZ_SSE_EMPTY_CHUNKS=0`.

use std::sync::OnceLock;

use crate::client::http::{SseEvent, SseParser};

fn feed_empty_chunks() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FUZZ_SSE_EMPTY_CHUNKS").is_none_or(|v| v != "0"))
}

type Outcome = (Vec<SseEvent>, Option<String>, Option<u64>);

/// Feeds the stream in the input's chunk sizes and whole, and panics unless
/// both give what the `model` of the event-stream rules gives.
pub fn sse_parser(input: &[u8]) {
    let [n, rest @ ..] = input else { return };
    let n = usize::from(n & 7).min(rest.len());
    let (sizes, stream) = rest.split_at(n);

    let mut p = SseParser::new();
    let mut events = Vec::new();
    let all_empty = sizes.iter().all(|&s| s == 0);
    let mut pos = 0;
    let mut turn = 0;
    while pos < stream.len() && !(all_empty && turn >= sizes.len()) {
        let size = sizes
            .get(turn % sizes.len().max(1))
            .map_or(stream.len(), |&s| usize::from(s));
        turn += 1;
        let end = (pos + size).min(stream.len());
        if end == pos && !feed_empty_chunks() {
            continue;
        }
        events.extend(p.feed(&stream[pos..end]));
        pos = end;
    }
    events.extend(p.feed(&stream[pos..]));
    let chunked: Outcome = (events, p.last_event_id().map(str::to_owned), p.retry_ms());

    let mut whole = SseParser::new();
    let events = whole.feed(stream);
    let at_once: Outcome = (
        events,
        whole.last_event_id().map(str::to_owned),
        whole.retry_ms(),
    );
    assert_eq!(
        chunked, at_once,
        "chunking changed the outcome (sizes {sizes:?})"
    );
    assert_eq!(at_once, model(stream), "parser and model differ");
}

/// The event-stream rules, applied to complete lines of the whole stream (an
/// unterminated last line is not processed).
fn model(stream: &[u8]) -> Outcome {
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let mut i = 0;
    while i < stream.len() {
        match stream[i] {
            b'\r' => {
                lines.push(std::mem::take(&mut line));
                if stream.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => lines.push(std::mem::take(&mut line)),
            b => line.push(b),
        }
        i += 1;
    }
    let (mut events, mut last_id, mut retry) = (Vec::new(), None, None);
    let (mut event, mut data): (Option<String>, Option<String>) = (None, None);
    for line in lines {
        if line.is_empty() {
            if let Some(data) = data.take() {
                events.push(SseEvent {
                    event: event.take(),
                    data,
                    id: last_id.clone(),
                });
            }
            event = None;
            continue;
        }
        let line = String::from_utf8_lossy(&line);
        let (field, value) = match line.split_once(':') {
            Some(("", _)) => continue,
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (&*line, ""),
        };
        match field {
            "event" => event = Some(value.to_owned()),
            "data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            },
            "id" if !value.contains('\0') => last_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                retry = value.parse().ok();
            }
            _ => {}
        }
    }
    (events, last_id, retry)
}
