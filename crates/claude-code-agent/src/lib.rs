//! Give Claude your own Rust tools, in process, through the Claude Code CLI.
//!
//! Features (none on by default, so a program with in-process tools compiles
//! no HTTP stack); all but `opentelemetry` turn on the MCP crate's namesake:
//! * `http-client` — the MCP client's Streamable HTTP transport
//!   (`mcp::client::HttpTransport`, reqwest with rustls);
//! * `http-server` — serving MCP over Streamable HTTP (`mcp::http_server`,
//!   axum on hyper);
//! * `oauth-client` — the MCP client reaches servers behind OAuth 2.1
//!   (`mcp::client::auth`);
//! * `oauth-server` — the HTTP server as an OAuth protected resource, with
//!   JWT and introspection verifiers (`mcp::http_server::JwtVerifier`);
//! * `redis` — replicas of the HTTP server sharing sessions and streams
//!   through Redis (`mcp::http_server::RedisEventStore`; brings
//!   `http-server`);
//! * `jsonschema` — the `jsonschema` crate for tool schemas beyond the
//!   built-in checker;
//! * `rmcp` — any `rmcp::ServerHandler` as an in-process server
//!   (`McpServerConfig::rmcp`, `Options::rmcp_server`; depend on rmcp 3
//!   yourself);
//! * `opentelemetry` — one trace across the process boundary: the CLI's
//!   spans become children of the session's span (its W3C trace context
//!   passed as `TRACEPARENT`), through `tracing-opentelemetry`'s layer
//!   (docs/observability.md).
//!
//! Without a feature, the SDK makes `tracing` spans for a session, its
//! turns, the CLI's requests and each in-process tool call, at level INFO
//! (docs/observability.md).
//!
//! Platforms: Linux and macOS, where the CLI runs in its own process group;
//! Windows, where it runs in a Job Object that ends with it (compile-checked
//! only: see the README).
#![warn(missing_docs)]

#[cfg(not(any(unix, windows)))]
compile_error!(
    "claude-code-agent supports Unix-like systems (Linux, macOS) and Windows: it runs the Claude \
     Code CLI in its own process group (POSIX) or Job Object (Windows)."
);

mod bridge;
mod callbacks;
mod cli_version;
mod client;
mod command;
mod control;
mod error;
#[cfg(feature = "__fuzz")]
mod fuzz;
pub mod message;
mod options;
pub mod protocol;
mod query;
mod queue;
mod session;
pub mod sessions;
mod shared_types;
mod spawn;
mod startup;
mod stream;
mod telemetry;
pub mod tools;
mod transport;
mod wire;

pub use callbacks::{DialogContext, HookContext, HookMatcher, PermissionContext};
pub use cli_version::{
    CliVersion, CliVersionPolicy, NEWEST_TESTED_CLI_VERSION, OLDEST_TESTED_CLI_VERSION,
};
pub use client::Client;
pub use control::{Control, ReloadPluginsOptions};
pub use error::{Error, Result};
pub use message::{
    AssistantMessage, ContentBlock, Message, MessageContent, ResultMessage, SystemMessage,
    UserInput, UserMessage,
};
pub use options::{
    AskUserQuestionConfig, CliTelemetry, DEFAULT_CONTROL_TIMEOUT, DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_TRANSCRIPT_BYTES, DEFAULT_SESSION_STORE_TIMEOUT, Options,
    Plugin, SYSTEM_PROMPT_DYNAMIC_BOUNDARY, SandboxSettings, SettingSource, Skills, SystemPrompt,
    Thinking,
};
pub use protocol::{
    AgentDefinition, ContextDetail, Effort, HookEvent, HookInput, HookOutput, InProcessServer,
    McpServerConfig, PermissionMode, PermissionResult, PermissionUpdate, ThinkingDisplay,
};
pub use query::{PromptInput, Query, query};
pub use spawn::CliCommand;
pub use startup::{WarmQuery, startup};
pub use stream::MessageStream;
pub use tools::BuiltinTool;
pub use transport::ShutdownTimeouts;
pub use transport::{StderrCallback, find_cli};

/// The MCP layer: protocol types, the in-process server, client and transports.
pub use claude_code_agent_mcp as mcp;

/// Not public API: what this workspace's fake CLI, fuzz targets and tests
/// share with this crate. Anything here may change or go in any release.
#[doc(hidden)]
pub mod __private {
    /// The control protocol's envelopes and the requests the CLI sends, as
    /// the SDK reads and writes them.
    pub mod wire {
        pub use crate::protocol::envelope::{
            ControlCancelRequest, ControlError, ControlRequest, ControlResponse,
            ControlResponseBody, ControlSuccess, Incoming, SdkControlRequest,
        };
        pub use crate::protocol::requests::{
            CanUseToolRequest, CliRequest, HookCallbackRequest, McpServerRef,
        };
        pub use crate::protocol::responses::McpMessageResponse;
    }

    /// The SDK's fuzz target (feature `__fuzz`).
    #[cfg(feature = "__fuzz")]
    pub mod fuzz {
        pub use crate::fuzz::*;
    }
}

/// The guide in `docs/mcp-servers.md`, compiled so its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/mcp-servers.md")]
mod mcp_servers_guide {}

/// The guide in `docs/builtin-tools.md`, compiled so its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/builtin-tools.md")]
mod builtin_tools_guide {}

/// The guide in `docs/observability.md`, compiled so its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/observability.md")]
mod observability_guide {}

/// The guide in `docs/sessions.md`, compiled so its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/sessions.md")]
mod sessions_guide {}

/// The README, compiled so its example stays true (`README.md` in this
/// crate is the repository's README).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
