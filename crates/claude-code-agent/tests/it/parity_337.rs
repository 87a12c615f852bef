//! What the TypeScript SDK 0.3.337 added to the wire over 0.3.332, typed:
//! the `Interrupt` hook event, `built_in` of a tool's MCP server, the new
//! startup-failure reasons, `auto_mode_unchecked` of a denial,
//! `task_notification`'s `unfinished_at_resume` / `task_type` /
//! `duration_ms`, and `PermissionResult`'s `toolUseID` and
//! `decisionClassification`. Each decodes from JSON of the shape the CLI
//! writes (nothing left in `extra`), keeps a value this version does not
//! know, and is written back unchanged.

use claude_code_agent::message::{
    AutoModeUnchecked, Message, ResultMessage, StartupFailureReason, SystemMessage,
};
use claude_code_agent::protocol::{
    HookEvent, HookInput, PermissionDecisionClassification, PermissionResult,
};
use serde_json::{Value, json};

/// The result CLI 2.1.332 writes when `--resume` finds no conversation
/// (recorded), with the `startup_failure_reason` 0.3.337 documents.
fn startup_failure(reason: &str) -> Value {
    json!({"type": "result", "subtype": "error_during_execution", "duration_ms": 0,
        "duration_api_ms": 0, "is_error": true, "num_turns": 0, "stop_reason": null,
        "session_id": "0b7e3c5e-1111-4222-8333-944444444444", "total_cost_usd": 0,
        "permission_denials": [], "uuid": "be9718b8-1b96-438d-8ae9-02071eb03bba",
        "errors": ["No conversation found with session ID: 0b7e3c5e-1111-4222-8333-944444444444"],
        "startup_failure_reason": reason})
}

fn result_of(v: &Value) -> ResultMessage {
    match Message::from_value(v.clone()) {
        Message::Result(r) => r,
        other => panic!("not a result: {other:?}"),
    }
}

#[test]
fn startup_failure_reasons_of_0_3_337_are_typed_and_unknown_ones_kept() {
    for (wire, typed) in [
        (
            "resume_target_not_found",
            StartupFailureReason::ResumeTargetNotFound,
        ),
        (
            "consumer_terms_review_in_terminal",
            StartupFailureReason::ConsumerTermsReviewInTerminal,
        ),
        (
            "consumer_terms_accept_on_web",
            StartupFailureReason::ConsumerTermsAcceptOnWeb,
        ),
        ("org_signin_ended", StartupFailureReason::OrgSigninEnded),
        (
            "sideload_flags_disabled",
            StartupFailureReason::SideloadFlagsDisabled,
        ),
        (
            "some_future_reason",
            StartupFailureReason::Other("some_future_reason".into()),
        ),
    ] {
        let v = startup_failure(wire);
        let result = result_of(&v);
        assert_eq!(result.startup_failure_reason, Some(typed), "{wire}");
        assert!(!result.extra.contains_key("startup_failure_reason"));
        assert_eq!(Message::Result(result).to_value(), v, "{wire}");
    }
    // A value of another type stays raw, as it came.
    let odd = startup_failure("x");
    let mut odd = odd.as_object().unwrap().clone();
    odd.insert("startup_failure_reason".into(), json!(7));
    let odd = Value::Object(odd);
    let result = result_of(&odd);
    assert_eq!(result.startup_failure_reason, None);
    assert_eq!(result.extra["startup_failure_reason"], json!(7));
    assert_eq!(Message::Result(result).to_value(), odd);
}

#[test]
fn a_denial_says_when_auto_mode_did_not_check_the_call() {
    let mut v = startup_failure("resume_target_not_found");
    v["subtype"] = json!("success");
    v["is_error"] = json!(false);
    v["permission_denials"] = json!([
        {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "rm -rf x"},
         "auto_mode_unchecked": "no_check_in_session"},
        {"tool_name": "Bash", "tool_use_id": "toolu_2", "tool_input": {},
         "auto_mode_unchecked": "no_verdict"},
        {"tool_name": "Bash", "tool_use_id": "toolu_3", "tool_input": {},
         "auto_mode_unchecked": "a_new_cause"},
        {"tool_name": "Write", "tool_use_id": "toolu_4", "tool_input": {}},
    ]);
    let result = result_of(&v);
    let denials = result.permission_denials.as_ref().unwrap();
    let causes: Vec<_> = denials
        .iter()
        .map(|d| d.auto_mode_unchecked.clone())
        .collect();
    assert_eq!(
        causes,
        [
            Some(AutoModeUnchecked::NoCheckInSession),
            Some(AutoModeUnchecked::NoVerdict),
            Some(AutoModeUnchecked::Other("a_new_cause".into())),
            None
        ]
    );
    assert!(denials.iter().all(|d| d.extra.is_empty()), "{denials:?}");
    assert_eq!(Message::Result(result).to_value(), v);
}

#[test]
fn task_notification_of_a_task_closed_at_resume_and_of_a_shell_task() {
    let ids = json!({"uuid": "u1", "session_id": "s1"});
    let with_ids = |v: Value| {
        let mut m = v.as_object().unwrap().clone();
        m.extend(ids.as_object().unwrap().clone());
        Value::Object(m)
    };
    let closed = with_ids(json!({"type": "system", "subtype": "task_notification",
        "task_id": "a1", "run_id": "r1", "status": "stopped", "reason": "unfinished_at_resume",
        "task_type": "local_agent", "output_file": "/o", "summary": "s"}));
    let shell = with_ids(json!({"type": "system", "subtype": "task_notification",
        "task_id": "b1", "tool_use_id": "toolu_1", "status": "completed", "output_file": "/o",
        "summary": "done", "duration_ms": 1234}));
    for (v, reason, task_type, duration) in [
        (
            &closed,
            Some("unfinished_at_resume"),
            Some("local_agent"),
            None,
        ),
        (&shell, None, None, Some(1234)),
    ] {
        let message = Message::from_value(v.clone());
        let Message::System(SystemMessage::TaskNotification(t)) = &message else {
            panic!("{message:?}")
        };
        assert_eq!(t.reason.as_deref(), reason);
        assert_eq!(t.task_type.as_deref(), task_type);
        assert_eq!(t.duration_ms, duration);
        assert!(t.extra.is_empty(), "{:?}", t.extra);
        assert_eq!(&message.to_value(), v);
    }
}

fn base(event: &str) -> serde_json::Map<String, Value> {
    json!({"session_id": "s", "transcript_path": "/t.jsonl", "cwd": "/w", "prompt_id": "p",
        "permission_mode": "default", "hook_event_name": event})
    .as_object()
    .unwrap()
    .clone()
}

#[test]
fn interrupt_hook_input_decodes_typed_with_unknown_values_kept() {
    assert!(HookEvent::ALL.contains(&HookEvent::Interrupt));
    assert_eq!(HookEvent::ALL.len(), 35);
    assert_eq!(HookEvent::from("Interrupt"), HookEvent::Interrupt);
    for (source, reason, via) in [
        ("user", "stop", Some("client")),
        ("session", "rewind", Some("terminal")),
        ("system", "permission_denied", None),
        ("a_new_source", "a_new_reason", Some("a_new_way")),
    ] {
        let mut m = base("Interrupt");
        m.insert("source".into(), source.into());
        m.insert("reason".into(), reason.into());
        if let Some(via) = via {
            m.insert("via".into(), via.into());
        }
        let v = Value::Object(m);
        let input = HookInput::from_value(v.clone());
        let HookInput::Interrupt(i) = &input else {
            panic!("{input:?}")
        };
        assert_eq!(i.source.as_deref(), Some(source));
        assert_eq!(i.reason.as_deref(), Some(reason));
        assert_eq!(i.via.as_deref(), via);
        assert!(i.extra.is_empty(), "{:?}", i.extra);
        assert_eq!(input.event(), HookEvent::Interrupt);
        assert_eq!(input.session_id(), Some("s"));
        assert_eq!(input.to_value(), v);
    }
}

#[test]
fn a_tool_hooks_mcp_server_says_whether_it_is_built_in() {
    for (event, built_in) in [
        ("PreToolUse", Some(true)),
        ("PostToolUse", None),
        ("PermissionRequest", Some(true)),
    ] {
        let mut m = base(event);
        let mut server = json!({"name": "computer", "source": "sdk"});
        if let Some(b) = built_in {
            server["built_in"] = json!(b);
        }
        m.insert("tool_name".into(), "mcp__computer__click".into());
        m.insert("tool_input".into(), json!({"x": 1}));
        m.insert("mcp_server".into(), server);
        let v = Value::Object(m);
        let input = HookInput::from_value(v.clone());
        let server = input.mcp_server().expect("mcp_server");
        assert_eq!(server.built_in, built_in, "{event}");
        assert!(server.extra.is_empty(), "{:?}", server.extra);
        assert_eq!(input.to_value(), v);
    }
}

#[test]
fn permission_result_writes_tool_use_id_and_decision_classification_as_typescript_does() {
    use PermissionDecisionClassification as C;
    let cases = [
        (
            PermissionResult::allow_with_input(json!({"a": 1}))
                .with_decision_classification(C::Config)
                .with_tool_use_id("toolu_1"),
            json!({"behavior": "allow", "updatedInput": {"a": 1}, "toolUseID": "toolu_1",
                "decisionClassification": "config"}),
        ),
        (
            PermissionResult::allow().with_decision_classification(C::UserPermanent),
            json!({"behavior": "allow", "decisionClassification": "user_permanent"}),
        ),
        (
            PermissionResult::allow().with_decision_classification(C::UserTemporary),
            json!({"behavior": "allow", "decisionClassification": "user_temporary"}),
        ),
        (
            PermissionResult::deny_and_interrupt("no")
                .with_decision_classification(C::UserReject)
                .with_tool_use_id("toolu_2"),
            json!({"behavior": "deny", "message": "no", "interrupt": true,
                "toolUseID": "toolu_2", "decisionClassification": "user_reject"}),
        ),
        (
            PermissionResult::deny("policy")
                .with_decision_classification(C::Other("a_new_kind".into())),
            json!({"behavior": "deny", "message": "policy", "decisionClassification": "a_new_kind"}),
        ),
    ];
    for (result, wire) in cases {
        assert_eq!(result.to_value(), wire);
        // Decoding gives back the same value, an unknown kind included.
        let back: PermissionResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(back, result);
        assert_eq!(
            back.decision_classification(),
            result.decision_classification()
        );
    }
    let r = PermissionResult::deny("x")
        .with_decision_classification(C::Config)
        .with_tool_use_id("toolu_9");
    assert_eq!(r.tool_use_id(), Some("toolu_9"));
    assert_eq!(r.decision_classification(), Some(&C::Config));
    assert_eq!(
        PermissionResult::allow()
            .into_answer(json!({"a": 1}))
            .get("toolUseID"),
        None
    );
}
