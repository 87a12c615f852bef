//! Test your Claude agents offline and deterministically: the real, pinned
//! Claude Code CLI against a scripted model, and checks that a test leaves
//! no process and no task behind.
//!
//! * [`Harness`] (feature `harness`, on by default) — one test of an agent:
//!   a mock model, the pinned CLI in an isolated environment, SDK options
//!   that run it there, and at the end a check that no CLI process (Linux)
//!   and no task is left. [`transcript`] reads the messages in assertions.
//! * [`mock_api`] — [`MockModel`], a scripted mock of the Anthropic Messages API
//!   (`/v1/messages` with SSE streaming, `/v1/messages/count_tokens`) that records every
//!   request for assertions.
//! * [`cli`] — finds or installs the pinned Claude Code CLI ([`PINNED_CLI_VERSION`]) and
//!   builds the offline environment ([`CliEnv`]) that points it at a mock.
//! * [`tasks`] — checks that a test left no Tokio task running.
//! * `cassette` (feature `cassette`, off by default) — records a real
//!   session once through a proxy and replays it offline (docs/cassettes.md).
//! * `otlp` (feature `otlp`, off by default) — `OtlpReceiver`, a local
//!   OpenTelemetry trace receiver (OTLP over HTTP, protobuf) that keeps the
//!   spans an agent and the CLI export, for assertions
//!   (docs/observability.md).
//!
//! With the harness:
//!
//! ```no_run
//! use claude_code_agent::query;
//! use claude_code_agent_testkit::transcript::{assistant_text, drain};
//! use claude_code_agent_testkit::{Harness, MockModel, Turn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let h = Harness::start(MockModel::builder().turn(Turn::text("Hello!"))).await;
//! let (messages, error) = drain(query("Hi", h.options())).await;
//! assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
//! assert_eq!(assistant_text(&messages), "Hello!");
//! h.finish().await; // no CLI process, no task left
//! # }
//! ```
//!
//! Or by hand, without the SDK:
//!
//! ```no_run
//! use claude_code_agent_testkit::{CliEnv, MockModel, Turn, pinned_cli};
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

#[cfg(feature = "cassette")]
pub mod cassette;
pub mod cli;
#[cfg(feature = "harness")]
mod harness;
pub mod mock_api;
#[cfg(feature = "otlp")]
pub mod otlp;
#[cfg(target_os = "linux")]
mod process;
pub mod tasks;
#[cfg(feature = "harness")]
pub mod transcript;

pub use cli::{CliEnv, PINNED_CLI_VERSION, pinned_cli};
#[cfg(feature = "harness")]
pub use harness::{Harness, HarnessError};
pub use mock_api::{
    MockModel, MockModelBuilder, RecordedRequest, RecordedToolResult, RequestKind, Turn,
};

/// The guide in `docs/cassettes.md`, compiled so its examples stay true.
#[cfg(all(doctest, feature = "cassette"))]
#[doc = include_str!("../../../docs/cassettes.md")]
mod cassettes_guide {}

/// Not public API: what this workspace's own tests share with this crate.
/// Anything here may change or go in any release.
#[doc(hidden)]
pub mod __private {
    /// The processes of a test, read from `/proc` (Linux).
    #[cfg(target_os = "linux")]
    pub mod process {
        pub use crate::process::*;
    }
}
