//! What the reference SDKs wrote to the CLI (`->cli` lines) is produced
//! identically (modulo key order) by our types, and decodes losslessly.

use std::collections::BTreeMap;

use crate::support::captures::{Line, all_capture_names, lines};
use claude_code_agent::__private::wire::{ControlResponse, McpMessageResponse, SdkControlRequest};
use claude_code_agent::message::{ContentBlock, Message, Priority, UserInput};
use claude_code_agent::protocol::{
    AgentDefinition, HookEvent, HookMatcherConfig, HookOutput, InitializeRequest, McpServerConfig,
    PermissionBehavior, PermissionDestination, PermissionMode, PermissionResult, PermissionRule,
    PermissionUpdate, SdkRequest,
};
use serde_json::{Value, json};

/// The `->cli` JSON objects of a capture (skipping raw, non-JSON lines).
fn sent(file: &str) -> Vec<Value> {
    lines(file, "->cli")
        .into_iter()
        .map(|l: Line| l.msg)
        .filter(|m| m.get("raw_text").is_none())
        .collect()
}

fn request_id(v: &Value) -> String {
    v.get("request_id")
        .or_else(|| v["response"].get("request_id"))
        .and_then(Value::as_str)
        .unwrap()
        .to_owned()
}

/// The control responses the SDK sent that are not MCP answers, in order.
fn answers(file: &str) -> Vec<Value> {
    sent(file)
        .into_iter()
        .filter(|m| {
            m["type"] == "control_response"
                && m["response"]["response"].get("mcp_response").is_none()
        })
        .collect()
}

fn requests(file: &str) -> Vec<Value> {
    sent(file)
        .into_iter()
        .filter(|m| m["type"] == "control_request")
        .collect()
}

fn success(line: &Value, payload: impl serde::Serialize) -> Value {
    ControlResponse::success(request_id(line), serde_json::to_value(payload).unwrap()).to_value()
}

#[test]
fn every_sdk_line_decodes_and_round_trips() {
    let mut checked = 0;
    for name in all_capture_names() {
        for msg in sent(&name) {
            let again = match msg["type"].as_str() {
                Some("control_request") => {
                    let r = SdkControlRequest::from_value(msg.clone()).expect("envelope");
                    let unknown = matches!(r.request, SdkRequest::Unknown(_));
                    assert_eq!(
                        unknown,
                        msg["request"]["subtype"] == "nonsense_subtype",
                        "{name}: {msg}"
                    );
                    r.to_value()
                }
                Some("control_response") => {
                    let r = ControlResponse::from_value(msg.clone()).expect("envelope");
                    // Typed payloads round-trip too.
                    if let Ok(payload) = r.clone().into_result() {
                        if payload.get("behavior").is_some() {
                            let p = PermissionResult::from_value(payload.clone()).unwrap();
                            assert_eq!(p.to_value(), payload);
                        } else if payload.get("mcp_response").is_some() {
                            assert_eq!(
                                McpMessageResponse::from_value(payload.clone())
                                    .unwrap()
                                    .to_value(),
                                payload
                            );
                        } else {
                            assert_eq!(
                                HookOutput::from_value(payload.clone()).unwrap().to_value(),
                                payload
                            );
                        }
                    }
                    r.to_value()
                }
                Some("user") => UserInput::from_value(msg.clone())
                    .expect("user input")
                    .to_value(),
                _ => Message::from_value(msg.clone()).to_value(),
            };
            assert_eq!(again, msg, "{name}: re-encoding changed an SDK line");
            checked += 1;
        }
    }
    assert!(checked > 450, "only {checked} SDK lines checked");
}

#[test]
fn permission_answers_as_in_can_use_tool_flow() {
    let a = answers("can_use_tool_flow.jsonl");
    assert_eq!(a.len(), 4);
    assert_eq!(
        success(
            &a[0],
            PermissionResult::allow_with_input(json!({"a": 10, "b": 20}))
        ),
        a[0]
    );
    assert_eq!(
        success(&a[1], PermissionResult::deny("no adding today")),
        a[1]
    );
    assert_eq!(
        ControlResponse::error(request_id(&a[2]), "callback exploded").to_value(),
        a[2]
    );
    let always = PermissionResult::allow_with_input(json!({"a": 1, "b": 1}))
        .with_updated_permissions(vec![PermissionUpdate::add_rules(
            vec![PermissionRule::new("mcp__calc__add")],
            PermissionBehavior::Allow,
            PermissionDestination::Session,
        )]);
    assert_eq!(success(&a[3], always), a[3]);

    let a = answers("can_use_tool_deny_interrupt.jsonl");
    assert_eq!(
        success(
            &a[0],
            PermissionResult::deny_and_interrupt("stop everything")
        ),
        a[0]
    );
}

#[test]
fn hook_answers_and_initialize_as_in_hooks_flow() {
    let r = requests("hooks_flow.jsonl");
    let mut hooks = BTreeMap::new();
    hooks.insert(
        HookEvent::PreToolUse,
        vec![
            HookMatcherConfig::new(Some("mcp__calc__add".into()), vec!["hook_0".into()])
                .with_timeout(30),
        ],
    );
    hooks.insert(
        HookEvent::PostToolUse,
        vec![HookMatcherConfig::new(None, vec!["hook_1".into()])],
    );
    hooks.insert(
        HookEvent::UserPromptSubmit,
        vec![HookMatcherConfig::new(None, vec!["hook_2".into()])],
    );
    hooks.insert(
        HookEvent::Stop,
        vec![HookMatcherConfig::new(None, vec!["hook_3".into()])],
    );
    let mut init = InitializeRequest::default();
    init.hooks = Some(hooks);
    assert_eq!(
        SdkControlRequest::new(request_id(&r[0]), init).to_value(),
        r[0]
    );

    let a = answers("hooks_flow.jsonl");
    let expected = [
        HookOutput::additional_context(HookEvent::UserPromptSubmit, "prompt-hook context"),
        HookOutput::allow_tool().with_decision_reason("approved by hook"),
        HookOutput::additional_context(HookEvent::PostToolUse, "post-hook context"),
        HookOutput::default(),
    ];
    assert_eq!(a.len(), expected.len());
    for (line, output) in a.iter().zip(expected) {
        assert_eq!(&success(line, output), line);
    }

    let a = answers("hooks_deny_and_block.jsonl");
    assert_eq!(
        ControlResponse::error(request_id(&a[0]), "hook host crashed").to_value(),
        a[0]
    );
    assert_eq!(success(&a[1], HookOutput::deny_tool("hook says no")), a[1]);
    assert_eq!(
        success(&a[2], HookOutput::block("keep going once more")),
        a[2]
    );
    assert_eq!(success(&a[3], HookOutput::default()), a[3]);
}

#[test]
fn python_reference_sdk_lines() {
    let s = sent("sdk_python_reference.jsonl");
    let r: Vec<&Value> = s
        .iter()
        .filter(|m| m["type"] == "control_request")
        .collect();

    let mut init = InitializeRequest::default();
    init.hooks = Some(BTreeMap::from([(
        HookEvent::PreToolUse,
        vec![
            HookMatcherConfig::new(Some("mcp__calc__add".into()), vec!["hook_0".into()])
                .with_timeout(30),
        ],
    )]));
    init.agents = Some(BTreeMap::from([(
        "reviewer".to_owned(),
        AgentDefinition::new("Reviews code", "You review code.").with_tools(["Read"]),
    )]));
    assert_eq!(
        &SdkControlRequest::new(request_id(r[0]), init).to_value(),
        r[0]
    );

    let expected = [
        SdkRequest::mcp_status(),
        SdkRequest::get_context_usage(),
        SdkRequest::set_model(Some("claude-haiku-4-5".into())),
        SdkRequest::set_permission_mode(PermissionMode::Default),
        SdkRequest::mcp_toggle("ext", false),
        SdkRequest::interrupt(),
    ];
    assert_eq!(r.len(), expected.len() + 1);
    for (line, request) in r[1..].iter().zip(expected) {
        assert_eq!(
            &SdkControlRequest::new(request_id(line), request).to_value(),
            *line
        );
    }

    let user = s.iter().find(|m| m["type"] == "user").unwrap();
    let prompt = user["message"]["content"].as_str().unwrap();
    assert_eq!(
        &UserInput::text(prompt)
            .session_id(Some("default".into()))
            .to_value(),
        user
    );

    let answer = s
        .iter()
        .find(|m| {
            m["type"] == "control_response"
                && m["response"]["response"]
                    .get("hookSpecificOutput")
                    .is_some()
        })
        .unwrap();
    assert_eq!(&success(answer, HookOutput::allow_tool()), answer);
}

#[test]
fn ts_reference_sdk_lines() {
    let s = sent("sdk_ts_reference.jsonl");
    let init_line = &s[0];
    let mut init = InitializeRequest::default();
    init.hooks = Some(BTreeMap::from([(
        HookEvent::PreToolUse,
        vec![HookMatcherConfig::new(
            Some("mcp__calc__add".into()),
            vec!["hook_0".into()],
        )],
    )]));
    init.sdk_mcp_servers = Some(vec!["calc".into()]);
    init.sdk_mcp_server_manifests = init_line["request"]["sdkMcpServerManifests"]
        .as_object()
        .cloned();
    init.system_prompt = Some(vec!["REF SYSTEM PROMPT".into()]);
    init.agents = Some(BTreeMap::from([(
        "reviewer".to_owned(),
        AgentDefinition::new("Reviews code", "You review code.").with_tools(["Read"]),
    )]));
    assert_eq!(
        &SdkControlRequest::new(request_id(init_line), init).to_value(),
        init_line
    );

    // TS leaves `session_id` out.
    let user = s.iter().find(|m| m["type"] == "user").unwrap();
    let prompt = user["message"]["content"].as_str().unwrap();
    assert_eq!(&UserInput::text(prompt).session_id(None).to_value(), user);
}

#[test]
fn misc_requests_as_in_captures() {
    let r = requests("control_misc.jsonl");
    let find = |subtype: &'static str| r.iter().filter(move |m| m["request"]["subtype"] == subtype);
    let set_model: Vec<_> = find("set_model").collect();
    assert_eq!(
        SdkControlRequest::new(request_id(set_model[1]), SdkRequest::set_model(None)).to_value(),
        *set_model[1]
    );
    let t = find("set_max_thinking_tokens").next().unwrap();
    assert_eq!(
        SdkControlRequest::new(
            request_id(t),
            SdkRequest::set_max_thinking_tokens(Some(2048))
        )
        .to_value(),
        *t
    );
    let t = find("stop_task").next().unwrap();
    assert_eq!(
        SdkControlRequest::new(request_id(t), SdkRequest::stop_task("nope")).to_value(),
        *t
    );
    let t = find("get_settings").next().unwrap();
    assert_eq!(
        SdkControlRequest::new(request_id(t), SdkRequest::get_settings()).to_value(),
        *t
    );
    let t = find("nonsense_subtype").next().unwrap();
    let unknown = SdkRequest::Unknown(json!({"subtype": "nonsense_subtype", "foo": 1}));
    assert_eq!(
        SdkControlRequest::new(request_id(t), unknown).to_value(),
        *t
    );
    let keep_alive = sent("control_misc.jsonl")
        .into_iter()
        .find(|m| m["type"] == "keep_alive")
        .unwrap();
    assert!(matches!(
        Message::from_value(keep_alive),
        Message::KeepAlive(_)
    ));

    let r = requests("mcp_set_servers_sdk.jsonl");
    let set: Vec<_> = r
        .iter()
        .filter(|m| m["request"]["subtype"] == "mcp_set_servers")
        .collect();
    let late = BTreeMap::from([("late".to_owned(), McpServerConfig::sdk("late"))]);
    assert_eq!(
        SdkControlRequest::new(request_id(set[0]), SdkRequest::mcp_set_servers(late)).to_value(),
        *set[0]
    );
    assert_eq!(
        SdkControlRequest::new(
            request_id(set[1]),
            SdkRequest::mcp_set_servers(BTreeMap::new())
        )
        .to_value(),
        *set[1]
    );

    let r = requests("mcp_reconnect_sdk.jsonl");
    let t = r
        .iter()
        .find(|m| m["request"]["subtype"] == "mcp_reconnect")
        .unwrap();
    assert_eq!(
        SdkControlRequest::new(request_id(t), SdkRequest::mcp_reconnect("calc")).to_value(),
        *t
    );
}

#[test]
fn user_messages_as_in_user_message_shapes() {
    let users: Vec<Value> = sent("user_message_shapes.jsonl")
        .into_iter()
        .filter(|m| m["type"] == "user")
        .collect();
    let png = users[0]["message"]["content"][1]["source"]["data"]
        .as_str()
        .unwrap();
    let blocks = UserInput::blocks(vec![
        ContentBlock::text("PLAIN block prompt"),
        ContentBlock::image_base64("image/png", png),
    ])
    .uuid("11111111-2222-3333-4444-555555555555");
    assert_eq!(blocks.to_value(), users[0]);
    let text = UserInput::text(r#"SCRIPT: [{"delay": 1.0, "text": "answer one"}]"#)
        .uuid("aaaaaaaa-0000-0000-0000-000000000001");
    assert_eq!(text.to_value(), users[1]);
    assert_eq!(
        UserInput::text("later")
            .priority(Priority::Later)
            .parent_tool_use_id("toolu_1")
            .to_value(),
        json!({"type": "user", "message": {"role": "user", "content": "later"}, "parent_tool_use_id": "toolu_1",
               "session_id": "", "priority": "later"})
    );
}

#[test]
fn mcp_answers_as_in_sdk_basic() {
    let mcp: Vec<Value> = sent("sdk_basic.jsonl")
        .into_iter()
        .filter(|m| m["type"] == "control_response")
        .collect();
    assert!(!mcp.is_empty());
    for line in mcp {
        let rpc = line["response"]["response"]["mcp_response"].clone();
        assert_eq!(success(&line, McpMessageResponse::new(rpc)), line);
    }
}

#[test]
fn external_server_configs_as_in_mcp_config_flag() {
    // The --mcp-config value of external_server_configs.jsonl.
    let meta = lines("external_server_configs.jsonl", "meta").remove(0).msg;
    let argv: Vec<&str> = meta["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let i = argv.iter().position(|a| *a == "--mcp-config").unwrap();
    let flag: Value = serde_json::from_str(argv[i + 1]).unwrap();
    let servers = BTreeMap::from([
        (
            "sse1".to_owned(),
            McpServerConfig::sse("http://127.0.0.1:9/sse").header("X-Token", "secret-value"),
        ),
        (
            "http1".to_owned(),
            McpServerConfig::http("http://127.0.0.1:9/mcp")
                .header("Authorization", "Bearer secret"),
        ),
        (
            "stdio1".to_owned(),
            McpServerConfig::stdio("python3", ["/home/dev/stdio_mcp.py"]).env("FOO", "bar"),
        ),
    ]);
    let mut ours = json!({"mcpServers": servers});
    // The capture's stdio entry leaves `type` out (allowed); ours writes it.
    ours["mcpServers"]["stdio1"]
        .as_object_mut()
        .unwrap()
        .remove("type");
    assert_eq!(ours, flag);
    // And the capture's form (no `type`) decodes as stdio.
    let decoded = McpServerConfig::from_value(flag["mcpServers"]["stdio1"].clone());
    assert!(matches!(decoded, McpServerConfig::Stdio(ref c) if c.command == "python3"));
    assert_eq!(
        McpServerConfig::sdk("calc").to_value(),
        json!({"type": "sdk", "name": "calc"})
    );
}
