//! The server end of stdio: serving a [`Handler`] over NDJSON.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use super::watchdog::Watchdog;
use crate::jsonrpc::{self, ErrorObject};
use crate::server::{Handler, RequestContext, Session, answer, limits::MAX_BATCH_LEN};
use crate::transport::budget::{Budget, Demand, Ticket};
use crate::transport::json::envelope;
use crate::transport::lines::{
    DEFAULT_MAX_LINE_BYTES, DEFAULT_WRITE_BUFFER_BYTES, Line, LineReader, LineWriter, Order,
    Parsed, SendError, UnreadProbe, parse_line,
};

/// The cap on one incoming line when serving (64 MiB).
pub const SERVE_MAX_LINE_BYTES: usize = DEFAULT_MAX_LINE_BYTES;

/// How many of the client's requests are served at once; past this the
/// next line is read only when one of them is answered (backpressure on a
/// client that sends faster than it reads).
pub const SERVE_MAX_REQUESTS_IN_FLIGHT: usize = 1024;

/// The default byte budget of one client when serving over stdio (64 MiB):
/// see [`ServeOptions::max_held_bytes`].
pub const SERVE_MAX_HELD_BYTES: usize = 64 * 1024 * 1024;

/// How [`serve_stdio_with`] and [`serve_lines_with`] serve a client.
///
/// ```
/// use claude_code_agent_mcp::server::ServeOptions;
///
/// let options = ServeOptions::new().max_held_bytes(16 << 20);
/// assert_eq!(options.held_bytes(), 16 << 20);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    max_held_bytes: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            max_held_bytes: SERVE_MAX_HELD_BYTES,
        }
    }
}

impl ServeOptions {
    /// The defaults ([`serve_stdio`] and [`serve_lines`] serve with them).
    pub fn new() -> Self {
        Self::default()
    }

    /// Caps the bytes the server holds for a client that does not read
    /// (default [`SERVE_MAX_HELD_BYTES`], 64 MiB): answers ready and not yet
    /// written, and requests to the client waiting for room, plus what the
    /// running requests reserve for their answers (what answers of the
    /// same kind — the method, and for `tools/call` the tool — held lately;
    /// at first a 16th of the budget, never more than half of it). A
    /// request runs once it fits; until then it waits (backpressure,
    /// nothing is dropped), and a request whose answers are small goes
    /// ahead of a large one that waits. An answer larger than the whole
    /// budget is served in full and held until written; once the client
    /// has read everything the budget is empty again, whatever the sizes
    /// were. The write buffer
    /// ([`DEFAULT_WRITE_BUFFER_BYTES`](crate::transport::DEFAULT_WRITE_BUFFER_BYTES))
    /// comes on top. Each answer is held once, serialized (its value is
    /// freed first).
    ///
    /// Requests waiting are kept as their lines; meanwhile the server goes
    /// on reading and handles the client's responses (to a tool's
    /// sampling, elicitation or roots request) and notifications
    /// (`notifications/cancelled` drops a request still waiting,
    /// unanswered) at once, so calls that wait on the client still get
    /// their answers. Reading stops altogether only while the waiting
    /// requests' lines pass a 16th of the budget (at least 1 MiB; the last
    /// line read may pass it by its length).
    pub fn max_held_bytes(mut self, bytes: usize) -> Self {
        self.max_held_bytes = bytes;
        self
    }

    /// The byte budget set by [`max_held_bytes`](Self::max_held_bytes).
    pub fn held_bytes(&self) -> usize {
        self.max_held_bytes
    }

    /// A client's budget, as these options set it.
    pub(crate) fn budget(&self) -> Arc<Budget> {
        Budget::with_max_running(self.max_held_bytes, SERVE_MAX_REQUESTS_IN_FLIGHT)
    }
}

/// Serves `handler` on this process's stdin and stdout until stdin ends.
///
/// One [`Session`] for the connection (so `notifications/cancelled`,
/// `logging/setLevel` and `list_changed` work); every request (and every
/// batch, for a client at 2025-03-26) is answered in its own task, so a
/// slow tool never holds up `ping` or another call, and answered whatever
/// the handler does (a panic, or no reply, is a `-32603`). Lines that are
/// not JSON get a `-32700` reply, lines over the cap a `-32600`, each with
/// the request's id when the text shows it (so the client's call fails at
/// once instead of waiting for its timeout). Lone surrogate escapes, which
/// JavaScript and Python clients write for a string cut mid-emoji, decode
/// to U+FFFD. Returns once stdin is
/// closed and every request answered.
///
/// When stdin and stdout are both pipes (a client spawned the server), they
/// are read and written through Tokio's reactor, in non-blocking mode while
/// serving (set back to blocking after): no thread hand-off per line, as
/// `tokio::io::stdin()`/`stdout()` make. Anything else (a file, a
/// terminal) is served through those. So the runtime needs its IO driver
/// as well as its timers (for tool timeouts): `#[tokio::main]`, or a
/// builder with `enable_all()`.
///
/// A call's progress reaches the client before its answer, in a read of
/// its own: the answer waits (briefly, on Linux, where the kernel says
/// what the client has not read yet) until the client has read the
/// progress sent before it — the TypeScript MCP SDK, which most hosts are
/// built on, drops a progress report it reads together with the answer.
///
/// ```no_run
/// use claude_code_agent_mcp::{Server, server::serve_stdio};
///
/// #[tokio::main]
/// async fn main() -> std::io::Result<()> {
///     serve_stdio(Server::builder("demo", "1.0.0").build()).await
/// }
/// ```
pub async fn serve_stdio(handler: impl Handler) -> io::Result<()> {
    serve_stdio_with(handler, ServeOptions::default()).await
}

/// [`serve_stdio`] with [`ServeOptions`].
pub async fn serve_stdio_with(handler: impl Handler, options: ServeOptions) -> io::Result<()> {
    // What the client has not read yet of stdout, for the order of answers.
    #[cfg(unix)]
    let probe = crate::transport::lines::unread_probe(libc::STDOUT_FILENO);
    #[cfg(not(unix))]
    let probe = None;
    #[cfg(unix)]
    if let Some((input, output, _restore)) = pipes::stdio() {
        return serve(Arc::new(handler), input, output, probe, options.budget()).await;
    }
    serve(
        Arc::new(handler),
        tokio::io::stdin(),
        tokio::io::stdout(),
        probe,
        options.budget(),
    )
    .await
}

#[cfg(unix)]
mod pipes;

/// [`serve_stdio`] over any reader and writer.
///
/// Nothing is buffered without bound, whatever the client does:
///
/// * at most [`SERVE_MAX_REQUESTS_IN_FLIGHT`] requests run at once (a
///   batch counts as many as it holds); then requests wait, as below;
/// * what is held for the client stays within a byte budget
///   ([`ServeOptions::max_held_bytes`], default [`SERVE_MAX_HELD_BYTES`]):
///   past it requests wait until the client reads its answers, and past
///   a 16th of it (at least 1 MiB) of requests waiting, reading waits;
///   until then responses and notifications are still read and handled;
/// * replies are written by their request's task, which waits while more
///   than 1 MiB
///   wait for a client that does not read: a reply is never dropped;
/// * what the server sends on its own goes through the session's notifier,
///   which cannot wait: a request to the client (`sampling/createMessage`
///   …) is never dropped (when the buffer is full it waits in a task of its
///   own; there are at most as many as tool calls waiting for them), but a
///   notification (progress, log messages, `list_changed`) is dropped
///   while the buffer is full, counted, and a warning is logged.
///
/// A call's progress is written before its answer and never in the same
/// `write`; unlike [`serve_stdio`], nothing waits for the client to have
/// read it (a generic writer cannot tell).
pub async fn serve_lines<R, W>(handler: Arc<dyn Handler>, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve(
        handler,
        input,
        output,
        None,
        ServeOptions::default().budget(),
    )
    .await
}

/// [`serve_lines`] with [`ServeOptions`].
pub async fn serve_lines_with<R, W>(
    handler: Arc<dyn Handler>,
    input: R,
    output: W,
    options: ServeOptions,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve(handler, input, output, None, options.budget()).await
}

/// [`serve_lines`], with a way to tell what the client has not read yet,
/// within `budget` ([`ServeOptions::budget`]).
pub(crate) async fn serve<R, W>(
    handler: Arc<dyn Handler>,
    input: R,
    output: W,
    probe: Option<UnreadProbe>,
    budget: Arc<Budget>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let out = Output {
        writer: LineWriter::with_unread_probe(output, DEFAULT_WRITE_BUFFER_BYTES, probe),
        failed: Arc::new(Mutex::new(None)),
        dropped: Arc::new(AtomicU64::new(0)),
        budget,
    };
    let notifier = out.clone();
    let session = Session::with_notifier(move |message| notifier.notify(message));
    // Responses come back through `handle` with this session: tools may
    // send requests to the client (`ToolContext::request`).
    session.set_client_requests(true);
    let mut lines = LineReader::new(input, SERVE_MAX_LINE_BYTES);
    let mut tasks = tokio::task::JoinSet::new();
    // Tool calls whose handler blocks its thread are answered from here.
    let (dog, mut timed_out) = Watchdog::new();
    let mut read_error = None;
    // Requests read and not admitted yet, in the order they came.
    let mut queue = VecDeque::<Queued>::new();
    let mut queued_bytes = 0;
    let queue_bound = queue_bound(out.budget.limit());
    let mut reading = true;
    while reading || !queue.is_empty() {
        let read = reading && queued_bytes < queue_bound;
        let next = tokio::select! {
            biased;
            admitted = admission(&out.budget, &queue), if !queue.is_empty() => {
                Next::Admitted(admitted)
            }
            line = lines.next_line(), if read => Next::Line(line),
            Some(answer) = timed_out.recv() => Next::TimedOut(answer),
        };
        let message = match next {
            Next::TimedOut(answer) => {
                out.reply(&answer).await;
                continue;
            }
            Next::Admitted((i, ticket)) => {
                let Some(queued) = queue.remove(i) else {
                    continue;
                };
                queued_bytes -= queued.bytes;
                // Parsed before, when it was read: it parses again.
                if let Parsed::Value(message) = parse_line::<Value>(&queued.line) {
                    drop(queued.line);
                    let ctx = RequestContext::with_session(session.clone());
                    spawn(
                        &mut tasks,
                        &dog,
                        &handler,
                        &out,
                        message,
                        ctx,
                        queued.order,
                        ticket,
                    );
                }
                continue;
            }
            Next::Line(Ok(None)) => {
                reading = false;
                continue;
            }
            Next::Line(Err(e)) => {
                read_error = Some(e);
                reading = false;
                continue;
            }
            Next::Line(Ok(Some(Line::TooLong { len, head }))) => {
                let id = envelope(head).request_id().cloned().unwrap_or(Value::Null);
                let error = ErrorObject::invalid_request(format!(
                    "a message of {len} bytes exceeds the cap of {SERVE_MAX_LINE_BYTES} bytes"
                ));
                out.reply(&jsonrpc::error_response(&id, error)).await;
                continue;
            }
            Next::Line(Ok(Some(Line::Text(line)))) => match parse_line::<Value>(line) {
                Parsed::Blank => continue,
                Parsed::Value(message) => (message, line),
                Parsed::Invalid(e) => {
                    let why = e.map_or_else(|| "not JSON".to_owned(), |e| e.to_string());
                    out.parse_error(line, &why).await;
                    continue;
                }
                Parsed::Mismatch(e) => {
                    out.parse_error(line, &e.to_string()).await;
                    continue;
                }
            },
        };
        let (message, line) = message;
        let ctx = RequestContext::with_session(session.clone());
        // A batch holds up to MAX_BATCH_LEN requests: it counts as that many.
        let requests = match &message {
            Value::Array(batch) => Some((
                Demand::of(&message, batch.len().min(MAX_BATCH_LEN)),
                Order::AnswerAll,
            )),
            m if jsonrpc::kind(m) == jsonrpc::Kind::Request => {
                Some((Demand::of(m, 1), answer_order(m)))
            }
            _ => None,
        };
        if let Some((demand, order)) = requests {
            if let Some(ticket) = out.budget.try_admit(demand) {
                spawn(
                    &mut tasks, &dog, &handler, &out, message, ctx, order, ticket,
                );
            } else {
                // Its line waits, not its value (which may take many times
                // the bytes).
                let id = message.get("id").cloned().filter(|_| !message.is_array());
                drop(message);
                let bytes = line.len() + std::mem::size_of::<Queued>();
                queued_bytes += bytes;
                queue.push_back(Queued {
                    line: line.to_vec(),
                    demand,
                    order,
                    id,
                    bytes,
                });
            }
        } else {
            if let Some(id) = cancelled_id(&message) {
                // A request cancelled before it was admitted is dropped, unanswered.
                queue.retain(|q| {
                    let keep = q.id.as_ref() != Some(id);
                    if !keep {
                        queued_bytes -= q.bytes;
                    }
                    keep
                });
            }
            if let Some(reply) = answer(handler.as_ref(), message, ctx).await {
                // Notifications and responses are handled in order (cancellation
                // must see its call), also while requests wait for admission.
                out.reply(&reply).await;
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    session.close();
    loop {
        tokio::select! {
            joined = tasks.join_next() => if joined.is_none() { break },
            Some(answer) = timed_out.recv() => out.reply(&answer).await,
        }
    }
    while let Ok(answer) = timed_out.try_recv() {
        out.reply(&answer).await;
    }
    drop(session);
    if let Err(e) = out.writer.close().await {
        out.record(e);
    }
    let dropped = out.dropped.load(Ordering::Relaxed);
    if dropped > 0 {
        tracing::warn!(
            dropped,
            "serving over NDJSON: notifications were dropped for a client that did not read"
        );
    }
    let failed = out
        .failed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    match (read_error, failed) {
        (Some(e), _) | (None, Some(e)) => Err(e),
        (None, None) => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Admission: requests read while they cannot be admitted yet (no room in the
// byte budget, or SERVE_MAX_REQUESTS_IN_FLIGHT running) wait as their lines
// (their parsed values may take many times the bytes), while the reader goes
// on handling responses and notifications (the client's answers to the
// server's own requests, which running calls may wait for). Each is admitted
// as soon as it fits: one that does not fit never holds up one behind it
// that does.

/// A request read and not admitted yet.
struct Queued {
    /// Its line, parsed again once admitted.
    line: Vec<u8>,
    /// What it asks of the budget.
    demand: Demand,
    order: Order,
    /// Its id (not for a batch), for `notifications/cancelled`.
    id: Option<Value>,
    /// What it takes while it waits (its line and its place in the queue).
    bytes: usize,
}

/// How many bytes of requests may wait for admission before reading stops:
/// a 16th of the budget, at least 1 MiB.
fn queue_bound(budget: usize) -> usize {
    (budget / 16).max(1 << 20)
}

/// Waits until a request of `queue` fits: its position, and its ticket.
/// Cancel-safe: dropped before it is done, every request still waits.
/// Never ready on an empty queue.
async fn admission(budget: &Arc<Budget>, queue: &VecDeque<Queued>) -> (usize, Ticket) {
    budget.admit_any(|| queue.iter().map(|q| q.demand)).await
}

/// The id a `notifications/cancelled` cancels.
fn cancelled_id(message: &Value) -> Option<&Value> {
    (message.get("method")? == "notifications/cancelled")
        .then(|| crate::jsonrpc::at(message, &["params", "requestId"]))
        .flatten()
}

/// What the read loop of [`serve`] does next.
enum Next<'a> {
    /// The request waiting at this position was admitted.
    Admitted((usize, Ticket)),
    /// A line was read.
    Line(io::Result<Option<Line<'a>>>),
    /// The watchdog answered a tool call whose handler blocks its thread.
    TimedOut(Value),
}

/// Answers admitted requests in a task of their own; a tool call's with
/// the watchdog as its backstop (see `server/watchdog.rs`).
#[allow(clippy::too_many_arguments)]
fn spawn<W: AsyncWrite + Unpin + Send + 'static>(
    tasks: &mut tokio::task::JoinSet<()>,
    dog: &Watchdog,
    handler: &Arc<dyn Handler>,
    out: &Output<W>,
    message: Value,
    mut ctx: RequestContext,
    order: Order,
    ticket: Ticket,
) {
    let handler = Arc::clone(handler);
    let out = out.clone();
    let watch = if message.get("method").and_then(Value::as_str) == Some("tools/call") {
        dog.watch()
    } else {
        None
    };
    ctx.watch.clone_from(&watch);
    let task = tasks.spawn({
        let watch = watch.clone();
        async move {
            if let Some(reply) = answer(handler.as_ref(), message, ctx).await
                && watch.as_ref().is_none_or(|w| w.settle())
            {
                out.answer(reply, order, ticket).await;
            }
        }
    });
    if let Some(watch) = watch {
        watch.set_task(task);
    }
}

/// The output side of [`serve_lines`]: the writer, the first write error,
/// and how many notifications were dropped.
struct Output<W> {
    writer: LineWriter<W>,
    failed: Arc<Mutex<Option<io::Error>>>,
    dropped: Arc<AtomicU64>,
    budget: Arc<Budget>,
}

impl<W> Clone for Output<W> {
    fn clone(&self) -> Self {
        Self {
            writer: self.writer.clone(),
            failed: Arc::clone(&self.failed),
            dropped: Arc::clone(&self.dropped),
            budget: Arc::clone(&self.budget),
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Output<W> {
    /// Writes a reply, waiting for room: replies are never dropped.
    async fn reply(&self, message: &Value) {
        self.reply_ordered(message, Order::Any).await;
    }

    /// [`reply`](Self::reply), kept apart from the notices before it as
    /// `order` says.
    async fn reply_ordered(&self, message: &Value, order: Order) {
        if let Err(e) = self.writer.send_ordered(message, order).await {
            self.record(e);
        }
    }

    /// Writes the answer of admitted requests: serialized once and the
    /// value freed, its bytes held against the budget until the writer
    /// has taken them.
    async fn answer(&self, reply: Value, order: Order, ticket: Ticket) {
        let mut frame = match self.writer.serialize(&reply) {
            Ok(frame) => frame,
            Err(e) => return self.record(e),
        };
        drop(reply);
        fit(&mut frame);
        let charge = ticket.answered(frame.capacity());
        if let Err(e) = self.writer.send_frame(frame, order).await {
            self.record(e);
        }
        drop(charge);
    }

    /// Answers a line that does not decode: `-32700`, with the id of the
    /// request it holds when that can be read.
    async fn parse_error(&self, line: &[u8], why: &str) {
        let error = ErrorObject::new(jsonrpc::PARSE_ERROR, format!("Parse error: {why}"));
        let id = envelope(line).request_id().cloned().unwrap_or(Value::Null);
        self.reply(&jsonrpc::error_response(&id, error)).await;
    }

    /// What the server sends on its own; see [`serve_lines`] for the
    /// overflow policy.
    fn notify(&self, message: Value) {
        let order = match message.get("method").and_then(Value::as_str) {
            Some("notifications/progress") => {
                crate::jsonrpc::at(&message, &["params", "progressToken"])
                    .and_then(token_key)
                    .map_or(Order::Any, Order::Notice)
            }
            _ => Order::Any,
        };
        match self.writer.try_send_ordered(&message, order) {
            Ok(()) => {}
            Err(SendError::Full) if jsonrpc::kind(&message) == jsonrpc::Kind::Request => {
                let out = self.clone();
                let Ok(frame) = self.writer.serialize(&message) else {
                    return;
                };
                drop(message);
                let mut frame = frame;
                fit(&mut frame);
                let charge = self.budget.charge(frame.capacity());
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move {
                        if let Err(e) = out.writer.send_frame(frame, Order::Any).await {
                            out.record(e);
                        }
                        drop(charge);
                    });
                }
            }
            Err(SendError::Full) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(
                        dropped = n,
                        "serving over NDJSON: the client is not reading; dropping notifications"
                    );
                }
            }
            Err(e) => self.record(e),
        }
    }

    fn record(&self, e: SendError) {
        if let SendError::Io(e) = e {
            self.failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(e);
        }
    }
}

/// Gives back what serializing grew a large frame by (up to twice its
/// length), before the frame waits for a client that does not read.
fn fit(frame: &mut Vec<u8>) {
    if frame.capacity() - frame.len() > 64 * 1024 {
        frame.shrink_to_fit();
    }
}

/// How the answer to `request` is ordered: apart from the progress sent
/// before it under its progress token (if it asked for progress).
fn answer_order(request: &Value) -> Order {
    crate::jsonrpc::at(request, &["params", "_meta", "progressToken"])
        .and_then(token_key)
        .map_or(Order::Any, Order::Answer)
}

/// A progress token (a string or a number) as a key of the writer's
/// [`Order`]; two tokens that hash alike only cost a wait.
fn token_key(token: &Value) -> Option<u64> {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default().build_hasher();
    match token {
        Value::String(s) => {
            h.write_u8(0);
            h.write(s.as_bytes());
        }
        Value::Number(n) => {
            h.write_u8(1);
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => h.write_u64(u),
                (None, Some(i)) => h.write_i64(i),
                (None, None) => h.write_u64(n.as_f64().unwrap_or_default().to_bits()),
            }
        }
        _ => return None,
    }
    Some(h.finish())
}
