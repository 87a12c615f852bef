//! One-shot [`query()`]: start the CLI, send a prompt, stream the answer;
//! and [`PromptInput`], what a prompt can be.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::stream::{BoxStream, Stream, StreamExt};

use crate::control::Control;
use crate::error::Result;
use crate::message::{ContentBlock, Message, UserInput};
use crate::options::Options;
use crate::queue::Inbox;
use crate::session::{Connection, Session};
use crate::startup::WarmQuery;
use crate::stream::MessageStream;

/// What to send the model: one user message, or a stream of them.
///
/// Built from a `&str` or `String` (a text message), content blocks, a
/// [`UserInput`], or [`PromptInput::stream`].
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "built once per turn and moved once; boxing would only add an allocation"
)]
pub enum PromptInput {
    /// One user message: one turn.
    Message(UserInput),
    /// User messages as they come; each one is a turn.
    Stream(BoxStream<'static, UserInput>),
}

impl PromptInput {
    /// A prompt from a stream of user messages.
    pub fn stream(messages: impl Stream<Item = UserInput> + Send + 'static) -> Self {
        Self::Stream(messages.boxed())
    }
}

impl std::fmt::Debug for PromptInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Message(m) => f.debug_tuple("Message").field(m).finish(),
            Self::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

impl From<&str> for PromptInput {
    fn from(s: &str) -> Self {
        Self::Message(UserInput::text(s))
    }
}

impl From<String> for PromptInput {
    fn from(s: String) -> Self {
        Self::Message(UserInput::text(s))
    }
}

impl From<UserInput> for PromptInput {
    fn from(m: UserInput) -> Self {
        Self::Message(m)
    }
}

impl From<Vec<ContentBlock>> for PromptInput {
    /// One user message made of content blocks (text, base64 images, …).
    fn from(blocks: Vec<ContentBlock>) -> Self {
        Self::Message(UserInput::blocks(blocks))
    }
}

/// The stream of a [`query()`]: every message of the conversation, and
/// once the CLI has answered its handshake, the session's [`Control`]
/// (its `initialize` answer, the pid, the control requests).
///
/// It is a [`Stream`] of `Result<Message>` with the same rules as
/// [`MessageStream`] (an `Err` is its last item; a skipped line is a
/// [`Message::SkippedLine`]), and `Unpin`. The CLI starts on the first poll, so
/// [`control`](Self::control) is `None` until the stream has yielded its
/// first item (or failed to start), and its requests fail once the query
/// is over; a query from a [`WarmQuery`] has its control from the start.
#[must_use = "streams do nothing unless polled"]
pub struct Query {
    stream: MessageStream<'static>,
    control: Arc<OnceLock<Control>>,
}

impl Query {
    /// The session's control requests and handshake answer, once started.
    pub fn control(&self) -> Option<&Control> {
        self.control.get()
    }

    /// What the CLI said in the handshake (commands, models, agents,
    /// account…), once started.
    pub fn initialize_response(&self) -> Option<&crate::protocol::InitializeResponse> {
        self.control().map(Control::initialize_response)
    }

    /// The pid of the process the query started, once started.
    pub fn pid(&self) -> Option<u32> {
        self.control().map(Control::pid)
    }
}

impl Stream for Query {
    type Item = Result<Message>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.stream.poll_next_unpin(cx)
    }
}

impl futures::stream::FusedStream for Query {
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("control", &self.control.get())
            .finish_non_exhaustive()
    }
}

/// Runs one prompt and streams every message of the conversation, ending
/// after the final [`Message::Result`].
///
/// The CLI is started on the first poll and shut down (stdin closed, then
/// waited for and reaped) after the last `result`. Dropping the stream early
/// kills the CLI's whole process group. To start the CLI before the prompt
/// is known, so that the prompt waits only for the model, use
/// [`startup()`](crate::startup) and [`WarmQuery::query`].
///
/// An `Err` item ends the stream (the CLI could not start, or exited
/// mid-turn, …; the CLI is let go at once), so `?` on each item is the
/// whole of the error handling. Nothing the CLI writes is an error: a line
/// the SDK had to skip is a [`Message::SkippedLine`] and the turn goes on
/// (see [`MessageStream`]).
///
/// ```no_run
/// use claude_code_agent::{Message, Options, query};
/// use futures::StreamExt;
///
/// # async fn run() -> claude_code_agent::Result<()> {
/// let mut stream = query("What is 2 + 2?", Options::new());
/// while let Some(message) = stream.next().await {
///     match message? {
///         Message::Assistant(m) => println!("{}", m.text()),
///         Message::SkippedLine(skipped) => eprintln!("warning: {skipped}"),
///         _ => {}
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub fn query(prompt: impl Into<PromptInput>, options: Options) -> Query {
    run(
        prompt.into(),
        Start::Cold(options, tracing::Span::current()),
    )
}

/// Where a query's session comes from.
#[allow(
    clippy::large_enum_variant,
    reason = "built once per query and kept in a box (the stream's `State`)"
)]
enum Start {
    /// Started on the first poll, its span a child of the span current
    /// when the query was made.
    Cold(Options, tracing::Span),
    /// Started already, by [`startup()`](crate::startup).
    Warm(WarmQuery),
}

impl WarmQuery {
    /// Sends the first prompt and streams every message of the conversation,
    /// as [`query()`] does with a CLI it starts itself: the stream ends
    /// after the final [`Message::Result`], the CLI is shut down then, and
    /// dropping the stream early kills it. Messages the CLI wrote while this
    /// waited come first.
    ///
    /// The prompt is written on the stream's first poll. When the CLI
    /// exited while this waited, the stream's one item is how it ended
    /// ([`Error::CliExited`](crate::Error::CliExited)). The returned
    /// [`Query`]'s [`control`](Query::control) is there from the start.
    pub fn query(self, prompt: impl Into<PromptInput>) -> Query {
        run(prompt.into(), Start::Warm(self))
    }
}

/// The stream of one query, from its prompt and where its session comes from.
fn run(prompt: PromptInput, from: Start) -> Query {
    #[allow(
        clippy::large_enum_variant,
        reason = "the stream's state lives in one box already (MessageStream)"
    )]
    enum State {
        Start(PromptInput, Box<Start>),
        Running(Box<Run>),
        Finish(Box<Run>),
        Done,
    }

    /// The running session, owned by the stream: dropping it kills the CLI.
    struct Run {
        session: Session,
        inbox: Inbox,
        input_done: Arc<AtomicBool>,
    }

    /// The next item. After an error the stream ends ([`MessageStream`]
    /// drops this state, and with it the session).
    async fn next(mut run: Box<Run>) -> Option<(Result<Message>, State)> {
        let item = run.session.next_message(&mut run.inbox).await?;
        let last = matches!(&item, Ok(message) if message.is_result())
            && run.input_done.load(Ordering::SeqCst)
            && run.session.conn.open_turns() == 0;
        let state = if last {
            State::Finish(run)
        } else {
            State::Running(run)
        };
        Some((item, state))
    }

    async fn start(prompt: PromptInput, from: Start, slot: &OnceLock<Control>) -> Result<Box<Run>> {
        let warm = match from {
            Start::Cold(options, parent) => WarmQuery::start(&options, &parent).await?,
            Start::Warm(warm) => warm,
        };
        let (session, control) = warm.into_parts();
        let _ = slot.set(control);
        let inbox = session
            .take_inbox()
            .expect("a new session holds its message queue");
        let input_done = Arc::new(AtomicBool::new(false));
        match prompt {
            PromptInput::Message(message) => {
                session.conn.send_user(&message).await?;
                input_done.store(true, Ordering::SeqCst);
            }
            PromptInput::Stream(messages) => {
                tokio::spawn(forward(session.conn.clone(), messages, input_done.clone()));
            }
        }
        Ok(Box::new(Run {
            session,
            inbox,
            input_done,
        }))
    }

    let control = Arc::new(OnceLock::new());
    if let Start::Warm(warm) = &from {
        let _ = control.set(warm.control().clone());
    }
    let slot = control.clone();
    let stream = MessageStream::new(futures::stream::unfold(
        State::Start(prompt, Box::new(from)),
        move |state| {
            let slot = slot.clone();
            async move {
                match state {
                    State::Start(prompt, from) => match start(prompt, *from, &slot).await {
                        Ok(run) => next(run).await,
                        Err(e) => Some((Err(e), State::Done)),
                    },
                    State::Running(run) => next(run).await,
                    State::Finish(run) => {
                        run.session.conn.shutdown().await;
                        run.session.conn.wait_ended().await;
                        // What the CLI wrote after the last result went to
                        // the session store too, or the stream says it did not.
                        match run.session.conn.mirror_outcome().await {
                            Ok(()) => None,
                            Err(e) => Some((Err(e), State::Done)),
                        }
                    }
                    State::Done => None,
                }
            }
        },
    ));
    Query { stream, control }
}

/// Writes a prompt stream's messages as they come; when it ends and every
/// turn is answered, closes the CLI's input so that the query ends.
async fn forward(
    conn: Arc<Connection>,
    mut messages: BoxStream<'static, UserInput>,
    input_done: Arc<AtomicBool>,
) {
    loop {
        let next = tokio::select! {
            next = messages.next() => next,
            () = conn.closed().cancelled() => return,
        };
        let Some(message) = next else { break };
        if conn.send_user(&message).await.is_err() {
            return;
        }
    }
    input_done.store(true, Ordering::SeqCst);
    // Every turn may be answered already (then the query's stream saw its
    // last `result` before the input was done): end the session here.
    if conn.open_turns() == 0 {
        conn.shutdown().await;
    }
}
