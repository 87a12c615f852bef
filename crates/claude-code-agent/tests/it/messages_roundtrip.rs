//! Every line the CLI wrote in the captures decodes, maps to a typed variant
//! (never `Unknown`), and re-encodes to an equal JSON value.

use std::collections::BTreeSet;

use crate::support::captures::{Line, all_cli_lines};
use claude_code_agent::__private::wire::{CliRequest, ControlResponseBody, Incoming};
use claude_code_agent::message::{
    ApiStreamEvent, ContentBlock, Delta, Message, MessageContent, SystemMessage,
};
use claude_code_agent::protocol::{HookInput, McpStatusResponse};
use serde_json::Value;

#[test]
fn every_cli_line_round_trips() {
    let all = all_cli_lines();
    assert!(
        all.len() > 900,
        "expected many <-cli lines, got {}",
        all.len()
    );
    for line in &all {
        let incoming = Incoming::from_value(line.msg.clone());
        assert_eq!(
            incoming.to_value(),
            line.msg,
            "{} seq {}: re-encoding changed the line",
            line.file,
            line.seq
        );
        // Message::from_value is lossless too, even for control envelopes.
        assert_eq!(Message::from_value(line.msg.clone()).to_value(), line.msg);
        // And the serde impls agree with from_value/to_value.
        let via_serde: Incoming = serde_json::from_value(line.msg.clone()).unwrap();
        assert_eq!(via_serde, incoming);
        assert_eq!(serde_json::to_value(&incoming).unwrap(), line.msg);
    }
}

fn check_blocks(blocks: &[ContentBlock], ctx: &str, seen: &mut BTreeSet<String>) {
    for block in blocks {
        let kind = block.block_type().unwrap_or("?").to_owned();
        assert!(
            !matches!(block, ContentBlock::Unknown(_)),
            "{ctx}: block {kind} decoded as Unknown"
        );
        if let ContentBlock::ToolResult(r) = block
            && let Some(MessageContent::Blocks(inner)) = &r.content
        {
            check_blocks(inner, ctx, seen);
        }
        seen.insert(kind);
    }
}

/// Asserts that nothing in a decoded line fell back to `Unknown`; returns a
/// description of the variants met, for the coverage check below.
fn check_typed(line: &Line, seen: &mut BTreeSet<String>) {
    let ctx = format!("{} seq {}", line.file, line.seq);
    match Incoming::from_value(line.msg.clone()) {
        Incoming::ControlRequest(r) => {
            match &r.request {
                CliRequest::Unknown(v) => panic!("{ctx}: request decoded as Unknown: {v}"),
                CliRequest::HookCallback(h) => {
                    assert!(
                        !matches!(h.hook_input(), HookInput::Unknown(_)),
                        "{ctx}: hook input Unknown"
                    );
                }
                _ => {}
            }
            seen.insert(format!("control_request/{}", r.request.subtype().unwrap()));
        }
        Incoming::ControlResponse(r) => {
            assert!(
                !matches!(r.response, ControlResponseBody::Unknown(_)),
                "{ctx}: response body Unknown"
            );
            seen.insert(format!(
                "control_response/{}",
                if r.is_success() { "success" } else { "error" }
            ));
        }
        Incoming::ControlCancel(_) => {
            seen.insert("control_cancel_request".into());
        }
        Incoming::Message(m) => {
            match &m {
                Message::Unknown(v) => panic!("{ctx}: message decoded as Unknown: {v}"),
                Message::System(SystemMessage::Unknown(v)) => {
                    panic!("{ctx}: system message Unknown: {v}")
                }
                Message::System(s) => {
                    seen.insert(format!("system/{}", s.subtype().unwrap()));
                }
                Message::Assistant(a) => check_blocks(a.content(), &ctx, seen),
                Message::User(u) => check_blocks(u.blocks(), &ctx, seen),
                Message::StreamEvent(e) => {
                    match &e.event {
                        ApiStreamEvent::Unknown(v) => panic!("{ctx}: stream event Unknown: {v}"),
                        ApiStreamEvent::ContentBlockDelta(d) => {
                            let delta = d.delta.as_ref().expect("delta");
                            assert!(!matches!(delta, Delta::Unknown(_)), "{ctx}: delta Unknown");
                        }
                        ApiStreamEvent::ContentBlockStart(s) => check_blocks(
                            std::slice::from_ref(s.content_block.as_ref().unwrap()),
                            &ctx,
                            seen,
                        ),
                        _ => {}
                    }
                    seen.insert(format!(
                        "stream_event/{}",
                        line.msg["event"]["type"].as_str().unwrap()
                    ));
                }
                _ => {}
            }
            seen.insert(m.message_type().unwrap().to_owned());
        }
        _ => unreachable!(),
    }
}

#[test]
fn every_cli_line_maps_to_a_typed_variant() {
    let mut seen = BTreeSet::new();
    for line in all_cli_lines() {
        check_typed(&line, &mut seen);
    }
    // Every kind observed in the captures was met (guards against the walk
    // above silently skipping things).
    for expected in [
        "assistant",
        "user",
        "result",
        "system/init",
        "system/status",
        "system/api_retry",
        "system/session_state_changed",
        "system/permission_denied",
        "system/informational",
        "system/notification",
        "system/thinking_tokens",
        "system/background_tasks_changed",
        "stream_event/message_start",
        "stream_event/content_block_delta",
        "stream_event/message_stop",
        "tool_progress",
        "command_lifecycle",
        "control_request/mcp_message",
        "control_request/can_use_tool",
        "control_request/hook_callback",
        "control_response/success",
        "control_response/error",
        "control_cancel_request",
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "image",
    ] {
        assert!(
            seen.contains(expected),
            "never met {expected}; met {seen:?}"
        );
    }
}

#[test]
fn mcp_status_responses_decode_typed_and_round_trip() {
    let mut count = 0;
    for line in all_cli_lines() {
        let Incoming::ControlResponse(r) = Incoming::from_value(line.msg.clone()) else {
            continue;
        };
        let Ok(payload) = r.into_result() else {
            continue;
        };
        if payload.get("mcpServers").is_none() {
            continue;
        }
        let status: McpStatusResponse = serde_json::from_value(payload.clone()).unwrap();
        assert_eq!(status.to_value(), payload, "{} seq {}", line.file, line.seq);
        for server in &status.mcp_servers {
            assert!(!server.name.is_empty());
            if let Some(config) = &server.config {
                assert!(
                    config.kind().is_some(),
                    "{}: config without type: {config:?}",
                    line.file
                );
                assert!(!matches!(
                    config,
                    claude_code_agent::McpServerConfig::Unknown(_)
                ));
            }
        }
        count += 1;
    }
    assert!(
        count >= 10,
        "expected mcp_status responses in the captures, found {count}"
    );
}

#[test]
fn non_objects_and_odd_values_are_unknown() {
    for v in [
        Value::Null,
        Value::from(3),
        Value::from("x"),
        serde_json::json!([1, 2]),
    ] {
        assert_eq!(Message::from_value(v.clone()), Message::Unknown(v.clone()));
        assert_eq!(Message::from_value(v.clone()).to_value(), v);
        assert!(matches!(
            Incoming::from_value(v.clone()),
            Incoming::Message(Message::Unknown(_))
        ));
    }
}
