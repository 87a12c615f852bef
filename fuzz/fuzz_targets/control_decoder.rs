//! `control_decoder`: the CLI's stdout messages and the typed decoders
//! under them (`claude_code_agent::__private::fuzz::control_decoder` says
//! what the input is and what is checked).
#![no_main]

use claude_code_agent::__private::fuzz::control_decoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| control_decoder(input));
