//! An rmcp `#[tool_router]` server in process under the real CLI, beside a
//! native server (feature `rmcp`).

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::{McpServerConfig, query};
use claude_code_agent_testkit::{MockModel, Turn};
use rmcp::handler::server::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: f64,
    b: f64,
}

struct Rcalc {
    #[expect(dead_code, reason = "read by the code #[tool_handler] writes")]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Rcalc {
    #[tool(description = "Multiply a by b")]
    async fn multiply(&self, Parameters(p): Parameters<Pair>) -> String {
        format!("rmcp={}", p.a * p.b)
    }

    #[tool(description = "Always panics")]
    async fn explode(&self) -> String {
        if true {
            panic!("rmcp kaboom");
        }
        String::new()
    }
}

#[tool_handler]
impl ServerHandler for Rcalc {}

fn rcalc() -> Rcalc {
    Rcalc {
        tool_router: Rcalc::tool_router(),
    }
}

fn native() -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", |o: Operands| async move {
            format!("native={}", o.a + o.b)
        }))
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_server_beside_a_native_one_both_called_by_the_model() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use(
                    "mcp__rcalc__multiply",
                    json!({"a": 6, "b": 7}),
                ))
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
                .turn(echo_results()),
        )
        .await;
        let options = h
            .options()
            .mcp_server(native())
            .rmcp_server("rcalc", rcalc())
            .allowed_tools(["mcp__rcalc__multiply", "mcp__calc__add"]);

        let (messages, error) = drain(query("go", options)).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());

        let first = &h.mock().conversation_requests()[0];
        let offered = first.tool_names();
        for want in [
            "mcp__rcalc__multiply",
            "mcp__rcalc__explode",
            "mcp__calc__add",
        ] {
            assert!(offered.contains(&want), "{want} not offered: {offered:?}");
        }
        let sent = h.mock().tool_results();
        let texts: Vec<String> = sent.iter().map(|r| r.text()).collect();
        assert_eq!(texts, ["rmcp=42", "native=5"]);
        assert!(sent.iter().all(|r| !r.is_error), "{sent:?}");
        let uses = tool_uses(&messages);
        assert_eq!(uses.len(), 2, "{uses:?}");
        let last = results(&messages);
        assert_eq!(last.len(), 1);
        // The last turn echoes the last request's tool result.
        assert_eq!(last[0].result.as_deref(), Some("results: native=5"));
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_tool_that_panics_is_an_error_result_and_the_session_goes_on() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__rcalc__explode", json!({})))
                .turn(Turn::tool_use(
                    "mcp__rcalc__multiply",
                    json!({"a": 2, "b": 4}),
                ))
                .turn(echo_results()),
        )
        .await;
        // Through `mcp_server_config`, the other way to add one.
        let options = h
            .options()
            .mcp_server_config("rcalc", McpServerConfig::rmcp("rcalc", rcalc()))
            .allowed_tools(["mcp__rcalc__explode", "mcp__rcalc__multiply"]);

        let (messages, error) = drain(query("go", options)).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert!(sent[0].is_error, "{sent:?}");
        assert!(
            sent[0]
                .text()
                .contains("Tool \"explode\" panicked: rmcp kaboom"),
            "{sent:?}"
        );
        assert!(!sent[1].is_error, "{sent:?}");
        assert_eq!(sent[1].text(), "rmcp=8");
        assert_eq!(results(&messages).len(), 1);
        h.finish().await;
    })
    .await
}
