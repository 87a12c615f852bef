//! The SEP-2322 (multi round-trip) fixtures: tools and a prompt that ask
//! the client for input with `ToolContext::ask` / `PromptRequest::ask`
//! (an `input_required` result and a retry at the stateless revision), and
//! the one fixture a handler cannot be: `test_missing_capability`, whose
//! answer is a JSON-RPC error.

use claude_code_agent_mcp::jsonrpc;
use claude_code_agent_mcp::server::stateless::missing_client_capability;
use claude_code_agent_mcp::server::{
    ClientRequestError, Handler, Prompt, PromptRequest, RequestContext, prompt_user,
};
use claude_code_agent_mcp::types::{InputRequest, InputRequiredResult};
use claude_code_agent_mcp::{Content, Server, Tool, ToolContext};
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::tools::no_args;

/// A form elicitation of one required string property.
fn elicitation(message: &str, property: &str) -> InputRequest {
    InputRequest::elicitation(
        message,
        json!({"type":"object","properties":{property:{"type":"string"}},"required":[property]}),
    )
}

/// A tool without arguments whose handler asks with `ctx`.
fn asking<F, Fut>(name: &str, description: &str, handler: F) -> Tool
where
    F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, ClientRequestError>> + Send + 'static,
{
    Tool::new(name, description, move |_: Value, ctx: ToolContext| {
        handler(ctx)
    })
    .input_schema(no_args())
}

/// The SEP-2322 tools: each asks with `ToolContext::ask` and answers once
/// it has what it asked for.
pub fn round_trip_tools() -> Vec<Tool> {
    vec![
        asking(
            "test_streaming_elicitation",
            "Asks for a value (an input_required result with an elicitation)",
            |ctx| async move {
                let answer = ctx
                    .ask(
                        "streaming_elicitation",
                        elicitation("Provide a value", "value"),
                    )
                    .await?;
                Ok(format!("Received: {}", answer["content"]["value"]))
            },
        ),
        asking(
            "test_input_required_result_elicitation",
            "Needs an elicitation (SEP-2322)",
            |ctx| async move {
                let answer = ctx
                    .ask("user_name", elicitation("What is your name?", "name"))
                    .await?;
                let name = answer["content"]["name"].as_str().unwrap_or("friend");
                Ok(format!("Hello, {name}!"))
            },
        ),
        asking(
            "test_input_required_result_sampling",
            "Needs a sampling (SEP-2322)",
            |ctx| async move {
                let question = InputRequest::sampling_text("What is the capital of France?", 100);
                let answer = ctx.ask("capital_question", question).await?;
                let text = answer["content"]["text"].as_str().unwrap_or("(none)");
                Ok(format!("Sampling response: {text}"))
            },
        ),
        asking(
            "test_input_required_result_list_roots",
            "Needs the client's roots (SEP-2322)",
            |ctx| async move {
                let answer = ctx.ask("client_roots", InputRequest::list_roots()).await?;
                Ok(format!("Client roots: {}", answer["roots"]))
            },
        ),
        asking(
            "test_input_required_result_request_state",
            "Round-trips requestState (SEP-2322)",
            confirm,
        ),
        asking(
            "test_input_required_result_tampered_state",
            "Rejects a tampered requestState (SEP-2322)",
            confirm,
        ),
        asking(
            "test_input_required_result_multiple_inputs",
            "Needs three inputs at once (SEP-2322)",
            |ctx| async move {
                let (name, greeting, roots) = futures::join!(
                    ctx.ask("user_name", elicitation("What is your name?", "name")),
                    ctx.ask(
                        "greeting",
                        InputRequest::sampling_text("Generate a greeting", 100)
                    ),
                    ctx.ask("client_roots", InputRequest::list_roots()),
                );
                name?;
                greeting?;
                roots?;
                Ok("All inputs received".to_owned())
            },
        ),
        asking(
            "test_input_required_result_multi_round",
            "Needs input over two rounds (SEP-2322)",
            |ctx| async move {
                ctx.ask("step1", elicitation("Step 1: What is your name?", "name"))
                    .await?;
                let color = "Step 2: What is your favorite color?";
                ctx.ask("step2", elicitation(color, "color")).await?;
                Ok("Multi-round flow complete".to_owned())
            },
        ),
        asking(
            "test_input_required_result_capabilities",
            "Asks only for declared capabilities (SEP-2322)",
            |ctx| async move {
                let elicit = ctx
                    .supports_elicitation()
                    .then(|| ctx.ask("user_name", elicitation("What is your name?", "name")));
                let sample = ctx.supports_sampling().then(|| {
                    ctx.ask(
                        "greeting",
                        InputRequest::sampling_text("Generate a greeting", 100),
                    )
                });
                let roots = ctx
                    .supports_roots()
                    .then(|| ctx.ask("client_roots", InputRequest::list_roots()));
                let asked = [elicit, sample, roots].into_iter().flatten();
                let answers = futures::future::join_all(asked).await;
                if answers.is_empty() {
                    return Ok("Client declared no capability to ask through".to_owned());
                }
                answers.into_iter().collect::<Result<Vec<_>, _>>()?;
                Ok("Capability-aware flow complete".to_owned())
            },
        ),
        Tool::new(
            "test_missing_capability",
            "Requires the sampling client capability",
            |_: Value| async { "Required capability declared" },
        )
        .input_schema(no_args()),
    ]
}

async fn confirm(ctx: ToolContext) -> Result<String, ClientRequestError> {
    ctx.ask("confirm", elicitation("Please confirm", "ok"))
        .await?;
    Ok("Confirmed: state-ok".to_owned())
}

/// The SEP-2322 prompt: asks for context before it is rendered.
pub fn round_trip_prompt() -> Prompt {
    Prompt::new(
        "test_input_required_result_prompt",
        |req: PromptRequest| async move {
            req.ask("context", elicitation("Provide context", "context"))
                .await?;
            Ok::<_, ClientRequestError>(vec![prompt_user(Content::text(
                "Prompt completed with the provided context.",
            ))])
        },
    )
    .description("Needs an elicitation before it is rendered (SEP-2322)")
}

/// The conformance server: our [`Server`], with `test_missing_capability`
/// answered in front of it at the stateless revision: without the
/// `sampling` capability in the request's `_meta`, a `-32021` error (a
/// protocol error, which a tool handler's result is not).
pub struct Conformance {
    server: Server,
}

impl Conformance {
    /// `server`, with the fixture in front of it.
    pub fn new(server: Server) -> Conformance {
        Conformance { server }
    }
}

/// `test_tool_with_task`: its first round asks for the user's name
/// (`input_required`); the next, with the answer, goes to the server with
/// the name as an argument, and the server runs it as a task (a tool that
/// must run as a task is one the server starts before its handler runs,
/// so the round before it is answered here).
fn gather_then_task(mut message: Value) -> Result<Value, Value> {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let name = message
        .pointer("/params/inputResponses/user_name/content/name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let Some(name) = name else {
        let mut round = InputRequiredResult::default();
        round.input_requests.insert(
            "user_name".into(),
            elicitation("What is your name?", "name"),
        );
        return Err(jsonrpc::response(&id, round.into_value()));
    };
    if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
        params.remove("inputResponses");
        params.remove("requestState");
        params.insert("arguments".into(), json!({"user_name": name}));
    }
    Ok(message)
}

impl Handler for Conformance {
    fn handle(&self, message: Value, ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
        if message.pointer("/params/name").and_then(Value::as_str) == Some("test_tool_with_task")
            && message.get("method").and_then(Value::as_str) == Some("tools/call")
        {
            return match gather_then_task(message) {
                Ok(message) => Box::pin(self.server.handle(message, ctx)),
                Err(round) => Box::pin(async move { Some(round) }),
            };
        }
        let capabilities = "/params/_meta/io.modelcontextprotocol~1clientCapabilities";
        if message.pointer("/params/name") == Some(&json!("test_missing_capability"))
            && message.get("method") == Some(&json!("tools/call"))
            && let Some(declared) = message.pointer(capabilities)
            && declared.get("sampling").is_none()
            && let Some(id) = message.get("id")
        {
            let error = missing_client_capability(json!({"sampling": {}}));
            let reply = jsonrpc::error_response(id, error);
            return Box::pin(async move { Some(reply) });
        }
        Box::pin(self.server.handle(message, ctx))
    }

    fn tool_info(&self, name: &str) -> Option<claude_code_agent_mcp::types::ToolInfo> {
        self.server.tool_info(name)
    }
}
