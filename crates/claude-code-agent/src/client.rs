//! [`Client`]: a multi-turn session with the whole control protocol.

use crate::control::Control;
use crate::error::{Error, Result};
use crate::message::Message;
use crate::options::Options;
use crate::query::PromptInput;
use crate::queue::Inbox;
use crate::session::Session;
use crate::startup::WarmQuery;
use crate::stream::MessageStream;

/// A multi-turn conversation with the CLI.
///
/// Every method takes `&self`, so one task can read a response while
/// another interrupts it or changes the model. Messages go to one stream at
/// a time: while a [`receive_messages`](Self::receive_messages) or
/// [`receive_response`](Self::receive_response) stream is alive, another
/// one yields [`Error::AlreadyReceiving`]. Messages the CLI writes while no
/// stream reads are kept (up to [`Options::max_buffered_bytes`]); control
/// requests and tool calls are served meanwhile. In-process tools stay
/// available across turns.
///
/// Every control request ([`interrupt`](Control::interrupt),
/// [`set_model`](Control::set_model),
/// [`rewind_files`](Control::rewind_files), …) is a method of [`Control`],
/// which a `Client` dereferences to; [`control`](Self::control) gives a
/// clone to move to another task.
///
/// ```no_run
/// use claude_code_agent::{Client, Options};
/// use futures::StreamExt;
///
/// # async fn run() -> claude_code_agent::Result<()> {
/// let client = Client::connect(Options::new()).await?;
/// client.query("Remember the number 7.").await?;
/// let mut reply = client.receive_response();
/// while let Some(message) = reply.next().await {
///     println!("{:?}", message?);
/// }
/// client.disconnect().await?;
/// # Ok(())
/// # }
/// ```
pub struct Client {
    session: Session,
    control: Control,
}

impl std::ops::Deref for Client {
    type Target = Control;

    fn deref(&self) -> &Control {
        &self.control
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("open_turns", &self.session.conn.open_turns())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts the CLI and completes the `initialize` handshake (as
    /// [`startup()`](crate::startup) does, then `Client::from`).
    pub async fn connect(options: Options) -> Result<Self> {
        Ok(Self::from(
            WarmQuery::start(&options, &tracing::Span::current()).await?,
        ))
    }

    /// The session's control requests, as a handle to keep or move to
    /// another task (the client itself dereferences to it).
    pub fn control(&self) -> Control {
        self.control.clone()
    }

    /// Sends a prompt; read the answer with [`receive_response`](Self::receive_response).
    /// A prompt sent while a turn runs is queued by the CLI. Waits while the
    /// CLI does not read its input (nothing is buffered on the way). Fails
    /// with [`Error::CliExited`] once the CLI has exited on its own, and with
    /// [`Error::Closed`] after [`disconnect`](Self::disconnect).
    pub async fn query(&self, prompt: impl Into<PromptInput>) -> Result<()> {
        match prompt.into() {
            PromptInput::Message(message) => self.session.conn.send_user(&message).await,
            PromptInput::Stream(mut messages) => {
                use futures::StreamExt;
                while let Some(message) = messages.next().await {
                    self.session.conn.send_user(&message).await?;
                }
                Ok(())
            }
        }
    }

    /// Every message from the CLI, until it ends.
    ///
    /// An `Err` is the stream's last item (the CLI exited, the messages
    /// not read passed [`Options::max_buffered_bytes`],
    /// [`Error::AlreadyReceiving`]); a line the SDK had to skip is a
    /// [`Message::SkippedLine`] and the stream goes on (see
    /// [`MessageStream`]).
    pub fn receive_messages(&self) -> MessageStream<'_> {
        self.messages(false)
    }

    /// Messages up to and including the next [`Message::Result`], or up to
    /// an error, which is the last item (the session ended). A line the SDK
    /// had to skip is a [`Message::SkippedLine`], and the turn goes on, as
    /// in [`receive_messages`](Self::receive_messages).
    pub fn receive_response(&self) -> MessageStream<'_> {
        self.messages(true)
    }

    fn messages(&self, until_result: bool) -> MessageStream<'_> {
        enum State<'a> {
            Busy,
            Reading(Loan<'a>),
            Done,
        }
        let state = match self.session.take_inbox() {
            Some(inbox) => State::Reading(Loan {
                session: &self.session,
                inbox: Some(inbox),
            }),
            None => State::Busy,
        };
        MessageStream::new(futures::stream::unfold(state, move |state| async move {
            match state {
                State::Busy => Some((Err(Error::AlreadyReceiving), State::Done)),
                State::Reading(mut loan) => {
                    let item = loan.next().await?;
                    // After an error the stream ends: `MessageStream` drops
                    // the loan, which gives the queue back.
                    let done = until_result && matches!(&item, Ok(m) if m.is_result());
                    Some((
                        item,
                        if done {
                            State::Done
                        } else {
                            State::Reading(loan)
                        },
                    ))
                }
                State::Done => None,
            }
        }))
    }

    /// Ends the session: closes stdin, waits for the CLI to exit (then
    /// SIGTERM, then SIGKILL) and reaps it.
    ///
    /// # Errors
    ///
    /// With a [session store](Options::session_store): the store's error if
    /// what the CLI wrote did not all reach it.
    pub async fn disconnect(&self) -> Result<()> {
        self.session.conn.shutdown().await;
        self.session.conn.wait_ended().await;
        self.session.conn.mirror_outcome().await
    }
}

impl From<WarmQuery> for Client {
    /// A multi-turn client on a session started by
    /// [`startup()`](crate::startup): its first [`query`](Client::query)
    /// is the session's first prompt. When the CLI exited while it waited,
    /// that `query` fails with how it ended
    /// ([`Error::CliExited`](crate::Error::CliExited)).
    fn from(warm: WarmQuery) -> Self {
        let (session, control) = warm.into_parts();
        Self { session, control }
    }
}

/// The message queue, lent to one stream; given back when it drops.
struct Loan<'a> {
    session: &'a Session,
    inbox: Option<Inbox>,
}

impl Loan<'_> {
    async fn next(&mut self) -> Option<Result<Message>> {
        let inbox = self.inbox.as_mut()?;
        self.session.next_message(inbox).await
    }
}

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        if let Some(inbox) = self.inbox.take() {
            self.session.put_inbox(inbox);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One task can read while another interrupts: the client is shared
    /// (`Send + Sync`), and its streams move between tasks without pinning.
    #[test]
    fn the_client_is_shareable_and_its_streams_are_unpin() {
        fn shareable<T: Send + Sync>() {}
        fn movable_unpin<T: Send + Unpin>() {}
        shareable::<Client>();
        movable_unpin::<MessageStream<'static>>();
    }
}
