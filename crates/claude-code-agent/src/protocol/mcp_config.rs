//! MCP server configurations, as written in `--mcp-config`
//! (`{"mcpServers":{<name>:<config>}}`), `mcp_set_servers` and `mcp_status`.
//!
//! One name per concept: [`McpServerConfig`] is how to reach one MCP
//! server — a command, a URL, or an [`InProcessServer`] — and each kind's
//! fields are a `<Kind>ServerConfig` struct, named after its `type` on the
//! wire (`stdio`, `sse`, `http`, `sdk`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::mcp::{Handler, Server};
use crate::wire::{Wire, str_at, wire_struct};

wire_struct! {
    /// `{"type":"stdio","command":…,"args":[…],"env":{…}}` (`type` is optional on input).
    pub struct StdioServerConfig tags { "type" = "stdio" } {
        /// The program.
        req command: String = "command",
        /// Its arguments.
        opt args: Vec<String> = "args",
        /// Extra environment variables.
        opt env: BTreeMap<String, String> = "env",
    }
}

impl StdioServerConfig {
    /// A server started as `command`.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            ..Self::default()
        }
    }

    /// Appends an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.get_or_insert_with(Vec::new).push(arg.into());
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }
}

wire_struct! {
    /// `{"type":"sse","url":…,"headers":{…}}`.
    pub struct SseServerConfig tags { "type" = "sse" } {
        /// The endpoint.
        req url: String = "url",
        /// HTTP headers (echoed in clear text by `mcp_status`).
        opt headers: BTreeMap<String, String> = "headers",
    }
}

wire_struct! {
    /// `{"type":"http","url":…,"headers":{…}}` (streamable HTTP).
    pub struct HttpServerConfig tags { "type" = "http" } {
        /// The endpoint.
        req url: String = "url",
        /// HTTP headers (echoed in clear text by `mcp_status`).
        opt headers: BTreeMap<String, String> = "headers",
    }
}

wire_struct! {
    /// `{"type":"sdk","name":…}`: an in-process server hosted by an SDK, by
    /// name (how the CLI reports one, and how [`McpServerConfig::InProcess`]
    /// is written).
    pub struct SdkServerConfig tags { "type" = "sdk" } {
        /// The server's name (the same as its key).
        req name: String = "name",
    }
}

/// An MCP server served in this process: a name and the [`Handler`] that
/// answers its messages — our [`Server`], an rmcp server (feature `rmcp`,
/// [`McpServerConfig::rmcp`]), or any other handler. The CLI sees its tools
/// as `mcp__<name>__<tool>`. Cheap to clone.
#[derive(Clone)]
pub struct InProcessServer {
    name: String,
    handler: Arc<dyn Handler>,
    /// The same handler when it is our [`Server`]: the bridge serves its
    /// tool calls typed, straight from their text.
    native: Option<Server>,
}

impl InProcessServer {
    /// `handler` served under `name`.
    pub fn new(name: impl Into<String>, handler: impl Handler) -> Self {
        let native = (&handler as &dyn std::any::Any)
            .downcast_ref::<Server>()
            .cloned();
        Self {
            name: name.into(),
            handler: Arc::new(handler),
            native,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What answers its messages.
    pub fn handler(&self) -> &Arc<dyn Handler> {
        &self.handler
    }

    /// The handler, when it is our [`Server`].
    pub(crate) fn native(&self) -> Option<&Server> {
        self.native.as_ref()
    }
}

impl From<Server> for InProcessServer {
    fn from(server: Server) -> Self {
        Self::new(server.name().to_owned(), server)
    }
}

impl fmt::Debug for InProcessServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InProcessServer")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// How to reach one MCP server: run by the CLI (`Stdio`, `Sse`, `Http`),
/// or in this process (`InProcess`).
///
/// Two servers compare equal by their configuration; two in-process
/// servers, by name.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum McpServerConfig {
    /// A subprocess speaking MCP on stdio.
    Stdio(StdioServerConfig),
    /// A server-sent-events endpoint.
    Sse(SseServerConfig),
    /// A streamable HTTP endpoint.
    Http(HttpServerConfig),
    /// An in-process server, by name: what the CLI reports (for example in
    /// [`McpServerStatus::config`](super::McpServerStatus)).
    Sdk(SdkServerConfig),
    /// An in-process server served by this SDK, written as
    /// `{"type":"sdk","name":…}`. Never the result of decoding.
    InProcess(InProcessServer),
    /// Any other configuration, as it came.
    Unknown(Value),
}

impl PartialEq for McpServerConfig {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Stdio(a), Self::Stdio(b)) => a == b,
            (Self::Sse(a), Self::Sse(b)) => a == b,
            (Self::Http(a), Self::Http(b)) => a == b,
            (Self::Sdk(a), Self::Sdk(b)) => a == b,
            (Self::InProcess(a), Self::InProcess(b)) => a.name() == b.name(),
            (Self::Unknown(a), Self::Unknown(b)) => a == b,
            _ => false,
        }
    }
}

impl From<Server> for McpServerConfig {
    fn from(server: Server) -> Self {
        Self::InProcess(server.into())
    }
}

impl From<InProcessServer> for McpServerConfig {
    fn from(server: InProcessServer) -> Self {
        Self::InProcess(server)
    }
}

impl McpServerConfig {
    /// A stdio server.
    pub fn stdio<I, A>(command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<String>,
    {
        let mut config = StdioServerConfig::new(command);
        config.args = Some(args.into_iter().map(Into::into).collect());
        Self::Stdio(config)
    }

    /// An SSE server.
    pub fn sse(url: impl Into<String>) -> Self {
        Self::Sse(SseServerConfig {
            url: url.into(),
            ..SseServerConfig::default()
        })
    }

    /// An HTTP server.
    pub fn http(url: impl Into<String>) -> Self {
        Self::Http(HttpServerConfig {
            url: url.into(),
            ..HttpServerConfig::default()
        })
    }

    /// An in-process server.
    pub fn sdk(name: impl Into<String>) -> Self {
        Self::Sdk(SdkServerConfig {
            name: name.into(),
            ..SdkServerConfig::default()
        })
    }

    /// An rmcp server (any `rmcp::ServerHandler`, `#[tool_router]` ones
    /// included) served in process under `name`, through the same bridge
    /// and with the same rules as a native [`Server`]; see
    /// [`mcp::rmcp_server`](crate::mcp::rmcp_server). Feature `rmcp`.
    #[cfg(feature = "rmcp")]
    pub fn rmcp<H: rmcp::ServerHandler>(name: impl Into<String>, handler: H) -> Self {
        let server = crate::mcp::rmcp_server::RmcpServer::new(handler);
        Self::InProcess(InProcessServer::new(name, server))
    }

    /// Adds an HTTP header (SSE and HTTP servers; ignored for others).
    pub fn header(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self {
            Self::Sse(c) => {
                c.headers
                    .get_or_insert_with(BTreeMap::new)
                    .insert(key.into(), value.into());
            }
            Self::Http(c) => {
                c.headers
                    .get_or_insert_with(BTreeMap::new)
                    .insert(key.into(), value.into());
            }
            _ => {}
        }
        self
    }

    /// Adds an environment variable (stdio servers; ignored for others).
    pub fn env(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match self {
            Self::Stdio(c) => Self::Stdio(c.env(key, value)),
            other => other,
        }
    }

    /// The `type` (`stdio`, `sse`, `http`, `sdk`, …).
    pub fn kind(&self) -> Option<&str> {
        Some(match self {
            Self::Stdio(_) => "stdio",
            Self::Sse(_) => "sse",
            Self::Http(_) => "http",
            Self::Sdk(_) | Self::InProcess(_) => "sdk",
            Self::Unknown(v) => return v.get("type").and_then(Value::as_str),
        })
    }

    /// Decodes a configuration; never fails (odd shapes become `Unknown`).
    pub fn from_value(value: Value) -> Self {
        let kind = match &value {
            Value::Object(map) => Some(str_at(map, "type")),
            _ => None,
        };
        let decoded = match kind {
            Some(None | Some("stdio")) => StdioServerConfig::from_wire(value).map(Self::Stdio),
            Some(Some("sse")) => SseServerConfig::from_wire(value).map(Self::Sse),
            Some(Some("http")) => HttpServerConfig::from_wire(value).map(Self::Http),
            Some(Some("sdk")) => SdkServerConfig::from_wire(value).map(Self::Sdk),
            _ => Err(value),
        };
        decoded.unwrap_or_else(Self::Unknown)
    }

    /// Encodes as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Default for McpServerConfig {
    fn default() -> Self {
        Self::Unknown(Value::Null)
    }
}

impl From<StdioServerConfig> for McpServerConfig {
    fn from(c: StdioServerConfig) -> Self {
        Self::Stdio(c)
    }
}

impl Wire for McpServerConfig {
    fn from_wire(v: Value) -> Result<Self, Value> {
        Ok(Self::from_value(v))
    }
    fn accepts(_: &Value) -> bool {
        true
    }
}

impl Serialize for McpServerConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Stdio(c) => c.serialize(s),
            Self::Sse(c) => c.serialize(s),
            Self::Http(c) => c.serialize(s),
            Self::Sdk(c) => c.serialize(s),
            Self::InProcess(server) => SdkServerConfig {
                name: server.name().to_owned(),
                ..SdkServerConfig::default()
            }
            .serialize(s),
            Self::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for McpServerConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from_value(Value::deserialize(d)?))
    }
}
