//! The integration tests of `claude-code-agent-mcp`, in one test binary
//! (`it`, as cargo's and rust-analyzer's are laid out): one module per
//! behaviour, and `support` for what they share. A module that needs an
//! optional transport is compiled only with its feature, so `cargo test`
//! builds this binary under any feature set.
//!
//! Run one module's tests with a name filter: `cargo test -p
//! claude-code-agent-mcp --test it -- client_http::`.

mod asking;
mod batches;
mod bounded_queues;
#[cfg(unix)]
mod budget_liveness;
mod cancellation;
mod client_capabilities;
mod client_direct;
mod client_fidelity;
#[cfg(feature = "http-client")]
mod client_http;
#[cfg(feature = "http-client")]
mod client_http_faults;
#[cfg(feature = "http-client")]
mod client_http_get_stream;
#[cfg(feature = "http-client")]
mod client_http_retry;
#[cfg(all(feature = "http-client", feature = "http-server"))]
mod client_http_session;
mod client_in_process;
#[cfg(all(feature = "http-client", feature = "http-server"))]
mod client_listen;
mod client_stdio;
mod client_stdio_faults;
mod concurrency;
mod discover;
mod envelope;
mod extensions;
#[cfg(target_os = "linux")]
mod flood;
mod fuzz;
mod handler_failures;
mod handler_results;
mod handshake;
#[cfg(feature = "http-server")]
mod http_server;
#[cfg(feature = "http-server")]
mod http_server_faults;
#[cfg(all(feature = "http-server", feature = "http-client"))]
mod http_stateless;
#[cfg(feature = "http-client")]
mod interop_everything;
#[cfg(feature = "http-client")]
mod interop_python;
#[cfg(feature = "http-client")]
mod interop_rmcp;
#[cfg(feature = "http-server")]
mod interop_ts2_client;
#[cfg(feature = "http-client")]
mod interop_ts2_server;
#[cfg(feature = "http-server")]
mod interop_ts_client;
#[cfg(feature = "http-client")]
mod interop_ts_server;
mod list_changed;
mod messages;
#[cfg(all(feature = "redis", feature = "http-client", unix))]
mod no_lost_calls;
#[cfg(all(feature = "oauth-client", feature = "oauth-server"))]
mod oauth_client;
#[cfg(feature = "oauth-server")]
mod oauth_server;
#[cfg(feature = "oauth-server")]
mod oauth_ts_client;
mod outstanding_requests;
mod peer_conformance;
#[cfg(feature = "http-client")]
mod peer_conformance_client;
#[cfg(all(feature = "http-client", feature = "http-server"))]
mod progress_timeout;
mod prompts;
mod prop_headers;
mod proptest_handle;
#[cfg(all(feature = "redis", feature = "http-client", unix))]
mod redis_sentinel;
#[cfg(feature = "http-server")]
mod replicas;
mod resources;
#[cfg(feature = "rmcp")]
mod rmcp_in_process;
#[cfg(all(feature = "redis", feature = "http-client", unix))]
mod scale_out;
mod serve_lines;
mod serve_lines_admission;
#[cfg(unix)]
mod serve_stdio;
mod size_cap;
mod skills;
mod support;
mod tasks;
mod timeout;
mod timeout_env;
mod tool_context;
mod tool_timeout_progress;
mod tools_call;
mod tools_list;
#[cfg(feature = "opentelemetry")]
mod trace_context;
