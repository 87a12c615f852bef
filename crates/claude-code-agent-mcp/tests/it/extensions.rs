//! MCP extensions (SEP-2133) declared on both sides, at both kinds of
//! revision, and MCP Apps (SEP-1865) on top: a tool linked to a `ui://`
//! view, the view served with its MIME type, the link read by the client.

use claude_code_agent_mcp::client::{ClientOptions, HandshakeMode, InProcessTransport, McpClient};
use claude_code_agent_mcp::server::{Resource, ResourceRequest};
use claude_code_agent_mcp::types::apps::{self, UiToolMeta, Visibility};
use claude_code_agent_mcp::types::{APPS_EXTENSION, ResourceContents};
use claude_code_agent_mcp::{Json, Server, Tool, ToolContext};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("apps", "1")
        .extension(APPS_EXTENSION, json!({}))
        .extension("com.example/settings", json!({"level": 2}))
        .tool(
            Tool::new(
                "weather",
                "The weather, shown in a view",
                |_: Value, ctx: ToolContext| async move {
                    // Apps-aware hosts get the view; every host gets the text.
                    let declared = ctx.client_capabilities().unwrap_or_default().extensions();
                    let renders = declared.get(APPS_EXTENSION).is_some_and(apps::renders_html);
                    Json(json!({"text": "sunny", "host renders views": renders}))
                },
            )
            .ui(UiToolMeta::new("ui://weather/view.html")),
        )
        .tool(
            Tool::new("refresh", "Called by the view only", |_: Value| async {
                "ok"
            })
            .ui(UiToolMeta::new("ui://weather/view.html").visibility([Visibility::App])),
        )
        .resource(Resource::ui(
            "ui://weather/view.html",
            "weather view",
            |req: ResourceRequest| async move {
                let mut contents = ResourceContents::text(req.uri, "<!DOCTYPE html><html></html>");
                let csp = json!({"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}});
                contents.meta = csp.as_object().cloned();
                contents
            },
        ))
        .build()
}

async fn check(handshake: HandshakeMode, version: &str) {
    let options = ClientOptions::new("host", "1")
        .handshake(handshake)
        .extension(APPS_EXTENSION, apps::client_settings());
    let client = McpClient::connect(InProcessTransport::new(server()), options)
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), version);

    // The server's declarations, as sent; unknown ones kept.
    let declared = client.server_extensions();
    assert_eq!(
        declared.ids().collect::<Vec<_>>(),
        [APPS_EXTENSION, "com.example/settings"]
    );
    assert!(declared.get(APPS_EXTENSION).unwrap().is_empty());
    assert_eq!(declared.get("com.example/settings").unwrap()["level"], 2);

    // The links, and the view with its type and `_meta.ui`.
    let tools = client.list_tools().await.unwrap();
    let link = tools[0].ui().unwrap();
    assert_eq!(link.resource_uri.as_deref(), Some("ui://weather/view.html"));
    assert!(link.visible_to_model());
    let app_only = tools[1].ui().unwrap();
    assert!(!app_only.visible_to_model() && app_only.callable_by_app());
    let view = client
        .read_resource("ui://weather/view.html")
        .await
        .unwrap();
    let contents = &view.contents[0];
    assert_eq!(contents.mime_type.as_deref(), Some(apps::UI_MIME_TYPE));
    let meta = contents.meta.as_ref().unwrap();
    assert_eq!(
        meta["ui"]["csp"]["connectDomains"][0],
        "https://api.example.com"
    );

    // The tool saw what the client declared.
    let result = client.call_tool("weather", json!({})).await.unwrap();
    let said: Value = serde_json::from_str(&result.text_content()).unwrap();
    assert_eq!(said["host renders views"], true, "{said}");
}

#[tokio::test]
async fn extensions_are_declared_and_read_on_both_sides_with_initialize() {
    check(HandshakeMode::Initialize, "2025-11-25").await;
}

#[tokio::test]
async fn extensions_are_declared_and_read_on_both_sides_with_discover() {
    check(HandshakeMode::Discover, "2026-07-28").await;
}

#[test]
#[should_panic(expected = "is not of the form `vendor-prefix/name`")]
fn an_extension_without_a_vendor_prefix_is_refused() {
    let _ = Server::builder("s", "1").extension("ui", json!({}));
}
