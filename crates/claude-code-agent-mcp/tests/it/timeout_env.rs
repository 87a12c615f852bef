//! `CLAUDE_AGENT_TOOL_TIMEOUT` sets the default tool timeout (clamped), and
//! the builder's setting wins over it. One test only: it sets the
//! environment of this test binary's process.
use std::time::Duration;

use claude_code_agent_mcp::Server;
use claude_code_agent_mcp::server::limits::TOOL_TIMEOUT_ENV;

#[test]
fn env_sets_default_timeout_and_builder_overrides_it() {
    // SAFETY: this is the only test in this binary, so no other thread
    // reads or writes the environment concurrently.
    unsafe { std::env::remove_var(TOOL_TIMEOUT_ENV) };
    assert_eq!(
        Server::builder("s", "1").build().tool_timeout(),
        Duration::from_secs(60)
    );

    unsafe { std::env::set_var(TOOL_TIMEOUT_ENV, "7") };
    assert_eq!(
        Server::builder("s", "1").build().tool_timeout(),
        Duration::from_secs(7)
    );

    unsafe { std::env::set_var(TOOL_TIMEOUT_ENV, "100000") };
    assert_eq!(
        Server::builder("s", "1").build().tool_timeout(),
        Duration::from_secs(300)
    );

    unsafe { std::env::set_var(TOOL_TIMEOUT_ENV, "0.01") };
    assert_eq!(
        Server::builder("s", "1").build().tool_timeout(),
        Duration::from_secs(1)
    );

    let explicit = Server::builder("s", "1")
        .tool_timeout(Duration::from_millis(400))
        .build();
    assert_eq!(explicit.tool_timeout(), Duration::from_millis(400));
    unsafe { std::env::remove_var(TOOL_TIMEOUT_ENV) };
}
