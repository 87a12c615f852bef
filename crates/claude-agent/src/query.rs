//! One-shot [`query()`]: start the CLI, send a prompt, stream the answer;
//! and [`PromptInput`], what a prompt can be.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::stream::{BoxStream, Stream, StreamExt};

use crate::error::Result;
use crate::message::{ContentBlock, Message, UserInput};
use crate::options::Options;
use crate::session::queue::Inbox;
use crate::session::{Connection, Session};
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

/// Runs one prompt and streams every message of the conversation, ending
/// after the final [`Message::Result`].
///
/// The CLI is started on the first poll and shut down (stdin closed, then
/// waited for and reaped) after the last `result`. Dropping the stream early
/// kills the CLI's whole process group. See [`MessageStream`] for which
/// errors end the stream.
///
/// ```no_run
/// use claude_agent::{Message, Options, query};
/// use futures::StreamExt;
///
/// # async fn run() -> claude_agent::Result<()> {
/// let mut stream = query("What is 2 + 2?", Options::new());
/// while let Some(message) = stream.next().await {
///     if let Message::Assistant(m) = message? {
///         println!("{}", m.text());
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub fn query(prompt: impl Into<PromptInput>, options: Options) -> MessageStream<'static> {
    #[allow(
        clippy::large_enum_variant,
        reason = "the stream's state lives in one box already (MessageStream)"
    )]
    enum State {
        Start(PromptInput, Box<Options>),
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

    async fn next(mut run: Box<Run>) -> Option<(Result<Message>, State)> {
        let item = run.inbox.next(run.session.conn.closed()).await?;
        let state = match &item {
            Ok(message) => {
                let last = message.is_result()
                    && run.input_done.load(Ordering::SeqCst)
                    && run.session.conn.open_turns() == 0;
                if last {
                    State::Finish(run)
                } else {
                    State::Running(run)
                }
            }
            Err(e) if !e.ends_stream() => State::Running(run),
            Err(_) => State::Done,
        };
        Some((item, state))
    }

    async fn start(prompt: PromptInput, options: &Options) -> Result<Box<Run>> {
        let session = Session::spawn(options).await?;
        session.initialize().await?;
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

    MessageStream::new(futures::stream::unfold(
        State::Start(prompt.into(), Box::new(options)),
        |state| async move {
            match state {
                State::Start(prompt, options) => match start(prompt, &options).await {
                    Ok(run) => next(run).await,
                    Err(e) => Some((Err(e), State::Done)),
                },
                State::Running(run) => next(run).await,
                State::Finish(run) => {
                    run.session.conn.shutdown().await;
                    None
                }
                State::Done => None,
            }
        },
    ))
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
