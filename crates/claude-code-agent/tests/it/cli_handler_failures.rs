//! Through the real CLI: a resource handler that panics is a JSON-RPC
//! `-32603` answer to the CLI's `resources/read` inside a successful
//! control response — the bridge answered, and the model reads which
//! resource failed and why — not a control error, and the server's tools go
//! on working in the same turn. (The panic used to escape `handle` and
//! become the SDK's control error, "the SDK's handler panicked: …"; CLI
//! 2.1.332 passes that text on too and keeps the server, so the wording the
//! model reads is what tells the two apart.)

use crate::support::*;
use claude_code_agent::mcp::server::{Resource, ResourceRequest};
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::query;
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_resource_handler_is_an_error_and_the_server_stays() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use(
                    "ReadMcpResourceTool",
                    json!({"server": "docs", "uri": "docs://boom"}),
                ))
                .turn(Turn::tool_use("mcp__docs__add", json!({"a": 2, "b": 3})))
                .turn(echo_results()),
        )
        .await;
        let server = Server::builder("docs", "1.0.0")
            .resource(Resource::new(
                "docs://boom",
                "boom",
                |_: ResourceRequest| async {
                    if true {
                        panic!("resource handler blew up");
                    }
                    "unreachable"
                },
            ))
            .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
                x.a + x.b
            }))
            .build();
        let options = h
            .options()
            .mcp_server(server)
            .allowed_tools(["mcp__docs", "ReadMcpResourceTool"]);

        let (messages, error) = drain(query("read docs://boom, then add", options)).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());

        let seen = tool_results(&messages);
        assert_eq!(seen.len(), 2, "{seen:?}");
        let read = result_text(&seen[0]);
        assert_eq!(seen[0].is_error, Some(true), "{read}");
        // The server's own -32603, naming the resource; not a control error.
        assert!(
            read.contains(
                "resource \"docs://boom\": the handler panicked: resource handler blew up"
            ),
            "{read}"
        );
        assert!(!read.contains("the SDK's handler panicked"), "{read}");
        // The server is still connected: its tool answers.
        assert_eq!(result_text(&seen[1]), "5", "{seen:?}");
        assert_ne!(seen[1].is_error, Some(true));
        h.finish().await;
    })
    .await;
}
