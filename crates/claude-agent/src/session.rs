//! One running CLI process and the control protocol over it.
//!
//! Three tasks per session:
//!
//! * the **reader** owns the CLI's stdout. It routes control responses to the
//!   waiting caller, starts one task per CLI control request, and forwards
//!   every other message to the user's stream. It never awaits a handler.
//! * the **writer** task owns the queue of frames written from synchronous
//!   code (user messages, control requests, server notifications); answers
//!   to CLI requests are written straight from their handler task through
//!   the same [`LineWriter`], which keeps every frame whole;
//!   queue, one whole JSON object per line.
//! * one **handler task per CLI request** (`mcp_message`, `can_use_tool`,
//!   `hook_callback`), which answers exactly once, even when the handler fails
//!   or panics, unless the CLI withdraws the request first. When the session
//!   ends (the CLI's stdout closes, or the session is dropped) the requests
//!   still running are withdrawn too: their handler futures are dropped, so a
//!   running tool's cancellation token fires, and nothing is answered.
//!
//! Once the CLI has ended, sending fails at once (with how the CLI ended,
//! [`Error::CliExited`], when it ended on its own; [`Error::Closed`] after
//! `shutdown`), and a control request never waits out its timeout for an
//! answer that cannot come.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::bridge::Bridge;
use crate::callbacks::{CanUseToolFn, HookContext, HookFn, PermissionContext};
use crate::command;
use crate::error::{Error, Result};
use crate::message::Message;
use crate::options::Options;
use crate::protocol::{CliRequest, HookInput, PermissionResult};
use crate::transport::{self, ChildHandle, LineReader, LineWriter, ShutdownTimeouts, SpawnConfig};

/// What goes to the writer task.
enum Outgoing {
    Frame(Value),
    Close,
}

/// The answer to one of our control requests.
type ControlOutcome = std::result::Result<Value, Error>;

/// State shared by the session's tasks.
pub(crate) struct Shared {
    out: mpsc::UnboundedSender<Outgoing>,
    /// For answers written from handler tasks without a queue hop.
    writer: LineWriter,
    pending: Mutex<HashMap<String, (String, oneshot::Sender<ControlOutcome>)>>,
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    next_id: AtomicU64,
    id_salt: u32,
    pub(crate) bridge: Bridge,
    can_use_tool: Option<CanUseToolFn>,
    hooks: HashMap<String, HookFn>,
    messages: mpsc::UnboundedSender<Result<Message>>,
    control_timeout: Duration,
    /// User messages written minus `result`s read: turns still running.
    open_turns: AtomicUsize,
    child: ChildHandle,
    closed: CancellationToken,
    /// How the CLI ended, when it ended on its own (not through `shutdown`):
    /// what sending and requesting fail with afterwards.
    exit: Mutex<Option<Error>>,
    /// Set when `shutdown` begins: the end that follows is the expected one.
    shutting_down: AtomicBool,
}

/// A running CLI session. Dropping it kills the CLI's process group.
pub(crate) struct Session {
    pub(crate) shared: Arc<Shared>,
    pub(crate) messages: tokio::sync::Mutex<mpsc::UnboundedReceiver<Result<Message>>>,
    shutdown_timeouts: ShutdownTimeouts,
    /// The `initialize` request's fields (without `subtype`).
    initialize: Map<String, Value>,
}

impl Session {
    /// Starts the CLI for `options` and tasks around it. Does not send anything.
    pub(crate) async fn spawn(options: &Options) -> Result<Self> {
        let cli = transport::find_cli(options.cli_path.as_deref())?;
        let cmd = command::build(options)?;
        let mut config = SpawnConfig::new(cli);
        config.args = cmd.args;
        config.env = cmd.env;
        config.env_remove = cmd.env_remove;
        config.cwd = options.cwd.clone();
        config.max_line_bytes = options.effective_max_line_bytes();
        config.stderr_callback = options.stderr.clone();
        let process = transport::spawn(config)?;

        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (msg_tx, msg_rx) = mpsc::unbounded_channel();

        let notifier_tx = out_tx.clone();
        let notify_counter = Arc::new(AtomicU64::new(0));
        let bridge = Bridge::new(Arc::new(move |server: &str, message: Value| {
            // Server-originated messages travel as SDK→CLI `mcp_message`
            // requests. The CLI's acknowledgement carries nothing we need, so
            // no answer is awaited (an answer to an unknown id is ignored).
            let n = notify_counter.fetch_add(1, Ordering::Relaxed);
            let _ = notifier_tx.send(Outgoing::Frame(json!({
                "type": "control_request",
                "request_id": format!("mcp_notify_{n}"),
                "request": {"subtype": "mcp_message", "server_name": server, "message": message},
            })));
        }));
        for server in &options.mcp_servers {
            bridge.insert(server.clone());
        }

        let mut hooks = HashMap::new();
        let mut hooks_config = Map::new();
        for (event, matcher) in &options.hooks {
            let mut ids = Vec::new();
            for callback in &matcher.callbacks {
                let id = format!("hook_{}", hooks.len());
                hooks.insert(id.clone(), callback.clone());
                ids.push(Value::String(id));
            }
            let mut entry = Map::new();
            entry.insert(
                "matcher".into(),
                matcher.matcher.clone().map_or(Value::Null, Value::String),
            );
            entry.insert("hookCallbackIds".into(), Value::Array(ids));
            if let Some(t) = matcher.timeout {
                entry.insert("timeout".into(), json!(t.as_secs_f64().ceil() as u64));
            }
            hooks_config
                .entry(event.as_str().to_owned())
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .expect("hook entries are arrays")
                .push(Value::Object(entry));
        }

        let mut initialize = Map::new();
        initialize.insert(
            "hooks".into(),
            if hooks_config.is_empty() {
                Value::Null
            } else {
                Value::Object(hooks_config)
            },
        );
        if !options.agents.is_empty() {
            initialize.insert("agents".into(), serde_json::to_value(&options.agents)?);
        }
        let names = bridge.names();
        if !names.is_empty() {
            initialize.insert("sdkMcpServers".into(), json!(names));
        }

        let shared = Arc::new(Shared {
            out: out_tx,
            writer: process.writer.clone(),
            pending: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            id_salt: random_u32(),
            bridge,
            can_use_tool: options.can_use_tool.clone(),
            hooks,
            messages: msg_tx,
            control_timeout: options.effective_control_timeout(),
            open_turns: AtomicUsize::new(0),
            child: process.child,
            closed: CancellationToken::new(),
            exit: Mutex::new(None),
            shutting_down: AtomicBool::new(false),
        });

        tokio::spawn(writer_task(process.writer, out_rx));
        tokio::spawn(reader_task(process.reader, shared.clone()));

        Ok(Self {
            shared,
            messages: tokio::sync::Mutex::new(msg_rx),
            shutdown_timeouts: options.shutdown_timeouts,
            initialize,
        })
    }

    /// Sends `initialize` and waits for its answer.
    pub(crate) async fn initialize(&self) -> Result<Value> {
        self.shared
            .request("initialize", self.initialize.clone())
            .await
    }

    /// Writes a user message (already in wire form) and counts a turn.
    pub(crate) fn send_user(&self, message: Value) -> Result<()> {
        // Counted before sending: the result may arrive before `send` returns.
        self.shared.open_turns.fetch_add(1, Ordering::SeqCst);
        let sent = self.shared.send(message);
        if sent.is_err() {
            self.shared.open_turns.fetch_sub(1, Ordering::SeqCst);
        }
        sent
    }

    /// Closes stdin, waits for the CLI to exit (escalating to SIGTERM and
    /// SIGKILL on timeout) and reaps it.
    pub(crate) async fn shutdown(&self) -> Result<()> {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        let _ = self.shared.out.send(Outgoing::Close);
        self.shared.child.shutdown(self.shutdown_timeouts).await;
        self.shared.closed.cancel();
        Ok(())
    }
}

impl Drop for Session {
    /// The reader task keeps the shared state (and so the child handle)
    /// alive until the CLI's stdout ends, so the session kills the group
    /// itself: nothing outlives the session that started it.
    fn drop(&mut self) {
        self.shared.child.kill_unless_clean();
        self.shared.closed.cancel();
        self.shared.cancel_in_flight();
    }
}

impl Shared {
    /// Queues one frame for the CLI.
    pub(crate) fn send(&self, frame: Value) -> Result<()> {
        // After the CLI ended (or `shutdown`), nothing would read the frame.
        // `exit` is recorded before the end is reported to the user, so a
        // send made after seeing that report fails even if `closed` is not
        // cancelled yet.
        let ended = self.closed.is_cancelled()
            || self
                .exit
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some();
        if ended {
            return Err(self.closed_error());
        }
        self.out
            .send(Outgoing::Frame(frame))
            .map_err(|_| Error::Closed)
    }

    /// Why nothing can be sent any more: how the CLI ended, if it ended on
    /// its own, else [`Error::Closed`].
    fn closed_error(&self) -> Error {
        self.exit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(Error::Closed, clone_exit)
    }

    /// Withdraws every CLI request still being handled: their tasks stop
    /// without answering, which drops the handler futures (a running tool's
    /// cancellation token fires). For when nobody is left to read the answers.
    fn cancel_in_flight(&self) {
        let tokens: Vec<CancellationToken> = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, token)| token)
            .collect();
        for token in tokens {
            token.cancel();
        }
    }

    /// Sends a control request and waits for its answer.
    pub(crate) async fn request(
        &self,
        subtype: &str,
        mut payload: Map<String, Value>,
    ) -> Result<Value> {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request_id = format!("req_{n}_{:08x}", self.id_salt);
        payload.insert("subtype".into(), Value::String(subtype.into()));
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request_id.clone(), (subtype.to_owned(), tx));
        let sent = self.send(json!({
            "type": "control_request",
            "request_id": request_id,
            "request": payload,
        }));
        if let Err(e) = sent {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&request_id);
            return Err(e);
        }
        // `biased`: an answer (or the exit error `on_eof` sends) wins over
        // the bare `closed`, which only matters for a request that slipped
        // in after `on_eof` failed the pending ones: it must not wait out
        // the whole timeout for an answer that cannot come.
        let answer = tokio::select! {
            biased;
            answer = tokio::time::timeout(self.control_timeout, rx) => Some(answer),
            () = self.closed.cancelled() => None,
        };
        let forget = || {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&request_id);
        };
        match answer {
            Some(Ok(Ok(outcome))) => outcome,
            Some(Ok(Err(_))) | None => {
                forget();
                Err(self.closed_error())
            }
            Some(Err(_)) => {
                forget();
                Err(Error::ControlTimeout {
                    subtype: subtype.to_owned(),
                    timeout: self.control_timeout,
                })
            }
        }
    }

    fn route(self: &Arc<Self>, value: Value) {
        match value.get("type").and_then(Value::as_str) {
            Some("control_response") => self.on_control_response(value),
            Some("control_request") => self.on_control_request(value),
            Some("control_cancel_request") => {
                if let Some(id) = value.get("request_id").and_then(Value::as_str) {
                    let token = self
                        .in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(id);
                    if let Some(token) = token {
                        token.cancel();
                    }
                }
            }
            _ => {
                let message = Message::from_value(value);
                if message.is_result() {
                    let _ = self
                        .open_turns
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                            Some(n.saturating_sub(1))
                        });
                }
                let _ = self.messages.send(Ok(message));
            }
        }
    }

    fn on_control_response(&self, value: Value) {
        let Some(response) = value.get("response") else {
            return;
        };
        let Some(id) = response.get("request_id").and_then(Value::as_str) else {
            return;
        };
        // Answers to ids we do not know (late answers, our own responses
        // echoed by --replay-user-messages) are ignored.
        let Some((subtype, tx)) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id)
        else {
            return;
        };
        let outcome = if response.get("subtype").and_then(Value::as_str) == Some("error") {
            Err(Error::ControlError {
                subtype,
                message: response
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_owned(),
                code: response
                    .get("error_code")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        } else {
            // The CLI sometimes leaves the payload out; that means `{}`.
            Ok(response
                .get("response")
                .cloned()
                .unwrap_or_else(|| json!({})))
        };
        let _ = tx.send(outcome);
    }

    fn on_control_request(self: &Arc<Self>, value: Value) {
        // Take the request out of the frame: no copy, even of a 10 MiB argument.
        let Value::Object(mut frame) = value else {
            return;
        };
        let Some(Value::String(request_id)) = frame.remove("request_id") else {
            tracing::warn!("control_request without a string request_id ignored");
            return;
        };
        let request = frame.remove("request").unwrap_or(Value::Null);
        let token = CancellationToken::new();
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request_id.clone(), token.clone());
        let shared = self.clone();
        tokio::spawn(async move {
            let work = AssertUnwindSafe(shared.answer(request, token.clone())).catch_unwind();
            let outcome = tokio::select! {
                outcome = work => outcome,
                () = token.cancelled() => return,
            };
            // Withdrawn meanwhile? Then no answer is expected.
            if shared
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&request_id)
                .is_none()
            {
                return;
            }
            let panicked;
            let body = match &outcome {
                Ok(Ok(payload)) => ResponseBody::success(&request_id, payload),
                Ok(Err(message)) => ResponseBody::error(&request_id, message),
                Err(panic) => {
                    panicked = format!("the SDK's handler panicked: {}", panic_message(&**panic));
                    ResponseBody::error(&request_id, &panicked)
                }
            };
            let frame = ResponseFrame {
                kind: "control_response",
                response: body,
            };
            if let Err(e) = shared.writer.send(&frame).await {
                tracing::debug!("answering the CLI failed: {e}");
            }
        });
    }

    /// Computes the answer to one CLI request.
    async fn answer(
        &self,
        request: Value,
        cancel: CancellationToken,
    ) -> std::result::Result<Payload, String> {
        match CliRequest::from_value(request) {
            CliRequest::McpMessage(m) => Ok(Payload::Mcp(
                self.bridge.handle(&m.server_name, m.message).await,
            )),
            CliRequest::CanUseTool(req) => {
                let Some(callback) = &self.can_use_tool else {
                    return Err("no permission callback is registered in this SDK session".into());
                };
                let ctx = PermissionContext {
                    tool_use_id: req.tool_use_id.clone(),
                    suggestions: req.permission_suggestions.clone().unwrap_or_default(),
                    blocked_path: req.blocked_path.clone(),
                    decision_reason: req.decision_reason.clone(),
                    cancellation: cancel,
                    raw: req.to_value(),
                };
                let original = req.input.clone();
                let result = callback(req.tool_name.clone(), req.input.clone(), ctx).await;
                Ok(Payload::Plain(permission_payload(result, original)))
            }
            CliRequest::HookCallback(req) => {
                let Some(callback) = self.hooks.get(&req.callback_id) else {
                    return Err(format!("no hook callback with id {:?}", req.callback_id));
                };
                let ctx = HookContext {
                    tool_use_id: req.tool_use_id.clone(),
                    cancellation: cancel,
                };
                let input = HookInput::from_value(req.input.clone());
                let output = callback(input, ctx).await;
                serde_json::to_value(output)
                    .map(Payload::Plain)
                    .map_err(|e| e.to_string())
            }
            CliRequest::Unknown(v) => Err(format!(
                "unsupported control request subtype {}",
                v.get("subtype").unwrap_or(&Value::Null)
            )),
        }
    }

    async fn on_eof(&self) {
        // Nobody will read answers any more: stop the handlers still running.
        self.cancel_in_flight();
        // Collect how the CLI ended, for the errors below.
        let error = self.child.exit_error(Duration::from_secs(2)).await;
        if !self.shutting_down.load(Ordering::SeqCst) {
            *self.exit.lock().unwrap_or_else(|e| e.into_inner()) = Some(clone_exit(&error));
        }
        let pending: Vec<_> = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .collect();
        for (_, (_, tx)) in pending {
            let _ = tx.send(Err(clone_exit(&error)));
        }
        if self.open_turns.load(Ordering::SeqCst) > 0 && !self.closed.is_cancelled() {
            let _ = self.messages.send(Err(error));
        }
        self.closed.cancel();
    }
}

/// The payload of a success answer to a CLI request.
enum Payload {
    /// A JSON-RPC reply, sent as `{"mcp_response": reply}`.
    Mcp(Value),
    /// Sent as is.
    Plain(Value),
}

impl serde::Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Self::Mcp(reply) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("mcp_response", reply)?;
                map.end()
            }
            Self::Plain(value) => value.serialize(s),
        }
    }
}

/// `{"type":"control_response","response":{…}}`, serialized from borrows.
#[derive(serde::Serialize)]
struct ResponseFrame<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    response: ResponseBody<'a>,
}

#[derive(serde::Serialize)]
struct ResponseBody<'a> {
    subtype: &'static str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<&'a Payload>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

impl<'a> ResponseBody<'a> {
    fn success(request_id: &'a str, payload: &'a Payload) -> Self {
        Self {
            subtype: "success",
            request_id,
            response: Some(payload),
            error: None,
        }
    }

    fn error(request_id: &'a str, message: &'a str) -> Self {
        Self {
            subtype: "error",
            request_id,
            response: None,
            error: Some(message),
        }
    }
}

/// `Error` is not `Clone` (it holds `io::Error`); exit errors are rebuilt.
fn clone_exit(error: &Error) -> Error {
    match error {
        Error::CliExited {
            code,
            signal,
            stderr_tail,
        } => Error::CliExited {
            code: *code,
            signal: *signal,
            stderr_tail: stderr_tail.clone(),
        },
        _ => Error::Closed,
    }
}

/// The answer to `can_use_tool`. An allow always carries `updatedInput` (the
/// original input when the callback left it alone), as the CLI expects.
fn permission_payload(result: PermissionResult, original: Value) -> Value {
    let mut value = serde_json::to_value(&result).unwrap_or_else(
        |_| json!({"behavior": "deny", "message": "unserializable permission result"}),
    );
    if value.get("behavior").and_then(Value::as_str) == Some("allow")
        && let Some(obj) = value.as_object_mut()
    {
        obj.entry("updatedInput").or_insert(original);
    }
    value
}

async fn writer_task(writer: LineWriter, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
    while let Some(item) = rx.recv().await {
        match item {
            Outgoing::Frame(frame) => {
                if let Err(e) = writer.send(&frame).await {
                    tracing::debug!("writing to the CLI failed: {e}");
                    break;
                }
            }
            Outgoing::Close => break,
        }
    }
    let _ = writer.close().await;
}

async fn reader_task(mut reader: LineReader, shared: Arc<Shared>) {
    while let Some(line) = reader.next_line().await {
        match line {
            Ok(value) => shared.route(value),
            Err(e) => {
                let _ = shared.messages.send(Err(e));
            }
        }
    }
    shared.on_eof().await;
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_owned()
    }
}

fn random_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish() as u32
}

impl Session {
    /// The next message from the CLI; `None` once the CLI has ended and
    /// everything it wrote has been delivered.
    pub(crate) async fn next_message(&self) -> Option<Result<Message>> {
        let mut rx = self.messages.lock().await;
        tokio::select! {
            biased;
            item = rx.recv() => item,
            () = self.shared.closed.cancelled() => rx.try_recv().ok(),
        }
    }

    /// Turns written whose `result` has not arrived yet.
    pub(crate) fn open_turns(&self) -> usize {
        self.shared.open_turns.load(Ordering::SeqCst)
    }
}
