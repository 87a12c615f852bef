//! The SEP-2322 (multi round-trip) fixtures: tools and a prompt that answer
//! `input_required` and read the request's `inputResponses`, `requestState`
//! and declared client capabilities, which a tool handler does not see.

use std::collections::HashMap;
use std::sync::Mutex;

use claude_code_agent_mcp::Server;
use claude_code_agent_mcp::jsonrpc::{self, ErrorObject};
use claude_code_agent_mcp::server::stateless::missing_client_capability;
use claude_code_agent_mcp::server::{Handler, RequestContext};
use claude_code_agent_mcp::types::SERVER_INFO_META;
use futures::future::BoxFuture;
use serde_json::{Value, json};

/// Tools `Conformance` answers itself: they read the request's
/// `inputResponses`, `requestState` and declared client capabilities.
pub const INTERCEPTED_TOOLS: &[(&str, &str)] = &[
    (
        "test_missing_capability",
        "Requires the sampling client capability",
    ),
    (
        "test_streaming_elicitation",
        "Returns an input_required result with an elicitation",
    ),
    (
        "test_input_required_result_elicitation",
        "Needs an elicitation (SEP-2322)",
    ),
    (
        "test_input_required_result_sampling",
        "Needs a sampling (SEP-2322)",
    ),
    (
        "test_input_required_result_list_roots",
        "Needs the client's roots (SEP-2322)",
    ),
    (
        "test_input_required_result_request_state",
        "Round-trips requestState (SEP-2322)",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Needs three inputs at once (SEP-2322)",
    ),
    (
        "test_input_required_result_multi_round",
        "Needs input over two rounds (SEP-2322)",
    ),
    (
        "test_input_required_result_tampered_state",
        "Rejects a tampered requestState (SEP-2322)",
    ),
    (
        "test_input_required_result_capabilities",
        "Asks only for declared capabilities (SEP-2322)",
    ),
];

fn elicitation(message: &str, property: &str) -> Value {
    json!({"method":"elicitation/create","params":{"mode":"form","message":message,
        "requestedSchema":{"type":"object","properties":{property:{"type":"string"}},"required":[property]}}})
}

fn sampling(prompt: &str) -> Value {
    json!({"method":"sampling/createMessage","params":{
        "messages":[{"role":"user","content":{"type":"text","text":prompt}}],"maxTokens":100}})
}

fn roots() -> Value {
    json!({"method":"roots/list","params":{}})
}

/// The conformance server: our [`Server`], plus the SEP-2322 (multi
/// round-trip) fixtures, which read parts of the request a tool handler
/// does not see. `requestState` is a random key into server-side state,
/// so a tampered one names nothing and is refused.
pub struct Conformance {
    server: Server,
    states: Mutex<HashMap<String, Value>>,
}

impl Conformance {
    /// `server`, with the fixtures in front of it.
    pub fn new(server: Server) -> Conformance {
        Conformance {
            server,
            states: Mutex::new(HashMap::new()),
        }
    }

    fn seal(&self, state: Value) -> String {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("random bytes");
        let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.states.lock().unwrap().insert(key.clone(), state);
        key
    }

    fn open(&self, params: &Value) -> Result<Option<Value>, ErrorObject> {
        match params.get("requestState") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(key)) => self
                .states
                .lock()
                .unwrap()
                .get(key)
                .cloned()
                .map(Some)
                .ok_or_else(|| {
                    ErrorObject::invalid_params("requestState failed integrity verification")
                }),
            Some(_) => Err(ErrorObject::invalid_params("requestState must be a string")),
        }
    }

    fn input_required(&self, requests: Value, state: Option<Value>) -> Value {
        let mut result = json!({"resultType":"input_required","inputRequests":requests});
        if let Some(state) = state {
            result["requestState"] = self.seal(state).into();
        }
        result
    }

    fn complete(&self, text: &str) -> Value {
        json!({"resultType":"complete","content":[{"type":"text","text":text}],"isError":false,
            "_meta":{SERVER_INFO_META:{"name":self.server.name(),"version":self.server.version()}}})
    }

    /// Answers an intercepted call, or `None` to let the server serve it.
    fn serve(&self, method: &str, params: &Value) -> Option<Result<Value, ErrorObject>> {
        let name = params.get("name")?.as_str()?;
        let response = |key: &str| {
            params
                .pointer(&format!("/inputResponses/{key}"))
                .filter(|r| r.is_object())
        };
        let caps = params
            .pointer("/_meta/io.modelcontextprotocol~1clientCapabilities")
            .cloned()
            .unwrap_or(json!({}));
        if method == "prompts/get" {
            if name != "test_input_required_result_prompt" {
                return None;
            }
            let first = params
                .get("inputResponses")
                .and_then(Value::as_object)
                .and_then(|r| r.values().find(|v| v.is_object()).cloned());
            return Some(Ok(match first {
                Some(_) => json!({"resultType":"complete","messages":[{"role":"user",
                    "content":{"type":"text","text":"Prompt completed with the provided context."}}]}),
                None => self.input_required(
                    json!({"context": elicitation("Provide context", "context")}),
                    None,
                ),
            }));
        }
        let result = match name {
            "test_missing_capability" => {
                if caps.get("sampling").is_none() {
                    return Some(Err(missing_client_capability(json!({"sampling": {}}))));
                }
                self.complete("Required capability declared")
            }
            "test_streaming_elicitation" => self.input_required(
                json!({"streaming_elicitation": elicitation("Provide a value", "value")}),
                None,
            ),
            "test_input_required_result_elicitation" => match response("user_name") {
                Some(r) => self.complete(&format!(
                    "Hello, {}!",
                    r.pointer("/content/name")
                        .and_then(Value::as_str)
                        .unwrap_or("friend")
                )),
                None => self.input_required(
                    json!({"user_name": elicitation("What is your name?", "name")}),
                    None,
                ),
            },
            "test_input_required_result_sampling" => match response("capital_question") {
                Some(r) => self.complete(&format!(
                    "Sampling response: {}",
                    r.pointer("/content/text")
                        .and_then(Value::as_str)
                        .unwrap_or("(none)")
                )),
                None => self.input_required(
                    json!({"capital_question": sampling("What is the capital of France?")}),
                    None,
                ),
            },
            "test_input_required_result_list_roots" => match response("client_roots") {
                Some(r) => self.complete(&format!(
                    "Client roots: {}",
                    r.get("roots").unwrap_or(&json!([]))
                )),
                None => self.input_required(json!({"client_roots": roots()}), None),
            },
            "test_input_required_result_request_state"
            | "test_input_required_result_tampered_state" => match self.open(params) {
                Err(e) => return Some(Err(e)),
                Ok(Some(_)) => self.complete("Confirmed: state-ok"),
                Ok(None) => self.input_required(
                    json!({"confirm": elicitation("Please confirm", "ok")}),
                    Some(json!({"stage": "confirm"})),
                ),
            },
            "test_input_required_result_multiple_inputs" => {
                let state = match self.open(params) {
                    Err(e) => return Some(Err(e)),
                    Ok(state) => state,
                };
                let all = ["user_name", "greeting", "client_roots"]
                    .iter()
                    .all(|k| response(k).is_some());
                if all && state.is_some() {
                    self.complete("All inputs received")
                } else {
                    self.input_required(
                        json!({"user_name": elicitation("What is your name?", "name"),
                               "greeting": sampling("Generate a greeting"),
                               "client_roots": roots()}),
                        Some(json!({"stage": "gather"})),
                    )
                }
            }
            "test_input_required_result_multi_round" => {
                let round = match self.open(params) {
                    Err(e) => return Some(Err(e)),
                    Ok(state) => state.and_then(|s| s["round"].as_i64()).unwrap_or(0),
                };
                match round {
                    0 => self.input_required(
                        json!({"step1": elicitation("Step 1: What is your name?", "name")}),
                        Some(json!({"round": 1})),
                    ),
                    1 => self.input_required(
                        json!({"step2": elicitation("Step 2: What is your favorite color?", "color")}),
                        Some(json!({"round": 2})),
                    ),
                    _ => self.complete("Multi-round flow complete"),
                }
            }
            "test_input_required_result_capabilities" => {
                if params.get("inputResponses").is_some() {
                    self.complete("Capability-aware flow complete")
                } else {
                    let mut requests = serde_json::Map::new();
                    if caps.get("elicitation").is_some() {
                        requests.insert(
                            "user_name".into(),
                            elicitation("What is your name?", "name"),
                        );
                    }
                    if caps.get("sampling").is_some() {
                        requests.insert("greeting".into(), sampling("Generate a greeting"));
                    }
                    if caps.get("roots").is_some() {
                        requests.insert("client_roots".into(), roots());
                    }
                    if requests.is_empty() {
                        self.complete("Client declared no capability to ask through")
                    } else {
                        self.input_required(Value::Object(requests), None)
                    }
                }
            }
            _ => return None,
        };
        Some(Ok(result))
    }
}

impl Conformance {
    /// `test_tool_with_task`: its first round asks for the user's name
    /// (`input_required`); the next, with the answer, goes to the server
    /// with the name as an argument, and the server runs it as a task.
    fn gather_then_task(&self, mut message: Value) -> Result<Value, Value> {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let name = message
            .pointer("/params/inputResponses/user_name/content/name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(name) = name else {
            let round = self.input_required(
                json!({"user_name": elicitation("What is your name?", "name")}),
                None,
            );
            return Err(jsonrpc::response(&id, round));
        };
        if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
            params.remove("inputResponses");
            params.remove("requestState");
            params.insert("arguments".into(), json!({"user_name": name}));
        }
        Ok(message)
    }
}

impl Handler for Conformance {
    fn handle(&self, message: Value, ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
        if message.pointer("/params/name").and_then(Value::as_str) == Some("test_tool_with_task")
            && message.get("method").and_then(Value::as_str) == Some("tools/call")
        {
            return match self.gather_then_task(message) {
                Ok(message) => Box::pin(self.server.handle(message, ctx)),
                Err(round) => Box::pin(async move { Some(round) }),
            };
        }
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let stateless = message
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .is_some();
        if stateless
            && matches!(method, "tools/call" | "prompts/get")
            && let (Some(id), Some(params)) = (message.get("id"), message.get("params"))
            && let Some(outcome) = self.serve(method, params)
        {
            let reply = match outcome {
                Ok(result) => jsonrpc::response(id, result),
                Err(error) => jsonrpc::error_response(id, error),
            };
            return Box::pin(async move { Some(reply) });
        }
        Box::pin(self.server.handle(message, ctx))
    }

    fn tool_info(&self, name: &str) -> Option<claude_code_agent_mcp::types::ToolInfo> {
        self.server.tool_info(name)
    }
}
