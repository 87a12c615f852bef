//! `tools/call`, the one way a tool call runs, whoever asks: JSON-RPC
//! dispatch decodes its params into a [`ToolCall`] and encodes the
//! [`Answer`]; the in-process client makes the `ToolCall` itself and takes
//! the `Answer` as it is (`Server::start_call`). Here: the stateless
//! revision's `_meta` checked, the tool found, the arguments validated,
//! the handler run under its deadline (contained: `contain.rs`),
//! cancellation honoured, the result checked, capped and, at the stateless
//! revision, decorated.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::time::Instant;
use tracing::Instrument;

use super::cap;
use super::contain::{self, Deadline, Expiry, Failure, ProgressClock, Started};
use super::context::{CallContext, Cancel, RequestContext};
use super::round::{RequestName, Round, Sealing};
use super::session::Session;
use super::stateless::{self, Decoration};
use super::tool::TaskSupport;
use super::watchdog::Timing;
use super::{Registered, ServerInner};
use crate::jsonrpc::{self, ErrorObject, METHOD_NOT_FOUND, RequestId};
use crate::spans;
use crate::types::{CallToolResult, json_type_name};

/// A `tools/call` request, decoded once where it arrives: from JSON-RPC's
/// params ([`from_params`](Self::from_params)), or made by the in-process
/// client from its arguments.
pub(crate) struct ToolCall<'a> {
    /// The request's id, as sent.
    pub(crate) id: &'a Value,
    pub(crate) name: Cow<'a, str>,
    /// Absent or `null`: `{}`; anything else but an object is `-32602`.
    pub(crate) arguments: Option<Value>,
    /// The params' `_meta` (one that is no object is none).
    pub(crate) meta: Option<Arc<Map<String, Value>>>,
    /// A retry's `inputResponses` and `requestState`, as sent (stateless
    /// revision: see `round.rs`).
    pub(crate) input_responses: Option<Value>,
    pub(crate) request_state: Option<Value>,
    /// The call runs as a task (the Tasks extension): a handler's panic is
    /// then a JSON-RPC error (`-32603`), which fails the task, rather than
    /// an `isError` result, which completes it.
    pub(crate) as_task: bool,
}

impl<'a> ToolCall<'a> {
    /// The call that a JSON-RPC request `id` with `params` asks for:
    /// `-32602` without a string `name`.
    pub(crate) fn from_params(
        id: &'a Value,
        mut params: Map<String, Value>,
    ) -> Result<Self, ErrorObject> {
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "tools/call: \"name\" must be a string, not {}",
                    json_type_name(&other)
                )));
            }
            None => return Err(ErrorObject::invalid_params("tools/call needs a \"name\"")),
        };
        let meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => Some(Arc::new(meta)),
            _ => None,
        };
        Ok(Self {
            id,
            name: Cow::Owned(name),
            arguments: params.remove("arguments"),
            meta,
            input_responses: params.remove("inputResponses"),
            request_state: params.remove("requestState"),
            as_task: false,
        })
    }
}

/// A `tools/call` request decoded straight from its JSON text, for a
/// transport that has each message as text and serves our [`Server`]
/// (the SDK's bridge to the Claude Code CLI): no [`Value`] is built for
/// its envelope, and its answer is written without one
/// ([`ToolCallReply`]). Only the exact shape of a well-formed request is
/// taken ([`from_text`](Self::from_text)); anything else is for
/// [`Handler::handle`](super::Handler::handle), which answers every shape,
/// errors included, as JSON-RPC says.
///
/// [`Server`]: super::Server
pub struct ToolCallText {
    id: Value,
    name: String,
    arguments: Option<Value>,
    meta: Option<Map<String, Value>>,
}

/// The shape [`ToolCallText::from_text`] takes.
#[derive(serde::Deserialize)]
struct ToolCallWire<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: Value,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: ToolCallParamsWire,
}

#[derive(serde::Deserialize)]
struct ToolCallParamsWire {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(rename = "_meta", default)]
    meta: Option<Value>,
    /// A multi round-trip retry's fields, present (even as `null`): such a
    /// call goes the general way.
    #[serde(rename = "inputResponses", default, deserialize_with = "present")]
    input_responses: bool,
    #[serde(rename = "requestState", default, deserialize_with = "present")]
    request_state: bool,
}

/// Whether the field is there, whatever its value.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

impl ToolCallText {
    /// The call `text` holds, if it is a `tools/call` request of JSON-RPC
    /// 2.0 with a number or string id, object params and a string tool
    /// name; `None` for anything else, and for a retry carrying
    /// `inputResponses` or `requestState` or a request that may start a
    /// task (its `_meta` declares the Tasks extension).
    pub fn from_text(text: &str) -> Option<Self> {
        let wire: ToolCallWire<'_> = serde_json::from_str(text).ok()?;
        if wire.jsonrpc != jsonrpc::VERSION
            || wire.method != "tools/call"
            || !(wire.id.is_number() || wire.id.is_string())
            || wire.params.input_responses
            || wire.params.request_state
        {
            return None;
        }
        let meta = match wire.params.meta {
            Some(Value::Object(meta)) => Some(meta),
            _ => None,
        };
        if stateless::declares_tasks(meta.as_ref()) {
            // It may start a task: dispatch decides (`tools_call`).
            return None;
        }
        Some(Self {
            id: wire.id,
            name: wire.params.name,
            arguments: wire.params.arguments,
            meta,
        })
    }

    /// The request's id, as sent.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The tool it calls.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its params' `_meta`.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// Its arguments, as sent.
    pub fn arguments(&self) -> Option<&Value> {
        self.arguments.as_ref()
    }

    /// Runs the call on `server`, in `ctx`, as JSON-RPC dispatch runs a
    /// `tools/call` (in a span of its own, as dispatch serves one): its
    /// reply.
    pub async fn serve(self, server: &super::Server, ctx: RequestContext) -> ToolCallReply {
        let Self {
            id,
            name,
            arguments,
            meta,
        } = self;
        let span = spans::served(
            spans::Target::new("tools/call", Some(&name)),
            &id,
            &server.inner.name,
            || ctx.session().and_then(Session::protocol_version),
            meta.as_ref(),
            ctx.remote(),
        );
        let call = ToolCall {
            id: &id,
            name: Cow::Owned(name),
            arguments,
            meta: meta.map(Arc::new),
            input_responses: None,
            request_state: None,
            as_task: false,
        };
        let answer = run(&server.inner, call, Served::Connection(ctx))
            .instrument(span.clone())
            .await;
        spans::outcome(&span, outcome(&answer));
        ToolCallReply { id, answer }
    }
}

/// The JSON-RPC reply to a [`ToolCallText`]: serialized as
/// `{"jsonrpc":"2.0","id":…,"result":…}` (or `"error"`), as JSON-RPC
/// dispatch would have answered.
pub struct ToolCallReply {
    id: Value,
    answer: Answer,
}

impl ToolCallReply {
    /// What the call answered: its result (a tool's failure is an
    /// `isError` result) or a JSON-RPC error.
    pub fn answer(&self) -> Result<&CallToolResult, &ErrorObject> {
        self.answer.as_ref()
    }
}

impl serde::Serialize for ToolCallReply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", jsonrpc::VERSION)?;
        map.serialize_entry("id", &self.id)?;
        match &self.answer {
            Ok(result) => map.serialize_entry("result", result)?,
            Err(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

/// The context a call is served in.
pub(crate) enum Served {
    /// The connection's. A call whose `_meta` names a protocol version is
    /// of the stateless revision: its `_meta` is checked and it is served
    /// on a session of its own (`stateless::checked_context`).
    Connection(RequestContext),
    /// A stateless context already made from the call's `_meta` by
    /// `stateless::checked_context`: what a caller that sends the same
    /// `_meta` with every call (the in-process client) makes once.
    Stateless(RequestContext),
}

impl Served {
    fn context(&self) -> &RequestContext {
        match self {
            Self::Connection(ctx) | Self::Stateless(ctx) => ctx,
        }
    }
}

/// What a call answers: its result (a tool's failure is an `isError`
/// result), or a JSON-RPC error (an unknown tool, arguments that are no
/// object, a stateless `_meta` that fails its check, a panic in the
/// server's own code).
pub(crate) type Answer = Result<CallToolResult, ErrorObject>;

/// How a call's span ends, by its answer.
fn outcome(answer: &Answer) -> spans::Outcome<'_> {
    match answer {
        Ok(result) if result.is_error => spans::Outcome::ToolError,
        Ok(_) => spans::Outcome::Ok,
        Err(error) => spans::Outcome::Error {
            code: error.code,
            message: &error.message,
        },
    }
}

/// [`start`] in a span of its own (`spans::served`), for a caller that is
/// no JSON-RPC dispatch (which makes one for every request): the in-process
/// client's direct calls. A disabled span costs a check.
pub(crate) fn start_in_span<'a>(
    server: &'a ServerInner,
    call: ToolCall<'_>,
    served: Served,
    cx: &mut Context<'_>,
) -> Call<'a> {
    let span = spans::served(
        spans::Target::new("tools/call", Some(&call.name)),
        call.id,
        &server.name,
        || {
            served
                .context()
                .session()
                .and_then(Session::protocol_version)
        },
        call.meta.as_deref(),
        served.context().remote(),
    );
    if span.is_disabled() {
        return start(server, call, served, cx);
    }
    match span.in_scope(|| start(server, call, served, cx)) {
        Call::Done(answer) => {
            spans::outcome(&span, outcome(&answer));
            Call::Done(answer)
        }
        Call::Running(running) => Call::Running(Box::pin(async move {
            let answer = running.instrument(span.clone()).await;
            spans::outcome(&span, outcome(&answer));
            answer
        })),
    }
}

/// A call [`start`]ed: answered in its first poll, or still running (the
/// rest of it boxed once; dropping it cancels the call, whose token fires).
pub(crate) enum Call<'a> {
    Done(Answer),
    Running(BoxFuture<'a, Answer>),
}

/// Runs `call` to its answer: [`start`], then the rest. What JSON-RPC
/// dispatch awaits.
pub(crate) async fn run(server: &ServerInner, call: ToolCall<'_>, served: Served) -> Answer {
    let mut parts = Some((call, served));
    let started = std::future::poll_fn(|cx| match parts.take() {
        Some((call, served)) => Poll::Ready(start(server, call, served, cx)),
        None => Poll::Pending, // never: the first poll is ready
    })
    .await;
    match started {
        Call::Done(answer) => answer,
        Call::Running(running) => running.await,
    }
}

/// Starts `call`, synchronously, polling the handler once with `cx` (the
/// caller's task): most calls are answered there, with no timer armed and
/// nothing boxed. A panic in the server's own code (a handler's is an
/// `isError` result) is `-32603`, here or in the call left running.
pub(crate) fn start<'a>(
    server: &'a ServerInner,
    call: ToolCall<'_>,
    served: Served,
    cx: &mut Context<'_>,
) -> Call<'a> {
    let id = call.id;
    std::panic::catch_unwind(AssertUnwindSafe(|| serve(server, call, served, cx)))
        .unwrap_or_else(|panic| Call::Done(Err(contain::panicked(id, panic.as_ref()))))
}

/// [`start`], its panics not caught.
fn serve<'a>(
    server: &'a ServerInner,
    call: ToolCall<'_>,
    served: Served,
    cx: &mut Context<'_>,
) -> Call<'a> {
    // At the stateless revision, results get the server's decoration.
    let decorated = Some(&server.decoration);
    let (input_responses, request_state) = (call.input_responses, call.request_state);
    let (ctx, decoration) = match served {
        Served::Stateless(ctx) => (ctx, decorated),
        Served::Connection(ctx) => {
            match call
                .meta
                .as_deref()
                .filter(|m| crate::types::is_stateless_meta(m))
            {
                None => (ctx, None),
                Some(meta) => match stateless::checked_context(Some(meta), ctx) {
                    Ok(ctx) => (ctx, decorated),
                    Err(error) => return Call::Done(Err(error)),
                },
            }
        }
    };
    let Some(tool) = server.tool(&call.name) else {
        // -32601 naming the tool; see the server's module docs for why not
        // -32602.
        return Call::Done(Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!("Unknown tool: {}", call.name),
        )));
    };
    if tool.tool.task_support == TaskSupport::Required && !call.as_task {
        // Only as a task: a call that came another way (a session's, the
        // in-process client's direct one) is refused, naming the extension.
        return Call::Done(Err(stateless::tasks_extension_required()));
    }
    let arguments = match call.arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(other) => {
            return Call::Done(Err(ErrorObject::invalid_params(format!(
                "tools/call: \"arguments\" must be an object, not {}",
                json_type_name(&other)
            ))));
        }
    };
    // At the stateless revision the call may ask the client for input: in
    // rounds, or, run as a task, through its session (whose requests are
    // the task's `inputRequests`, answered by `tasks/update`: tasks.rs).
    let round = match decoration {
        None => None,
        Some(_) if call.as_task => None,
        Some(_) => {
            let named = RequestName {
                method: "tools/call",
                name: &call.name,
                arguments: &arguments,
            };
            let given = (input_responses, request_state);
            match ctx.begin_round(&server.sealing, &named, given) {
                Ok(round) => Some(Arc::new(round)),
                Err(error) => return Call::Done(Err(error)),
            }
        }
    };
    start_handler(
        server,
        tool,
        call.id,
        arguments,
        call.meta,
        ctx,
        decoration,
        round,
        call.as_task,
        cx,
    )
}

/// Validates the arguments, makes the handler's future and polls it once;
/// at the stateless revision the result gets the server's `decoration`.
///
/// Cancellation: the call's [`Cancel`] exists from the start (the handler's
/// context carries it; its token is made only when the handler asks for
/// one, or here when the first poll leaves the call running), but the
/// call is recorded in its session only when
/// the first poll leaves it running — a call that finishes there never
/// touches the session's table. A `notifications/cancelled` that arrives
/// while the first poll runs (another thread) finds no call in the table;
/// the session notes every cancel before looking, and `begin_call` looks at
/// those noted since `mark` after recording the call, so one of the two
/// always sees the other (see `Session::begin_call`). A cancel that came
/// before the call started (it overtook its request: over HTTP they come
/// on two connections, over stdio the request waits for its task) is
/// remembered by the session for a short while, and the call ends as
/// cancelled without running its handler
/// (`Session::cancelled_before_start`).
#[allow(clippy::too_many_arguments)]
fn start_handler<'a>(
    server: &'a ServerInner,
    registered: Arc<Registered>,
    id: &Value,
    arguments: Value,
    meta: Option<Arc<Map<String, Value>>>,
    mut ctx: RequestContext,
    decoration: Option<&'a Decoration>,
    round: Option<Arc<Round>>,
    as_task: bool,
    cx: &mut Context<'_>,
) -> Call<'a> {
    // A result as its revision has it.
    let dress = move |result| match decoration {
        Some(decoration) => decoration.call(result),
        None => result,
    };
    // A call's end as its answer: a task's panic fails it.
    let settle = move |tool: &super::Tool, ended: Ended, id: &Value, round: Option<&Round>| {
        match ended {
            Ended::Panicked(message) if as_task => {
                tracing::error!(tool = %tool.info.name, panic = %message, "a task's tool handler panicked");
                Err(ErrorObject::internal(format!(
                    "Tool \"{}\" panicked: {message}",
                    tool.info.name
                ))
                .with_data(serde_json::json!({"requestId": id})))
            }
            ended => Ok(dress(answer(
                tool,
                ended,
                limit_of(server, tool),
                cap_of(server, tool),
                round,
                &server.sealing,
            ))),
        }
    };
    let watch = ctx.watch.take();
    let parts = ctx.into_parts();
    let (session, stream) = (parts.session, parts.stream);
    let tool = &registered.tool;
    let cap = cap_of(server, tool);
    let structured = tool.output.is_some();
    if let Err(problems) = tool.input.check(&arguments) {
        // The message quotes the model's arguments: it is capped like any result.
        let mut result = CallToolResult::error(format!(
            "Invalid arguments for tool \"{}\":\n{problems}",
            tool.info.name
        ));
        cap::cap_result(&mut result, cap, &tool.info.name, structured);
        return Call::Done(Ok(dress(result)));
    }

    let limit = limit_of(server, tool);
    // Where the call is recorded for `notifications/cancelled`. The mark
    // first: a cancel noted before it is seen here, one noted after it by
    // `begin_call`.
    let home = session.as_ref().map(Session::calls_home);
    let mark = home.map(Session::cancel_mark);
    if home.is_some_and(|s| s.cancelled_before_start(id)) {
        // Its cancel overtook it: the handler never runs.
        return Call::Done(Ok(dress(conclude(tool, Ended::Cancelled, limit, cap))));
    }
    let (deadline, clock) = match tool.progress_cap.or(server.progress_cap) {
        Some(progress_cap) => {
            let clock = ProgressClock::start();
            let deadline = Deadline::following(limit, Arc::clone(&clock), progress_cap);
            (deadline, Some(clock))
        }
        None => (Deadline::fixed(limit), None),
    };
    if let Some(watch) = &watch {
        // The backstop, should the handler block its thread (watchdog.rs).
        let timing = Timing {
            start: Instant::now(),
            deadline: deadline.clone(),
        };
        let (id, registered) = (id.clone(), Arc::clone(&registered));
        let decoration = decoration.cloned();
        watch.arm(
            timing,
            Box::new(move |expiry| {
                let mut result = conclude(&registered.tool, Ended::TimedOut(expiry), limit, cap);
                if let Some(decoration) = &decoration {
                    result = decoration.call(result);
                }
                jsonrpc::response(&id, result.into_value())
            }),
        );
    }
    // Made with the handler's context, if it takes one.
    let mut cancel: Option<Arc<Cancel>> = None;
    let ctx = CallContext {
        request_id: id,
        tool: &registered.name,
        meta,
        session: &session,
        stream,
        clock: &clock,
        cancel: &mut cancel,
        access_token: parts.access_token,
        round: round.clone(),
    };
    let handler = &tool.handler;
    let running = match contain::start(|| handler(arguments, ctx, structured), cx) {
        Started::Finished(finished) => {
            let ended = match finished {
                Ok(result) => Ended::Done(result),
                Err(failure) => {
                    // The handler future is gone: its token fires.
                    if let Some(cancel) = &cancel {
                        cancel.cancel();
                    }
                    Ended::from(failure)
                }
            };
            return Call::Done(settle(tool, ended, id, round.as_deref()));
        }
        Started::Running(running) => running,
    };
    let cancel = cancel.unwrap_or_default();

    // Recorded while the call runs, so notifications/cancelled finds it.
    let in_flight = match (home, RequestId::from_value(id), mark) {
        (Some(home), Some(request_id), Some(mark)) => {
            Some(home.begin_call(request_id, cancel.token().clone(), mark))
        }
        _ => None,
    };
    let id = id.clone();
    let answer_id = id.clone();
    let rest = async move {
        let _in_flight = in_flight;
        // If this future is dropped mid-call (the caller gave up), the token fires.
        let mut cancel_on_drop = CancelOnDrop(Some(&cancel));
        let finished = tokio::select! {
            biased;
            () = cancel.token().cancelled() => None,
            finished = contain::finish(running, &deadline) => Some(finished),
        };
        let ended = match finished {
            None => Ended::Cancelled,
            Some(Ok(result)) => {
                cancel_on_drop.0 = None;
                Ended::Done(result)
            }
            Some(Err(failure)) => Ended::from(failure),
        };
        // The handler future is gone now. Its token fires unless it finished.
        drop(cancel_on_drop);
        settle(&registered.tool, ended, &answer_id, round.as_deref())
    };
    Call::Running(Box::pin(async move {
        match AssertUnwindSafe(rest).catch_unwind().await {
            Ok(answer) => answer,
            Err(panic) => Err(contain::panicked(&id, panic.as_ref())),
        }
    }))
}

/// The timeout of `tool`'s calls.
fn limit_of(server: &ServerInner, tool: &super::Tool) -> Duration {
    tool.timeout.unwrap_or(server.tool_timeout)
}

/// The cap on `tool`'s results.
fn cap_of(server: &ServerInner, tool: &super::Tool) -> usize {
    tool.max_result_chars.unwrap_or(server.max_result_chars)
}

/// How a handler run ended.
enum Ended {
    Done(CallToolResult),
    Panicked(String),
    TimedOut(Expiry),
    Cancelled,
}

impl From<Failure> for Ended {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Panicked(message) => Self::Panicked(message),
            Failure::TimedOut(expiry) => Self::TimedOut(expiry),
        }
    }
}

/// What a call that ended so answers: at the stateless revision, a
/// handler that asked for input it does not have is answered with the
/// question (`round.rs`), whatever it returned; otherwise its result,
/// [`conclude`]d.
fn answer(
    tool: &super::Tool,
    ended: Ended,
    limit: Duration,
    cap: usize,
    round: Option<&Round>,
    sealing: &Sealing,
) -> CallToolResult {
    if let (Ended::Done(_), Some(round)) = (&ended, round) {
        match round.input_required(sealing) {
            None => {}
            Some(Ok(asked)) => {
                let Value::Object(fields) = asked.into_value() else {
                    unreachable!("a result is an object")
                };
                return CallToolResult {
                    extra: fields.into(),
                    ..CallToolResult::default()
                };
            }
            Some(Err(why)) => {
                let name = &tool.info.name;
                let failed =
                    CallToolResult::error(format!("Tool \"{name}\" could not finish: {why}"));
                return conclude(tool, Ended::Done(failed), limit, cap);
            }
        }
    }
    conclude(tool, ended, limit, cap)
}

/// The result of a call that ended so, checked and capped.
fn conclude(tool: &super::Tool, ended: Ended, limit: Duration, cap: usize) -> CallToolResult {
    let name = tool.info.name.as_str();
    let structured = tool.output.is_some();
    let mut result = match ended {
        Ended::Done(result) => check_output(tool, result),
        Ended::Panicked(message) => {
            tracing::error!(tool = name, panic = %message, "tool handler panicked");
            CallToolResult::error(format!("Tool \"{name}\" panicked: {message}"))
        }
        Ended::TimedOut(expiry) => {
            tracing::warn!(tool = name, ?limit, ?expiry, "tool call timed out");
            CallToolResult::error(format!(
                "Tool \"{name}\" {} and was stopped",
                expiry.describe()
            ))
        }
        Ended::Cancelled => {
            tracing::debug!(tool = name, "tool call cancelled by the client");
            CallToolResult::error(format!("Tool \"{name}\" was cancelled by the client"))
        }
    };
    cap::cap_result(&mut result, cap, name, structured);
    result
}

/// Cancels the call when dropped, unless disarmed (`None`): a
/// `DropGuard` without a clone of the token.
struct CancelOnDrop<'a>(Option<&'a Cancel>);

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(cancel) = self.0 {
            cancel.cancel();
        }
    }
}

/// With an output schema, a successful result must carry matching
/// `structuredContent`.
fn check_output(tool: &super::Tool, result: CallToolResult) -> CallToolResult {
    let Some(schema) = &tool.output else {
        return result;
    };
    if result.is_error {
        return result;
    }
    let name = &tool.info.name;
    match &result.structured_content {
        None => CallToolResult::error(format!(
            "Tool \"{name}\" declares an output schema but returned no structured content \
             (return Json(value) or set structured_content)"
        )),
        Some(structured) => match schema.check(structured) {
            Ok(()) => result,
            Err(problems) => CallToolResult::error(format!(
                "Tool \"{name}\" returned structured content that does not match its output \
                 schema:\n{problems}"
            )),
        },
    }
}
