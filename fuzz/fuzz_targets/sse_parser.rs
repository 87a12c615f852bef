//! `sse_parser`: the MCP HTTP client's Server-Sent Events parser on any
//! bytes fed in any chunks (`claude_code_agent_mcp::__private::fuzz::
//! sse_parser` says what the input is and what is checked).
#![no_main]

use claude_code_agent_mcp::__private::fuzz::sse_parser;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| sse_parser(input));
