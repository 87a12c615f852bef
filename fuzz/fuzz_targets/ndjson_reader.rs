//! `ndjson_reader`: the NDJSON line reader of every stdio peer, on any bytes
//! in any chunking (`claude_code_agent_mcp::__private::fuzz::ndjson_reader`
//! says what the input is and what is checked).
#![no_main]

use claude_code_agent_mcp::__private::fuzz::ndjson_reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| ndjson_reader(input));
