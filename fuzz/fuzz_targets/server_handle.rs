//! `server_handle`: `Server::handle` on batches of JSON-RPC-like messages
//! handled concurrently on one session
//! (`claude_code_agent_mcp::__private::fuzz::server_handle` says what the
//! input is and what is checked).
#![no_main]

use std::sync::Once;

use claude_code_agent_mcp::__private::fuzz::{DELIBERATE_PANIC, server_handle};
use libfuzzer_sys::fuzz_target;

/// Lets the tool's deliberate panic unwind (the server must contain it);
/// any other panic still goes to libFuzzer's hook, which aborts.
fn allow_deliberate_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&DELIBERATE_PANIC) {
                fuzzer_hook(info);
            }
        }));
    });
}

fuzz_target!(|input: &[u8]| {
    allow_deliberate_panics();
    server_handle(input);
});
