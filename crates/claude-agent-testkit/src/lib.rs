//! Test support for claude-agent: run the real Claude Code CLI offline and
//! deterministically.
//!
//! * [`mock_api`] — [`MockModel`], a scripted mock of the Anthropic Messages API
//!   (`/v1/messages` with SSE streaming, `/v1/messages/count_tokens`) that records every
//!   request for assertions.
//! * [`cli`] — finds or installs the pinned Claude Code CLI ([`PINNED_CLI_VERSION`]) and
//!   builds the offline environment ([`CliEnv`]) that points it at a mock.
//! * [`tasks`] — checks that a test left no Tokio task running.
//!
//! ```no_run
//! use claude_agent_testkit::{CliEnv, MockModel, Turn, pinned_cli};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mock = MockModel::builder()
//!     .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
//!     .turn(Turn::text("5"))
//!     .start()
//!     .await;
//! let env = CliEnv::for_mock(&mock)?;
//! let cli = pinned_cli()?;
//! // spawn `env.command(&cli)` (or give the SDK the CLI path and `env.vars()`),
//! // talk stream-json to it, then:
//! let results = mock.tool_results();
//! # let _ = results;
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod cli;
pub mod mock_api;
pub mod tasks;

pub use cli::{CliEnv, PINNED_CLI_VERSION, pinned_cli};
pub use mock_api::{
    MockModel, MockModelBuilder, RecordedRequest, RecordedToolResult, RequestKind, Turn,
};
