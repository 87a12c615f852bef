//! Message-level rules: notifications, responses, invalid messages, error
//! codes, and ids kept exactly.

use crate::support::*;
use claude_code_agent_mcp::jsonrpc::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND};
use claude_code_agent_mcp::{Server, Tool};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("calc", "1")
        .tool(
            Tool::new("echo", "Echo", |v: Value| async move { v.to_string() })
                .input_schema(json!({"type":"object"})),
        )
        .build()
}

#[tokio::test]
async fn notifications_get_no_reply() {
    let server = server();
    for note in [
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}),
        json!({"jsonrpc":"2.0","method":"notifications/unknown_thing","params":[1,2]}),
        // A request-shaped method without an id is still a notification.
        json!({"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}),
        // (`"id": null` is no notification but an invalid request: envelope.rs.)
    ] {
        assert_eq!(send(&server, note.clone()).await, None, "{note}");
    }
}

#[tokio::test]
async fn responses_from_the_client_get_no_reply() {
    let server = server();
    for response in [
        json!({"jsonrpc":"2.0","id":77,"result":{}}),
        json!({"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}),
        json!({"result":{},"jsonrpc":"2.0","id":77}),
    ] {
        assert_eq!(send(&server, response.clone()).await, None, "{response}");
    }
}

#[tokio::test]
async fn unknown_method_is_method_not_found() {
    let reply = ask(&server(), req(3, "resources/list", json!({}))).await;
    assert_eq!(error_code(&reply), METHOD_NOT_FOUND);
    assert_eq!(reply["id"], 3);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("resources/list")
    );
}

#[tokio::test]
async fn unknown_tool_is_method_not_found_naming_the_tool() {
    let reply = ask(&server(), call(4, "nope", json!({}))).await;
    assert_eq!(error_code(&reply), METHOD_NOT_FOUND);
    assert_eq!(reply["id"], 4);
    assert_eq!(reply["error"]["message"], "Unknown tool: nope");
}

#[tokio::test]
async fn malformed_params_are_invalid_params() {
    let server = server();
    for (method, params) in [
        ("tools/call", json!({})),
        ("tools/call", json!({"name": 12})),
        ("tools/call", json!({"name":"echo","arguments":[1]})),
        ("tools/call", json!({"name":"echo","arguments":"{}"})),
        ("tools/call", json!("echo")),
        ("tools/call", json!([1])),
        ("tools/list", json!({"cursor": 3})),
        ("tools/list", json!({"cursor": "garbage"})),
        ("tools/list", json!(true)),
        ("initialize", json!("2025-11-25")),
        ("logging/setLevel", json!({"level":"loud"})),
    ] {
        let reply = ask(&server, req(1, method, params.clone())).await;
        assert_eq!(
            error_code(&reply),
            INVALID_PARAMS,
            "{method} {params}: {reply}"
        );
        assert_eq!(reply["id"], 1);
    }
}

#[tokio::test]
async fn invalid_messages_are_invalid_request() {
    let server = server();
    for (message, id) in [
        (json!([1, 2]), Value::Null),
        (json!("ping"), Value::Null),
        (json!(null), Value::Null),
        (json!({}), Value::Null),
        (json!({"jsonrpc":"2.0","id":5}), json!(5)),
        (json!({"jsonrpc":"2.0","id":"s","method":7}), json!("s")),
        (
            json!({"jsonrpc":"2.0","id":true,"method":"ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc":"2.0","id":{"a":1},"method":"ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc":"2.0","id":[1],"method":"ping"}),
            Value::Null,
        ),
    ] {
        let reply = ask(&server, message.clone()).await;
        assert_eq!(error_code(&reply), INVALID_REQUEST, "{message}");
        assert_eq!(reply["id"], id, "{message}");
    }
}

#[tokio::test]
async fn ids_are_preserved_exactly() {
    let server = server();
    let ids: Vec<Value> = vec![
        json!(0),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1.5),
        json!(1e300),
        json!(""),
        json!("req-ü-✓"),
        json!("0"),
    ];
    for id in ids {
        for message in [
            req(id.clone(), "ping", json!({})),
            call(id.clone(), "echo", json!({"x":1})),
            req(id.clone(), "no/such", json!({})),
        ] {
            let reply = ask(&server, message).await;
            assert_eq!(reply["id"], id);
            assert_eq!(reply["jsonrpc"], "2.0");
            // Same JSON text, not merely an equal number.
            assert_eq!(reply["id"].to_string(), id.to_string());
        }
    }
}

#[tokio::test]
async fn a_response_with_an_odd_id_gets_no_reply() {
    // Found by fuzzing: a response is never answered, whatever its id.
    let reply = send(
        &server(),
        json!({"jsonrpc":"2.0","id":false,"error":{"code":1,"message":"x"}}),
    )
    .await;
    assert_eq!(reply, None);
}
