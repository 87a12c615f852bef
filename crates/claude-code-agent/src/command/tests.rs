//! The command line built from options.
use super::*;
use crate::options::SettingSource;
use crate::protocol::PermissionMode;

fn args(options: &Options) -> Vec<String> {
    build(options)
        .unwrap()
        .args
        .into_iter()
        .map(|a| a.into_string().unwrap())
        .collect()
}

#[test]
fn fixed_flags_and_empty_system_prompt_by_default() {
    assert_eq!(
        args(&Options::new()),
        [
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--system-prompt="
        ]
    );
}

#[test]
fn user_values_use_the_equals_form() {
    let a = args(
        &Options::new()
            .model("m")
            .resume("-odd")
            .allowed_tools(["a", "b"])
            .permission_mode(PermissionMode::AcceptEdits)
            .setting_sources([SettingSource::User, SettingSource::Project])
            .add_dir("/x"),
    );
    for want in [
        "--model=m",
        "--resume=-odd",
        "--allowedTools=a,b",
        "--permission-mode=acceptEdits",
        "--setting-sources=user,project",
        "--add-dir=/x",
    ] {
        assert!(a.contains(&want.to_string()), "{want} missing in {a:?}");
    }
}

#[test]
fn preset_prompt_sends_no_system_prompt_flag() {
    let a = args(&Options::new().system_prompt_preset());
    assert!(!a.iter().any(|a| a.starts_with("--system-prompt")));
    let a = args(&Options::new().append_system_prompt("more"));
    assert!(a.contains(&"--append-system-prompt=more".to_string()));
}

#[test]
fn equal_fallback_model_is_refused() {
    let err = build(&Options::new().model("m").fallback_model("m")).unwrap_err();
    assert!(err.to_string().contains("fallback_model"), "{err}");
}

#[test]
fn entrypoint_is_one_the_cli_treats_as_an_sdk() {
    let cmd = build(&Options::new()).unwrap();
    assert!(
        cmd.env
            .contains(&("CLAUDE_CODE_ENTRYPOINT".into(), "sdk-cli".into()))
    );
    let cmd = build(&Options::new().env("CLAUDE_CODE_ENTRYPOINT", "mine")).unwrap();
    assert!(
        cmd.env
            .contains(&("CLAUDE_CODE_ENTRYPOINT".into(), "mine".into()))
    );
    assert!(
        !cmd.env
            .contains(&("CLAUDE_CODE_ENTRYPOINT".into(), "sdk-cli".into()))
    );
}

#[test]
fn bad_skill_names_are_refused() {
    use crate::options::Skills;
    for bad in ["/x", "a,b", "*", " x", "a(b)", "x:*"] {
        let err = build(&Options::new().skills(Skills::Named(vec![bad.into()]))).unwrap_err();
        assert!(err.to_string().contains("skill name"), "{bad}: {err}");
    }
    let a = args(&Options::new().skills(Skills::Named(vec!["pdf".into()])));
    assert!(
        a.contains(&"--allowedTools=Skill(pdf)".to_string()),
        "{a:?}"
    );
    assert!(
        a.contains(&"--setting-sources=user,project".to_string()),
        "{a:?}"
    );
}

#[test]
fn env_calls_apply_in_order_and_clear_removes_the_rest() {
    let cmd = build(&Options::new().env("A", "1").env_remove("A").env("B", "2")).unwrap();
    assert!(cmd.env_remove.contains(&"A".into()));
    assert!(!cmd.env.iter().any(|(k, _)| k == "A"));
    assert_eq!(cmd.env_value("B"), Some(std::ffi::OsStr::new("2")));
    let cmd = build(&Options::new().env_remove("A").env("A", "3")).unwrap();
    assert_eq!(cmd.env_value("A"), Some(std::ffi::OsStr::new("3")));
    assert!(!cmd.env_remove.contains(&"A".into()));
    let cmd = build(&Options::new().env_clear(true).env("PATH", "/bin")).unwrap();
    assert!(cmd.env_remove.contains(&"HOME".into()) || std::env::var_os("HOME").is_none());
    assert!(!cmd.env_remove.contains(&"PATH".into()));
    let cmd = build(&Options::new().enable_file_checkpointing(true)).unwrap();
    assert_eq!(
        cmd.env_value("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"),
        Some(std::ffi::OsStr::new("true"))
    );
}

#[test]
fn list_setters_replace_and_item_setters_add() {
    let o = Options::new()
        .allowed_tools(["a"])
        .allowed_tools(["b"])
        .allow_tool("c")
        .disallow_tool("w")
        .disallowed_tools(["x"])
        .disallow_tool("y")
        .add_dir("/x")
        .add_dir("/y");
    let a = args(&o);
    assert!(a.contains(&"--allowedTools=b,c".to_string()), "{a:?}");
    assert!(a.contains(&"--disallowedTools=x,y".to_string()), "{a:?}");
    assert!(a.contains(&"--add-dir=/x".to_string()) && a.contains(&"--add-dir=/y".to_string()));
}

#[test]
fn thinking_maps_as_the_typescript_sdk_does() {
    use crate::options::Thinking;
    let a = args(&Options::new().thinking(Thinking::Enabled {
        budget_tokens: None,
        display: None,
    }));
    assert!(a.contains(&"--thinking=adaptive".to_string()), "{a:?}");
    let a = args(&Options::new().max_thinking_tokens(0));
    assert!(a.contains(&"--thinking=disabled".to_string()), "{a:?}");
}

#[test]
fn sandbox_is_merged_into_settings_and_fails_if_unavailable() {
    use crate::options::SandboxSettings;
    let a = args(
        &Options::new()
            .settings(r#"{"model":"m"}"#)
            .sandbox(SandboxSettings::enabled()),
    );
    let settings = a
        .iter()
        .find_map(|a| a.strip_prefix("--settings="))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(settings).unwrap();
    assert_eq!(v["model"], "m");
    assert_eq!(v["sandbox"]["enabled"], true);
    assert_eq!(v["sandbox"]["failIfUnavailable"], true);
}

#[test]
fn settings_the_sandbox_cannot_merge_into_keep_their_cause() {
    use crate::options::SandboxSettings;
    use std::error::Error as _;
    let with = |settings: &str| {
        let options = Options::new()
            .cwd("/nonexistent-dir")
            .settings(settings)
            .sandbox(SandboxSettings::enabled());
        match build(&options) {
            Err(Error::Settings { path, source }) => (path, source),
            other => panic!("not a settings error: {:?}", other.map(|c| c.args)),
        }
    };
    // A file that cannot be read: the io::Error, relative to the cwd.
    let (path, source) = with("s.json");
    assert_eq!(path.as_deref(), Some(Path::new("/nonexistent-dir/s.json")));
    let io = source.downcast_ref::<std::io::Error>().unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    // Text that is not JSON: serde's error.
    let (path, source) = with("{not json");
    assert_eq!(path, None);
    assert!(
        source
            .downcast_ref::<serde_json::Error>()
            .unwrap()
            .is_syntax()
    );
    let e = Error::Settings { path, source };
    assert_eq!(
        e.to_string(),
        "cannot merge the sandbox into the settings given as JSON text"
    );
    assert!(e.source().is_some());
}

#[test]
fn conflicting_and_incomplete_options_are_refused() {
    use crate::protocol::PermissionResult;
    let both = Options::new()
        .can_use_tool(|_, _, _| async { PermissionResult::allow() })
        .permission_prompt_tool_name("mcp__x__y");
    assert!(build(&both).is_err());
    assert!(build(&Options::new().resume_session_at("u")).is_err());
    assert!(build(&Options::new().resume("s").resume_drops_turn("u")).is_err());
}

#[test]
fn ask_user_question_config_becomes_environment() {
    use crate::options::AskUserQuestionConfig;
    let cmd = build(
        &Options::new().ask_user_question(
            AskUserQuestionConfig::new()
                .preview_format("html")
                .extended_questions(true),
        ),
    )
    .unwrap();
    let value = |k: &str| cmd.env_value(k).map(|v| v.to_string_lossy().into_owned());
    assert_eq!(
        value("CLAUDE_CODE_QUESTION_PREVIEW_FORMAT").as_deref(),
        Some("html")
    );
    assert_eq!(value("CLAUDE_CODE_QUESTION_EXTENDED").as_deref(), Some("1"));
    assert_eq!(value("CLAUDE_CODE_QUESTION_OPTIONAL_DESCRIPTIONS"), None);
    let a = args(
        &Options::new()
            .system_prompt_config(crate::options::SystemPrompt::Blocks(vec!["x".into()])),
    );
    assert!(!a.iter().any(|a| a.starts_with("--system-prompt")), "{a:?}");
}

#[test]
fn servers_and_plugins_via_initialize_leave_the_command_line() {
    use crate::options::Plugin;
    use crate::protocol::McpServerConfig;
    let options = Options::new()
        .mcp_server_config("x", McpServerConfig::stdio("srv", ["--a"]))
        .mcp_servers_via_initialize(true)
        .plugin(Plugin::local("/p"))
        .plugins_via_initialize(true);
    let a = args(&options);
    assert!(a.contains(&"--await-initialize".to_string()), "{a:?}");
    assert!(
        !a.iter()
            .any(|a| a == "--mcp-config" || a.starts_with("--plugin-dir")),
        "{a:?}"
    );
    let init = options.initialize_request();
    assert!(init.mcp_servers.is_some_and(|m| m.contains_key("x")));
    assert_eq!(init.plugins.unwrap()[0]["path"], "/p");
}

#[test]
fn extra_args_and_managed_settings_reach_the_command_line() {
    let a = args(
        &Options::new()
            .managed_settings(r#"{"permissions":{}}"#)
            .extra_arg("--replay-user-messages", None)
            .extra_arg("fallback-model", Some("-odd".into())),
    );
    assert!(
        a.contains(&r#"--managed-settings={"permissions":{}}"#.to_owned()),
        "{a:?}"
    );
    let tail = &a[a.len() - 2..];
    assert_eq!(tail, ["--replay-user-messages", "--fallback-model=-odd"]);
}

#[test]
fn only_a_session_store_asks_the_cli_to_mirror_its_transcript() {
    assert!(
        !args(&Options::new())
            .iter()
            .any(|a| a == "--session-mirror")
    );
    let with_store = Options::new().session_store(crate::sessions::InMemorySessionStore::new());
    assert!(args(&with_store).iter().any(|a| a == "--session-mirror"));
}

#[test]
fn the_cli_config_dir_is_the_one_the_cli_will_see() {
    let o = Options::new()
        .env("CLAUDE_CONFIG_DIR", "/a")
        .env("CLAUDE_CONFIG_DIR", "/b");
    assert_eq!(o.cli_config_dir(), Some(std::path::PathBuf::from("/b")));
}

#[test]
fn cli_telemetry_becomes_environment_and_the_users_variables_win() {
    use crate::options::CliTelemetry;
    let value =
        |cmd: &CliCommand, k: &str| cmd.env_value(k).map(|v| v.to_string_lossy().into_owned());
    let cmd = build(&Options::new().cli_telemetry(CliTelemetry::traces())).unwrap();
    assert_eq!(
        value(&cmd, "CLAUDE_CODE_ENABLE_TELEMETRY").as_deref(),
        Some("1")
    );
    assert_eq!(
        value(&cmd, "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA").as_deref(),
        Some("1")
    );
    assert_eq!(value(&cmd, "OTEL_TRACES_EXPORTER").as_deref(), Some("otlp"));
    assert_eq!(value(&cmd, "OTEL_EXPORTER_OTLP_ENDPOINT"), None);
    assert_eq!(value(&cmd, "OTEL_EXPORTER_OTLP_PROTOCOL"), None);
    assert_eq!(value(&cmd, "OTEL_LOG_TOOL_DETAILS"), None);

    let options = Options::new()
        .env("OTEL_TRACES_EXPORTER", "console")
        .cli_telemetry(
            CliTelemetry::traces()
                .endpoint("http://127.0.0.1:4318")
                .tool_details(true),
        );
    let cmd = build(&options).unwrap();
    assert_eq!(
        value(&cmd, "OTEL_EXPORTER_OTLP_ENDPOINT").as_deref(),
        Some("http://127.0.0.1:4318")
    );
    assert_eq!(
        value(&cmd, "OTEL_EXPORTER_OTLP_PROTOCOL").as_deref(),
        Some("http/protobuf")
    );
    assert_eq!(value(&cmd, "OTEL_LOG_TOOL_DETAILS").as_deref(), Some("1"));
    // Set by the user: theirs, whenever they set it.
    assert_eq!(
        value(&cmd, "OTEL_TRACES_EXPORTER").as_deref(),
        Some("console")
    );
    let cmd =
        build(&Options::new().cli_telemetry(CliTelemetry::traces().endpoint("h").protocol("grpc")))
            .unwrap();
    assert_eq!(
        value(&cmd, "OTEL_EXPORTER_OTLP_PROTOCOL").as_deref(),
        Some("grpc")
    );
}

#[test]
fn the_sessions_trace_context_replaces_the_inherited_one_unless_the_user_sets_it() {
    let trace = W3cContext {
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01".into(),
        tracestate: None,
    };
    let value =
        |cmd: &CliCommand, k: &str| cmd.env_value(k).map(|v| v.to_string_lossy().into_owned());
    let cmd = build_traced(&Options::new(), Some(&trace)).unwrap();
    assert_eq!(
        value(&cmd, "TRACEPARENT").as_deref(),
        Some(trace.traceparent.as_str())
    );
    // An inherited TRACESTATE belonged to the inherited parent.
    assert!(cmd.env_remove.contains(&"TRACESTATE".into()));
    let with_state = W3cContext {
        tracestate: Some("vendor=x".into()),
        ..trace.clone()
    };
    let cmd = build_traced(&Options::new(), Some(&with_state)).unwrap();
    assert_eq!(value(&cmd, "TRACESTATE").as_deref(), Some("vendor=x"));
    // The user's TRACEPARENT (or its removal) wins, with the TRACESTATE they left.
    let options = Options::new().env("TRACEPARENT", "00-1-2-01");
    let cmd = build_traced(&options, Some(&with_state)).unwrap();
    assert_eq!(value(&cmd, "TRACEPARENT").as_deref(), Some("00-1-2-01"));
    assert_eq!(value(&cmd, "TRACESTATE"), None);
    assert!(!cmd.env_remove.contains(&"TRACESTATE".into()));
    let cmd = build_traced(&Options::new().env_remove("TRACEPARENT"), Some(&trace)).unwrap();
    assert!(cmd.env_remove.contains(&"TRACEPARENT".into()));
    // No context: the inherited ones are left alone.
    let cmd = build_traced(&Options::new(), None).unwrap();
    assert_eq!(value(&cmd, "TRACEPARENT"), None);
    assert!(!cmd.env_remove.contains(&"TRACEPARENT".into()));
    assert!(!cmd.env_remove.contains(&"TRACESTATE".into()));
}
