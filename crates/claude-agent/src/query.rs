//! One-shot [`query()`]: start the CLI, send a prompt, stream the answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::stream::{BoxStream, Stream, StreamExt};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::message::Message;
use crate::options::Options;
use crate::session::Session;

/// What to send the model: a text, content blocks, or a stream of user messages.
#[non_exhaustive]
pub enum Prompt {
    /// One user message with this text.
    Text(String),
    /// One user message made of content blocks (text, base64 images, …) in
    /// the Messages API's form.
    Blocks(Vec<Value>),
    /// User messages as they come, each a whole stdin frame
    /// (`{"type":"user","message":{…},…}`); each one is a turn.
    Stream(BoxStream<'static, Value>),
}

impl Prompt {
    /// A prompt from a stream of user messages in wire form; see [`user_message`].
    pub fn stream(messages: impl Stream<Item = Value> + Send + 'static) -> Self {
        Self::Stream(messages.boxed())
    }
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Text(t) => f.debug_tuple("Text").field(t).finish(),
            Self::Blocks(b) => f.debug_tuple("Blocks").field(b).finish(),
            Self::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

impl From<&str> for Prompt {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<String> for Prompt {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

/// A user message in the form the CLI reads on stdin: `content` is a string
/// or an array of content blocks.
pub fn user_message(content: impl Into<Value>) -> Value {
    json!({
        "type": "user",
        "message": {"role": "user", "content": content.into()},
        "parent_tool_use_id": null,
        "session_id": "",
    })
}

/// Runs one prompt and streams every message of the conversation, ending
/// after the final [`Message::Result`].
///
/// The CLI is started on the first poll and shut down (stdin closed, then
/// waited for and reaped) after the last `result`. Dropping the stream early
/// kills the CLI's whole process group.
///
/// ```no_run
/// use claude_agent::{Message, Options, query};
/// use futures::StreamExt;
///
/// # async fn run() -> claude_agent::Result<()> {
/// let mut stream = std::pin::pin!(query("What is 2 + 2?", Options::new()));
/// while let Some(message) = stream.next().await {
///     if let Message::Assistant(m) = message? {
///         println!("{}", m.text());
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub fn query(
    prompt: impl Into<Prompt>,
    options: Options,
) -> impl Stream<Item = Result<Message>> + Send + 'static {
    enum State {
        Start(Prompt, Box<Options>),
        Running(Arc<Session>, Arc<AtomicBool>),
        Finish(Arc<Session>),
        Done,
    }

    async fn next(
        session: Arc<Session>,
        input_done: Arc<AtomicBool>,
    ) -> Option<(Result<Message>, State)> {
        match session.next_message().await {
            Some(Ok(message)) => {
                let last = message.is_result()
                    && input_done.load(Ordering::SeqCst)
                    && session.open_turns() == 0;
                let state = if last {
                    State::Finish(session)
                } else {
                    State::Running(session, input_done)
                };
                Some((Ok(message), state))
            }
            Some(Err(e @ Error::LineTooLong { .. })) => {
                Some((Err(e), State::Running(session, input_done)))
            }
            Some(Err(e)) => Some((Err(e), State::Done)),
            None => None,
        }
    }

    futures::stream::unfold(
        State::Start(prompt.into(), Box::new(options)),
        |state| async move {
            match state {
                State::Start(prompt, options) => match start(prompt, &options).await {
                    Ok((session, input_done)) => next(session, input_done).await,
                    Err(e) => Some((Err(e), State::Done)),
                },
                State::Running(session, input_done) => next(session, input_done).await,
                State::Finish(session) => {
                    let _ = session.shutdown().await;
                    None
                }
                State::Done => None,
            }
        },
    )
}

async fn start(prompt: Prompt, options: &Options) -> Result<(Arc<Session>, Arc<AtomicBool>)> {
    let session = Arc::new(Session::spawn(options).await?);
    session.initialize().await?;
    let input_done = Arc::new(AtomicBool::new(false));
    match prompt {
        Prompt::Text(text) => {
            session.send_user(user_message(text))?;
            input_done.store(true, Ordering::SeqCst);
        }
        Prompt::Blocks(blocks) => {
            session.send_user(user_message(blocks))?;
            input_done.store(true, Ordering::SeqCst);
        }
        Prompt::Stream(mut messages) => {
            let weak = Arc::downgrade(&session);
            let done = input_done.clone();
            tokio::spawn(async move {
                while let Some(message) = messages.next().await {
                    let Some(session) = weak.upgrade() else {
                        return;
                    };
                    if session.send_user(message).is_err() {
                        return;
                    }
                }
                done.store(true, Ordering::SeqCst);
                // Every turn may already be answered: wake the reader side by
                // closing input only once the last result arrives (see `next`).
                if let Some(session) = weak.upgrade()
                    && session.open_turns() == 0
                {
                    let _ = session.shutdown().await;
                }
            });
        }
    }
    Ok((session, input_done))
}
