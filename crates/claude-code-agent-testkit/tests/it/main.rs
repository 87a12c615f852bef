//! The integration tests of `claude-code-agent-testkit`, in one test binary
//! (`it`): the CLI installer with a fake `npm`, the mock Messages API over
//! HTTP, and the real CLI against the mock (`support` drives it raw,
//! without the SDK).

#[cfg(unix)]
mod installer;
mod mock_api;
mod real_cli;
mod support;
