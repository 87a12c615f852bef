//! The NDJSON line reader every stdio peer uses
//! (`claude_code_agent_mcp::__private::transport::LineReader`: the CLI's stdout, MCP stdio
//! servers and clients) on arbitrary bytes, read in arbitrary chunk sizes
//! with cancellations, under a small line cap.
//!
//! Input: byte 0 picks the line cap, the low 3 bits of byte 1 say how many
//! chunk-size bytes follow (0: one read for everything); the rest is the
//! stream. Checked (`check_ndjson_reader`, feature `__fuzz`): no panic; the
//! raw lines (text, or the length and head of an over-long line, and
//! whether the input ended mid-line) equal a line-by-line model; read the
//! way the SDK reads the CLI, only objects are yielded and they equal the
//! model too — so a line over the cap is exactly one report and the lines
//! after it still arrive.
#![no_main]

use claude_code_agent_mcp::__private::transport::lines::fuzz::check_ndjson_reader;
use libfuzzer_sys::fuzz_target;

const CAPS: [usize; 8] = [0, 1, 2, 5, 16, 64, 512, 1 << 20];

fuzz_target!(|input: &[u8]| {
    let [cap, n, rest @ ..] = input else { return };
    let n = usize::from(n & 7).min(rest.len());
    let (sizes, data) = rest.split_at(n);
    // 0 = a pending read (the pending `next_line` is dropped), 255 = large.
    let chunks: Vec<usize> = sizes
        .iter()
        .map(|&b| if b == 255 { 1 << 20 } else { usize::from(b) })
        .collect();
    check_ndjson_reader(data, &chunks, CAPS[usize::from(cap & 7)]);
});
