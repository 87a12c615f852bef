//! Give Claude your own Rust tools, in process, through the Claude Code CLI.
#![warn(missing_docs)]

mod bridge;
mod callbacks;
mod client;
mod command;
mod error;
pub mod message;
mod options;
pub mod protocol;
mod query;
mod session;
pub mod sessions;
mod transport;

pub use callbacks::{HookContext, HookMatcher, PermissionContext};
pub use client::{Client, McpServerSpec};
pub use error::{Error, Result};
pub use message::{
    AssistantMessage, Content, ContentBlock, Message, ResultMessage, SystemMessage, UserInput,
    UserMessage,
};
pub use options::{
    DEFAULT_CONTROL_TIMEOUT, DEFAULT_MAX_LINE_BYTES, McpConfig, Options, SettingSource,
    SystemPrompt,
};
pub use protocol::{
    AgentDefinition, HookEvent, HookInput, HookOutput, McpServerConfig, PermissionMode,
    PermissionResult, PermissionUpdate,
};
pub use query::{Prompt, query, user_message};
pub use transport::ShutdownTimeouts;
pub use transport::{StderrCallback, find_cli};

/// The MCP layer: protocol types, the in-process server, client and transports.
pub use claude_agent_mcp as mcp;

/// The guide in `docs/mcp-servers.md`, compiled so its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/mcp-servers.md")]
mod mcp_servers_guide {}

/// The README, compiled so its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

/// Not a public API: lets the fuzz targets (`fuzz/`) and the property tests
/// drive crate-internal code. May change or disappear in any release.
#[doc(hidden)]
pub mod __private_fuzz {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use serde_json::Value;

    /// What the CLI's stdout reader yielded for one line.
    #[derive(Debug, Clone, PartialEq)]
    pub enum ReaderItem {
        /// A JSON object.
        Object(Value),
        /// `Error::LineTooLong`.
        TooLong,
        /// `Error::Protocol` (an object serde cannot hold, e.g. `1e999`).
        Protocol,
    }

    /// Reads `data` with the CLI's stdout reader ([`crate::transport::LineReader`])
    /// and a line cap of `max_line` bytes. Reads hand out `chunks[i]` bytes in
    /// turn (cycled); a `0` makes that read pending, which drops the pending
    /// `next_line` future (cancellation) before the next one is polled.
    pub fn read_ndjson(data: &[u8], chunks: &[usize], max_line: usize) -> Vec<ReaderItem> {
        struct Src<'a>(&'a [u8], &'a [usize], usize);
        impl tokio::io::AsyncRead for Src<'_> {
            fn poll_read(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<std::io::Result<()>> {
                let (data, chunks, turn) = (self.0, self.1, self.2);
                self.2 += 1;
                let chunk = if chunks.iter().all(|&c| c == 0) {
                    1
                } else {
                    chunks[turn % chunks.len()]
                };
                if chunk == 0 {
                    return Poll::Pending;
                }
                let n = chunk.min(data.len()).min(buf.remaining());
                buf.put_slice(&data[..n]);
                self.0 = &data[n..];
                Poll::Ready(Ok(()))
            }
        }
        let chunks = if chunks.is_empty() {
            &[usize::MAX][..]
        } else {
            chunks
        };
        let mut reader = crate::transport::LineReader::new(Src(data, chunks, 0), max_line);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut out = Vec::new();
        loop {
            let next = std::pin::pin!(reader.next_line());
            match next.poll(&mut cx) {
                Poll::Pending => continue,
                Poll::Ready(None) => return out,
                Poll::Ready(Some(Ok(value))) => out.push(ReaderItem::Object(value)),
                Poll::Ready(Some(Err(crate::Error::LineTooLong { limit }))) => {
                    assert_eq!(limit, max_line);
                    out.push(ReaderItem::TooLong);
                }
                Poll::Ready(Some(Err(crate::Error::Protocol { .. }))) => {
                    out.push(ReaderItem::Protocol)
                }
                Poll::Ready(Some(Err(other))) => panic!("unexpected reader error: {other}"),
            }
        }
    }

    /// What [`read_ndjson`] must yield, computed line by line from the whole
    /// input: each line (split on `\n`, the last one may lack it) longer than
    /// `max_line` bytes is one `TooLong`; otherwise, trimmed of ASCII
    /// whitespace, a line that starts with `{` and parses is an `Object`, one
    /// that parses as JSON but not into a value is `Protocol`, and every other
    /// line is skipped.
    pub fn expected_ndjson(data: &[u8], max_line: usize) -> Vec<ReaderItem> {
        let mut out = Vec::new();
        for line in data.split(|&b| b == b'\n') {
            if line.len() > max_line {
                out.push(ReaderItem::TooLong);
                continue;
            }
            let line = line.trim_ascii();
            if line.first() != Some(&b'{') {
                continue;
            }
            match serde_json::from_slice::<Value>(line) {
                Ok(value) => out.push(ReaderItem::Object(value)),
                Err(e) if e.classify() == serde_json::error::Category::Data => {
                    out.push(ReaderItem::Protocol)
                }
                Err(_) => {}
            }
        }
        out
    }

    /// Runs [`read_ndjson`] and panics unless it yields exactly
    /// [`expected_ndjson`] and every value is an object. Returns the items.
    pub fn check_ndjson_reader(data: &[u8], chunks: &[usize], max_line: usize) -> Vec<ReaderItem> {
        let got = read_ndjson(data, chunks, max_line);
        for item in &got {
            if let ReaderItem::Object(v) = item {
                assert!(v.is_object(), "the reader yielded a non-object: {v}");
            }
        }
        let want = expected_ndjson(data, max_line);
        assert_eq!(
            got, want,
            "reader and line-by-line model differ (cap {max_line}, chunks {chunks:?})"
        );
        got
    }
}
