//! The integration tests of `claude-code-agent`, in one test binary (`it`,
//! as cargo's and rust-analyzer's are laid out): one module per behaviour,
//! and `support` for what they share. `cli_*` drive the real pinned CLI
//! through the testkit's `Harness`, `fake_cli_*` the fake CLI, `messages_*`
//! and `sessions_fixture` read the recorded fixtures, `tidy*` check the
//! repository. A module that needs an optional feature is compiled only
//! with it, so `cargo test` builds this binary under any feature set.
//!
//! Run a group with a name filter: `cargo test -p claude-code-agent --test
//! it -- cli_` (every real-CLI test), `-- tidy`.

#[cfg(feature = "http-server")]
mod calculator_http;
mod cli_bridge;
mod cli_builtin_tools;
mod cli_cassette;
mod cli_client;
mod cli_dialogs;
mod cli_handler_failures;
mod cli_hooks;
mod cli_large;
mod cli_mcp_control;
mod cli_methods;
mod cli_options;
#[cfg(feature = "opentelemetry")]
mod cli_otel;
mod cli_permissions;
mod cli_process;
#[cfg(feature = "rmcp")]
mod cli_rmcp;
mod cli_session_store;
mod cli_sessions;
mod cli_startup;
mod cli_stream;
mod cli_timeouts;
mod cli_tools;
mod external_cli;
#[cfg(feature = "http-server")]
mod external_peers;
mod fake_cli_control;
mod fake_cli_flow;
mod fake_cli_process;
mod fake_cli_stream;
mod fake_cli_version;
mod fuzz;
mod messages_captures;
mod messages_lossless;
mod messages_roundtrip;
mod messages_sdk_output;
mod parity_337;
mod parity_decode;
mod prop_boundaries;
mod prop_control;
mod sessions_fixture;
mod sessions_store;
mod support;
mod tidy;
mod tidy_layers;
mod tidy_parity;
mod tidy_targets;
