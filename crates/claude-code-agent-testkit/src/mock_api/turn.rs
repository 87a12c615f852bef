//! What the mock model answers: [`Turn`]s made of content [`Block`]s, API errors and
//! dynamic responders.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::request::RecordedRequest;

/// A closure that computes a reply from the request it answers.
///
/// Used by [`Turn::dynamic`] and [`MockModelBuilder::fallback`](super::MockModelBuilder::fallback).
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Turn + Send + Sync + 'static>;

/// One content block of a scripted assistant message.
///
/// Most scripts only need the [`Turn`] shortcuts ([`Turn::text`],
/// [`Turn::tool_use`], [`Turn::thinking`]); `Block` is there for full control,
/// e.g. a fixed tool-use id or a server-tool block the mock does not model.
///
/// ```
/// use claude_code_agent_testkit::mock_api::{Block, Turn};
/// use serde_json::json;
///
/// let turn = Turn::blocks([
///     Block::text("Let me add those."),
///     Block::tool_use_with_id("toolu_fixed_1", "mcp__calc__add", json!({"a": 2, "b": 3})),
/// ]);
/// assert_eq!(turn.tool_names(), vec!["mcp__calc__add"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Block {
    /// A `text` block, streamed as `text_delta`s.
    Text(String),
    /// A `thinking` block, streamed as `thinking_delta`s followed by one `signature_delta`.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature; `None` generates a random one.
        signature: Option<String>,
    },
    /// A client `tool_use` block, streamed as `input_json_delta`s.
    ToolUse {
        /// The tool-use id; `None` generates a realistic `toolu_…` id.
        id: Option<String>,
        /// The full tool name as offered to the model, e.g. `mcp__calc__add` or `Bash`.
        name: String,
        /// The tool input (a JSON object).
        input: Value,
    },
    /// Any other block (`server_tool_use`, `web_search_tool_result`, `redacted_thinking`, …),
    /// sent verbatim in `content_block_start` and closed right away.
    Raw(Value),
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text(text.into())
    }

    /// A thinking block with a generated signature.
    pub fn thinking(thinking: impl Into<String>) -> Block {
        Block::Thinking {
            thinking: thinking.into(),
            signature: None,
        }
    }

    /// A tool call with a generated `toolu_…` id.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Block {
        Block::ToolUse {
            id: None,
            name: name.into(),
            input,
        }
    }

    /// A tool call with a fixed id.
    pub fn tool_use_with_id(id: impl Into<String>, name: impl Into<String>, input: Value) -> Block {
        Block::ToolUse {
            id: Some(id.into()),
            name: name.into(),
            input,
        }
    }

    /// A block sent as is.
    pub fn raw(block: Value) -> Block {
        Block::Raw(block)
    }
}

/// An error reply: an HTTP status with Anthropic's error body
/// `{"type":"error","error":{"type":…,"message":…},"request_id":…}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status, e.g. 400, 429, 500, 529.
    pub status: u16,
    /// Anthropic error type, e.g. `invalid_request_error`, `overloaded_error`.
    pub error_type: String,
    /// Human-readable message.
    pub message: String,
}

#[derive(Clone)]
pub(crate) enum TurnKind {
    Reply {
        blocks: Vec<Block>,
        stop_reason: Option<String>,
    },
    Error {
        error: ApiError,
        /// How many requests of the same conversation step get this error
        /// (`None`: all of them, i.e. every retry fails too).
        times: Option<u32>,
    },
    Dynamic(Responder),
}

/// One scripted reply of the mock model.
///
/// Each conversation request the CLI sends to `POST /v1/messages` consumes the
/// next `Turn` of the script (see [`MockModel`](super::MockModel) for what counts
/// as a conversation request).
///
/// Build a reply from the shortcuts and chain more blocks with the `with_*` methods;
/// the stop reason is `tool_use` when the reply contains a tool call, else `end_turn`.
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_testkit::mock_api::Turn;
/// use serde_json::json;
///
/// // thinking, a bit of text, then two tool calls in one assistant message
/// let t = Turn::thinking("The user wants a sum.")
///     .with_text("Adding…")
///     .with_tool_use("mcp__calc__add", json!({"a": 2, "b": 3}))
///     .with_tool_use("mcp__calc__add", json!({"a": 4, "b": 5}));
/// assert_eq!(t.stop_reason(), Some("tool_use"));
///
/// // an overloaded error for the first attempt only; the CLI's retry gets the next turn
/// let e = Turn::overloaded().once();
/// assert!(e.is_error());
///
/// // a slow reply, to test interrupts
/// let slow = Turn::text("late").delay(Duration::from_secs(30));
/// # let _ = slow;
/// ```
#[derive(Clone)]
pub struct Turn {
    pub(crate) kind: TurnKind,
    pub(crate) delay: Duration,
    pub(crate) event_interval: Duration,
    pub(crate) headers: Vec<(String, String)>,
}

impl fmt::Debug for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Turn");
        match &self.kind {
            TurnKind::Reply {
                blocks,
                stop_reason,
            } => {
                d.field("blocks", blocks).field("stop_reason", stop_reason);
            }
            TurnKind::Error { error, times } => {
                d.field("error", error).field("times", times);
            }
            TurnKind::Dynamic(_) => {
                d.field("dynamic", &"<closure>");
            }
        }
        d.field("delay", &self.delay)
            .field("event_interval", &self.event_interval)
            .field("headers", &self.headers)
            .finish()
    }
}

impl Turn {
    fn from_kind(kind: TurnKind) -> Turn {
        Turn {
            kind,
            delay: Duration::ZERO,
            event_interval: Duration::ZERO,
            headers: Vec::new(),
        }
    }

    /// An assistant message made of the given blocks.
    pub fn blocks(blocks: impl IntoIterator<Item = Block>) -> Turn {
        Turn::from_kind(TurnKind::Reply {
            blocks: blocks.into_iter().collect(),
            stop_reason: None,
        })
    }

    /// A plain text answer (stop reason `end_turn`).
    ///
    /// ```
    /// # use claude_code_agent_testkit::mock_api::Turn;
    /// let t = Turn::text("4");
    /// assert_eq!(t.stop_reason(), Some("end_turn"));
    /// ```
    pub fn text(text: impl Into<String>) -> Turn {
        Turn::blocks([Block::text(text)])
    }

    /// One call of the tool with this full name (e.g. `mcp__calc__add`, `Bash`) and input
    /// (stop reason `tool_use`).
    pub fn tool_use(name: impl Into<String>, input: Value) -> Turn {
        Turn::blocks([Block::tool_use(name, input)])
    }

    /// Several tool calls in one assistant message (parallel tool use).
    pub fn tool_uses<N: Into<String>>(calls: impl IntoIterator<Item = (N, Value)>) -> Turn {
        Turn::blocks(
            calls
                .into_iter()
                .map(|(name, input)| Block::tool_use(name, input)),
        )
    }

    /// A thinking block; chain [`with_text`](Turn::with_text) or
    /// [`with_tool_use`](Turn::with_tool_use) to say or do something after it.
    pub fn thinking(thinking: impl Into<String>) -> Turn {
        Turn::blocks([Block::thinking(thinking)])
    }

    /// An API error with this HTTP status, Anthropic error type and message.
    ///
    /// By default every retry of the same request (the CLI retries 429/5xx/529, and
    /// retries a 400 twice with fewer beta headers) gets the error too, so the turn
    /// ends with an error `result`. Use [`once`](Turn::once) or [`times`](Turn::times)
    /// to let a retry succeed with the next turn of the script.
    ///
    /// ```
    /// # use claude_code_agent_testkit::mock_api::Turn;
    /// let t = Turn::api_error(400, "invalid_request_error", "mock says bad request");
    /// assert!(t.is_error());
    /// ```
    pub fn api_error(
        status: u16,
        error_type: impl Into<String>,
        message: impl Into<String>,
    ) -> Turn {
        Turn::from_kind(TurnKind::Error {
            error: ApiError {
                status,
                error_type: error_type.into(),
                message: message.into(),
            },
            times: None,
        })
    }

    /// `529 overloaded_error "Overloaded"`.
    pub fn overloaded() -> Turn {
        Turn::api_error(529, "overloaded_error", "Overloaded")
    }

    /// `400 invalid_request_error` with this message.
    pub fn invalid_request(message: impl Into<String>) -> Turn {
        Turn::api_error(400, "invalid_request_error", message)
    }

    /// `429 rate_limit_error` with a `retry-after: 1` header.
    pub fn rate_limited() -> Turn {
        Turn::api_error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        )
        .with_header("retry-after", "1")
    }

    /// `500 api_error "Internal server error"`.
    pub fn internal_error() -> Turn {
        Turn::api_error(500, "api_error", "Internal server error")
    }

    /// A reply computed from the request by a closure (e.g. to echo the tool results
    /// back as text). The closure runs outside the mock's locks.
    ///
    /// ```
    /// # use claude_code_agent_testkit::mock_api::Turn;
    /// let echo = Turn::dynamic(|req| {
    ///     let results: Vec<String> = req.tool_results().iter().map(|r| r.text()).collect();
    ///     Turn::text(format!("results: {}", results.join(", ")))
    /// });
    /// # let _ = echo;
    /// ```
    pub fn dynamic<F>(responder: F) -> Turn
    where
        F: Fn(&RecordedRequest) -> Turn + Send + Sync + 'static,
    {
        Turn::from_kind(TurnKind::Dynamic(Arc::new(responder)))
    }

    fn push_block(mut self, block: Block) -> Turn {
        match &mut self.kind {
            TurnKind::Reply { blocks, .. } => blocks.push(block),
            _ => panic!(
                "Turn::with_* can only add blocks to a reply, not to an error or dynamic turn"
            ),
        }
        self
    }

    /// Appends a text block.
    ///
    /// # Panics
    /// On an error or dynamic turn.
    pub fn with_text(self, text: impl Into<String>) -> Turn {
        self.push_block(Block::text(text))
    }

    /// Appends a thinking block.
    ///
    /// # Panics
    /// On an error or dynamic turn.
    pub fn with_thinking(self, thinking: impl Into<String>) -> Turn {
        self.push_block(Block::thinking(thinking))
    }

    /// Appends a tool call.
    ///
    /// # Panics
    /// On an error or dynamic turn.
    pub fn with_tool_use(self, name: impl Into<String>, input: Value) -> Turn {
        self.push_block(Block::tool_use(name, input))
    }

    /// Appends any block.
    ///
    /// # Panics
    /// On an error or dynamic turn.
    pub fn with_block(self, block: Block) -> Turn {
        self.push_block(block)
    }

    /// Overrides the stop reason (e.g. `max_tokens`, `pause_turn`, `refusal`).
    /// Ignored on error and dynamic turns.
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Turn {
        if let TurnKind::Reply { stop_reason, .. } = &mut self.kind {
            *stop_reason = Some(reason.into());
        }
        self
    }

    /// Adds a response header (e.g. `retry-after`).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Turn {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long before answering (before the HTTP status line), e.g. to test
    /// interrupts. The wait ends early if the client disconnects or the mock is dropped.
    pub fn delay(mut self, delay: Duration) -> Turn {
        self.delay = delay;
        self
    }

    /// Waits this long between two SSE events of a streamed reply (a slow stream).
    pub fn event_interval(mut self, interval: Duration) -> Turn {
        self.event_interval = interval;
        self
    }

    /// For an error turn: only this request gets the error; a retry of the same
    /// request consumes the next turn. Same as `times(1)`.
    pub fn once(self) -> Turn {
        self.times(1)
    }

    /// For an error turn: the first `n` attempts of the same request get the error,
    /// the next attempt consumes the next turn. No effect on other turns.
    pub fn times(mut self, n: u32) -> Turn {
        if let TurnKind::Error { times, .. } = &mut self.kind {
            *times = Some(n.max(1));
        }
        self
    }

    /// Whether this turn is an API error.
    pub fn is_error(&self) -> bool {
        matches!(self.kind, TurnKind::Error { .. })
    }

    /// The blocks of a reply (empty for error and dynamic turns).
    pub fn content(&self) -> &[Block] {
        match &self.kind {
            TurnKind::Reply { blocks, .. } => blocks,
            _ => &[],
        }
    }

    /// Names of the tools this reply calls.
    pub fn tool_names(&self) -> Vec<&str> {
        self.content()
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The stop reason this reply will carry (`None` for error and dynamic turns).
    pub fn stop_reason(&self) -> Option<&str> {
        match &self.kind {
            TurnKind::Reply {
                blocks,
                stop_reason,
            } => Some(match stop_reason {
                Some(r) => r.as_str(),
                None if blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) => "tool_use",
                None => "end_turn",
            }),
            _ => None,
        }
    }
}
