//! One running CLI process and the control protocol over it.
//!
//! * The **reader** ([`reader`]: a Tokio task reading the CLI's stdout on
//!   the runtime's reactor) classifies each line once ([`Incoming`]) and
//!   routes it: an answer to one of our control requests to its waiter, a
//!   withdrawal to the request it names, a CLI request to a task of its
//!   own ([`answer`]), and every other message into the user's
//!   [queue](crate::queue), bounded in bytes. It never waits for the user
//!   nor awaits a handler, so control traffic and tool calls flow however
//!   slowly the user reads.
//! * Everything written to the CLI goes through the one [`LineWriter`],
//!   which keeps every frame whole. Senders (user messages, our control
//!   requests) write directly and so wait for the CLI to read
//!   (backpressure); answers ready at their task's first poll are queued
//!   and written together, with one `write`, by whichever of those tasks
//!   and the reader lets go last ([`answer`];
//!   [`LineWriter::flush_queued`] never waits); the servers'
//!   notifications, produced synchronously inside tools, go through the
//!   bridge's bounded [`Outbox`](crate::bridge::Outbox).
//! * Our pending control requests and the CLI's requests in flight live in
//!   one [`RequestTable`]; when the session ends, ours fail with how the CLI
//!   ended and theirs are withdrawn (their handler futures dropped, a
//!   running tool's cancellation token fires, nothing is answered).
//!
//! Once the CLI has ended, sending fails at once (with how the CLI ended,
//! [`Error::CliExited`], when it ended on its own; [`Error::Closed`] after
//! `shutdown`), and a control request never waits out its timeout for an
//! answer that cannot come.

mod answer;
pub(crate) mod mirror;
mod reader;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::bridge::{self, Bridge, Outbox};
use crate::callbacks::Callbacks;
use crate::cli_version::{self, CliVersionPolicy};
use crate::command;
use crate::error::{Error, Result};
use crate::mcp::__private::transport::RequestTable;
use crate::message::{Message, SkippedLine, UserInput};
use crate::options::Options;
use crate::protocol::{
    ControlResponse, HookFailure, Incoming, InitializeRequest, InitializeResponse,
    SdkControlRequest, SdkRequest,
};
use crate::queue::{self, Inbox, MessageSender, message_queue};
use crate::telemetry;
use crate::transport::{self, ChildHandle, LineWriter, ShutdownTimeouts, SpawnConfig};

/// How one of our control requests ended: the CLI's answer, or how the CLI
/// ended before answering.
type Answered = Result<ControlResponse>;

/// The connection to one running CLI, shared by the session, its reader and
/// the tasks answering the CLI's requests.
pub(crate) struct Connection {
    writer: LineWriter,
    /// Ours: waiters by request id. Theirs: the withdrawal token of each CLI
    /// request being answered.
    requests: RequestTable<String, oneshot::Sender<Answered>, CancellationToken>,
    /// Who holds back the writing of queued answers (see [`answer`]).
    holds: AtomicUsize,
    next_id: AtomicU64,
    id_salt: u32,
    pub(crate) bridge: Bridge,
    callbacks: Callbacks,
    control_timeout: Duration,
    /// User messages written minus `result`s read: turns still running.
    open_turns: AtomicUsize,
    child: ChildHandle,
    shutdown_timeouts: ShutdownTimeouts,
    /// Fired when the session is over (the CLI ended, `shutdown`, or drop).
    closed: CancellationToken,
    /// How the session ended, when it ended on its own (the CLI exited, or
    /// the user's queue overflowed): what sending fails with afterwards.
    exit: Mutex<Option<Error>>,
    /// Set when `shutdown` begins: the end that follows is the expected one.
    shutting_down: AtomicBool,
    /// Stamp `client_composed` on every user message (`Options::verbatim_prompts`).
    verbatim: bool,
    /// The transcript's mirror into the session store, if one is set.
    mirror: Option<mirror::Mirror>,
    /// The session's span, the parent of the others ([`telemetry`]), until
    /// the session ends: then it is let go, so that it ends as soon as its
    /// last child does (not when the last [`Control`](crate::Control) is dropped).
    span: Mutex<Option<tracing::Span>>,
    /// Whether the session's span is recorded (a subscriber wanted it when
    /// the session started): if not, no span of the session is made.
    traced: bool,
    /// Fired once the reader has ended the session ([`Connection::end`]).
    ended: CancellationToken,
    /// The spans of the turns written and not answered yet, oldest first
    /// (only enabled ones).
    turns: Mutex<VecDeque<tracing::Span>>,
    /// Tool spans record the arguments ([`CliTelemetry::tool_details`](crate::CliTelemetry::tool_details())).
    pub(crate) tool_details: bool,
}

/// A running CLI session. Dropping it kills the CLI's process group.
pub(crate) struct Session {
    pub(crate) conn: Arc<Connection>,
    /// The user's end of the message queue, while no stream holds it.
    inbox: Mutex<Option<Inbox>>,
    initialize: InitializeRequest,
    cli_version_policy: CliVersionPolicy,
}

impl Session {
    /// Starts the CLI for `options` and the tasks around it, in `span` (the
    /// session's, see [`telemetry::session`]). Sends nothing.
    pub(crate) async fn spawn(options: &Options, span: tracing::Span) -> Result<Self> {
        let cli = transport::find_cli(options.cli_path.as_deref())?;
        // With a session store, a session to resume is restored from it first.
        let mirror_config = mirror::MirrorConfig::from_options(options)?;
        let (resumed, restored) = match &mirror_config {
            Some(config) => prepare_resume(options, config).await?,
            None => (None, Default::default()),
        };
        let options = resumed.as_ref().unwrap_or(options);
        // The CLI's spans are children of the session's.
        let trace = telemetry::w3c_context(&span);
        let mut cmd = command::build_for(options, cli.into_os_string(), trace.as_ref())?;
        if let Some(spawn) = &options.spawn {
            let program = cmd.program.clone();
            cmd = spawn(cmd).map_err(|source| Error::Spawn {
                program: program.into(),
                source,
            })?;
        }
        let mut config = SpawnConfig::new(cmd.program);
        config.args = cmd.args;
        config.env = cmd.env;
        config.env_remove = cmd.env_remove;
        config.cwd = cmd.cwd;
        config.max_line_bytes = options.effective_max_line_bytes();
        config.stderr_callback = options.stderr.clone();
        let process = transport::spawn(config)?;
        span.record("process.pid", process.child.pid());

        let (messages, inbox) = message_queue(options.effective_max_buffered_bytes());
        let (outbox, outbox_reader) = Outbox::new(bridge::NOTIFICATION_BUDGET);
        let bridge = Bridge::new(outbox, Some(messages.downgrade()));
        for server in options.in_process_servers()? {
            bridge.insert(server);
        }
        let init = options
            .initialize_request()
            .with_agents(options.agents.clone())
            .with_sdk_mcp_servers(bridge.names());
        let (mut callbacks, initialize) =
            Callbacks::register(options.can_use_tool.clone(), &options.hooks, init);
        callbacks.on_elicitation = options.on_elicitation.clone();
        callbacks.on_user_dialog = options.on_user_dialog.clone();

        let conn = Arc::new_cyclic(|conn| Connection {
            mirror: mirror_config.map(|c| mirror::Mirror::start(c, restored, conn.clone())),
            writer: process.writer.clone(),
            requests: RequestTable::new(),
            holds: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            id_salt: random_u32(),
            bridge,
            callbacks,
            control_timeout: options.effective_control_timeout(),
            open_turns: AtomicUsize::new(0),
            child: process.child,
            shutdown_timeouts: options.shutdown_timeouts,
            closed: CancellationToken::new(),
            exit: Mutex::new(None),
            shutting_down: AtomicBool::new(false),
            verbatim: options.verbatim_prompts,
            traced: !span.is_disabled(),
            span: Mutex::new(Some(span)),
            ended: CancellationToken::new(),
            turns: Mutex::new(VecDeque::new()),
            tool_details: options
                .cli_telemetry
                .as_ref()
                .is_some_and(|t| t.tool_details),
        });
        tokio::spawn(bridge::pump(
            outbox_reader,
            process.writer,
            conn.closed.clone(),
        ));
        reader::start(process.reader, &conn, messages);
        Ok(Self {
            conn,
            inbox: Mutex::new(Some(inbox)),
            initialize,
            cli_version_policy: options.cli_version_policy,
        })
    }

    /// Sends `initialize` and waits for its answer, at least
    /// [`DEFAULT_CONTROL_TIMEOUT`](crate::DEFAULT_CONTROL_TIMEOUT) whatever
    /// the control timeout (as the Python SDK does): the CLI's start-up is
    /// slow, and a short timeout is for the requests that follow. Then
    /// checks the CLI's version against the tested range
    /// ([`cli_version::check`]); when the policy refuses it, the CLI is
    /// stopped before the error is returned.
    pub(crate) async fn initialize(&self) -> Result<InitializeResponse> {
        let timeout = self
            .conn
            .control_timeout
            .max(crate::DEFAULT_CONTROL_TIMEOUT);
        let answer = self
            .conn
            .request_within(SdkRequest::Initialize(self.initialize.clone()), timeout)
            .await?;
        let init: InitializeResponse = serde_json::from_value(answer)?;
        let version = init.claude_code_version.as_deref();
        if let Some(version) = version {
            self.conn.in_span(|span| {
                span.record("claude_code.version", version);
            });
        }
        if let Err(e) = cli_version::check(version, self.cli_version_policy) {
            self.conn.shutdown().await;
            return Err(e);
        }
        let blocks = self.initialize.hooks.iter().flatten().flat_map(|(_, m)| m);
        if init.hook_on_failure_supported != Some(true)
            && blocks
                .into_iter()
                .any(|m| m.on_failure == Some(HookFailure::Block))
        {
            self.conn.shutdown().await;
            return Err(Error::InvalidOptions(
                "a hook matcher sets on_failure(HookFailure::Block), but this CLI does not \
                 say it honours it (no hook_on_failure_supported in its initialize answer): \
                 a failing hook would let the action run"
                    .into(),
            ));
        }
        Ok(init)
    }

    /// The `initialize` request this session sends.
    pub(crate) fn initialize_request(&self) -> &InitializeRequest {
        &self.initialize
    }

    /// Takes the user's end of the message queue (`None` while a stream
    /// holds it); give it back with [`put_inbox`](Self::put_inbox).
    pub(crate) fn take_inbox(&self) -> Option<Inbox> {
        self.inbox.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Gives the queue back after [`take_inbox`](Self::take_inbox).
    pub(crate) fn put_inbox(&self, inbox: Inbox) {
        *self.inbox.lock().unwrap_or_else(|e| e.into_inner()) = Some(inbox);
    }

    /// The next message of `inbox`. With a session store, a `Result` is
    /// handed out only once everything the CLI mirrored before it is in the
    /// store; if that failed, the mirror's error instead (the session is
    /// over).
    pub(crate) async fn next_message(&self, inbox: &mut Inbox) -> Option<Result<Message>> {
        let item = inbox.next(self.conn.closed()).await?;
        if let (Some(mirror), Ok(message)) = (&self.conn.mirror, &item)
            && message.is_result()
            && let Err(e) = mirror.flush().await
        {
            return Some(Err(e));
        }
        Some(item)
    }
}

/// With a session store: the options to start the CLI with, when they
/// differ (`continue_conversation` becomes a resume of the store's newest
/// session of the project), after restoring the session to resume from the
/// store into the CLI's projects folder; and what was restored.
async fn prepare_resume(
    options: &Options,
    config: &mirror::MirrorConfig,
) -> Result<(
    Option<Options>,
    std::collections::HashMap<crate::sessions::SessionKey, u64>,
)> {
    let cwd = match &options.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    let project_key = crate::sessions::project_key(&cwd);
    let mut changed = None;
    let mut resume = options.resume.clone();
    if options.continue_conversation && resume.is_none() {
        let key = crate::sessions::SessionKey::new(project_key.clone(), "");
        let listed = mirror::bounded(
            config,
            "list the sessions of the project of",
            &key,
            config.store.list_sessions(&project_key),
        )
        .await?;
        let newest = listed.into_iter().max_by(|a, b| {
            a.mtime
                .cmp(&b.mtime)
                .then_with(|| a.session_id.cmp(&b.session_id))
        });
        let mut o = options.clone();
        o.continue_conversation = false;
        o.resume = newest.map(|s| s.session_id);
        resume = o.resume.clone();
        changed = Some(o);
    }
    let Some(id) = resume else {
        return Ok((changed, Default::default()));
    };
    if !crate::sessions::is_session_id(&id) {
        return Err(Error::InvalidOptions(format!(
            "with a session store, resume takes a session id (a UUID), not {id:?}"
        )));
    }
    let sizes = mirror::restore(config, &project_key, &id).await?;
    Ok((changed, sizes))
}

impl Drop for Session {
    /// The reader task keeps the connection (and so the child handle) alive
    /// until the CLI's stdout ends, so the session kills the group itself:
    /// nothing outlives the session that started it.
    fn drop(&mut self) {
        self.conn.child.kill_unless_clean();
        self.conn.closed.cancel();
        self.conn.withdraw_theirs();
    }
}

impl Connection {
    /// Writes a user message and counts a turn.
    pub(crate) async fn send_user(&self, message: &UserInput) -> Result<()> {
        self.check_open()?;
        // Counted before sending: the result may arrive before `send` returns.
        self.open_turns.fetch_add(1, Ordering::SeqCst);
        if self.traced {
            let turn = self.in_span(telemetry::turn);
            self.turns
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push_back(turn);
        }
        let stamped;
        let message = if self.verbatim && !message.extra.contains_key("client_composed") {
            let mut copy = message.clone();
            copy.extra
                .insert("client_composed".into(), Value::Bool(true));
            stamped = copy;
            &stamped
        } else {
            message
        };
        if let Err(e) = self.writer.send(message).await {
            self.open_turns.fetch_sub(1, Ordering::SeqCst);
            return Err(self.write_failed(e).await);
        }
        Ok(())
    }

    /// The pid of the process the session started (the CLI, or the
    /// wrapper of [`Options::spawn_with`](crate::Options::spawn_with)).
    pub(crate) fn pid(&self) -> u32 {
        self.child.pid()
    }

    /// Turns written whose `result` has not arrived yet.
    pub(crate) fn open_turns(&self) -> usize {
        self.open_turns.load(Ordering::SeqCst)
    }

    /// Fired when the session is over.
    pub(crate) fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    /// Closes stdin, waits for the CLI to exit (escalating to SIGTERM and
    /// SIGKILL on timeout) and reaps it.
    pub(crate) async fn shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        self.child.shutdown(self.shutdown_timeouts).await;
        self.closed.cancel();
        // The CLI is gone, so its stdout ends: the mirror appends what
        // came after the last result.
        if let Some(mirror) = &self.mirror {
            let _ = mirror.finished().await;
        }
    }

    /// The session store's failure, once the session is over: how the
    /// transcript's last entries fared (`Ok` without a store).
    pub(crate) async fn mirror_outcome(&self) -> Result<()> {
        match &self.mirror {
            Some(mirror) => mirror.finished().await,
            None => Ok(()),
        }
    }

    /// Sends a control request and decodes the answer as `T`.
    pub(crate) async fn request_typed<T: serde::de::DeserializeOwned>(
        &self,
        request: SdkRequest,
    ) -> Result<T> {
        Ok(serde_json::from_value(self.request(request).await?)?)
    }

    /// Sends a control request and waits for its answer's payload (`{}`
    /// when the CLI sent none).
    pub(crate) async fn request(&self, request: SdkRequest) -> Result<Value> {
        self.request_within(request, self.control_timeout).await
    }

    /// [`request`](Self::request) with its own timeout.
    async fn request_within(&self, request: SdkRequest, timeout: Duration) -> Result<Value> {
        let subtype = request.subtype().unwrap_or_default().to_owned();
        self.check_open()?;
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request_id = format!("req_{n}_{:08x}", self.id_salt);
        let (tx, rx) = oneshot::channel();
        if self.requests.register_ours(request_id.clone(), tx).is_err() {
            return Err(self.closed_error());
        }
        // Whatever happens below (even this future being dropped), the
        // entry does not outlive the request.
        let _forget = Forget(&self.requests, &request_id);
        let frame = SdkControlRequest::new(request_id.clone(), request);
        if let Err(e) = self.writer.send(&frame).await {
            return Err(self.write_failed(e).await);
        }
        // `biased`: an answer (or the exit error the reader sends at the
        // end) wins over the bare `closed`, which only matters for a
        // request that slipped in after the reader failed the pending ones.
        let answer = tokio::select! {
            biased;
            answer = tokio::time::timeout(timeout, rx) => Some(answer),
            () = self.closed.cancelled() => None,
        };
        match answer {
            Some(Ok(Ok(Ok(response)))) => response.into_result().map_err(|e| Error::ControlError {
                subtype,
                message: e.error.unwrap_or_else(|| "(no message)".into()),
                code: e.error_code,
            }),
            Some(Ok(Ok(Err(ended)))) => Err(ended),
            Some(Ok(Err(_))) | None => Err(self.closed_error()),
            Some(Err(_)) => Err(Error::ControlTimeout { subtype, timeout }),
        }
    }

    /// Fails at once when the session is over.
    fn check_open(&self) -> Result<()> {
        // `exit` is recorded before the end is reported to the user, so a
        // send made after seeing that report fails even if `closed` has not
        // fired yet.
        if self.closed.is_cancelled() || self.exit_recorded() {
            return Err(self.closed_error());
        }
        Ok(())
    }

    fn exit_recorded(&self) -> bool {
        self.exit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Why nothing can be sent any more: how the session ended, if it
    /// ended on its own, else [`Error::Closed`].
    fn closed_error(&self) -> Error {
        self.exit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(Error::Closed, clone_exit)
    }

    /// The error for a failed write: the CLI is gone or going, so wait
    /// (briefly) for the reader to learn how it ended and say that.
    async fn write_failed(&self, error: Error) -> Error {
        let ended = tokio::time::timeout(Duration::from_secs(5), self.closed.cancelled()).await;
        match ended {
            Ok(()) => self.closed_error(),
            Err(_) => error,
        }
    }

    /// Withdraws every CLI request still being answered: their handler
    /// futures are dropped and nothing is answered. For when nobody is left
    /// to read the answers.
    fn withdraw_theirs(&self) {
        for token in self.requests.drain_theirs() {
            token.cancel();
        }
    }

    /// Routes one line from the CLI. `Err` when the user's queue overflowed.
    fn route(
        self: &Arc<Self>,
        routed: reader::Routed,
        messages: &MessageSender,
    ) -> std::result::Result<(), queue::Overflow> {
        let (incoming, size) = match routed {
            reader::Routed::Mcp(request) => {
                self.on_mcp_message(request);
                return Ok(());
            }
            reader::Routed::Mirror(frame) => {
                if let Some(mirror) = &self.mirror {
                    mirror.frame(frame);
                    return Ok(());
                }
                let size = queue::json_size(&frame);
                (Incoming::from_value(frame), size)
            }
            reader::Routed::Other(incoming, size) => (incoming, size),
        };
        match incoming {
            Incoming::ControlRequest(request) => self.on_control_request(request),
            Incoming::ControlResponse(response) => {
                // Answers to ids we do not know (late answers, the CLI's
                // acknowledgements of our notifications, our own answers
                // echoed by --replay-user-messages) are ignored.
                if let Some(waiter) = response
                    .request_id()
                    .and_then(|id| self.requests.complete_ours(&id.to_owned()))
                {
                    let _ = waiter.send(Ok(response));
                }
            }
            Incoming::ControlCancel(cancel) => {
                if let Some(token) = self.requests.complete_theirs(&cancel.request_id) {
                    token.cancel();
                }
            }
            Incoming::Message(message) => {
                if let Message::Result(result) = &message {
                    let _ = self
                        .open_turns
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                            Some(n.saturating_sub(1))
                        });
                    self.turn_answered(result);
                }
                messages.push(message, size)?;
            }
        }
        Ok(())
    }

    /// Runs `f` with the session's span (a disabled one once the session
    /// has ended).
    pub(crate) fn in_span<R>(&self, f: impl FnOnce(&tracing::Span) -> R) -> R {
        match &*self.span.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(span) => f(span),
            None => f(&tracing::Span::none()),
        }
    }

    /// The span of a CLI request: made by `make` under the session's span,
    /// or a disabled one when the session is not traced.
    pub(super) fn request_span(
        &self,
        make: impl FnOnce(&tracing::Span) -> tracing::Span,
    ) -> tracing::Span {
        if self.traced {
            self.in_span(make)
        } else {
            tracing::Span::none()
        }
    }

    /// In a traced session, waits (at most 5 s) until the reader has ended
    /// the session: then the session's span is let go and every request
    /// withdrawn, so that the session's spans have ended (or end with
    /// their last task) when the user learns that the session is over.
    pub(crate) async fn wait_ended(&self) {
        if self.traced {
            let _ = tokio::time::timeout(Duration::from_secs(5), self.ended.cancelled()).await;
        }
    }

    /// Ends the oldest turn's span with what its `result` says.
    fn turn_answered(&self, result: &crate::message::ResultMessage) {
        if !self.traced {
            return;
        }
        if let Some(id) = &result.session_id {
            self.in_span(|span| {
                span.record("gen_ai.conversation.id", id.as_str());
            });
        }
        let turn = self
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        if let Some(turn) = turn {
            telemetry::record_result(&turn, result);
        }
    }

    /// The session is over: `overflow` when the user's queue overflowed,
    /// else the CLI's stdout ended; `cut`, the last line when the CLI's
    /// output ended inside it and it does not parse.
    async fn end(
        &self,
        messages: MessageSender,
        overflow: Option<queue::Overflow>,
        cut: Option<SkippedLine>,
    ) {
        // Nobody will read answers any more: stop the handlers still running.
        self.withdraw_theirs();
        // Turns that got no result end here, unanswered.
        for turn in std::mem::take(&mut *self.turns.lock().unwrap_or_else(|e| e.into_inner())) {
            turn.record("error.type", "unanswered");
            turn.record("otel.status_code", "ERROR");
        }
        // The mirror appends what it holds; its failure is how the session ended.
        let mirror_failed = match &self.mirror {
            Some(mirror) => {
                mirror.close();
                mirror.finished().await.err()
            }
            None => None,
        };
        let error = match (overflow, mirror_failed) {
            (Some(overflow), _) => {
                self.child.kill_unless_clean();
                Error::MessageBufferFull {
                    limit: overflow.limit,
                }
            }
            (None, Some(failure)) => failure,
            // How the CLI ended, for the errors below.
            (None, None) => self.child.exit_error(Duration::from_secs(2)).await,
        };
        let failed = matches!(
            error,
            Error::MessageBufferFull { .. }
                | Error::SessionStore { .. }
                | Error::TranscriptTooLarge { .. }
        );
        if failed || !self.shutting_down.load(Ordering::SeqCst) {
            *self.exit.lock().unwrap_or_else(|e| e.into_inner()) = Some(clone_exit(&error));
        }
        // A line the CLI was writing when it died is a message lost, and the
        // user is told; unless the SDK ended the session: it killed the CLI
        // and so cut the line itself, and the error says why.
        if let Some(cut) = cut {
            if failed {
                tracing::debug!("the CLI was killed while writing a line: {cut}");
            } else {
                let size = cut.queued_size();
                let _ = messages.push(Message::SkippedLine(cut), size);
            }
        }
        let (ours, theirs) = self.requests.close();
        for token in theirs {
            token.cancel();
        }
        for waiter in ours {
            let _ = waiter.send(Err(clone_exit(&error)));
        }
        if failed || (self.open_turns() > 0 && !self.closed.is_cancelled()) {
            messages.finish(error);
        }
        self.closed.cancel();
        // The session span ends when its last child does.
        drop(self.span.lock().unwrap_or_else(|e| e.into_inner()).take());
        self.ended.cancel();
    }
}

/// Removes our request from the table when dropped (answered, failed, timed
/// out, or abandoned by its caller).
struct Forget<'a>(
    &'a RequestTable<String, oneshot::Sender<Answered>, CancellationToken>,
    &'a String,
);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.complete_ours(self.1);
    }
}

/// `Error` is not `Clone` (it holds `io::Error`); the errors that end a
/// session are rebuilt.
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
        Error::MessageBufferFull { limit } => Error::MessageBufferFull { limit: *limit },
        Error::SessionStore { .. } | Error::TranscriptTooLarge { .. } => {
            mirror::clone_mirror_error(error)
        }
        _ => Error::Closed,
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
