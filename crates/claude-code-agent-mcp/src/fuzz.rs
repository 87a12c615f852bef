//! Not a public API (feature `__fuzz`): the fuzz targets of this crate,
//! each a function of the raw input that panics on a finding. The
//! libFuzzer targets (`fuzz/fuzz_targets/`) wrap them, and this crate's
//! tests and the SDK's run them through [`short_run`]: the kept inputs,
//! then a bounded random run. May change or disappear in any release.
//!
//! The fifth target, `control_decoder`, is the SDK's own (on [`json_gen`]).

pub mod json_gen;
mod server_handle;
mod short_run;
#[cfg(feature = "http-client")]
mod sse_parser;

pub use arbitrary;
pub use server_handle::{DELIBERATE_PANIC, server_handle};
pub use short_run::{Target, short_run};
#[cfg(feature = "http-client")]
pub use sse_parser::sse_parser;

use crate::transport::json::fuzz::check_lenient_json;
use crate::transport::lines::fuzz::check_ndjson_reader;

/// The line caps byte 0 of an `ndjson_reader` input picks from.
const CAPS: [usize; 8] = [0, 1, 2, 5, 16, 64, 512, 1 << 20];

/// The NDJSON line reader every stdio peer uses (the CLI's stdout, MCP
/// stdio servers and clients) on arbitrary bytes, read in arbitrary chunk
/// sizes with cancellations, under a small line cap.
///
/// Byte 0 picks the line cap, the low 3 bits of byte 1 say how many
/// chunk-size bytes follow (0: one read for everything; a size 0 is a
/// pending read whose `next_line` is dropped, 255 a large one); the rest is
/// the stream. Checked (`check_ndjson_reader`): no panic; the raw lines
/// (text, or the length and head of an over-long line, and whether the
/// input ended mid-line) equal a line-by-line model; read the way the SDK
/// reads the CLI, only objects are yielded and they equal the model too —
/// so a line over the cap is exactly one report and the lines after it
/// still arrive.
pub fn ndjson_reader(input: &[u8]) {
    let [cap, n, rest @ ..] = input else { return };
    let n = usize::from(n & 7).min(rest.len());
    let (sizes, data) = rest.split_at(n);
    let chunks: Vec<usize> = sizes
        .iter()
        .map(|&b| if b == 255 { 1 << 20 } else { usize::from(b) })
        .collect();
    check_ndjson_reader(data, &chunks, CAPS[usize::from(cap & 7)]);
}

/// The lenient JSON decoding every transport reads through: lone surrogate
/// escapes, which JavaScript and Python write for a string cut mid-emoji,
/// decode to U+FFFD.
///
/// Byte 0 even: the rest is any text — `serde_json`'s answer unchanged
/// wherever it accepts, only surrogate escapes repaired where it does not,
/// a string equal to `serde_json`'s own non-validating reading of it with
/// each lone surrogate as U+FFFD, the envelope read without a panic. Odd:
/// the rest is a JavaScript string (two bytes per UTF-16 code unit), cut at
/// every unit, encoded as `JSON.stringify` and `json.dumps` encode it, and
/// decoded alone and inside a JSON-RPC line.
pub fn lenient_json(input: &[u8]) {
    check_lenient_json(input);
}
