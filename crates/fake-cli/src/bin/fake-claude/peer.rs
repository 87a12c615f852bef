//! The fake CLI's side of the wire: reading the SDK's frames, answering its
//! control requests, sending ours and matching the answers. The MCP side
//! (handshake, tool calls, checks) is in [`mcp`], the messages of a
//! conversation in the real CLI's shapes in [`messages`].

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use claude_code_agent_fake_cli::CLI_VERSION;

use super::io::{LineReader, Out};

mod mcp;
mod messages;

use mcp::manifest_verdict;
pub use mcp::{check_mcp_result, normalize, sdk_servers_in_mcp_config};

/// One line from the SDK, parsed only as far as routing needs.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    response: Option<ResponseEnvelope<'a>>,
    #[serde(borrow, default)]
    request: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ResponseEnvelope<'a> {
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    response: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<Cow<'a, str>>,
}

/// A control response from the SDK, borrowed from the line it came in.
pub struct ResponseRef<'a> {
    /// The id of our request it answers.
    pub request_id: &'a str,
    /// `subtype == "success"`.
    pub success: bool,
    /// The `response` payload, when present.
    pub payload: Option<&'a RawValue>,
    /// The `error` text of an error response.
    pub error: Option<&'a str>,
    /// When the line was read.
    pub at: Instant,
}

/// An owned control response.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of our request it answers.
    pub request_id: String,
    /// `subtype == "success"`.
    pub success: bool,
    /// The payload (`{}` when absent).
    pub payload: Value,
    /// The `error` text of an error response.
    pub error: Option<String>,
    /// When the line was read.
    pub at: Instant,
}

impl ResponseRef<'_> {
    /// Copies it.
    pub fn to_owned(&self) -> Response {
        Response {
            request_id: self.request_id.to_owned(),
            success: self.success,
            payload: self
                .payload
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_else(|| json!({})),
            error: self.error.map(str::to_owned),
            at: self.at,
        }
    }
}

/// What one call of [`Peer::pump`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pumped {
    /// A line was handled.
    Line,
    /// The SDK closed our input.
    Eof,
    /// The deadline passed with nothing to read.
    Timeout,
}

/// An in-process MCP server the SDK declared, after our handshake with it.
#[derive(Debug, Clone)]
pub struct SdkServer {
    /// Its name.
    pub name: String,
    /// The next JSON-RPC id of this connection.
    pub next_id: u64,
    /// Tool names from `tools/list`.
    pub tools: Vec<String>,
    /// Whether the handshake succeeded.
    pub connected: bool,
    /// The handshake results the SDK sent in `initialize.sdkMcpServerManifests`,
    /// when accepted (docs/protocol.md §5.13): the live handshake is then skipped.
    pub manifest: Option<Value>,
}

impl SdkServer {
    /// A server known by name only, before any handshake.
    pub fn named(name: impl Into<String>) -> Self {
        SdkServer {
            name: name.into(),
            next_id: 0,
            tools: Vec::new(),
            connected: false,
            manifest: None,
        }
    }
}

/// The fake CLI's connection to the SDK (or to a responder it spawned).
pub struct Peer {
    input: Option<LineReader>,
    /// The SDK's stdin side.
    pub out: Out,
    /// Scenario parameters (`FAKE_CLAUDE_PARAMS`).
    pub params: Value,
    /// The session id used in messages.
    pub session_id: String,
    /// The model named on the command line (or a default).
    pub model: String,
    /// The servers named in `initialize.sdkMcpServers` (or in the params).
    pub servers: Vec<SdkServer>,
    /// `initialize.hooks` as sent.
    pub hooks: Value,
    /// Whether `initialize` arrived.
    pub initialized: bool,
    /// Checks that failed; reported in the final `result`.
    pub failures: Vec<String>,
    /// User messages read but not yet taken.
    users: VecDeque<Value>,
    /// Answers that arrived while someone waited for another one.
    stash: HashMap<String, Response>,
    /// SDK→CLI `mcp_message`s received (server notifications).
    pub server_messages: Vec<Value>,
    /// `interrupt` requests received.
    pub interrupts: u64,
    seq: u64,
    started: Instant,
}

impl Peer {
    /// A peer reading `input` and writing `out`.
    pub fn new(input: LineReader, out: Out, params: Value, model: String) -> Self {
        let salt = super::random_u64();
        Peer {
            input: Some(input),
            out,
            params,
            session_id: uuid_from(salt, 0),
            model,
            servers: Vec::new(),
            hooks: Value::Null,
            initialized: false,
            failures: Vec::new(),
            users: VecDeque::new(),
            stash: HashMap::new(),
            server_messages: Vec::new(),
            interrupts: 0,
            seq: salt & 0xffff_ffff,
            started: Instant::now(),
        }
    }

    /// Closes our input (the SDK's writes then fail with `EPIPE`).
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// A fresh request id, a UUIDv4-shaped string as the real CLI uses.
    pub fn next_request_id(&mut self) -> String {
        self.seq += 1;
        uuid_from(0x5eed, self.seq)
    }

    /// A fresh sequence number for [`write_request_id`] (ids written
    /// straight into a frame buffer, without allocating).
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The sequence number inside an id made by [`next_request_id`](Self::next_request_id).
    pub fn seq_of(id: &str) -> Option<u64> {
        u64::from_str_radix(id.get(24..)?, 16).ok()
    }

    /// A fresh UUID-shaped string (message uuids, tool_use ids).
    pub fn uuid(&mut self) -> String {
        self.seq += 1;
        uuid_from(0xfeed, self.seq)
    }

    /// Reads and handles one line. Control responses go to `on_response`;
    /// the SDK's control requests are answered here; user messages are
    /// queued for [`next_user`](Self::next_user).
    pub fn pump(
        &mut self,
        deadline: Option<Instant>,
        on_response: &mut dyn FnMut(ResponseRef<'_>),
    ) -> io::Result<Pumped> {
        enum Action {
            None,
            Request(String, Value),
            User(Value),
        }
        let Some(input) = self.input.as_mut() else {
            // Input closed by a scenario: behave as if the SDK were silent.
            if let Some(d) = deadline {
                std::thread::sleep(d.saturating_duration_since(Instant::now()));
                return Ok(Pumped::Timeout);
            }
            return Ok(Pumped::Eof);
        };
        let action = {
            let line = match input.next_line(deadline) {
                Ok(Some(line)) => line,
                Ok(None) => return Ok(Pumped::Eof),
                Err(e) if e.kind() == io::ErrorKind::TimedOut => return Ok(Pumped::Timeout),
                Err(e) => return Err(e),
            };
            let at = Instant::now();
            let line = line.trim_ascii();
            if line.is_empty() {
                return Ok(Pumped::Line);
            }
            let envelope: Envelope<'_> = match serde_json::from_slice(line) {
                Ok(e) => e,
                Err(e) => {
                    // The real CLI dies on a line it cannot parse (docs/protocol.md §2.1).
                    let preview = String::from_utf8_lossy(&line[..line.len().min(80)]);
                    eprintln!(
                        "Error parsing streaming input line (type=unknown, {} chars): SyntaxError: {e}: {preview}",
                        line.len()
                    );
                    std::process::exit(1);
                }
            };
            match envelope.kind.as_deref() {
                Some("control_response") => {
                    if let Some(r) = &envelope.response {
                        on_response(ResponseRef {
                            request_id: r.request_id.as_deref().unwrap_or(""),
                            success: r.subtype.as_deref() == Some("success"),
                            payload: r.response,
                            error: r.error.as_deref(),
                            at,
                        });
                    }
                    Action::None
                }
                Some("control_request") => {
                    let request = envelope
                        .request
                        .and_then(|r| serde_json::from_str(r.get()).ok())
                        .unwrap_or(Value::Null);
                    Action::Request(
                        envelope.request_id.as_deref().unwrap_or("").to_owned(),
                        request,
                    )
                }
                Some("user") => Action::User(serde_json::from_slice(line).unwrap_or(Value::Null)),
                // keep_alive, control_cancel_request for our requests,
                // unknown types: ignored, as the real CLI does.
                _ => Action::None,
            }
        };
        match action {
            Action::None => {}
            Action::Request(id, request) => self.answer_sdk_request(&id, request)?,
            Action::User(v) => self.users.push_back(v),
        }
        Ok(Pumped::Line)
    }

    fn answer_sdk_request(&mut self, id: &str, request: Value) -> io::Result<()> {
        let subtype = request
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let payload = match subtype.as_str() {
            "initialize" => {
                if !self.initialized {
                    self.initialized = true;
                    // Servers named here join those of `--mcp-config` (docs/protocol.md §1.3).
                    if let Some(names) = request.get("sdkMcpServers").and_then(Value::as_array) {
                        for n in names.iter().filter_map(Value::as_str) {
                            if !self.servers.iter().any(|s| s.name == n) {
                                self.servers.push(SdkServer::named(n));
                            }
                        }
                    }
                    if let Some(manifests) = request
                        .get("sdkMcpServerManifests")
                        .and_then(Value::as_object)
                    {
                        for (name, m) in manifests {
                            if let Some(s) = self.servers.iter_mut().find(|s| s.name == *name) {
                                s.manifest = Some(m.clone());
                            }
                        }
                    }
                    self.hooks = request.get("hooks").cloned().unwrap_or(Value::Null);
                }
                Some(self.initialize_response(&request))
            }
            "interrupt" => {
                self.interrupts += 1;
                Some(json!({"still_queued": []}))
            }
            "mcp_message" => {
                // Server-originated traffic: acknowledged without a payload.
                self.server_messages
                    .push(request.get("message").cloned().unwrap_or(Value::Null));
                None
            }
            "mcp_status" => Some(
                json!({"mcpServers": self.servers.iter().filter(|s| s.connected).map(|s| json!({
                "name": s.name, "status": "connected",
                "serverInfo": {"name": s.name, "version": "1.0.0"},
                "transport": "sdk", "scope": "dynamic", "source": "sdk",
                "tools": s.tools.iter().map(|t| json!({"name": t, "annotations": {}})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>()}),
            ),
            "set_permission_mode" => Some(json!({"mode": request.get("mode")})),
            "set_model" => Some(json!({"model": request.get("model")})),
            // Nothing to reload; the request comes back in `request`, so a
            // test can check what the SDK wrote.
            "reload_plugins" => Some(json!({"commands": [], "agents": [], "plugins": [],
                "mcpServers": [], "error_count": 0, "request": request})),
            _ => {
                return self
                    .out
                    .frame(&json!({"type": "control_response", "response": {
                        "subtype": "error", "request_id": id,
                        "error": format!("Unsupported control request subtype: {subtype}"),
                        "error_code": "unsupported_request",
                    }}));
            }
        };
        let mut response = json!({"subtype": "success", "request_id": id});
        if let Some(p) = payload {
            response["response"] = p;
        }
        self.out
            .frame(&json!({"type": "control_response", "response": response}))
    }

    fn initialize_response(&self, request: &Value) -> Value {
        let mut r = json!({
            "commands": [
                {"name": "compact", "description": "Clear conversation history but keep a summary in context", "argumentHint": "<optional custom summarization instructions>", "builtin": true},
                {"name": "context", "description": "Visualize current context usage", "argumentHint": "", "builtin": true},
            ],
            "agents": [{"name": "general-purpose", "description": "General-purpose agent for researching complex questions"}],
            "output_style": "default",
            "available_output_styles": ["default", "Explanatory", "Learning"],
            "models": [{"value": "default", "resolvedModel": self.model, "displayName": "Default (recommended)", "description": "Fake model", "supportsEffort": true}],
            "account": {"tokenSource": "none", "apiKeySource": "ANTHROPIC_API_KEY", "apiProvider": "firstParty"},
            "pid": std::process::id(),
            "claude_code_version": CLI_VERSION,
            "current_permission_mode": "default",
            "hook_on_failure_supported": true,
            "session_state": "idle",
            "capabilities": ["sdk_mcp_tools_list_changed"],
            "fast_mode_state": "off",
        });
        // Another version claimed (`null`: none, as CLIs before 2.1.296).
        match self.params.get("claude_code_version") {
            Some(Value::Null) => {
                r.as_object_mut().map(|o| o.remove("claude_code_version"));
            }
            Some(v) => r["claude_code_version"] = v.clone(),
            None => {}
        }
        if request.get("hooks").is_some_and(|h| !h.is_null()) {
            r["hooks_applied"] = json!(true);
        }
        if let Some(manifests) = request
            .get("sdkMcpServerManifests")
            .and_then(Value::as_object)
        {
            let parked: serde_json::Map<String, Value> = manifests
                .iter()
                .map(|(name, m)| (name.clone(), json!(manifest_verdict(m))))
                .collect();
            r["sdk_mcp_manifests_parked"] = Value::Object(parked);
        }
        r
    }

    /// Sends a control request; returns its id.
    pub fn send_request(&mut self, request: Value) -> io::Result<String> {
        let id = self.next_request_id();
        self.out
            .frame(&json!({"type": "control_request", "request_id": id, "request": request}))?;
        Ok(id)
    }

    /// Waits for the answer to request `id`; `None` on timeout or EOF.
    pub fn await_response(&mut self, id: &str, timeout: Duration) -> io::Result<Option<Response>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(r) = self.stash.remove(id) {
                return Ok(Some(r));
            }
            let mut stash = std::mem::take(&mut self.stash);
            let pumped = self.pump(Some(deadline), &mut |r| {
                stash.insert(r.request_id.to_owned(), r.to_owned());
            });
            self.stash.extend(stash);
            match pumped? {
                Pumped::Line => {}
                Pumped::Eof | Pumped::Timeout => return Ok(self.stash.remove(id)),
            }
        }
    }

    /// Sends a request and waits for its answer.
    pub fn request(&mut self, request: Value, timeout: Duration) -> io::Result<Option<Response>> {
        let id = self.send_request(request)?;
        self.await_response(&id, timeout)
    }

    /// Takes an answer that already arrived (e.g. while waiting for another).
    pub fn take_stashed(&mut self, id: &str) -> Option<Response> {
        self.stash.remove(id)
    }

    /// Handles input until `deadline`, stashing answers.
    pub fn idle_until(&mut self, deadline: Instant) -> io::Result<()> {
        while Instant::now() < deadline {
            let mut stash = std::mem::take(&mut self.stash);
            let pumped = self.pump(Some(deadline), &mut |r| {
                stash.insert(r.request_id.to_owned(), r.to_owned());
            })?;
            self.stash.extend(stash);
            if pumped != Pumped::Line {
                break;
            }
        }
        Ok(())
    }

    /// Waits for the SDK's `initialize` (or a first user message, as the
    /// real CLI works without `initialize`); `false` on EOF.
    pub fn wait_initialize(&mut self, timeout: Duration) -> io::Result<bool> {
        let deadline = Instant::now() + timeout;
        while !self.initialized && self.users.is_empty() {
            let mut stash = std::mem::take(&mut self.stash);
            let pumped = self.pump(Some(deadline), &mut |r| {
                stash.insert(r.request_id.to_owned(), r.to_owned());
            })?;
            self.stash.extend(stash);
            match pumped {
                Pumped::Line => {}
                Pumped::Eof => return Ok(false),
                Pumped::Timeout => return Ok(true),
            }
        }
        Ok(true)
    }

    /// The next user message; `None` at EOF (or after `timeout`).
    pub fn next_user(&mut self, timeout: Option<Duration>) -> io::Result<Option<Value>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if let Some(u) = self.users.pop_front() {
                return Ok(Some(u));
            }
            let mut stash = std::mem::take(&mut self.stash);
            let pumped = self.pump(deadline, &mut |r| {
                stash.insert(r.request_id.to_owned(), r.to_owned());
            })?;
            self.stash.extend(stash);
            if pumped != Pumped::Line {
                return Ok(self.users.pop_front());
            }
        }
    }

    /// Records a failed check (also on stderr).
    pub fn fail(&mut self, what: impl Into<String>) {
        let what = what.into();
        eprintln!("fake-claude: check failed: {what}");
        self.failures.push(what);
    }
}

/// Writes the request id for sequence number `seq`, as [`Peer::next_request_id`] makes it.
pub fn write_request_id(buf: &mut Vec<u8>, seq: u64) {
    use std::io::Write;
    let _ = write!(
        buf,
        "00000000-0000-4eed-8000-{:012x}",
        seq & 0xffff_ffff_ffff
    );
}

fn uuid_from(hi: u64, lo: u64) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-8000-{:012x}",
        (hi >> 32) as u32,
        (hi >> 16) as u16,
        (hi & 0xfff) as u16,
        lo & 0xffff_ffff_ffff
    )
}
