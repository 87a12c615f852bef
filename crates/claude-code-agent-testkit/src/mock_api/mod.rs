//! A scripted mock of the Anthropic Messages API for running the real Claude Code CLI
//! offline.
//!
//! [`MockModel`] listens on `127.0.0.1` (ephemeral port) and serves:
//!
//! * `POST /v1/messages` — streamed (SSE: `message_start`, `ping`,
//!   `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`) when the
//!   body has `"stream": true`, else a JSON message. Conversation requests consume the
//!   script of [`Turn`]s one by one; when the script is exhausted the default reply
//!   (a short text, `"Done."`, unless configured) answers.
//! * `POST /v1/messages/count_tokens` — `{"input_tokens": <characters of the body / 4>}`.
//! * anything else — `404` with Anthropic's error shape (recorded as [`RequestKind::Other`]).
//!
//! Every request is recorded ([`MockModel::requests`]) with its headers, JSON body,
//! arrival time and the answer it got.
//!
//! # Conversation requests and side calls
//!
//! The CLI's agent loop always streams. Besides it, the CLI (2.1.332) calls
//! `/v1/messages` for itself: when the model is changed with a `set_model` control
//! request it probes the new model with a non-streaming request with `max_tokens: 1`
//! and the single user message `Hi` (verified against the real CLI); other background
//! calls (title or summary generation, …) are switched off by
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` but would look alike (non-streaming).
//! `get_context_usage` uses `count_tokens` (about 20 calls), not `/v1/messages`.
//! The default classification is:
//!
//! * `stream` is not `true` → [`RequestKind::SideCall`];
//! * `max_tokens` is `1` → [`RequestKind::SideCall`];
//! * otherwise → [`RequestKind::Conversation`].
//!
//! Side calls get the side-call reply (default `Turn::text("OK")`) and do **not** consume
//! the script. Replace the rule with [`MockModelBuilder::classify`] (e.g. to script a
//! non-streaming client of your own, classify everything as a conversation).
//!
//! # Retries
//!
//! An API-error turn answers the request *and its retries* (a request whose `messages`
//! equal those of the failed one, ignoring `cache_control`), so the CLI's own retries
//! (429/5xx/529 with backoff; a 400 is retried twice with fewer beta headers) do not eat
//! the rest of the script. [`Turn::once`] / [`Turn::times`] limit that, so that a retry
//! succeeds with the next turn.
//!
//! # Example
//!
//! ```
//! use claude_code_agent_testkit::mock_api::{MockModel, Turn};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mock = MockModel::builder()
//!     .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
//!     .turn(Turn::text("2 + 3 = 5"))
//!     .start()
//!     .await;
//!
//! // point the CLI at it: ANTHROPIC_BASE_URL=<mock.url()>, e.g. with `cli::CliEnv`
//! assert!(mock.url().starts_with("http://127.0.0.1:"));
//!
//! // …run the agent, then assert on what the CLI sent:
//! for req in mock.conversation_requests() {
//!     let _offered = req.tool_names();
//!     let _results = req.tool_results();
//! }
//! # }
//! ```

mod render;
mod request;
mod script;
mod server;
mod turn;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use request::{Answer, RecordedRequest, RecordedToolResult, RequestKind};
pub use turn::{ApiError, Block, Responder, Turn};

use script::MockServer;

/// A classifier deciding whether a `POST /v1/messages` request is part of the
/// conversation. See the [module docs](self).
pub type Classifier = Arc<dyn Fn(&RecordedRequest) -> RequestKind + Send + Sync + 'static>;

/// The default classification rule (see the [module docs](self)).
pub fn default_classifier(req: &RecordedRequest) -> RequestKind {
    if !req.is_streaming() || req.max_tokens() == Some(1) {
        RequestKind::SideCall
    } else {
        RequestKind::Conversation
    }
}

/// Configures and starts a [`MockModel`].
///
/// ```
/// use std::time::Duration;
/// use claude_code_agent_testkit::mock_api::{MockModel, Turn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mock = MockModel::builder()
///     .turn(Turn::overloaded().once())          // first attempt fails, the CLI retries
///     .turn(Turn::text("recovered"))            // …and the retry gets this
///     .default_reply(Turn::text("nothing left")) // after the script
///     .start()
///     .await;
/// assert_eq!(mock.remaining_turns(), 2);
/// # }
/// ```
pub struct MockModelBuilder {
    script: Vec<Turn>,
    default_reply: Turn,
    side_call_reply: Turn,
    classifier: Classifier,
    input_tokens: Option<u64>,
}

impl Default for MockModelBuilder {
    fn default() -> Self {
        MockModelBuilder {
            script: Vec::new(),
            default_reply: Turn::text("Done."),
            side_call_reply: Turn::text("OK"),
            classifier: Arc::new(default_classifier),
            input_tokens: None,
        }
    }
}

impl MockModelBuilder {
    /// Appends one turn to the script.
    pub fn turn(mut self, turn: Turn) -> Self {
        self.script.push(turn);
        self
    }

    /// Appends several turns to the script.
    pub fn turns(mut self, turns: impl IntoIterator<Item = Turn>) -> Self {
        self.script.extend(turns);
        self
    }

    /// The reply used once the script is exhausted (default `Turn::text("Done.")`).
    pub fn default_reply(mut self, turn: Turn) -> Self {
        self.default_reply = turn;
        self
    }

    /// A dynamic default reply: once the script is exhausted, this closure answers every
    /// conversation request. Same as `default_reply(Turn::dynamic(f))`.
    ///
    /// ```
    /// use claude_code_agent_testkit::mock_api::{MockModel, Turn};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // echo the user's words
    /// let mock = MockModel::builder()
    ///     .fallback(|req| Turn::text(format!("you said: {}", req.last_user_text().unwrap_or_default())))
    ///     .start()
    ///     .await;
    /// # drop(mock);
    /// # }
    /// ```
    pub fn fallback<F>(self, responder: F) -> Self
    where
        F: Fn(&RecordedRequest) -> Turn + Send + Sync + 'static,
    {
        self.default_reply(Turn::dynamic(responder))
    }

    /// The reply to side calls (default `Turn::text("OK")`).
    pub fn side_call_reply(mut self, turn: Turn) -> Self {
        self.side_call_reply = turn;
        self
    }

    /// Replaces the rule deciding which `POST /v1/messages` requests consume the script
    /// (return [`RequestKind::Conversation`]) and which are side calls
    /// ([`RequestKind::SideCall`]; other kinds are treated as side calls).
    pub fn classify<F>(mut self, classifier: F) -> Self
    where
        F: Fn(&RecordedRequest) -> RequestKind + Send + Sync + 'static,
    {
        self.classifier = Arc::new(classifier);
        self
    }

    /// Reports this fixed number of input tokens in every reply's usage instead of the
    /// default estimate (characters of the request body / 4). Useful to keep the CLI
    /// away from (or push it into) auto-compaction.
    pub fn input_tokens(mut self, tokens: u64) -> Self {
        self.input_tokens = Some(tokens);
        self
    }

    /// Binds `127.0.0.1:0` and starts serving.
    ///
    /// # Panics
    /// If the socket cannot be bound or no Tokio runtime is running; see
    /// [`try_start`](Self::try_start).
    pub async fn start(self) -> MockModel {
        self.try_start()
            .await
            .expect("mock model: cannot bind 127.0.0.1:0")
    }

    /// Binds `127.0.0.1:0` and starts serving; returns the bind error if any.
    pub async fn try_start(self) -> std::io::Result<MockModel> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        let server = Arc::new(MockServer::new(self, shutdown.clone()));
        let app = server::router(server.clone());
        let token = shutdown.clone();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(token.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!("mock model server stopped: {e}");
            }
        });
        Ok(MockModel {
            server,
            addr,
            shutdown,
        })
    }
}

/// A running mock of the Messages API. Stops serving when dropped.
///
/// See the [module docs](self) for what it serves and how requests are classified.
///
/// ```
/// use claude_code_agent_testkit::mock_api::{MockModel, Turn, RequestKind};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mock = MockModel::builder().turn(Turn::text("hello")).start().await;
/// let port = mock.port();
/// assert_eq!(mock.url(), format!("http://127.0.0.1:{port}"));
/// assert!(mock.requests().is_empty());
/// # }
/// ```
pub struct MockModel {
    server: Arc<MockServer>,
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for MockModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModel")
            .field("addr", &self.addr)
            .field("remaining_turns", &self.remaining_turns())
            .field("requests", &self.server.lock().requests.len())
            .finish()
    }
}

impl MockModel {
    /// A builder with an empty script.
    pub fn builder() -> MockModelBuilder {
        MockModelBuilder::default()
    }

    /// The base URL, `http://127.0.0.1:<port>` — the value for `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The socket address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Appends a turn to the script while the mock runs.
    pub fn push_turn(&self, turn: Turn) {
        self.server.lock().push(turn);
        self.server.bump();
    }

    /// How many scripted turns have not been used yet.
    pub fn remaining_turns(&self) -> usize {
        self.server.lock().script.len()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.lock().requests.clone()
    }

    /// The requests of this kind.
    pub fn requests_of(&self, kind: RequestKind) -> Vec<RecordedRequest> {
        self.server
            .lock()
            .requests
            .iter()
            .filter(|r| r.kind == kind)
            .cloned()
            .collect()
    }

    /// The conversation requests (those that consumed the script or the default reply,
    /// including retries).
    pub fn conversation_requests(&self) -> Vec<RecordedRequest> {
        self.requests_of(RequestKind::Conversation)
    }

    /// The side calls (see the [module docs](self)).
    pub fn side_requests(&self) -> Vec<RecordedRequest> {
        self.requests_of(RequestKind::SideCall)
    }

    /// The `count_tokens` requests.
    pub fn count_tokens_requests(&self) -> Vec<RecordedRequest> {
        self.requests_of(RequestKind::CountTokens)
    }

    /// Requests to unknown paths or with a bad method/body (answered with an error).
    pub fn unexpected_requests(&self) -> Vec<RecordedRequest> {
        self.requests_of(RequestKind::Other)
    }

    /// The last conversation request.
    pub fn last_conversation_request(&self) -> Option<RecordedRequest> {
        self.server
            .lock()
            .requests
            .iter()
            .rev()
            .find(|r| r.kind == RequestKind::Conversation)
            .cloned()
    }

    /// Every `tool_result` the CLI sent back in conversation requests, in order, each
    /// once (retries repeat them).
    pub fn tool_results(&self) -> Vec<RecordedToolResult> {
        let st = self.server.lock();
        let mut out: Vec<RecordedToolResult> = Vec::new();
        for r in st
            .requests
            .iter()
            .filter(|r| r.kind == RequestKind::Conversation)
        {
            for tr in r.tool_results() {
                if !out.iter().any(|o| o.tool_use_id == tr.tool_use_id) {
                    out.push(tr);
                }
            }
        }
        out
    }

    /// The `tool_result` for this tool-use id, if the CLI sent one.
    pub fn tool_result(&self, tool_use_id: &str) -> Option<RecordedToolResult> {
        self.tool_results()
            .into_iter()
            .find(|t| t.tool_use_id == tool_use_id)
    }

    /// Waits until `pred` holds for the recorded requests (checked on every new request
    /// and answer); returns `false` on timeout.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use claude_code_agent_testkit::mock_api::{MockModel, Turn};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mock = MockModel::builder().start().await;
    /// let seen = mock.wait_for(|reqs| !reqs.is_empty(), Duration::from_millis(10)).await;
    /// assert!(!seen);
    /// # }
    /// ```
    pub async fn wait_for<F>(&self, mut pred: F, timeout: Duration) -> bool
    where
        F: FnMut(&[RecordedRequest]) -> bool,
    {
        let mut rx = self.server.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            rx.borrow_and_update();
            if pred(&self.server.lock().requests) {
                return true;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return pred(&self.server.lock().requests),
            }
        }
    }

    /// Waits until at least `n` conversation requests have arrived; `false` on timeout.
    pub async fn wait_for_conversation_requests(&self, n: usize, timeout: Duration) -> bool {
        self.wait_for(
            |reqs| {
                reqs.iter()
                    .filter(|r| r.kind == RequestKind::Conversation)
                    .count()
                    >= n
            },
            timeout,
        )
        .await
    }

    /// Stops serving (also done on drop): open streams and pending delays end at once.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
