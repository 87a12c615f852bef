//! `lenient_json`: the lenient JSON decoding every transport reads through
//! (`claude_code_agent_mcp::__private::fuzz::lenient_json` says what the
//! input is and what is checked).
#![no_main]

use claude_code_agent_mcp::__private::fuzz::lenient_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| lenient_json(input));
