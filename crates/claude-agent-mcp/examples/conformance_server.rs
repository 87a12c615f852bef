//! The server the MCP conformance harness (`@modelcontextprotocol/conformance`,
//! `server` mode) tests: every fixed tool, resource and prompt name its
//! scenarios call, served over Streamable HTTP at `http://127.0.0.1:PORT/mcp`.
//!
//! ```text
//! cargo run -p claude-agent-mcp --example conformance_server -- 3102
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3102/mcp --suite all
//! ```
//!
//! The port comes from the first argument, else `PORT`, else 3000.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;

use claude_agent_mcp::http_server::serve_http;
use claude_agent_mcp::jsonrpc::{self, ErrorObject};
use claude_agent_mcp::server::stateless::{SERVER_INFO_META, missing_client_capability};
use claude_agent_mcp::server::{
    CompletionRequest, Handler, Prompt, PromptRequest, RequestContext, Resource, ResourceRequest,
    ResourceTemplate, prompt_user,
};
use claude_agent_mcp::types::ResourceContents;
use claude_agent_mcp::{CallToolResult, Content, LogLevel, Server, Tool, ToolContext};
use serde_json::{Value, json};

/// A 1×1 red PNG.
const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
const AUDIO: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn no_args() -> Value {
    json!({"type":"object","properties":{}})
}

fn string_arg(name: &str, description: &str) -> Value {
    json!({"type":"object","properties":{name:{"type":"string","description":description}},"required":[name]})
}

fn tool(
    name: &str,
    description: &str,
    result: impl Fn() -> CallToolResult + Send + Sync + 'static,
) -> Tool {
    Tool::raw(name, description, no_args(), move |_: Value| {
        let r = result();
        async move { r }
    })
}

fn embedded(uri: &str, mime: &str, text: &str) -> Content {
    Content::resource(ResourceContents::text(uri, text).with_mime_type(mime))
}

/// Sends an elicitation and reports what the client answered.
async fn elicit(ctx: ToolContext, params: Value, prefix: &str) -> String {
    match ctx.request("elicitation/create", params).await {
        Ok(r) => format!(
            "{prefix}: action={}, content={}",
            r["action"].as_str().unwrap_or_default(),
            r.get("content").cloned().unwrap_or(json!({}))
        ),
        Err(e) => format!("Elicitation not supported or error: {e}"),
    }
}

fn tools() -> Vec<Tool> {
    let mut tools = vec![
        tool(
            "test_simple_text",
            "Tests simple text content response",
            || CallToolResult::text("This is a simple text response for testing."),
        ),
        tool("test_image_content", "Tests image content response", || {
            CallToolResult::success(vec![Content::image(IMAGE, "image/png")])
        }),
        tool("test_audio_content", "Tests audio content response", || {
            CallToolResult::success(vec![Content::audio(AUDIO, "audio/wav")])
        }),
        tool(
            "test_embedded_resource",
            "Tests embedded resource content response",
            || {
                CallToolResult::success(vec![embedded(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )])
            },
        ),
        tool(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            || {
                CallToolResult::success(vec![
                    Content::text("Multiple content types test:"),
                    Content::image(IMAGE, "image/png"),
                    embedded(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    ),
                ])
            },
        ),
        tool(
            "test_error_handling",
            "Tests error response handling",
            || CallToolResult::error("This tool intentionally returns an error for testing"),
        ),
    ];
    tools.push(Tool::raw_with_context(
        "test_tool_with_logging",
        "Tests tool that emits log messages during execution",
        no_args(),
        |_: Value, ctx: ToolContext| async move {
            for (i, text) in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
            .iter()
            .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.log(LogLevel::Info, *text);
            }
            "Tool with logging executed successfully"
        },
    ));
    tools.push(Tool::raw_with_context(
        "test_tool_with_progress",
        "Tests tool that reports progress notifications",
        no_args(),
        |_: Value, ctx: ToolContext| async move {
            for step in [0.0, 50.0, 100.0] {
                if step > 0.0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.progress(
                    step,
                    Some(100.0),
                    Some(&format!("Completed step {step} of 100")),
                );
            }
            ctx.progress_token()
                .cloned()
                .unwrap_or(json!(0))
                .to_string()
        },
    ));
    tools.push(Tool::raw_with_context(
        "test_reconnection",
        "Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the stream mid-call and sends the result after the client reconnects.",
        no_args(),
        |_: Value, ctx: ToolContext| async move {
            ctx.close_response_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
        },
    ));
    tools.push(Tool::raw_with_context(
        "test_sampling",
        "Tests server-initiated sampling (LLM completion request)",
        string_arg("prompt", "The prompt to send to the LLM"),
        |args: Value, ctx: ToolContext| async move {
            let params = json!({"messages":[{"role":"user","content":{"type":"text","text":args["prompt"]}}],"maxTokens":100});
            match ctx.request("sampling/createMessage", params).await {
                Ok(r) => {
                    let text = r.pointer("/content/text").and_then(Value::as_str).unwrap_or("No response");
                    format!("LLM response: {text}")
                }
                Err(e) => format!("Sampling not supported or error: {e}"),
            }
        },
    ));
    tools.push(Tool::raw_with_context(
        "test_elicitation",
        "Tests server-initiated elicitation (user input request)",
        string_arg("message", "The message to show the user"),
        |args: Value, ctx: ToolContext| async move {
            let params = json!({"message": args["message"], "requestedSchema": {"type":"object",
                "properties":{"response":{"type":"string","description":"User's response"}},"required":["response"]}});
            elicit(ctx, params, "User response").await
        },
    ));
    tools.push(Tool::raw_with_context(
        "test_elicitation_sep1034_defaults",
        "Tests elicitation with default values per SEP-1034",
        no_args(),
        |_: Value, ctx: ToolContext| async move {
            let params = json!({"message":"Please review and update the form fields with defaults","requestedSchema":{
                "type":"object","required":[],"properties":{
                "name":{"type":"string","description":"User name","default":"John Doe"},
                "age":{"type":"integer","description":"User age","default":30},
                "score":{"type":"number","description":"User score","default":95.5},
                "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
                "verified":{"type":"boolean","description":"Verification status","default":true}}}});
            elicit(ctx, params, "Elicitation completed").await
        },
    ));
    tools.push(Tool::raw_with_context(
        "test_elicitation_sep1330_enums",
        "Tests elicitation with enum schema improvements per SEP-1330",
        no_args(),
        |_: Value, ctx: ToolContext| async move {
            let params = json!({"message":"Please select options from the enum fields","requestedSchema":{
                "type":"object","required":[],"properties":{
                "untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},
                "titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[
                    {"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
                "legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],
                    "enumNames":["Option One","Option Two","Option Three"]},
                "untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,
                    "items":{"type":"string","enum":["option1","option2","option3"]}},
                "titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,
                    "items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},
                                      {"const":"value3","title":"Third Choice"}]}}}}});
            elicit(ctx, params, "Elicitation completed").await
        },
    ));
    tools.push(Tool::raw(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        json!({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
               "$defs":{"address":{"$anchor":"address","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
               "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},
               "allOf":[{"anyOf":[{"required":["name"]},{"required":["address"]}]}],
               "if":{"required":["address"]},
               "then":{"properties":{"address":{"required":["street"]}}},
               "else":{"required":["name"]},
               "additionalProperties":false}),
        |args: Value| async move { format!("JSON Schema 2020-12 tool called with: {args}") },
    ));
    tools.push(Tool::raw(
        "test_custom_header",
        "Echoes a value that travels in the Mcp-Param-Value header too (SEP-2243)",
        json!({"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Value"}},"required":["value"]}),
        |args: Value| async move { args["value"].as_str().unwrap_or_default().to_owned() },
    ));
    tools.push(Tool::raw_with_context(
        "test_logging_tool",
        "Logs only when the request set io.modelcontextprotocol/logLevel",
        no_args(),
        |_: Value, ctx: ToolContext| async move {
            ctx.log(LogLevel::Info, "logLevel was requested");
            "Logging tool completed"
        },
    ));
    // Called through `Conformance` (they need the whole request); listed here.
    for (name, description) in INTERCEPTED_TOOLS {
        tools.push(Tool::raw(
            *name,
            *description,
            no_args(),
            |_: Value| async { "served by the conformance wrapper" },
        ));
    }
    tools
}

/// Tools `Conformance` answers itself: they read the request's
/// `inputResponses`, `requestState` and declared client capabilities.
const INTERCEPTED_TOOLS: &[(&str, &str)] = &[
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

/// Tools that change the lists, for the `subscriptions/listen` scenarios.
fn trigger_tools(server: &Server) {
    let s = server.clone();
    server.add_tool(Tool::raw(
        "test_trigger_tool_change",
        "Triggers notifications/tools/list_changed",
        no_args(),
        move |_: Value| {
            let s = s.clone();
            async move {
                s.add_tool(Tool::raw(
                    "test_dynamic_tool",
                    "Added on demand",
                    no_args(),
                    |_: Value| async { "dynamic" },
                ));
                "Tool list change triggered"
            }
        },
    ));
    let s = server.clone();
    server.add_tool(Tool::raw(
        "test_trigger_prompt_change",
        "Triggers notifications/prompts/list_changed",
        no_args(),
        move |_: Value| {
            let s = s.clone();
            async move {
                s.add_prompt(
                    Prompt::new("test_dynamic_prompt", |_: PromptRequest| async {
                        vec![prompt_user(Content::text("dynamic"))]
                    })
                    .description("Added on demand"),
                );
                "Prompt list change triggered"
            }
        },
    ));
}

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
struct Conformance {
    server: Server,
    states: Mutex<HashMap<String, Value>>,
}

impl Conformance {
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

impl Handler for Conformance {
    fn handle(&self, message: Value, ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
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

    fn tool_info(&self, name: &str) -> Option<claude_agent_mcp::types::ToolInfo> {
        self.server.tool_info(name)
    }
}

fn server() -> Server {
    let text = |uri: &'static str, text: &'static str| {
        move |_: ResourceRequest| async move { ResourceContents::text(uri, text) }
    };
    let server = Server::builder("mcp-conformance-test-server", "1.0.0")
        .tools(tools())
        .resource(
            Resource::new(
                "test://static-text",
                "static-text",
                text(
                    "test://static-text",
                    "This is the content of the static text resource.",
                ),
            )
            .title("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        )
        .resource(
            Resource::new(
                "test://static-binary",
                "static-binary",
                |_: ResourceRequest| async {
                    ResourceContents::blob("test://static-binary", IMAGE)
                },
            )
            .title("Static Binary Resource")
            .description("A static binary resource (image) for testing")
            .mime_type("image/png"),
        )
        .resource(
            Resource::new(
                "test://watched-resource",
                "watched-resource",
                text("test://watched-resource", "Watched resource content"),
            )
            .title("Watched Resource")
            .description("A resource clients can subscribe to")
            .mime_type("text/plain"),
        )
        .resource_template(
            ResourceTemplate::new(
                "test://template/{id}/data",
                "template",
                |req: ResourceRequest| async move {
                    let id = req.var("id").unwrap_or_default().to_owned();
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string()
                },
            )
            .title("Resource Template")
            .description("A resource template with parameter substitution")
            .mime_type("application/json"),
        )
        .prompt(
            Prompt::new("test_simple_prompt", |_: PromptRequest| async {
                vec![prompt_user(Content::text(
                    "This is a simple prompt for testing.",
                ))]
            })
            .title("Simple Test Prompt")
            .description("A simple prompt without arguments"),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_arguments",
                |req: PromptRequest| async move {
                    let (a, b) = (
                        req.arg("arg1").unwrap_or_default(),
                        req.arg("arg2").unwrap_or_default(),
                    );
                    vec![prompt_user(Content::text(format!(
                        "Prompt with arguments: arg1='{a}', arg2='{b}'"
                    )))]
                },
            )
            .title("Prompt With Arguments")
            .description("A prompt with required arguments")
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                |req: PromptRequest| async move {
                    let uri = req.arg("resourceUri").unwrap_or_default();
                    vec![
                        prompt_user(embedded(
                            uri,
                            "text/plain",
                            "Embedded resource content for testing.",
                        )),
                        prompt_user(Content::text("Please process the embedded resource above.")),
                    ]
                },
            )
            .title("Prompt With Embedded Resource")
            .description("A prompt that includes an embedded resource")
            .argument("resourceUri", "URI of the resource to embed", true),
        )
        .prompt(
            Prompt::new("test_prompt_with_image", |_: PromptRequest| async {
                vec![
                    prompt_user(Content::image(IMAGE, "image/png")),
                    prompt_user(Content::text("Please analyze the image above.")),
                ]
            })
            .title("Prompt With Image")
            .description("A prompt that includes image content"),
        )
        .prompt(
            Prompt::new(
                "test_input_required_result_prompt",
                |_: PromptRequest| async {
                    vec![prompt_user(Content::text(
                        "served by the conformance wrapper",
                    ))]
                },
            )
            .description("Needs an elicitation before it is rendered (SEP-2322)"),
        )
        .completion(|_: CompletionRequest| async { Vec::new() })
        .build();
    trigger_tools(&server);
    server
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(3000);
    eprintln!("MCP conformance server on http://127.0.0.1:{port}/mcp");
    let handler = Conformance {
        server: server(),
        states: Mutex::new(HashMap::new()),
    };
    serve_http(handler, ("127.0.0.1", port)).await
}
