//! Only what the client declared is used: `sampling/createMessage`,
//! `elicitation/create` (form or URL mode) and `roots/list` go to a client
//! only when its `initialize` (or, stateless, its request's `_meta`)
//! declared the capability; otherwise the tool's request fails at once with
//! an error naming the capability, and nothing is sent. A tool can ask what
//! the client supports.

use crate::support::wire;
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use serde_json::{Value, json};

/// `ask` sends the request named by its arguments and says what came of it.
fn server() -> Server {
    Server::builder("caps", "1")
        .tool(
            Tool::new(
                "ask",
                "sends {method, params} to the client",
                |v: Value, ctx: ToolContext| async move {
                    let method = v["method"].as_str().unwrap_or_default().to_owned();
                    match ctx.request(&method, v["params"].clone()).await {
                        Ok(r) => format!("answered: {r}"),
                        Err(e) => format!("refused: {e}"),
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

fn sampling() -> Value {
    json!({"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}})
}

fn sampling_with_tools() -> Value {
    json!({"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,
        "tools":[{"name":"t","inputSchema":{"type":"object"}}]}})
}

fn elicit_form() -> Value {
    json!({"method":"elicitation/create","params":{"message":"Name?",
        "requestedSchema":{"type":"object","properties":{}}}})
}

fn elicit_url() -> Value {
    json!({"method":"elicitation/create","params":{"mode":"url","message":"Sign in",
        "url":"https://example.com/x","elicitationId":"e1"}})
}

fn roots() -> Value {
    json!({"method":"roots/list","params":{}})
}

/// (declared capabilities, request, the capability it needs or `None` if sent)
fn cases() -> Vec<(Value, Value, Option<&'static str>)> {
    vec![
        (json!({}), sampling(), Some("sampling")),
        (json!({}), elicit_form(), Some("elicitation")),
        (json!({}), roots(), Some("roots")),
        (
            json!({"elicitation":{},"roots":{}}),
            sampling(),
            Some("sampling"),
        ),
        (json!({"sampling":{}}), sampling(), None),
        (
            json!({"sampling":{}}),
            sampling_with_tools(),
            Some("sampling.tools"),
        ),
        (
            json!({"sampling":{"tools":{}}}),
            sampling_with_tools(),
            None,
        ),
        (json!({"elicitation":{}}), elicit_form(), None),
        (
            json!({"elicitation":{}}),
            elicit_url(),
            Some("elicitation.url"),
        ),
        (
            json!({"elicitation":{"form":{}}}),
            elicit_url(),
            Some("elicitation.url"),
        ),
        (
            json!({"elicitation":{"url":{}}}),
            elicit_form(),
            Some("elicitation.form"),
        ),
        (json!({"elicitation":{"url":{}}}), elicit_url(), None),
        (json!({"roots":{"listChanged":true}}), roots(), None),
    ]
}

/// What the tool's reply says, and the requests the client saw.
fn check(caps: &Value, ask: &Value, needs: Option<&str>, reply: &Value, seen: &[Value]) {
    let said = wire::text(reply);
    let method = ask["method"].as_str().unwrap();
    match needs {
        Some(capability) => {
            assert!(
                seen.is_empty(),
                "declared {caps}: {method} must not be sent: {seen:?}"
            );
            assert!(
                said.starts_with("refused: ") && said.contains(&format!("`{capability}`")),
                "declared {caps}, {method}: {said}"
            );
        }
        None => {
            assert_eq!(seen.len(), 1, "declared {caps}: {method} is sent");
            assert_eq!(seen[0]["method"], method);
            assert!(said.starts_with("answered: "), "{said}");
        }
    }
}

#[tokio::test]
async fn over_ndjson_only_declared_capabilities_are_used() {
    for (caps, ask, needs) in cases() {
        let mut lines = wire::Lines::serve(server());
        lines.initialize("2025-11-25", caps.clone()).await;
        lines.send(&wire::call("c", "ask", ask.clone())).await;
        let mut seen = Vec::new();
        let reply = loop {
            let m = lines.recv().await;
            if m.get("method").is_some() && m.get("id").is_some() {
                // A request to us: answer it as a client would.
                lines
                    .send(&json!({"jsonrpc":"2.0","id":m["id"],"result":{"ok":true}}))
                    .await;
                seen.push(m);
            } else if m["id"] == "c" {
                break m;
            }
        };
        check(&caps, &ask, needs, &reply, &seen);
        lines.end().await;
    }
}

#[cfg(feature = "http-server")]
#[tokio::test]
async fn over_http_only_declared_capabilities_are_used() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    let http = wire::Http::serve(server(), StreamableHttpConfig::default()).await;
    for (caps, ask, needs) in cases() {
        let sid = http.initialize("2025-11-25", caps.clone()).await;
        let session = (sid.as_str(), "2025-11-25");
        let r = http
            .post(Some(session), &wire::call("c", "ask", ask.clone()))
            .send()
            .await
            .unwrap();
        let mut stream = wire::SseReader::new(r);
        let mut seen = Vec::new();
        let reply = loop {
            let m = stream
                .until(|m| m["id"] == "c" || m.get("method").is_some())
                .await
                .pop()
                .unwrap();
            if m["id"] == "c" {
                break m;
            }
            if m.get("id").is_some() {
                let answer = json!({"jsonrpc":"2.0","id":m["id"],"result":{"ok":true}});
                let r = http.post(Some(session), &answer).send().await.unwrap();
                assert_eq!(r.status(), reqwest::StatusCode::ACCEPTED);
                seen.push(m);
            }
        };
        check(&caps, &ask, needs, &reply, &seen);
    }
}
