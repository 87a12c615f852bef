//! Resources and resource templates: list, read, subscribe, list_changed.

use crate::support::*;
use claude_code_agent_mcp::server::{Resource, ResourceRequest, ResourceTemplate};
use claude_code_agent_mcp::types::ResourceContents;
use claude_code_agent_mcp::{RequestContext, Server};
use serde_json::json;

fn server() -> Server {
    Server::builder("res", "1")
        .resource(
            Resource::new("test://text", "text", |_: ResourceRequest| async {
                "hello"
            })
            .title("Text")
            .description("Some text")
            .mime_type("text/plain"),
        )
        .resource(
            Resource::new("test://bytes", "bytes", |_: ResourceRequest| async {
                vec![0u8, 1, 2, 255]
            })
            .mime_type("application/octet-stream"),
        )
        .resource(Resource::new(
            "test://broken",
            "broken",
            |_: ResourceRequest| async { Err::<String, _>("disk on fire") },
        ))
        .resource(Resource::new(
            "test://many",
            "many",
            |req: ResourceRequest| async move {
                vec![
                    ResourceContents::text(&req.uri, "a"),
                    ResourceContents::text(format!("{}#2", req.uri), "b"),
                ]
            },
        ))
        .resource_template(
            ResourceTemplate::new(
                "test://template/{id}/data",
                "item",
                |req: ResourceRequest| async move { json!({"id": req.var("id")}).to_string() },
            )
            .mime_type("application/json"),
        )
        .page_size(2)
        .build()
}

#[tokio::test]
async fn list_pages_through_resources_and_lists_templates() {
    let s = server();
    let first = ask(&s, req(1, "resources/list", json!({}))).await;
    let page = result(&first);
    assert_eq!(page["resources"].as_array().unwrap().len(), 2);
    assert_eq!(
        page["resources"][0],
        json!({"uri":"test://text","name":"text","title":"Text",
        "description":"Some text","mimeType":"text/plain"})
    );
    let cursor = page["nextCursor"].as_str().unwrap().to_owned();
    let second = ask(&s, req(2, "resources/list", json!({"cursor": cursor}))).await;
    assert_eq!(result(&second)["resources"].as_array().unwrap().len(), 2);
    assert!(result(&second).get("nextCursor").is_none());
    let bad = ask(&s, req(3, "resources/list", json!({"cursor": "nope"}))).await;
    assert_eq!(error_code(&bad), -32602);

    let templates = ask(&s, req(4, "resources/templates/list", json!({}))).await;
    assert_eq!(
        result(&templates)["resourceTemplates"],
        json!([{"uriTemplate":"test://template/{id}/data",
        "name":"item","mimeType":"application/json"}])
    );
}

#[tokio::test]
async fn read_text_blob_template_and_errors() {
    let s = server();
    let text = ask(&s, req(1, "resources/read", json!({"uri":"test://text"}))).await;
    assert_eq!(
        result(&text)["contents"],
        json!([{"uri":"test://text","mimeType":"text/plain","text":"hello"}])
    );
    let bytes = ask(&s, req(2, "resources/read", json!({"uri":"test://bytes"}))).await;
    assert_eq!(result(&bytes)["contents"][0]["blob"], "AAEC/w==");
    let item = ask(
        &s,
        req(
            3,
            "resources/read",
            json!({"uri":"test://template/a%2Fb/data"}),
        ),
    )
    .await;
    assert_eq!(result(&item)["contents"][0]["text"], r#"{"id":"a/b"}"#);
    assert_eq!(result(&item)["contents"][0]["mimeType"], "application/json");
    let many = ask(&s, req(4, "resources/read", json!({"uri":"test://many"}))).await;
    assert_eq!(result(&many)["contents"].as_array().unwrap().len(), 2);

    let missing = ask(&s, req(5, "resources/read", json!({"uri":"test://nope"}))).await;
    assert_eq!(error_code(&missing), -32002);
    assert_eq!(missing["error"]["data"]["uri"], "test://nope");
    let broken = ask(&s, req(6, "resources/read", json!({"uri":"test://broken"}))).await;
    assert_eq!(error_code(&broken), -32603);
    assert!(
        broken["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disk on fire")
    );
    let no_uri = ask(&s, req(7, "resources/read", json!({}))).await;
    assert_eq!(error_code(&no_uri), -32602);
}

#[tokio::test]
async fn subscriptions_get_updates_and_lists_announce_changes() {
    let s = server();
    let (session, seen) = recording_session();
    let ctx = || RequestContext::with_session(session.clone());
    let init = s
        .handle(cli_initialize(0, "2025-11-25"), ctx())
        .await
        .unwrap();
    assert_eq!(
        result(&init)["capabilities"]["resources"],
        json!({"subscribe":true,"listChanged":true})
    );

    s.handle(
        req(1, "resources/subscribe", json!({"uri":"test://text"})),
        ctx(),
    )
    .await
    .unwrap();
    assert_eq!(session.subscriptions(), ["test://text"]);
    assert_eq!(s.notify_resource_updated("test://text"), 1);
    assert_eq!(s.notify_resource_updated("test://bytes"), 0);
    s.handle(
        req(2, "resources/unsubscribe", json!({"uri":"test://text"})),
        ctx(),
    )
    .await
    .unwrap();
    assert_eq!(s.notify_resource_updated("test://text"), 0);

    s.add_resource(Resource::new(
        "test://new",
        "new",
        |_: ResourceRequest| async { "n" },
    ));
    assert!(s.remove_resource("test://new"));
    assert!(!s.remove_resource("test://new"));
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/resources/updated",
            "notifications/resources/list_changed",
            "notifications/resources/list_changed"
        ]
    );
    assert_eq!(
        seen.lock().unwrap()[0]["params"],
        json!({"uri":"test://text"})
    );
}

#[tokio::test]
async fn a_server_without_resources_does_not_offer_them() {
    let s = Server::builder("bare", "1").build();
    let init = ask(&s, cli_initialize(0, "2025-11-25")).await;
    assert!(result(&init)["capabilities"].get("resources").is_none());
    assert!(result(&init)["capabilities"].get("prompts").is_none());
    assert!(result(&init)["capabilities"].get("completions").is_none());
    let reply = ask(&s, req(1, "resources/list", json!({}))).await;
    assert_eq!(error_code(&reply), -32601);
    let reply = ask(&s, req(2, "completion/complete", json!({}))).await;
    assert_eq!(error_code(&reply), -32601);
}
