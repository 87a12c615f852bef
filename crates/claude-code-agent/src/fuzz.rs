//! Not a public API (feature `__fuzz`): the SDK's fuzz target, a function
//! of the raw input that panics on a finding. The libFuzzer target
//! (`fuzz/fuzz_targets/control_decoder.rs`) wraps it, and this crate's tests
//! run it through the MCP crate's short run
//! (`claude_code_agent_mcp::__private::fuzz::short_run`). May change or
//! disappear in any release.

mod control_decoder;
mod words;

pub use control_decoder::control_decoder;
