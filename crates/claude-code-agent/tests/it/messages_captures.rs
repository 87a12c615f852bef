//! Specific decoded values from specific captures.

use crate::support::captures::lines;
use claude_code_agent::__private::wire::{CliRequest, ControlRequest, Incoming};
use claude_code_agent::message::{
    ApiStreamEvent, CommandState, ContentBlock, Delta, Message, MessageContent, ResultMessage,
    ResultSubtype, SystemMessage, TerminalReason,
};
use claude_code_agent::protocol::{
    HookEvent, HookInput, McpServerConfig, McpServerState, McpStatusResponse, PermissionBehavior,
    PermissionDestination, PermissionMode, PermissionUpdateKind,
};
use serde_json::json;

fn messages(file: &str) -> Vec<Message> {
    lines(file, "<-cli")
        .into_iter()
        .filter_map(|l| match Incoming::from_value(l.msg) {
            Incoming::Message(m) => Some(m),
            _ => None,
        })
        .collect()
}

fn results(file: &str) -> Vec<ResultMessage> {
    messages(file)
        .into_iter()
        .filter_map(|m| m.as_result().cloned())
        .collect()
}

fn cli_requests(file: &str) -> Vec<ControlRequest> {
    lines(file, "<-cli")
        .into_iter()
        .filter_map(|l| match Incoming::from_value(l.msg) {
            Incoming::ControlRequest(r) => Some(r),
            _ => None,
        })
        .collect()
}

#[test]
fn system_init_fields_in_sdk_basic() {
    let msgs = messages("sdk_basic.jsonl");
    let init = msgs.iter().find_map(Message::as_init).expect("system/init");
    assert_eq!(init.cwd.as_deref(), Some("/home/dev/project"));
    assert_eq!(
        init.session_id.as_deref(),
        Some("ba48db2d-05e3-46dd-8904-13533a1823fe")
    );
    assert_eq!(init.model.as_deref(), Some("claude-opus-5-5"));
    assert_eq!(init.permission_mode, Some(PermissionMode::Default));
    assert_eq!(init.claude_code_version.as_deref(), Some("2.1.332"));
    assert_eq!(init.api_key_source.as_deref(), Some("ANTHROPIC_API_KEY"));
    let tools = init.tools.as_ref().unwrap();
    assert!(tools.iter().any(|t| t == "mcp__calc__add"));
    assert!(tools.iter().any(|t| t == "Bash"));
    let servers = init.mcp_servers.as_ref().unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].name, "calc");
    assert_eq!(servers[0].status, Some(McpServerState::Connected));
    assert_eq!(servers[0].source.as_deref(), Some("sdk"));
    assert!(
        init.slash_commands
            .as_ref()
            .unwrap()
            .iter()
            .any(|c| c == "compact")
    );
    assert!(
        init.agents
            .as_ref()
            .unwrap()
            .iter()
            .any(|a| a == "general-purpose")
    );
    // Unmodelled fields are kept.
    assert_eq!(init.extra["original_cwd"], json!("/home/dev/project"));
    assert!(
        !init.extra.contains_key("cwd"),
        "typed fields are not duplicated in extra"
    );

    // The tool call and its result.
    let assistant = msgs.iter().find_map(Message::as_assistant).unwrap();
    let call = assistant.tool_uses().next().unwrap();
    assert_eq!(call.name, "mcp__calc__add");
    assert_eq!(call.input, json!({"a": 2, "b": 3}));
    assert_eq!(assistant.parent_tool_use_id, None);
    assert!(assistant.extra.contains_key("tool_use_meta"));
    let user = msgs
        .iter()
        .find_map(|m| match m {
            Message::User(u) => Some(u),
            _ => None,
        })
        .unwrap();
    let result = user.tool_results().next().unwrap();
    assert_eq!(result.tool_use_id, call.id);
    assert_eq!(result.content.as_ref().unwrap().text(), "sum=5");

    let done = results("sdk_basic.jsonl").pop().unwrap();
    assert_eq!(done.subtype, ResultSubtype::Success);
    assert!(!done.is_error());
    assert_eq!(done.num_turns, Some(2));
    assert_eq!(done.terminal_reason, Some(TerminalReason::Completed));
    assert_eq!(done.stop_reason.as_deref(), Some("end_turn"));
    assert!(done.total_cost_usd.unwrap() > 0.0);
    assert_eq!(done.usage.as_ref().unwrap().input_tokens, Some(20));
    let model_usage = &done.model_usage.as_ref().unwrap()["claude-opus-5-5"];
    assert_eq!(model_usage.context_window, Some(1_000_000));
    assert_eq!(done.permission_denials.as_deref(), Some(&[][..]));
    assert!(msgs.last().unwrap().is_result());
    assert_eq!(
        msgs.last().unwrap().session_id(),
        Some("ba48db2d-05e3-46dd-8904-13533a1823fe")
    );
}

#[test]
fn result_subtypes() {
    let max = results("max_turns.jsonl");
    assert_eq!(max[0].subtype, ResultSubtype::ErrorMaxTurns);
    assert!(max[0].is_error);
    assert_eq!(max[0].terminal_reason, Some(TerminalReason::MaxTurns));
    assert_eq!(
        max[0].errors.as_deref(),
        Some(&["Reached maximum number of turns (1)".to_owned()][..])
    );
    assert_eq!(max[0].result, None);

    let api = results("api_error_400.jsonl");
    assert_eq!(
        api[0].subtype,
        ResultSubtype::Success,
        "API errors come as success + is_error"
    );
    assert!(api[0].is_error);
    assert_eq!(api[0].terminal_reason, Some(TerminalReason::ApiError));
    assert_eq!(api[0].api_error_status, Some(400));
    assert_eq!(
        api[0].result.as_deref(),
        Some("API Error: 400 mock says bad request")
    );
    assert_eq!(api[0].total_cost_usd, Some(0.0));
    let synthetic = messages("api_error_400.jsonl")
        .into_iter()
        .find_map(|m| m.as_assistant().cloned())
        .unwrap();
    assert!(synthetic.is_api_error());
    assert_eq!(synthetic.model(), Some("<synthetic>"));
    assert_eq!(synthetic.text(), "API Error: 400 mock says bad request");

    let interrupted = results("slow_tool_interrupt.jsonl");
    assert_eq!(interrupted[0].subtype, ResultSubtype::ErrorDuringExecution);
    assert!(interrupted[0].is_error);
    assert_eq!(
        interrupted[0].terminal_reason,
        Some(TerminalReason::AbortedTools)
    );
    assert_eq!(interrupted[1].subtype, ResultSubtype::Success);
    let synthetic_user = messages("slow_tool_interrupt.jsonl")
        .into_iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(u),
            _ => None,
        })
        .find(|u| u.text() == "[Request interrupted by user for tool use]");
    assert!(synthetic_user.is_some());
}

#[test]
fn server_tool_blocks() {
    let blocks: Vec<ContentBlock> = messages("server_tool_blocks.jsonl")
        .into_iter()
        .filter_map(|m| m.as_assistant().cloned())
        .flat_map(|a| a.message.content)
        .collect();
    let kinds: Vec<_> = blocks
        .iter()
        .map(|b| b.block_type().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "thinking",
            "server_tool_use",
            "web_search_tool_result",
            "redacted_thinking",
            "text"
        ]
    );
    let ContentBlock::Thinking(t) = &blocks[0] else {
        panic!()
    };
    assert_eq!(
        (t.thinking.as_str(), t.signature.as_deref()),
        ("pondering", Some("sig_a54b348a6b884aa7"))
    );
    let ContentBlock::ServerToolUse(u) = &blocks[1] else {
        panic!()
    };
    assert_eq!(
        (u.id.as_str(), u.name.as_str()),
        ("srvtoolu_01", "web_search")
    );
    assert_eq!(u.input, Some(json!({"query": "rust"})));
    let ContentBlock::ServerToolResult(r) = &blocks[2] else {
        panic!()
    };
    assert_eq!(r.kind, "web_search_tool_result");
    assert_eq!(r.tool_use_id.as_deref(), Some("srvtoolu_01"));
    assert_eq!(
        r.content.as_ref().unwrap()[0]["url"],
        json!("https://example.com")
    );
    let ContentBlock::RedactedThinking(d) = &blocks[3] else {
        panic!()
    };
    assert_eq!(d.data, "opaque");
    assert_eq!(blocks[4].as_text(), Some("final text"));
}

#[test]
fn thinking_and_stream_events() {
    let msgs = messages("partial_messages.jsonl");
    let mut deltas = Vec::new();
    let mut kinds = Vec::new();
    for m in &msgs {
        if let Message::StreamEvent(e) = m {
            assert_eq!(
                e.api_message_id.as_deref().map(|s| s.starts_with("msg_")),
                Some(true)
            );
            match &e.event {
                ApiStreamEvent::MessageStart(_) => kinds.push("message_start"),
                ApiStreamEvent::ContentBlockStart(s) => {
                    kinds.push("content_block_start");
                    assert!(s.index.is_some());
                }
                ApiStreamEvent::ContentBlockDelta(d) => {
                    kinds.push("content_block_delta");
                    deltas.push(d.delta.clone().unwrap());
                }
                ApiStreamEvent::ContentBlockStop(_) => kinds.push("content_block_stop"),
                ApiStreamEvent::MessageDelta(d) => {
                    kinds.push("message_delta");
                    assert!(d.delta.as_ref().unwrap()["stop_reason"].is_string());
                }
                ApiStreamEvent::MessageStop(_) => kinds.push("message_stop"),
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    assert!(matches!(&deltas[0], Delta::Thinking(t) if t.thinking == "let me think"));
    assert!(matches!(&deltas[1], Delta::Signature(s) if s.signature == "sig_1a06a3dd7d76459f"));
    assert!(matches!(&deltas[2], Delta::Text(t) if t.text == "calling"));
    assert!(matches!(&deltas[3], Delta::InputJson(j) if j.partial_json == r#"{"a": 2, "b": 3}"#));

    let thinking: Vec<_> = msgs
        .iter()
        .filter_map(Message::as_assistant)
        .flat_map(|a| a.thinking().cloned().collect::<Vec<_>>())
        .collect();
    assert_eq!(thinking.len(), 1);
    assert_eq!(thinking[0].thinking, "let me think");
    assert_eq!(
        thinking[0].signature.as_deref(),
        Some("sig_1a06a3dd7d76459f")
    );

    let tokens = msgs
        .iter()
        .find_map(|m| match m {
            Message::System(SystemMessage::ThinkingTokens(t)) => Some(t),
            _ => None,
        })
        .unwrap();
    assert_eq!(tokens.estimated_tokens, Some(3));
    // Replayed user message.
    let replay = msgs
        .iter()
        .find_map(|m| match m {
            Message::User(u) if u.is_replay == Some(true) => Some(u),
            _ => None,
        })
        .unwrap();
    assert!(matches!(&replay.message.content, MessageContent::Text(t) if t.starts_with("SCRIPT:")));
}

#[test]
fn tool_progress_heartbeat() {
    let progress = messages("slow_tool_heartbeat.jsonl")
        .into_iter()
        .find_map(|m| match m {
            Message::ToolProgress(p) => Some(p),
            _ => None,
        })
        .expect("tool_progress");
    assert_eq!(
        progress.tool_use_id.as_deref(),
        Some("toolu_d36eaf0a388c48e4bc22-heartbeat-0")
    );
    assert_eq!(
        progress.parent_tool_use_id.as_deref(),
        Some("toolu_d36eaf0a388c48e4bc22")
    );
    assert_eq!(progress.tool_name.as_deref(), Some("mcp__calc__add"));
    assert_eq!(progress.elapsed_time_seconds, Some(30.0));
    assert_eq!(progress.heartbeat, Some(true));
    // 30 is written back as an integer, as the CLI wrote it.
    assert_eq!(progress.to_value()["elapsed_time_seconds"], json!(30));
}

#[test]
fn command_lifecycle_and_user_shapes() {
    let msgs = messages("user_message_shapes.jsonl");
    let states: Vec<(String, CommandState)> = msgs
        .iter()
        .filter_map(|m| match m {
            Message::CommandLifecycle(c) => {
                Some((c.command_uuid.clone().unwrap(), c.state.clone().unwrap()))
            }
            _ => None,
        })
        .collect();
    let first = "11111111-2222-3333-4444-555555555555".to_owned();
    assert_eq!(
        states
            .iter()
            .filter(|(u, _)| *u == first)
            .map(|(_, s)| s.clone())
            .collect::<Vec<_>>(),
        [
            CommandState::Queued,
            CommandState::Started,
            CommandState::Completed
        ]
    );
    assert_eq!(states.len(), 9);
    // The replayed block prompt with its image.
    let replay = msgs
        .iter()
        .find_map(|m| match m {
            Message::User(u) if u.uuid.as_deref() == Some(first.as_str()) => Some(u),
            _ => None,
        })
        .unwrap();
    assert_eq!(replay.blocks()[0].as_text(), Some("PLAIN block prompt"));
    let ContentBlock::Image(image) = &replay.blocks()[1] else {
        panic!("image block")
    };
    assert_eq!(image.source.kind, "base64");
    assert_eq!(image.source.media_type.as_deref(), Some("image/png"));
}

#[test]
fn can_use_tool_requests() {
    let requests = cli_requests("can_use_tool_flow.jsonl");
    let asks: Vec<_> = requests
        .iter()
        .filter_map(|r| match &r.request {
            CliRequest::CanUseTool(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(asks.len(), 4);
    let ask = asks[0];
    assert_eq!(ask.tool_name, "mcp__calc__add");
    assert_eq!(ask.input, json!({"a": 1, "b": 1}));
    assert_eq!(ask.display_name.as_deref(), Some("Add"));
    assert_eq!(
        ask.tool_use_id.as_deref(),
        Some("toolu_71e74195b16649388f9f")
    );
    let server = ask.mcp_server.as_ref().unwrap();
    assert_eq!(
        (server.name.as_str(), server.source.as_deref()),
        ("calc", Some("sdk"))
    );
    let suggestion = &ask.permission_suggestions.as_ref().unwrap()[0];
    assert_eq!(suggestion.kind, PermissionUpdateKind::AddRules);
    assert_eq!(suggestion.behavior, Some(PermissionBehavior::Allow));
    assert_eq!(
        suggestion.destination,
        Some(PermissionDestination::LocalSettings)
    );
    assert_eq!(
        suggestion.rules.as_ref().unwrap()[0].tool_name,
        "mcp__calc__add"
    );
    assert_eq!(ask.extra["server_policy_ask_only"], json!(true));

    // The withdrawn request.
    let cancel = lines("can_use_tool_pending_interrupt.jsonl", "<-cli")
        .into_iter()
        .find_map(|l| match Incoming::from_value(l.msg) {
            Incoming::ControlCancel(c) => Some(c),
            _ => None,
        })
        .unwrap();
    assert_eq!(cancel.request_id, "f28236ea-e552-498c-b88e-2be232024603");
}

#[test]
fn hook_callback_inputs() {
    let mut events = Vec::new();
    for r in cli_requests("hooks_flow.jsonl") {
        let CliRequest::HookCallback(h) = r.request else {
            continue;
        };
        let input = h.hook_input();
        events.push((h.callback_id.clone(), input.event()));
        assert_eq!(input.cwd(), Some("/home/dev/project"));
        assert!(input.transcript_path().unwrap().ends_with(".jsonl"));
        match input {
            HookInput::UserPromptSubmit(p) => {
                assert!(p.prompt.unwrap().starts_with("SCRIPT:"));
                assert_eq!(p.permission_mode, Some(PermissionMode::Default));
            }
            HookInput::PreToolUse(p) => {
                assert_eq!(p.tool_name.as_deref(), Some("mcp__calc__add"));
                assert_eq!(p.tool_input, Some(json!({"a": 2, "b": 3})));
                assert_eq!(p.tool_use_id, h.tool_use_id);
                let server = p.mcp_server.unwrap();
                assert_eq!(server.name.as_deref(), Some("calc"));
                assert_eq!(server.source.as_deref(), Some("sdk"));
                assert!(p.extra.is_empty(), "{:?}", p.extra);
            }
            HookInput::PostToolUse(p) => {
                assert_eq!(
                    p.tool_response,
                    Some(json!([{"type": "text", "text": "sum=5"}]))
                );
                assert_eq!(p.duration_ms, Some(18));
            }
            HookInput::Stop(s) => {
                assert_eq!(s.stop_hook_active, Some(false));
                assert_eq!(s.last_assistant_message.as_deref(), Some("RESULT []"));
            }
            other => panic!("unexpected hook input {other:?}"),
        }
    }
    assert_eq!(
        events,
        [
            ("hook_2".to_owned(), HookEvent::UserPromptSubmit),
            ("hook_0".to_owned(), HookEvent::PreToolUse),
            ("hook_1".to_owned(), HookEvent::PostToolUse),
            ("hook_3".to_owned(), HookEvent::Stop),
        ]
    );
}

#[test]
fn mcp_status_mixed() {
    let payloads: Vec<McpStatusResponse> = lines("mcp_status_mixed.jsonl", "<-cli")
        .into_iter()
        .filter_map(|l| match Incoming::from_value(l.msg) {
            Incoming::ControlResponse(r) => r.into_result().ok(),
            _ => None,
        })
        .filter(|p| p.get("mcpServers").is_some())
        .map(|p| serde_json::from_value(p).unwrap())
        .collect();
    let first = &payloads[0].mcp_servers;
    assert_eq!(first[0].name, "ext");
    assert_eq!(first[0].status, McpServerState::Pending);
    let second = &payloads[1].mcp_servers;
    let by_name = |n: &str| second.iter().find(|s| s.name == n).unwrap();
    let ext = by_name("ext");
    assert_eq!(ext.status, McpServerState::Connected);
    assert_eq!(
        ext.server_info.as_ref().unwrap().name.as_deref(),
        Some("ext-echo")
    );
    assert!(matches!(&ext.config, Some(McpServerConfig::Stdio(c)) if c.command == "python3"));
    assert_eq!(ext.tools.as_ref().unwrap()[0].name, "echo");
    let dead = by_name("deadhttp");
    assert_eq!(dead.status, McpServerState::Failed);
    assert!(dead.error.as_deref().unwrap().starts_with("ECONNREFUSED"));
    assert!(
        matches!(&dead.config, Some(McpServerConfig::Http(c)) if c.url == "http://127.0.0.1:9/mcp")
    );
    let calc = by_name("calc");
    assert_eq!(
        (calc.transport.as_deref(), calc.source.as_deref()),
        (Some("sdk"), Some("sdk"))
    );
    assert_eq!(calc.tools.as_ref().unwrap()[0].name, "add");
    let broken = by_name("broken");
    assert_eq!(
        (broken.status.clone(), broken.scope.as_deref()),
        (McpServerState::Failed, Some("user"))
    );
    assert!(broken.config.is_none() && broken.error.is_none());
}
