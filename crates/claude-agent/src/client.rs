//! [`Client`]: a multi-turn session with the whole control protocol.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::message::Message;
use crate::options::Options;
use crate::protocol::{
    InitializeResponse, InterruptResponse, McpServerConfig, McpSetServersResponse,
    McpStatusResponse, PermissionMode, SdkRequest, SetModelResponse, SetPermissionModeResponse,
};
use crate::query::PromptInput;
use crate::session::Session;
use crate::session::queue::Inbox;
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
/// ```no_run
/// use claude_agent::{Client, Options};
/// use futures::StreamExt;
///
/// # async fn run() -> claude_agent::Result<()> {
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
    init: InitializeResponse,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("open_turns", &self.session.conn.open_turns())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts the CLI and completes the `initialize` handshake.
    pub async fn connect(options: Options) -> Result<Self> {
        let session = Session::spawn(&options).await?;
        let init = session.initialize().await?;
        Ok(Self { session, init })
    }

    /// What the CLI said about itself in the handshake (version, models, commands…).
    pub fn initialize_response(&self) -> &InitializeResponse {
        &self.init
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
    pub fn receive_messages(&self) -> MessageStream<'_> {
        self.messages(false)
    }

    /// Messages up to and including the next [`Message::Result`] (or an
    /// error that ends the session).
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
                    let done = match &item {
                        Ok(message) => until_result && message.is_result(),
                        Err(e) => e.ends_stream(),
                    };
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

    /// Stops the current turn. The CLI answers with the prompts still queued.
    pub async fn interrupt(&self) -> Result<InterruptResponse> {
        self.session
            .conn
            .request_typed(SdkRequest::interrupt())
            .await
    }

    /// Changes the permission mode for the rest of the session. Returns the
    /// mode now in effect, as the CLI reports it (`None` if it does not say).
    /// A mode the CLI does not know is an [`Error::ControlError`] with code
    /// `invalid_mode`.
    pub async fn set_permission_mode(
        &self,
        mode: PermissionMode,
    ) -> Result<Option<PermissionMode>> {
        let r: SetPermissionModeResponse = self
            .session
            .conn
            .request_typed(SdkRequest::set_permission_mode(mode))
            .await?;
        Ok(r.mode)
    }

    /// Changes the model; `None` goes back to the CLI's default model (not
    /// the one the session started with). Returns the model now in use.
    pub async fn set_model(&self, model: Option<&str>) -> Result<Option<String>> {
        let r: SetModelResponse = self
            .session
            .conn
            .request_typed(SdkRequest::set_model(model.map(str::to_owned)))
            .await?;
        Ok(r.model)
    }

    /// The state of every MCP server. In-process servers still in their
    /// handshake are left out by the CLI.
    pub async fn mcp_status(&self) -> Result<McpStatusResponse> {
        self.session
            .conn
            .request_typed(SdkRequest::mcp_status())
            .await
    }

    /// Reconnects an MCP server: the CLI drops its connection and opens a
    /// new one (a fresh `initialize` and `tools/list`).
    ///
    /// For an in-process server CLI 2.1.332 refuses `mcp_reconnect`
    /// ("SDK servers should be handled in print.ts"), so this toggles it off
    /// and on instead, with a fresh server-side session in between; the CLI
    /// answers the second toggle once the new handshake is done. While it is
    /// off, the CLI lists the server in `disabledMcpServers` of its config
    /// directory's `.claude.json`; if the session ends between the two
    /// steps, it stays listed there.
    ///
    /// ```no_run
    /// # async fn run(client: claude_agent::Client) -> claude_agent::Result<()> {
    /// client.reconnect_mcp_server("my-app").await?;
    /// # Ok(()) }
    /// ```
    pub async fn reconnect_mcp_server(&self, name: &str) -> Result<()> {
        let conn = &self.session.conn;
        if conn.bridge.contains(name) {
            conn.request(SdkRequest::mcp_toggle(name, false)).await?;
            conn.bridge.renew_session(name);
            conn.request(SdkRequest::mcp_toggle(name, true)).await?;
        } else {
            conn.request(SdkRequest::mcp_reconnect(name)).await?;
        }
        Ok(())
    }

    /// Disables or enables an MCP server. Enabling runs a fresh handshake.
    /// The CLI remembers a disabled server in its config directory.
    pub async fn toggle_mcp_server(&self, name: &str, enabled: bool) -> Result<()> {
        self.session
            .conn
            .request(SdkRequest::mcp_toggle(name, enabled))
            .await?;
        Ok(())
    }

    /// Replaces the whole set of dynamic MCP servers (including those given
    /// at start): servers not named here are removed. In-process servers
    /// ([`McpServerConfig::InProcess`], or a [`Server`](crate::mcp::Server)
    /// as is) are served by this client and must be listed under their own
    /// name.
    pub async fn set_mcp_servers<I, S, C>(&self, servers: I) -> Result<McpSetServersResponse>
    where
        I: IntoIterator<Item = (S, C)>,
        S: Into<String>,
        C: Into<McpServerConfig>,
    {
        let mut wire = BTreeMap::new();
        let mut in_process = Vec::new();
        for (name, config) in servers {
            let name = name.into();
            let config = config.into();
            if let McpServerConfig::InProcess(server) = &config {
                if server.name() != name {
                    return Err(Error::InvalidOptions(format!(
                        "in-process server {:?} must be listed under its own name, not {name:?}",
                        server.name()
                    )));
                }
                in_process.push(server.clone());
            }
            wire.insert(name, config);
        }
        let names: Vec<String> = in_process.iter().map(|s| s.name().to_owned()).collect();
        for server in in_process {
            self.session.conn.bridge.insert(server);
        }
        let response = self
            .session
            .conn
            .request_typed(SdkRequest::mcp_set_servers(wire))
            .await;
        self.session.conn.bridge.retain(&names);
        response
    }

    /// Sends any control request and returns the CLI's answer as JSON.
    ///
    /// ```no_run
    /// # async fn run(client: claude_agent::Client) -> claude_agent::Result<()> {
    /// use claude_agent::protocol::SdkRequest;
    /// let settings = client.control_request(SdkRequest::get_settings()).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn control_request(&self, request: impl Into<SdkRequest>) -> Result<Value> {
        self.session.conn.request(request.into()).await
    }

    /// Ends the session: closes stdin, waits for the CLI to exit (then
    /// SIGTERM, then SIGKILL) and reaps it.
    pub async fn disconnect(&self) -> Result<()> {
        self.session.conn.shutdown().await;
        Ok(())
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
        inbox.next(self.session.conn.closed()).await
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
