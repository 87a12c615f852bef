//! The CLI asking the person at the SDK, on the real CLI: an MCP server's
//! elicitation forwarded as an `elicitation` control request and answered by
//! `Options::on_elicitation` (declined without it, as the TypeScript SDK
//! does); what in-process servers are offered; and `request_user_dialog`.

use std::sync::{Arc, Mutex};

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool, ToolContext};
use claude_code_agent::protocol::{
    ElicitationMode, ElicitationRequest, ElicitationResponse, UserDialogRequest, UserDialogResult,
};
use claude_code_agent::{McpServerConfig, Message, Options, SystemMessage, query};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

/// The `signup` server of the `elicitation` example, run by the CLI over
/// stdio: its tool `greet` asks for a name with `elicitation/create`.
fn signup(options: Options) -> Options {
    let exe = example("elicitation").to_string_lossy().into_owned();
    options
        .mcp_server_config("signup", McpServerConfig::stdio(exe, ["--stdio"]))
        .allowed_tools(["mcp__signup__greet"])
        .max_turns(3)
}

fn greet_script() -> claude_code_agent_testkit::MockModelBuilder {
    MockModel::builder()
        .turn(Turn::tool_use("mcp__signup__greet", json!({})))
        .turn(echo_results())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_servers_elicitation_is_answered_by_the_callback() {
    with_timeout(async {
        let h = Harness::start(greet_script()).await;
        let seen: Arc<Mutex<Vec<(ElicitationRequest, String)>>> = Arc::default();
        let record = seen.clone();
        let options = signup(h.options()).on_elicitation(move |request, ctx| {
            record.lock().unwrap().push((request, ctx.request_id));
            async { ElicitationResponse::accept(json!({"name": "Ada"})) }
        });
        let (messages, error) = drain(query("Greet me.", options)).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());

        // The tool got the callback's answer, and the model the tool's result.
        let results = tool_results(&messages);
        assert_eq!(results.len(), 1, "{messages:#?}");
        assert_eq!(result_text(&results[0]), "Hello, Ada!");
        assert_eq!(h.mock().tool_results()[0].text(), "Hello, Ada!");

        // What the CLI sent: the server's question, typed, nothing left over.
        let seen = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(seen.len(), 1);
        let (request, request_id) = &seen[0];
        assert!(!request_id.is_empty());
        assert_eq!(request.mcp_server_name, "signup");
        assert_eq!(request.message, "What is your name?");
        assert!(matches!(request.mode, None | Some(ElicitationMode::Form)));
        let schema = request.requested_schema.as_ref().expect("requested_schema");
        assert_eq!(schema["required"], json!(["name"]));
        assert_eq!(
            request.property_order.as_deref(),
            Some(&["name".into()][..])
        );
        assert!(request.extra.is_empty(), "unmodelled: {:?}", request.extra);
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_callback_an_elicitation_is_declined() {
    with_timeout(async {
        let h = Harness::start(greet_script()).await;
        let (messages, error) = drain(query("Greet me.", signup(h.options()))).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
        let results = tool_results(&messages);
        assert_eq!(results.len(), 1, "{messages:#?}");
        assert_eq!(result_text(&results[0]), "no name given (decline)");
        h.finish().await;
    })
    .await
}

/// The CLI declares no client capability at all to an in-process server
/// (`initialize` with `"capabilities": {}`), so by MCP's rules such a
/// server may not ask, and ours does not send the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_servers_are_offered_no_elicitation() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__local__ask", json!({})))
                .turn(echo_results()),
        )
        .await;
        let server = Server::builder("local", "1.0.0")
            .tool(
                Tool::new(
                    "ask",
                    "Asks the user",
                    |_args: Value, ctx: ToolContext| async move {
                        let declared = ctx
                            .client_capabilities()
                            .map(|c| Value::Object(c.as_map().clone()));
                        let asked = ctx
                            .request("elicitation/create", json!({"message": "Name?"}))
                            .await;
                        format!(
                            "declared={} supports={} asked={asked:?}",
                            declared.unwrap_or_default(),
                            ctx.supports_elicitation()
                        )
                    },
                )
                .input_schema(json!({"type": "object"})),
            )
            .build();
        let called = Arc::new(Mutex::new(0));
        let count = called.clone();
        let options = h
            .options()
            .mcp_server(server)
            .allowed_tools(["mcp__local__ask"])
            .on_elicitation(move |_request, _ctx| {
                *count.lock().unwrap() += 1;
                async { ElicitationResponse::decline() }
            });
        let (messages, error) = drain(query("Ask me.", options)).await;
        assert!(error.is_none(), "{error:?}");
        let text = result_text(&tool_results(&messages)[0]);
        assert!(
            text.starts_with("declared={} supports=false asked=Err("),
            "{text}"
        );
        assert_eq!(*called.lock().unwrap(), 0);
        h.finish().await;
    })
    .await
}

/// `request_user_dialog` on CLI 2.1.332: its dialogs come from flows the
/// mock cannot reach. `refusal_fallback_prompt`, declared here, is asked
/// only when a refused model has a fallback route, which the CLI learns
/// from Anthropic's servers (not from `--fallback-model`); against the
/// mock the refusal ends the turn with the classic refusal error
/// (`system/model_refusal_no_fallback`) and no dialog is asked. The other
/// kinds belong to auto mode and Remote Control.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_without_a_fallback_route_asks_no_dialog() {
    with_timeout(async {
        let refusal = || Turn::text("I cannot help with that.").with_stop_reason("refusal");
        let h = Harness::start(MockModel::builder().turn(refusal()).turn(refusal())).await;
        let seen: Arc<Mutex<Vec<UserDialogRequest>>> = Arc::default();
        let record = seen.clone();
        let options = h
            .options()
            .fallback_model("claude-sonnet-4-5")
            .settings(r#"{"switchModelsOnFlag": false}"#)
            .on_user_dialog(["refusal_fallback_prompt"], move |request, _ctx| {
                record.lock().unwrap().push(request);
                async { UserDialogResult::Cancelled }
            });
        let (messages, error) = drain(query("Hello", options)).await;
        assert!(error.is_none(), "{error:?}");
        assert!(
            messages
                .iter()
                .any(|m| matches!(m, Message::System(SystemMessage::ModelRefusalNoFallback(_)))),
            "{messages:#?}"
        );
        let result = results(&messages).pop().expect("a result");
        assert!(result.is_error, "{result:?}");
        assert!(seen.lock().unwrap().is_empty());
        h.finish().await;
    })
    .await
}
