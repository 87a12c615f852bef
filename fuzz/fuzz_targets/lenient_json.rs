//! The lenient JSON decoding every transport reads through
//! (`claude_code_agent_mcp::__private::transport::json`): lone surrogate escapes, which
//! JavaScript and Python write for a string cut mid-emoji, decode to U+FFFD.
//!
//! Byte 0 even: the rest is any text — `serde_json`'s fast path unchanged
//! wherever it accepts, only surrogate escapes repaired where it does not,
//! a string equal to `serde_json`'s own non-validating reading of it with
//! each lone surrogate as U+FFFD, the envelope read without a panic. Odd:
//! the rest is a JavaScript string (two bytes per UTF-16 code unit), cut at
//! every unit, encoded as `JSON.stringify` and `json.dumps` encode it, and
//! decoded alone and inside a JSON-RPC line
//! (`transport::json::fuzz::check_lenient_json`, feature `__fuzz`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    claude_code_agent_mcp::__private::transport::json::fuzz::check_lenient_json(input);
});
