//! [`Client`]: a multi-turn session with the whole control protocol.

use std::collections::BTreeMap;

use futures::stream::Stream;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::mcp::Server;
use crate::message::Message;
use crate::options::Options;
use crate::protocol::{
    InitializeResponse, InterruptResponse, McpServerConfig, McpSetServersResponse,
    McpStatusResponse, PermissionMode, SetPermissionModeResponse,
};
use crate::query::{Prompt, user_message};
use crate::session::Session;

/// An MCP server for [`Client::set_mcp_servers`]: in process, or run by the CLI.
#[derive(Clone)]
#[non_exhaustive]
pub enum McpServerSpec {
    /// An in-process server, served through this client.
    InProcess(Server),
    /// A server the CLI runs itself.
    External(McpServerConfig),
}

impl From<Server> for McpServerSpec {
    fn from(server: Server) -> Self {
        Self::InProcess(server)
    }
}

impl From<McpServerConfig> for McpServerSpec {
    fn from(config: McpServerConfig) -> Self {
        Self::External(config)
    }
}

/// A multi-turn conversation with the CLI.
///
/// Every method takes `&self`, so one task can stream a response while
/// another interrupts it. In-process tools stay available across turns.
///
/// ```no_run
/// use claude_agent::{Client, Options};
/// use futures::StreamExt;
///
/// # async fn run() -> claude_agent::Result<()> {
/// let client = Client::connect(Options::new()).await?;
/// client.query("Remember the number 7.").await?;
/// let mut reply = std::pin::pin!(client.receive_response());
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
            .field("open_turns", &self.session.open_turns())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts the CLI and completes the `initialize` handshake.
    pub async fn connect(options: Options) -> Result<Self> {
        let session = Session::spawn(&options).await?;
        let init = session.initialize().await?;
        let init = serde_json::from_value(init)?;
        Ok(Self { session, init })
    }

    /// What the CLI said about itself in the handshake (version, models, commands…).
    pub fn initialize_response(&self) -> &InitializeResponse {
        &self.init
    }

    /// Sends a prompt; read the answer with [`receive_response`](Self::receive_response).
    /// A prompt sent while a turn runs is queued by the CLI. Fails with
    /// [`Error::CliExited`] once the CLI has exited on its own, and with
    /// [`Error::Closed`] after [`disconnect`](Self::disconnect).
    pub async fn query(&self, prompt: impl Into<Prompt>) -> Result<()> {
        match prompt.into() {
            Prompt::Text(text) => self.session.send_user(user_message(text)),
            Prompt::Blocks(blocks) => self.session.send_user(user_message(blocks)),
            Prompt::Stream(mut messages) => {
                use futures::StreamExt;
                while let Some(message) = messages.next().await {
                    self.session.send_user(message)?;
                }
                Ok(())
            }
        }
    }

    /// Every message from the CLI, until it ends.
    pub fn receive_messages(&self) -> impl Stream<Item = Result<Message>> + '_ {
        futures::stream::unfold(self, |client| async move {
            client.session.next_message().await.map(|m| (m, client))
        })
    }

    /// Messages up to and including the next [`Message::Result`].
    pub fn receive_response(&self) -> impl Stream<Item = Result<Message>> + '_ {
        futures::stream::unfold(Some(self), |client| async move {
            let client = client?;
            let message = client.session.next_message().await?;
            let done = matches!(&message, Ok(m) if m.is_result()) || is_fatal(&message);
            Some((message, if done { None } else { Some(client) }))
        })
    }

    /// Stops the current turn. The CLI answers with the prompts still queued.
    pub async fn interrupt(&self) -> Result<InterruptResponse> {
        self.typed("interrupt", Map::new()).await
    }

    /// Changes the permission mode for the rest of the session. Returns the
    /// mode now in effect, as the CLI reports it (`None` if it does not say).
    /// A mode the CLI does not know is an [`Error::ControlError`] with code
    /// `invalid_mode`.
    pub async fn set_permission_mode(
        &self,
        mode: PermissionMode,
    ) -> Result<Option<PermissionMode>> {
        let mut p = Map::new();
        p.insert("mode".into(), Value::String(mode.as_str().to_owned()));
        let r: SetPermissionModeResponse = self.typed("set_permission_mode", p).await?;
        Ok(r.mode)
    }

    /// Changes the model; `None` goes back to the CLI's default model (not
    /// the one the session started with). Returns the model now in use.
    pub async fn set_model(&self, model: Option<&str>) -> Result<Option<String>> {
        let mut p = Map::new();
        p.insert("model".into(), model.map_or(Value::Null, |m| json!(m)));
        let r = self.session.shared.request("set_model", p).await?;
        Ok(r.get("model").and_then(Value::as_str).map(str::to_owned))
    }

    /// The state of every MCP server. In-process servers still in their
    /// handshake are left out by the CLI.
    pub async fn mcp_status(&self) -> Result<McpStatusResponse> {
        self.typed("mcp_status", Map::new()).await
    }

    /// Reconnects an external MCP server. For in-process servers the CLI
    /// refuses this; use [`toggle_mcp_server`](Self::toggle_mcp_server) off and on.
    pub async fn reconnect_mcp_server(&self, name: &str) -> Result<()> {
        let mut p = Map::new();
        p.insert("serverName".into(), json!(name));
        self.session.shared.request("mcp_reconnect", p).await?;
        Ok(())
    }

    /// Disables or enables an MCP server. Enabling runs a fresh handshake.
    /// The CLI remembers a disabled server in its config directory.
    pub async fn toggle_mcp_server(&self, name: &str, enabled: bool) -> Result<()> {
        let mut p = Map::new();
        p.insert("serverName".into(), json!(name));
        p.insert("enabled".into(), json!(enabled));
        self.session.shared.request("mcp_toggle", p).await?;
        Ok(())
    }

    /// Replaces the whole set of dynamic MCP servers (including those given
    /// at start): servers not named here are removed.
    pub async fn set_mcp_servers<I, S>(&self, servers: I) -> Result<McpSetServersResponse>
    where
        I: IntoIterator<Item = (S, McpServerSpec)>,
        S: Into<String>,
    {
        let mut wire = BTreeMap::new();
        let mut in_process = Vec::new();
        for (name, spec) in servers {
            let name = name.into();
            match spec {
                McpServerSpec::InProcess(server) => {
                    if server.name() != name {
                        return Err(Error::InvalidOptions(format!(
                            "in-process server {:?} must be listed under its own name, not {name:?}",
                            server.name()
                        )));
                    }
                    wire.insert(name.clone(), json!({"type": "sdk", "name": name}));
                    in_process.push(server);
                }
                McpServerSpec::External(config) => {
                    wire.insert(name, serde_json::to_value(config)?);
                }
            }
        }
        let names: Vec<String> = in_process.iter().map(|s| s.name().to_owned()).collect();
        for server in in_process {
            self.session.shared.bridge.insert(server);
        }
        let mut p = Map::new();
        p.insert("servers".into(), serde_json::to_value(wire)?);
        let response = self.typed("mcp_set_servers", p).await;
        self.session.shared.bridge.retain(&names);
        response
    }

    /// Sends any control request and returns the CLI's answer as JSON.
    pub async fn control_request(
        &self,
        subtype: &str,
        payload: Map<String, Value>,
    ) -> Result<Value> {
        self.session.shared.request(subtype, payload).await
    }

    /// Ends the session: closes stdin, waits for the CLI to exit (then
    /// SIGTERM, then SIGKILL) and reaps it.
    pub async fn disconnect(&self) -> Result<()> {
        self.session.shutdown().await
    }

    async fn typed<T: serde::de::DeserializeOwned>(
        &self,
        subtype: &str,
        p: Map<String, Value>,
    ) -> Result<T> {
        let value = self.session.shared.request(subtype, p).await?;
        Ok(serde_json::from_value(value)?)
    }
}

fn is_fatal(message: &Result<Message>) -> bool {
    matches!(message, Err(e) if !matches!(e, Error::LineTooLong { .. }))
}
