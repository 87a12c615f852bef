//! The tools every conformance scenario calls by name: content of each kind,
//! errors, progress and logging, sampling and elicitation, and the tools that
//! change the lists.

use std::time::Duration;

use claude_code_agent_mcp::server::{Prompt, PromptRequest, prompt_user};
use claude_code_agent_mcp::types::ResourceContents;
use claude_code_agent_mcp::{CallToolResult, Content, LogLevel, Server, Tool, ToolContext};
use serde_json::{Value, json};

use crate::round_trips::round_trip_tools;

/// A 1×1 red PNG.
pub const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
const AUDIO: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

pub fn no_args() -> Value {
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
    Tool::new(name, description, move |_: Value| {
        let r = result();
        async move { r }
    })
    .input_schema(no_args())
}

pub fn embedded(uri: &str, mime: &str, text: &str) -> Content {
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

pub fn tools() -> Vec<Tool> {
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
    tools.push(
        Tool::new(
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
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
        )
        .input_schema(no_args()),
    );
    tools.push(
        Tool::new(
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
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
        )
        .input_schema(no_args()),
    );
    tools.push(
        Tool::new(
            "test_reconnection",
            "Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the stream mid-call and sends the result after the client reconnects.",
            |_: Value, ctx: ToolContext| async move {
                ctx.close_response_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
            },
        )
        .input_schema(no_args()),
    );
    tools.push(
        Tool::new(
            "test_sampling",
            "Tests server-initiated sampling (LLM completion request)",
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
        )
        .input_schema(string_arg("prompt", "The prompt to send to the LLM")),
    );
    tools.push(
        Tool::new(
            "test_elicitation",
            "Tests server-initiated elicitation (user input request)",
            |args: Value, ctx: ToolContext| async move {
                let params = json!({"message": args["message"], "requestedSchema": {"type":"object",
                    "properties":{"response":{"type":"string","description":"User's response"}},"required":["response"]}});
                elicit(ctx, params, "User response").await
            },
        )
        .input_schema(string_arg("message", "The message to show the user")),
    );
    tools.push(
        Tool::new(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034",
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
        )
        .input_schema(no_args()),
    );
    tools.push(
        Tool::new(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330",
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
        )
        .input_schema(no_args()),
    );
    tools.push(
        Tool::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            |args: Value| async move { format!("JSON Schema 2020-12 tool called with: {args}") },
        )
        .input_schema(json!({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
                   "$defs":{"address":{"$anchor":"address","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
                   "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},
                   "allOf":[{"anyOf":[{"required":["name"]},{"required":["address"]}]}],
                   "if":{"required":["address"]},
                   "then":{"properties":{"address":{"required":["street"]}}},
                   "else":{"required":["name"]},
                   "additionalProperties":false})),
    );
    tools.push(
        Tool::new(
            "test_custom_header",
            "Echoes a value that travels in the Mcp-Param-Value header too (SEP-2243)",
            |args: Value| async move { args["value"].as_str().unwrap_or_default().to_owned() },
        )
        .input_schema(json!({"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Value"}},"required":["value"]})),
    );
    tools.push(
        Tool::new(
            "test_logging_tool",
            "Logs only when the request set io.modelcontextprotocol/logLevel",
            |_: Value, ctx: ToolContext| async move {
                ctx.log(LogLevel::Info, "logLevel was requested");
                "Logging tool completed"
            },
        )
        .input_schema(no_args()),
    );
    tools.extend(round_trip_tools());
    tools
}

/// Tools that change the lists, for the `subscriptions/listen` scenarios.
pub fn trigger_tools(server: &Server) {
    let s = server.clone();
    server.add_tool(
        Tool::new(
            "test_trigger_tool_change",
            "Triggers notifications/tools/list_changed",
            move |_: Value| {
                let s = s.clone();
                async move {
                    s.add_tool(
                        Tool::new("test_dynamic_tool", "Added on demand", |_: Value| async {
                            "dynamic"
                        })
                        .input_schema(no_args()),
                    );
                    "Tool list change triggered"
                }
            },
        )
        .input_schema(no_args()),
    );
    let s = server.clone();
    server.add_tool(
        Tool::new(
            "test_trigger_prompt_change",
            "Triggers notifications/prompts/list_changed",
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
        )
        .input_schema(no_args()),
    );
}
