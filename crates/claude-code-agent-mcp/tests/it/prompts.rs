//! Prompts (list, get, required arguments, content kinds) and completion.

use crate::support::*;
use claude_code_agent_mcp::server::{
    CompletionRef, CompletionRequest, Prompt, PromptRequest, prompt_assistant, prompt_user,
};
use claude_code_agent_mcp::types::ResourceContents;
use claude_code_agent_mcp::{Content, RequestContext, Server};
use serde_json::json;

fn server() -> Server {
    Server::builder("prompts", "1")
        .prompt(
            Prompt::new("simple", |_: PromptRequest| async { "Say hi".to_owned() })
                .description("Simple"),
        )
        .prompt(
            Prompt::new("args", |req: PromptRequest| async move {
                vec![
                    prompt_user(Content::text(format!(
                        "a={} b={}",
                        req.arg("a").unwrap_or("-"),
                        req.arg("b").unwrap_or("-")
                    ))),
                    prompt_assistant(Content::text("ok")),
                ]
            })
            .argument("a", "First", true)
            .argument("b", "Second", false),
        )
        .prompt(
            Prompt::new("rich", |req: PromptRequest| async move {
                vec![
                    prompt_user(Content::resource(
                        ResourceContents::text(req.arg("uri").unwrap_or_default(), "body")
                            .with_mime_type("text/plain"),
                    )),
                    prompt_user(Content::image("AAAA", "image/png")),
                ]
            })
            .argument("uri", "What to embed", true),
        )
        .prompt(Prompt::new("fails", |_: PromptRequest| async {
            Err::<String, _>("no luck")
        }))
        .completion(|req: CompletionRequest| async move {
            let CompletionRef::Prompt(name) = req.reference else {
                return Vec::new();
            };
            (0..150)
                .map(|i| format!("{name}:{}:{}{i}", req.argument, req.value))
                .collect()
        })
        .build()
}

#[tokio::test]
async fn list_describes_prompts_and_arguments() {
    let reply = ask(&server(), req(1, "prompts/list", json!({}))).await;
    let prompts = &result(&reply)["prompts"];
    assert_eq!(prompts.as_array().unwrap().len(), 4);
    assert_eq!(prompts[0], json!({"name":"simple","description":"Simple"}));
    assert_eq!(
        prompts[1]["arguments"],
        json!([{"name":"a","description":"First","required":true},
        {"name":"b","description":"Second","required":false}])
    );
}

#[tokio::test]
async fn get_fills_in_arguments_and_checks_required_ones() {
    let s = server();
    let simple = ask(&s, req(1, "prompts/get", json!({"name":"simple"}))).await;
    assert_eq!(
        result(&simple),
        &json!({"description":"Simple",
        "messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}]})
    );
    let args = ask(
        &s,
        req(
            2,
            "prompts/get",
            json!({"name":"args","arguments":{"a":"1","b":2}}),
        ),
    )
    .await;
    assert_eq!(result(&args)["messages"][0]["content"]["text"], "a=1 b=2");
    assert_eq!(result(&args)["messages"][1]["role"], "assistant");

    let missing = ask(
        &s,
        req(
            3,
            "prompts/get",
            json!({"name":"args","arguments":{"b":"x"}}),
        ),
    )
    .await;
    assert_eq!(error_code(&missing), -32602);
    assert!(missing["error"]["message"].as_str().unwrap().contains("a"));
    let wrong_type = ask(
        &s,
        req(
            4,
            "prompts/get",
            json!({"name":"args","arguments":{"a":[1]}}),
        ),
    )
    .await;
    assert_eq!(error_code(&wrong_type), -32602);
    let unknown = ask(&s, req(5, "prompts/get", json!({"name":"nope"}))).await;
    assert_eq!(error_code(&unknown), -32602);
    let fails = ask(&s, req(6, "prompts/get", json!({"name":"fails"}))).await;
    assert_eq!(error_code(&fails), -32603);

    let rich = ask(
        &s,
        req(
            7,
            "prompts/get",
            json!({"name":"rich","arguments":{"uri":"test://x"}}),
        ),
    )
    .await;
    let messages = &result(&rich)["messages"];
    assert_eq!(
        messages[0]["content"],
        json!({"type":"resource",
        "resource":{"uri":"test://x","mimeType":"text/plain","text":"body"}})
    );
    assert_eq!(
        messages[1]["content"],
        json!({"type":"image","data":"AAAA","mimeType":"image/png"})
    );
}

#[tokio::test]
async fn completion_caps_values_and_reports_more() {
    let s = server();
    let params =
        json!({"ref":{"type":"ref/prompt","name":"args"},"argument":{"name":"a","value":"v"}});
    let reply = ask(&s, req(1, "completion/complete", params)).await;
    let completion = &result(&reply)["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["values"][0], "args:a:v0");
    assert_eq!(
        (
            completion["total"].as_u64(),
            completion["hasMore"].as_bool()
        ),
        (Some(150), Some(true))
    );
    let bad = ask(
        &s,
        req(2, "completion/complete", json!({"argument":{"name":"a"}})),
    )
    .await;
    assert_eq!(error_code(&bad), -32602);
    let init = ask(&s, cli_initialize(3, "2025-11-25")).await;
    assert_eq!(result(&init)["capabilities"]["completions"], json!({}));
    assert_eq!(
        result(&init)["capabilities"]["prompts"],
        json!({"listChanged":true})
    );
}

#[tokio::test]
async fn prompts_without_a_completion_handler_complete_to_nothing() {
    let s = Server::builder("p", "1")
        .prompt(Prompt::new("x", |_: PromptRequest| async { String::new() }))
        .build();
    let params = json!({"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":""}});
    let reply = ask(&s, req(1, "completion/complete", params)).await;
    assert_eq!(
        result(&reply),
        &json!({"completion":{"values":[],"total":0,"hasMore":false}})
    );
}

#[tokio::test]
async fn adding_and_removing_prompts_announces_it() {
    let s = server();
    let (session, seen) = recording_session();
    s.handle(
        cli_initialize(0, "2025-11-25"),
        RequestContext::with_session(session.clone()),
    )
    .await;
    s.add_prompt(Prompt::new("late", |_: PromptRequest| async {
        String::new()
    }));
    assert!(s.remove_prompt("late"));
    assert!(!s.remove_prompt("late"));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter()
            .all(|m| m["method"] == "notifications/prompts/list_changed")
    );
}
