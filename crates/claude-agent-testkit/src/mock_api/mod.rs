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
//! use claude_agent_testkit::mock_api::{MockModel, Turn};
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
mod turn;

use std::collections::VecDeque;
use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::any;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use request::{Answer, RecordedRequest, RequestKind, ToolResult};
pub use turn::{ApiError, Block, Responder, Turn};

use render::{error_body, estimate_tokens, new_id, render_reply, sse_frame};
use turn::TurnKind;

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

/// Largest request body accepted (the real API's limit is 32 MB; the CLI can send more
/// when tool results are huge, and tests of that should see the CLI's behaviour, not ours).
const BODY_LIMIT: usize = 256 * 1024 * 1024;

/// How many nested [`Turn::dynamic`] results are followed before giving up.
const MAX_DYNAMIC_DEPTH: usize = 8;

/// Configures and starts a [`MockModel`].
///
/// ```
/// use std::time::Duration;
/// use claude_agent_testkit::mock_api::{MockModel, Turn};
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
    /// use claude_agent_testkit::mock_api::{MockModel, Turn};
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
        let (changed, _) = watch::channel(0u64);
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            state: Mutex::new(ScriptState {
                script: VecDeque::new(),
                next_script_index: 0,
                requests: Vec::new(),
                failed_step: None,
            }),
            default_reply: self.default_reply,
            side_call_reply: self.side_call_reply,
            classifier: self.classifier,
            input_tokens: self.input_tokens,
            started: Instant::now(),
            changed,
            shutdown: shutdown.clone(),
        });
        {
            let mut st = shared.lock();
            for t in self.script {
                st.push(t);
            }
        }
        let app = Router::new()
            .route("/v1/messages", any(messages))
            .route("/v1/messages/count_tokens", any(count_tokens))
            .fallback(not_found)
            .layer(DefaultBodyLimit::max(BODY_LIMIT))
            .with_state(shared.clone());
        let token = shutdown.clone();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(token.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!("mock model server stopped: {e}");
            }
        });
        Ok(MockModel {
            shared,
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
/// use claude_agent_testkit::mock_api::{MockModel, Turn, RequestKind};
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
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for MockModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModel")
            .field("addr", &self.addr)
            .field("remaining_turns", &self.remaining_turns())
            .field("requests", &self.shared.lock().requests.len())
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
        self.shared.lock().push(turn);
        self.shared.bump();
    }

    /// How many scripted turns have not been used yet.
    pub fn remaining_turns(&self) -> usize {
        self.shared.lock().script.len()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// The requests of this kind.
    pub fn requests_of(&self, kind: RequestKind) -> Vec<RecordedRequest> {
        self.shared
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
        self.shared
            .lock()
            .requests
            .iter()
            .rev()
            .find(|r| r.kind == RequestKind::Conversation)
            .cloned()
    }

    /// Every `tool_result` the CLI sent back in conversation requests, in order, each
    /// once (retries repeat them).
    pub fn tool_results(&self) -> Vec<ToolResult> {
        let st = self.shared.lock();
        let mut out: Vec<ToolResult> = Vec::new();
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
    pub fn tool_result(&self, tool_use_id: &str) -> Option<ToolResult> {
        self.tool_results()
            .into_iter()
            .find(|t| t.tool_use_id == tool_use_id)
    }

    /// Waits until `pred` holds for the recorded requests (checked on every new request
    /// and answer); returns `false` on timeout.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use claude_agent_testkit::mock_api::{MockModel, Turn};
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
        let mut rx = self.shared.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            rx.borrow_and_update();
            if pred(&self.shared.lock().requests) {
                return true;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return pred(&self.shared.lock().requests),
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

struct Shared {
    state: Mutex<ScriptState>,
    default_reply: Turn,
    side_call_reply: Turn,
    classifier: Classifier,
    input_tokens: Option<u64>,
    started: Instant,
    changed: watch::Sender<u64>,
    shutdown: CancellationToken,
}

struct ScriptState {
    script: VecDeque<(usize, Turn)>,
    next_script_index: usize,
    requests: Vec<RecordedRequest>,
    failed_step: Option<FailedStep>,
}

/// The last conversation request answered with an API error, for retry detection.
struct FailedStep {
    fingerprint: u64,
    script_index: Option<usize>,
    turn: Turn,
    /// Further attempts that still get the error (`None`: unlimited).
    remaining: Option<u32>,
}

impl ScriptState {
    fn push(&mut self, turn: Turn) {
        self.script.push_back((self.next_script_index, turn));
        self.next_script_index += 1;
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ScriptState> {
        // A panicking user closure never runs under this lock, so poisoning only
        // follows a bug in the mock itself; keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    fn record(&self, mut req: RecordedRequest) -> usize {
        let mut st = self.lock();
        let index = st.requests.len();
        req.index = index;
        st.requests.push(req);
        drop(st);
        self.bump();
        index
    }

    fn finish(&self, index: usize, answer: Answer, status: u16, response: Value) {
        let mut st = self.lock();
        if let Some(r) = st.requests.get_mut(index) {
            r.answer = answer;
            r.status = status;
            r.response = response;
        }
        drop(st);
        self.bump();
    }

    fn new_request(
        &self,
        kind: RequestKind,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> RecordedRequest {
        RecordedRequest {
            index: 0,
            kind,
            method: method.to_string(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: serde_json::from_slice(body).unwrap_or(Value::Null),
            body_len: body.len(),
            elapsed: self.started.elapsed(),
            received_at: SystemTime::now(),
            answer: Answer::Pending,
            status: 0,
            client_disconnected: false,
            response: Value::Null,
        }
    }
}

/// Hash of the request's `messages` without `cache_control` markers.
fn fingerprint(body: &Value) -> u64 {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "cache_control")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    let messages = body.get("messages").map(strip).unwrap_or(Value::Null);
    let mut h = DefaultHasher::new();
    h.write(messages.to_string().as_bytes());
    h.finish()
}

fn char_count(body: &Bytes) -> usize {
    std::str::from_utf8(body)
        .map(|s| s.chars().count())
        .unwrap_or(body.len())
}

fn json_response(
    status: u16,
    request_id: &str,
    body: &Value,
    extra: &[(String, String)],
) -> Response {
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_headers(h, request_id, extra);
    resp
}

fn add_headers(h: &mut HeaderMap, request_id: &str, extra: &[(String, String)]) {
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert("request-id", v);
    }
    for (k, v) in extra {
        if let (Ok(k), Ok(v)) = (
            header::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            h.append(k, v);
        }
    }
}

fn error_turn_response(error: &ApiError, extra: &[(String, String)]) -> (u16, Value, Response) {
    let request_id = new_id("req_");
    let body = error_body(error, &request_id);
    let resp = json_response(error.status, &request_id, &body, extra);
    (error.status, body, resp)
}

fn rejected(
    shared: &Shared,
    index: usize,
    status: u16,
    error_type: &str,
    message: String,
) -> Response {
    let error = ApiError {
        status,
        error_type: error_type.to_owned(),
        message,
    };
    let (status, body, resp) = error_turn_response(&error, &[]);
    shared.finish(index, Answer::Rejected, status, body);
    resp
}

/// Marks the request as abandoned by the client if the handler is dropped (the client
/// disconnected) while the reply is delayed.
struct DisconnectGuard<'a> {
    shared: &'a Shared,
    index: usize,
    armed: bool,
}

impl Drop for DisconnectGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            if let Some(r) = self.shared.lock().requests.get_mut(self.index) {
                r.client_disconnected = true;
            }
            self.shared.bump();
        }
    }
}

/// Sleeps unless the mock shuts down first; `false` if it did.
async fn pause(shared: &Shared, d: Duration) -> bool {
    if d.is_zero() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = shared.shutdown.cancelled() => false,
    }
}

async fn messages(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut req = shared.new_request(RequestKind::Other, &method, &uri, &headers, &body);
    if method != Method::POST {
        let index = shared.record(req);
        return rejected(
            &shared,
            index,
            405,
            "invalid_request_error",
            format!("Method {method} not allowed for /v1/messages"),
        );
    }
    if !req.body.is_object() {
        let index = shared.record(req);
        return rejected(
            &shared,
            index,
            400,
            "invalid_request_error",
            "request body is not a JSON object".to_owned(),
        );
    }
    req.kind = match (shared.classifier)(&req) {
        RequestKind::Conversation => RequestKind::Conversation,
        _ => RequestKind::SideCall,
    };
    let kind = req.kind;
    let fp = fingerprint(&req.body);
    let model = req.model().unwrap_or("claude-mock").to_owned();
    let streaming = req.is_streaming();
    let snapshot = req.clone();
    let index = shared.record(req);

    // Pick the turn.
    let (mut turn, answer, is_retry) = if kind == RequestKind::Conversation {
        let mut st = shared.lock();
        let retry = match &mut st.failed_step {
            Some(f) if f.fingerprint == fp && f.remaining != Some(0) => {
                if let Some(n) = &mut f.remaining {
                    *n -= 1;
                }
                Some((f.turn.clone(), f.script_index))
            }
            _ => None,
        };
        match retry {
            Some((turn, script_index)) => {
                let answer = script_index.map_or(Answer::Default, Answer::Retry);
                (turn, answer, true)
            }
            None => {
                st.failed_step = None;
                match st.script.pop_front() {
                    Some((i, t)) => (t, Answer::Script(i), false),
                    None => (shared.default_reply.clone(), Answer::Default, false),
                }
            }
        }
    } else {
        (shared.side_call_reply.clone(), Answer::SideCall, false)
    };

    // Resolve dynamic responders outside the lock.
    let mut depth = 0;
    while let TurnKind::Dynamic(f) = &turn.kind {
        let f = f.clone();
        let outer_delay = turn.delay;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&snapshot)));
        turn = match result {
            Ok(t) => t,
            Err(_) => Turn::internal_error(),
        };
        if turn.delay.is_zero() {
            turn.delay = outer_delay;
        }
        depth += 1;
        if depth >= MAX_DYNAMIC_DEPTH {
            turn = Turn::api_error(
                500,
                "api_error",
                "mock model: dynamic turns nested too deeply",
            );
        }
    }

    {
        let mut st = shared.lock();
        if let Some(r) = st.requests.get_mut(index) {
            r.answer = answer.clone();
        }
    }
    let mut guard = DisconnectGuard {
        shared: &shared,
        index,
        armed: true,
    };

    // Remember a failed conversation step so its retries get the same error.
    if kind == RequestKind::Conversation
        && !is_retry
        && let TurnKind::Error { times, .. } = &turn.kind
    {
        let script_index = match answer {
            Answer::Script(i) => Some(i),
            _ => None,
        };
        shared.lock().failed_step = Some(FailedStep {
            fingerprint: fp,
            script_index,
            turn: turn.clone(),
            remaining: times.map(|n| n - 1),
        });
    }

    let paused = pause(&shared, turn.delay).await;
    guard.armed = false;
    if !paused {
        return rejected(
            &shared,
            index,
            503,
            "api_error",
            "mock model shut down".to_owned(),
        );
    }

    let input_tokens = shared
        .input_tokens
        .unwrap_or_else(|| estimate_tokens(char_count(&body)));
    match &turn.kind {
        TurnKind::Error { error, .. } => {
            let (status, body, resp) = error_turn_response(error, &turn.headers);
            shared.finish(index, answer, status, body);
            resp
        }
        TurnKind::Reply {
            blocks,
            stop_reason: _,
        } => {
            let stop = turn.stop_reason().unwrap_or("end_turn");
            let rendered = render_reply(blocks, stop, &model, input_tokens);
            let request_id = new_id("req_");
            shared.finish(index, answer, 200, rendered.message.clone());
            if !streaming {
                return json_response(200, &request_id, &rendered.message, &turn.headers);
            }
            let frames: Vec<Bytes> = rendered
                .events
                .iter()
                .map(|(name, data)| Bytes::from(sse_frame(name, data)))
                .collect();
            let interval = turn.event_interval;
            let token = shared.shutdown.clone();
            let stream =
                futures::stream::unfold((frames.into_iter(), true), move |(mut frames, first)| {
                    let token = token.clone();
                    async move {
                        let frame = frames.next()?;
                        if !first && !interval.is_zero() {
                            tokio::select! {
                                _ = tokio::time::sleep(interval) => {}
                                _ = token.cancelled() => return None,
                            }
                        }
                        Some((Ok::<Bytes, std::io::Error>(frame), (frames, false)))
                    }
                });
            let mut resp = Response::new(Body::from_stream(stream));
            let h = resp.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream; charset=utf-8"),
            );
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            add_headers(h, &request_id, &turn.headers);
            resp
        }
        TurnKind::Dynamic(_) => unreachable!("dynamic turns are resolved above"),
    }
}

async fn count_tokens(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let req = shared.new_request(RequestKind::CountTokens, &method, &uri, &headers, &body);
    let ok = method == Method::POST && req.body.is_object();
    let index = shared.record(req);
    if !ok {
        return rejected(
            &shared,
            index,
            400,
            "invalid_request_error",
            "count_tokens expects a POST with a JSON object body".to_owned(),
        );
    }
    let response = json!({"input_tokens": estimate_tokens(char_count(&body))});
    shared.finish(index, Answer::CountTokens, 200, response.clone());
    json_response(200, &new_id("req_"), &response, &[])
}

async fn not_found(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let req = shared.new_request(RequestKind::Other, &method, &uri, &headers, &body);
    let index = shared.record(req);
    rejected(
        &shared,
        index,
        404,
        "not_found_error",
        format!("Not found: {method} {}", uri.path()),
    )
}
