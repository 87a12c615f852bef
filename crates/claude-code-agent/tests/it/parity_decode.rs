//! Every hook event and message kind of the official SDKs (TypeScript SDK
//! 0.3.337) decodes to its typed variant, with every field it has modelled
//! (nothing left in `extra`), and re-encodes to the same JSON.
//!
//! Hook inputs the CLI sent in a real session (`fixtures/
//! hook_inputs_observed.json`: all 34 events registered, one turn with an MCP
//! call needing permission and a failing Bash call, then `set_model`) come
//! first; the events CLI 2.1.332 does not fire under the mock API are
//! checked with inputs written from the TypeScript SDK's types.

use claude_code_agent::message::{Message, SystemMessage};
use claude_code_agent::protocol::{
    ElicitationAction, HookEvent, HookInput, HookOutput, HookSpecificOutput, PermissionDecision,
    PermissionResult,
};
use serde_json::{Map, Value, json};

/// The `extra` of a typed hook input (panics on `Unknown`).
macro_rules! input_extra {
    ($input:expr; $($v:ident),*) => {
        match $input {
            $(HookInput::$v(m) => &m.extra,)*
            other => panic!("not typed: {other:?}"),
        }
    };
}

fn hook_extra(input: &HookInput) -> &Map<String, Value> {
    input_extra!(input; PreToolUse, PostToolUse, PostToolUseFailure, PostToolBatch, Notification,
        UserPromptSubmit, UserPromptExpansion, SessionStart, SessionEnd, Stop, StopFailure,
        Interrupt, SubagentStart, SubagentStop, PreCompact, PostCompact, PreModelSwitch, PostModelSwitch,
        PermissionRequest, PermissionDenied, Setup, TeammateIdle, TaskCreated, TaskCompleted,
        Elicitation, ElicitationResult, ConfigChange, WorktreeCreate, WorktreeRemove,
        InstructionsLoaded, CwdChanged, FileChanged, DirectoryAdded, MessageDisplay,
        PreSkillShellCommand)
}

/// Decodes `v`, checks it is typed as `event` with nothing left over, and
/// that it re-encodes unchanged.
fn check_hook_input(v: &Value, event: &HookEvent) -> HookInput {
    let input = HookInput::from_value(v.clone());
    assert_eq!(&input.event(), event, "{v}");
    // A `null` (TypeScript `string | null`) decodes as `None` and stays in
    // `extra` as it came, so that it is written back.
    let extra = hook_extra(&input);
    assert!(
        extra.values().all(Value::is_null),
        "{event}: not modelled: {extra:?}"
    );
    assert_eq!(&input.to_value(), v, "{event}: re-encoding changed it");
    input
}

#[test]
fn hook_inputs_observed_on_cli_2_1_332() {
    let text = include_str!("../fixtures/hook_inputs_observed.json");
    let requests: Vec<Value> = serde_json::from_str(text).unwrap();
    let mut fired = std::collections::BTreeSet::new();
    for request in &requests {
        let v = &request["input"];
        let event = HookEvent::from(v["hook_event_name"].as_str().unwrap());
        let input = check_hook_input(v, &event);
        assert!(input.session_id().is_some() && input.prompt_id().is_some());
        fired.insert(event.to_string());
        match &input {
            HookInput::PreToolUse(p) if p.tool_name.as_deref() == Some("mcp__calc__add") => {
                assert_eq!(input.mcp_server().unwrap().source.as_deref(), Some("sdk"));
            }
            HookInput::PostToolBatch(b) => {
                let calls = b.tool_calls.as_ref().unwrap();
                assert_eq!(calls.len(), 1);
                assert!(calls[0].tool_response.is_some());
            }
            HookInput::PreModelSwitch(m) => {
                assert_eq!(m.requested_model.as_deref(), Some("claude-opus-4-1"));
                assert_eq!(m.estimated_cache_write_usd, Some(0.0006));
            }
            HookInput::MessageDisplay(m) => assert_eq!(m.final_, Some(true)),
            HookInput::Stop(s) if s.effort.is_some() => {
                assert_eq!(s.effort.as_ref().unwrap().level.as_deref(), Some("medium"));
                assert_eq!(s.background_tasks.as_deref(), Some(&[][..]));
            }
            _ => {}
        }
    }
    // What CLI 2.1.332 fires for SDK callbacks in such a session; notably
    // not SessionStart, SessionEnd or Setup (see cli_hooks for the proof).
    assert_eq!(
        fired.into_iter().collect::<Vec<_>>(),
        [
            "MessageDisplay",
            "PermissionRequest",
            "PostModelSwitch",
            "PostToolBatch",
            "PostToolUse",
            "PostToolUseFailure",
            "PreModelSwitch",
            "PreToolUse",
            "Stop",
            "UserPromptSubmit"
        ]
    );
}

/// One input of every event, written from the TypeScript SDK's
/// `*HookInput` types (every optional field present).
fn typescript_inputs() -> Vec<Value> {
    let tool = json!({"tool_name": "mcp__calc__add", "tool_input": {"a": 1}, "tool_use_id": "toolu_1",
                      "mcp_server": {"name": "calc", "source": "sdk", "built_in": true}});
    let task = json!({"id": "b1", "type": "local_bash", "status": "running", "description": "d",
                      "command": "sleep 9", "agent_type": "a", "server": "s", "tool": "t", "name": "n"});
    let cron = json!({"id": "c1", "schedule": "* * * * *", "recurring": true, "prompt": "p"});
    let switch = json!({"from_model": "a", "to_model": "b", "requested_model": null, "source": "sdk",
                        "context_tokens": 10, "prompt_cache_warm": true, "cache_ttl": "5m",
                        "estimated_cache_write_usd": 0.5, "pricing": "catalog"});
    let task_list = json!({"task_id": "t1", "task_subject": "s", "task_description": "d",
                           "teammate_name": "m", "team_name": "t"});
    let with = |a: &Value, b: Value| {
        let mut m = a.as_object().unwrap().clone();
        m.extend(b.as_object().unwrap().clone());
        Value::Object(m)
    };
    let rows = [
        ("PreToolUse", tool.clone()),
        (
            "PostToolUse",
            with(
                &tool,
                json!({"tool_response": [{"type": "text", "text": "2"}], "duration_ms": 3}),
            ),
        ),
        (
            "PostToolUseFailure",
            with(
                &tool,
                json!({"error": "e", "is_interrupt": false, "duration_ms": 3}),
            ),
        ),
        (
            "PostToolBatch",
            json!({"tool_calls": [{"tool_name": "Bash", "tool_input": {}, "tool_use_id": "t", "tool_response": "x"}]}),
        ),
        (
            "Notification",
            json!({"message": "m", "title": "t", "notification_type": "idle_prompt"}),
        ),
        (
            "UserPromptSubmit",
            json!({"prompt": "p", "source": "sdk", "session_title": "t"}),
        ),
        (
            "UserPromptExpansion",
            json!({"expansion_type": "slash_command", "command_name": "c",
            "command_args": "a", "command_source": "project", "prompt": "p"}),
        ),
        (
            "SessionStart",
            json!({"source": "startup", "model": "m", "session_title": "t",
            "seconds_since_last_response": 12.5, "context_tokens": 9, "prompt_cache_likely_expired": false,
            "estimated_cache_write_usd": 0.1}),
        ),
        ("SessionEnd", json!({"reason": "prompt_input_exit"})),
        (
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "m",
            "background_tasks": [task.clone()], "session_crons": [cron.clone()]}),
        ),
        (
            "StopFailure",
            json!({"error": "rate_limit", "error_details": "d", "last_assistant_message": "m"}),
        ),
        (
            "Interrupt",
            json!({"source": "user", "reason": "stop", "via": "client"}),
        ),
        ("SubagentStart", json!({})),
        (
            "SubagentStop",
            json!({"stop_hook_active": true, "agent_transcript_path": "/t.jsonl",
            "last_assistant_message": "m", "background_tasks": [task], "session_crons": [cron]}),
        ),
        (
            "PreCompact",
            json!({"trigger": "manual", "custom_instructions": "keep it short"}),
        ),
        (
            "PostCompact",
            json!({"trigger": "auto", "compact_summary": "s"}),
        ),
        ("PreModelSwitch", switch.clone()),
        ("PostModelSwitch", switch),
        (
            "PermissionRequest",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"},
            "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": "Bash"}],
            "behavior": "allow", "destination": "localSettings"}],
            "mcp_server": {"name": "calc", "source": "sdk"}}),
        ),
        (
            "PermissionDenied",
            with(&tool, json!({"reason": "auto mode"})),
        ),
        ("Setup", json!({"trigger": "init"})),
        (
            "TeammateIdle",
            json!({"teammate_name": "m", "team_name": "t"}),
        ),
        ("TaskCreated", task_list.clone()),
        ("TaskCompleted", task_list),
        (
            "Elicitation",
            json!({"mcp_server_name": "s", "message": "m", "mode": "form",
            "url": "https://e", "elicitation_id": "e1", "requested_schema": {"type": "object"}}),
        ),
        (
            "ElicitationResult",
            json!({"mcp_server_name": "s", "elicitation_id": "e1", "mode": "form",
            "action": "accept", "content": {"a": 1}}),
        ),
        (
            "ConfigChange",
            json!({"source": "user_settings", "file_path": "/s.json"}),
        ),
        ("WorktreeCreate", json!({"name": "w"})),
        ("WorktreeRemove", json!({"worktree_path": "/w"})),
        (
            "InstructionsLoaded",
            json!({"file_path": "/CLAUDE.md", "memory_type": "Project",
            "load_reason": "session_start", "globs": ["*.rs"], "trigger_file_path": "/a",
            "parent_file_path": "/b"}),
        ),
        ("CwdChanged", json!({"old_cwd": "/a", "new_cwd": "/b"})),
        ("FileChanged", json!({"file_path": "/a", "event": "change"})),
        (
            "DirectoryAdded",
            json!({"directory": "/d", "source": "slash_command"}),
        ),
        (
            "MessageDisplay",
            json!({"turn_id": "t", "message_id": "m", "index": 0, "final": false, "delta": "hi"}),
        ),
        (
            "PreSkillShellCommand",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"},
            "tool_use_id": "t", "command_name": "c", "command_source": "s", "invoked_by": "claude"}),
        ),
    ];
    rows.into_iter()
        .map(|(event, fields)| {
            let base = json!({"session_id": "s", "transcript_path": "/t.jsonl", "cwd": "/w",
                "prompt_id": "p", "permission_mode": "default", "agent_id": "a", "agent_type": "general",
                "effort": {"level": "high"}, "hook_event_name": event});
            with(&base, fields)
        })
        .collect()
}

#[test]
fn every_typescript_hook_event_decodes_typed_and_round_trips() {
    let inputs = typescript_inputs();
    let events: Vec<HookEvent> = inputs
        .iter()
        .map(|v| HookEvent::from(v["hook_event_name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        HookEvent::ALL,
        "one input per event, in HOOK_EVENTS order"
    );
    for (v, event) in inputs.iter().zip(&events) {
        check_hook_input(v, event);
    }
    // An event this version does not know is kept whole.
    let future = json!({"hook_event_name": "FutureEvent", "session_id": "s", "x": [1]});
    let input = HookInput::from_value(future.clone());
    assert!(matches!(input, HookInput::Unknown(_)));
    assert_eq!(input.event(), HookEvent::Other("FutureEvent".into()));
    assert_eq!(input.to_value(), future);
}

#[test]
fn every_specific_output_is_written_with_the_typescript_names() {
    let cases = [
        (
            HookOutput::defer_tool(),
            json!({"hookEventName": "PreToolUse", "permissionDecision": "defer"}),
        ),
        (
            HookOutput::replace_tool_output(json!("x")),
            json!({"hookEventName": "PostToolUse", "updatedToolOutput": "x"}),
        ),
        (
            HookOutput::replace_mcp_tool_output(json!({"content": []})),
            json!({"hookEventName": "PostToolUse", "updatedMCPToolOutput": {"content": []}}),
        ),
        (
            HookOutput::permission_request(PermissionResult::deny_and_interrupt("no")),
            json!({"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no", "interrupt": true}}),
        ),
        (
            HookOutput::permission_request(PermissionResult::allow_with_input(json!({"a": 2}))),
            json!({"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {"a": 2}}}),
        ),
        (
            HookOutput::model_switch(PermissionDecision::Deny, "stay"),
            json!({"hookEventName": "PreModelSwitch", "permissionDecision": "deny", "permissionDecisionReason": "stay"}),
        ),
        (
            HookOutput::retry_denied(),
            json!({"hookEventName": "PermissionDenied", "retry": true}),
        ),
        (
            HookOutput::elicitation(
                HookEvent::Elicitation,
                ElicitationAction::Accept,
                Some(json!({"a": 1}).as_object().unwrap().clone()),
            ),
            json!({"hookEventName": "Elicitation", "action": "accept", "content": {"a": 1}}),
        ),
        (
            HookOutput::worktree_created("/w"),
            json!({"hookEventName": "WorktreeCreate", "worktreePath": "/w"}),
        ),
        (
            HookOutput::display("shown"),
            json!({"hookEventName": "MessageDisplay", "displayContent": "shown"}),
        ),
        (
            HookOutput::watch_paths(HookEvent::CwdChanged, vec!["/a".into()]),
            json!({"hookEventName": "CwdChanged", "watchPaths": ["/a"]}),
        ),
        (
            HookOutput::additional_context(HookEvent::PostToolBatch, "c"),
            json!({"hookEventName": "PostToolBatch", "additionalContext": "c"}),
        ),
    ];
    for (output, specific) in cases {
        assert_eq!(output.to_value(), json!({"hookSpecificOutput": specific}));
        // And it decodes back to the same typed output.
        assert_eq!(HookOutput::from_value(output.to_value()).unwrap(), output);
    }
    let mut spec = HookSpecificOutput::new(HookEvent::SessionStart);
    spec.additional_context = Some("c".into());
    spec.initial_user_message = Some("hi".into());
    spec.session_title = Some("t".into());
    spec.watch_paths = Some(vec!["/a".into()]);
    spec.reload_skills = Some(true);
    let mut prompt = HookSpecificOutput::new(HookEvent::UserPromptSubmit);
    prompt.suppress_original_prompt = Some(true);
    prompt.classifier_context = None;
    assert_eq!(
        HookOutput::specific_output(spec).to_value()["hookSpecificOutput"],
        json!({"hookEventName": "SessionStart", "additionalContext": "c", "initialUserMessage": "hi",
               "sessionTitle": "t", "watchPaths": ["/a"], "reloadSkills": true})
    );
    // A decision with a field this version does not model stays raw.
    let raw = json!({"hookEventName": "PermissionRequest",
                     "decision": {"behavior": "allow", "updatedInput": {}, "future": 1}});
    let decoded = HookSpecificOutput::from_value(raw.clone()).unwrap();
    assert!(decoded.decision.is_none());
    assert_eq!(decoded.to_value(), raw);
}

/// The `extra` of a typed message (panics on `Unknown`).
fn message_extra(message: &Message) -> &Map<String, Value> {
    match message {
        Message::AuthStatus(m) => &m.extra,
        Message::ToolUseSummary(m) => &m.extra,
        Message::PromptSuggestion(m) => &m.extra,
        Message::ConversationReset(m) => &m.extra,
        Message::ActiveGoal(m) => &m.extra,
        Message::McpProgress(m) => &m.extra,
        Message::ToolProgress(m) => &m.extra,
        Message::RateLimitEvent(m) => &m.extra,
        Message::System(s) => match s {
            SystemMessage::CompactBoundary(m) => &m.extra,
            SystemMessage::HookStarted(m)
            | SystemMessage::HookProgress(m)
            | SystemMessage::HookResponse(m) => &m.extra,
            SystemMessage::ControlRequestProgress(m) => &m.extra,
            SystemMessage::ModelRefusalFallback(m) => &m.extra,
            SystemMessage::ModelRefusalNoFallback(m) => &m.extra,
            SystemMessage::LocalCommandOutput(m) => &m.extra,
            SystemMessage::PluginInstall(m) => &m.extra,
            SystemMessage::WorkerShuttingDown(m) => &m.extra,
            SystemMessage::CommandsChanged(m) => &m.extra,
            SystemMessage::FilesPersisted(m) => &m.extra,
            SystemMessage::MemoryRecall(m) => &m.extra,
            SystemMessage::ElicitationComplete(m) => &m.extra,
            SystemMessage::MirrorError(m) => &m.extra,
            SystemMessage::SessionWritesLost(m) => &m.extra,
            SystemMessage::SessionTitleChanged(m) => &m.extra,
            SystemMessage::Status(m) => &m.extra,
            SystemMessage::Notification(m) => &m.extra,
            SystemMessage::PermissionDenied(m) => &m.extra,
            SystemMessage::Informational(m) => &m.extra,
            SystemMessage::TaskStarted(m)
            | SystemMessage::TaskProgress(m)
            | SystemMessage::TaskUpdated(m)
            | SystemMessage::TaskNotification(m) => &m.extra,
            other => panic!("not covered here: {other:?}"),
        },
        other => panic!("not typed: {other:?}"),
    }
}

#[test]
fn message_kinds_beyond_the_conversation_decode_typed_and_round_trip() {
    let ids = json!({"uuid": "u1", "session_id": "s1"});
    let sys = |subtype: &str, fields: Value| {
        let mut m = fields.as_object().unwrap().clone();
        m.insert("type".into(), "system".into());
        m.insert("subtype".into(), subtype.into());
        Value::Object(m)
    };
    let top = |kind: &str, fields: Value| {
        let mut m = fields.as_object().unwrap().clone();
        m.insert("type".into(), kind.into());
        Value::Object(m)
    };
    let samples = [
        top(
            "auth_status",
            json!({"isAuthenticating": true, "output": ["a"], "error": "e"}),
        ),
        top(
            "tool_use_summary",
            json!({"summary": "s", "preceding_tool_use_ids": ["t1"]}),
        ),
        top("prompt_suggestion", json!({"suggestion": "next"})),
        top(
            "conversation_reset",
            json!({"new_conversation_id": "c", "trigger": "clear",
            "user_message_uuid": "m", "timestamp": "2026-01-01T00:00:00Z"}),
        ),
        top(
            "active_goal",
            json!({"value": {"condition": "c", "iterations": 1, "set_at": 5,
            "tokens_at_start": 9, "last_reason": "r"}}),
        ),
        top(
            "mcp_progress",
            json!({"server_name": "calc", "tool_name": "t", "tool_use_id": "toolu",
            "progress_token": 3, "progress": 1, "total": 2, "message": "half"}),
        ),
        top(
            "tool_progress",
            json!({"tool_use_id": "t", "tool_name": "Bash", "parent_tool_use_id": "p",
            "elapsed_time_seconds": 1.5, "task_id": "k", "heartbeat": true, "subagent_type": "a",
            "subagent_retry": {"agent_id": "a", "attempt": 1}}),
        ),
        sys(
            "control_request_progress",
            json!({"request_id": "r", "status": "api_retry", "attempt": 1,
            "max_retries": 3, "retry_delay_ms": 500, "error_status": 529}),
        ),
        sys(
            "model_refusal_fallback",
            json!({"trigger": "refusal", "direction": "retry", "scope": "session",
            "original_model": "a", "fallback_model": "b", "request_id": "r", "api_refusal_category": "c",
            "api_refusal_explanation": "e", "retracted_message_uuids": ["m"],
            "refused_user_message_uuid": "u", "content": "x"}),
        ),
        sys(
            "model_refusal_no_fallback",
            json!({"original_model": "a", "request_id": "r",
            "api_refusal_category": "c", "api_refusal_explanation": "e",
            "refused_user_message_uuid": "u", "content": "x"}),
        ),
        sys("local_command_output", json!({"content": "cost: $0"})),
        sys(
            "plugin_install",
            json!({"status": "failed", "name": "p", "error": "e"}),
        ),
        sys("worker_shutting_down", json!({"reason": "r"})),
        sys(
            "commands_changed",
            json!({"commands": [{"name": "c", "description": "d", "argumentHint": ""}]}),
        ),
        sys(
            "files_persisted",
            json!({"files": [{"filename": "a", "file_id": "f"}],
            "failed": [{"filename": "b", "error": "e"}], "processed_at": "2026-01-01T00:00:00Z"}),
        ),
        sys(
            "memory_recall",
            json!({"mode": "select", "memories": [{"path": "/m", "scope": "personal", "content": "c"}]}),
        ),
        sys(
            "elicitation_complete",
            json!({"mcp_server_name": "s", "elicitation_id": "e"}),
        ),
        sys(
            "mirror_error",
            json!({"error": "e", "key": {"projectKey": "p", "sessionId": "s"}}),
        ),
        sys(
            "session_writes_lost",
            json!({"error_code": "ENOSPC", "lost": ["transcript"],
            "transcript_session_ids": ["s"]}),
        ),
        sys("session_title_changed", json!({"title": "My title"})),
        sys(
            "status",
            json!({"status": "compacting", "permissionMode": "default",
            "compact_result": "failed", "compact_error": "e"}),
        ),
        sys(
            "notification",
            json!({"key": "k", "text": "t", "priority": "low", "color": "red", "timeout_ms": 5}),
        ),
        sys(
            "permission_denied",
            json!({"tool_name": "Bash", "tool_use_id": "t", "agent_id": "a",
            "decision_reason_type": "rule", "decision_reason": "r", "message": "m"}),
        ),
        sys(
            "informational",
            json!({"content": "c", "level": "info", "tool_use_id": "t",
            "prevent_continuation": false, "tag": "g"}),
        ),
        sys(
            "task_started",
            json!({"task_id": "k", "run_id": "r", "tool_use_id": "t", "description": "d",
            "subagent_type": "a", "is_backgrounded": true, "parent_task_id": "p", "task_type": "local_bash",
            "prompt": "p"}),
        ),
        sys(
            "task_updated",
            json!({"task_id": "k", "run_id": "r", "patch": {"status": "killed", "end_time": 5}}),
        ),
        sys(
            "task_notification",
            json!({"task_id": "k", "tool_use_id": "t", "status": "stopped",
            "reason": "worker_restart", "output_file": "/o", "summary": "s",
            "usage": {"total_tokens": 1, "tool_uses": 0, "duration_ms": 3}}),
        ),
        sys(
            "task_progress",
            json!({"task_id": "k", "description": "d", "last_tool_name": "Bash",
            "summary": "s", "usage": {"total_tokens": 1, "tool_uses": 0, "duration_ms": 3}}),
        ),
    ];
    for sample in samples {
        let mut v = sample.as_object().unwrap().clone();
        v.extend(ids.as_object().unwrap().clone());
        let v = Value::Object(v);
        let message = Message::from_value(v.clone());
        assert!(
            !matches!(
                message,
                Message::Unknown(_) | Message::System(SystemMessage::Unknown(_))
            ),
            "{v}"
        );
        let extra = message_extra(&message);
        assert!(
            extra.values().all(Value::is_null),
            "{}: not modelled: {extra:?}",
            v["type"]
        );
        assert_eq!(message.to_value(), v);
        assert_eq!(message.session_id(), Some("s1"));
        assert_eq!(message.uuid(), Some("u1"));
    }
    // `active_goal` with a cleared goal, `keep_alive`, and a future system
    // subtype.
    let keep_alive = json!({"type": "keep_alive"});
    assert!(matches!(
        Message::from_value(keep_alive.clone()),
        Message::KeepAlive(_)
    ));
    for v in [
        keep_alive,
        json!({"type": "active_goal", "value": null, "uuid": "u", "session_id": "s"}),
        json!({"type": "system", "subtype": "future_thing", "uuid": "u", "session_id": "s"}),
    ] {
        assert_eq!(Message::from_value(v.clone()).to_value(), v);
    }
}
