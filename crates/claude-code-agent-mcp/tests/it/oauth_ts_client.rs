//! MCP Authorization end to end: the official TypeScript SDK's OAuth client
//! (`tests/peers/ts_oauth_client.mjs` on @modelcontextprotocol/sdk 1.32.2)
//! against our protected server, with the SDK's demo authorization server
//! (dynamic registration, authorization code with PKCE, opaque tokens)
//! whose tokens our `IntrospectionVerifier` checks. As the SDK sees it: the
//! first connection is refused with 401, the SDK finds the authorization
//! server through our RFC 9728 metadata and asks for the scope our
//! challenge names, a token for our resource gets in, the tool sees its
//! client, and a tool needing more scope is a 403 `insufficient_scope` the
//! SDK answers by asking for that scope.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::support::peers;
use claude_code_agent_mcp::http_server::{
    IntrospectionVerifier, ProtectedResource, StreamableHttpConfig, StreamableHttpService,
};
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use serde_json::{Value, json};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ts_oauth_client.mjs")
}

fn server() -> Server {
    Server::builder("oauth-interop", "1")
        .tool(
            Tool::new(
                "whoami",
                "who is calling",
                |_: Value, ctx: ToolContext| async move {
                    let token = ctx.access_token().expect("a verified token");
                    json!({"client": token.client_id(), "scopes": token.scopes()}).to_string()
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            Tool::new(
                "delete_file",
                "deletes",
                |_: Value| async move { "deleted" },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

#[tokio::test]
async fn the_ts_sdk_client_goes_through_the_authorization_code_flow() {
    let Some(dir) = peers::ts_sdk("the_ts_sdk_client_goes_through_the_authorization_code_flow")
    else {
        return;
    };
    if !dir.join("node_modules/express/package.json").exists() {
        panic!(
            "express (a dependency of the TypeScript SDK) is missing from {}",
            dir.display()
        );
    }
    let as_port = peers::free_port();
    let issuer = format!("http://127.0.0.1:{as_port}");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let resource = ProtectedResource::new(
        &url,
        IntrospectionVerifier::new(format!("{issuer}/introspect"), &url),
    )
    .authorization_server(&issuer)
    .scopes_supported(["mcp:tools", "files:write"])
    .required_scopes(["mcp:tools"])
    .tool_scopes("delete_file", ["files:write"]);
    let service = StreamableHttpService::new(
        server(),
        StreamableHttpConfig::default().protected_resource(resource),
    );
    let task = tokio::spawn(async move {
        let _ = service.serve(listener).await;
    });

    let child = tokio::process::Command::new("node")
        .env("TS_SDK_DIR", &dir)
        .arg(script())
        .arg(&url)
        .arg(as_port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("ts_oauth_client.mjs finishes within 60 s")
        .unwrap();
    task.abort();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no report ({e}):\n{stdout}\n{stderr}"));
    assert!(report.get("failure").is_none(), "{report:#}\n{stderr}");

    assert_eq!(report["firstConnect"], "unauthorized", "{report:#}");
    let client_id = report["clientId"].as_str().expect("a registered client");
    // The first authorization asks for the scope our 401 named, for our resource.
    assert_eq!(
        report["redirects"][0],
        json!({"scope": "mcp:tools", "resource": url}),
        "{report:#}"
    );
    assert_eq!(report["tools"], json!(["delete_file", "whoami"]));
    assert_eq!(
        report["whoami"],
        json!({"client": client_id, "scopes": ["mcp:tools"]})
    );
    // The 403 made the SDK ask for every scope the call needs.
    assert_eq!(report["deleteFirst"], "unauthorized", "{report:#}");
    assert_eq!(
        report["redirects"][1]["scope"], "mcp:tools files:write",
        "{report:#}"
    );
    assert_eq!(report["deleteAfterStepUp"], "deleted", "{report:#}");
}
