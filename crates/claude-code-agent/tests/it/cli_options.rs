//! The options of the official SDKs, on the real CLI: each is accepted, and
//! acts where the mock model can show it (the API request the CLI makes,
//! the messages it emits).

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::{
    AgentDefinition, CliCommand, Effort, Message, Options, Plugin, SandboxSettings, Skills,
    SystemMessage, Thinking, ThinkingDisplay, query,
};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

fn sonnet(h: &Harness) -> Options {
    // Thinking settings are ignored on the CLI's default model.
    h.options().model("claude-sonnet-4-5")
}

async fn run(options: Options) -> Vec<Message> {
    let (messages, error) = drain(query("go", options)).await;
    assert!(error.is_none(), "{error:?}");
    messages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_display_and_effort_reach_the_api() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::thinking("pondering").with_text("done"))
                .turn(Turn::text("done"))
                .turn(Turn::text("done"))
                .turn(Turn::text("done")),
        )
        .await;
        let messages =
            run(sonnet(&h).thinking(Thinking::budget(4096).display(ThinkingDisplay::Summarized)))
                .await;
        let thinking_seen = messages.iter().any(|m| {
            m.to_value()["message"]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "thinking"))
        });
        assert!(thinking_seen, "no thinking block: {messages:?}");
        run(sonnet(&h).thinking(Thinking::Disabled)).await;
        run(sonnet(&h).max_thinking_tokens(2048)).await;
        // Effort only reaches models with effort levels (the default one).
        run(h.options().effort(Effort::Low)).await;

        let sent = h.mock().conversation_requests();
        assert_eq!(
            sent[0].body["thinking"],
            json!({"type": "enabled", "budget_tokens": 4096, "display": "summarized"})
        );
        assert_eq!(sent[1].body["thinking"], json!({"type": "disabled"}));
        assert_eq!(sent[2].body["thinking"]["budget_tokens"], 2048);
        assert_eq!(sent[3].body["output_config"]["effort"], "low");
        h.finish().await;
    })
    .await
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Answer {
    n: u32,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_format_gives_a_structured_result() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("StructuredOutput", json!({"n": 42})))
                .turn(Turn::text("done")),
        )
        .await;
        let messages = run(h.options().output_type::<Answer>()).await;
        let result = results(&messages).pop().expect("a result");
        let value = result.structured_output.clone().expect("structured output");
        let answer: Answer = serde_json::from_value(value).unwrap();
        assert_eq!(answer.n, 42);
        let tool = h.mock().conversation_requests()[0]
            .tool("StructuredOutput")
            .cloned()
            .expect("the CLI offers the StructuredOutput tool");
        assert_eq!(tool["input_schema"]["required"], json!(["n"]), "{tool}");
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn betas_task_budget_and_session_flags_are_accepted() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turn(Turn::text("one"))).await;
        let debug = h.env().work_dir().join("debug.log");
        let root = h.env().work_dir().join("root");
        std::fs::create_dir_all(&root).unwrap();
        let messages = run(h
            .options()
            .betas(["context-1m-2025-08-07"])
            .task_budget(20_000)
            .include_hook_events(true)
            .persist_session(false)
            .project_config_root(&root)
            .debug_file(&debug)
            .permission_prompts("host")
            .tools_preset()
            .client_app("parity-test/1.0")
            .prompt_suggestions(false)
            .agent_progress_summaries(true)
            .forward_subagent_text(true)
            .per_task_stop_affordance(true)
            .plan_mode_instructions("Plan carefully.")
            .exclude_dynamic_sections(true)
            .system_prompt_snapshot(true)
            .tool_alias("Shell", "Bash"))
        .await;
        assert_eq!(results(&messages).len(), 1);
        let sent = &h.mock().conversation_requests()[0];
        let betas = sent.header("anthropic-beta").unwrap_or_default();
        assert!(betas.contains("context-1m-2025-08-07"), "{betas}");
        assert_eq!(
            sent.body["output_config"]["task_budget"],
            json!({"type": "tokens", "total": 20000})
        );
        assert!(sent.tool("Bash").is_some(), "the default tool set");
        assert!(debug.exists(), "--debug-file was not written");
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn main_agent_system_prompt_file_and_title() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::text("one"))
                .turn(Turn::text("two")),
        )
        .await;
        let messages = run(h
            .options()
            .agent(
                "reviewer",
                AgentDefinition::new("Reviews code", "You are the reviewer agent ZX81."),
            )
            .main_agent("reviewer")
            .title("Parity title"))
        .await;
        // `initialize.title` comes back typed, as `system/session_title_changed`.
        let titled = messages.iter().any(|m| match m {
            Message::System(SystemMessage::SessionTitleChanged(t)) => {
                t.title.as_deref() == Some("Parity title")
            }
            _ => false,
        });
        assert!(titled, "no session_title_changed: {messages:?}");
        let prompt = h.env().work_dir().join("prompt.txt");
        std::fs::write(&prompt, "Prompt from a file: QX7.").unwrap();
        run(h.options().system_prompt_file(&prompt)).await;

        let sent = h.mock().conversation_requests();
        assert!(
            sent[0].system_text().contains("ZX81"),
            "{}",
            sent[0].system_text()
        );
        assert!(
            sent[1].system_text().contains("QX7"),
            "{}",
            sent[1].system_text()
        );
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_and_skills_reach_the_session() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().default_reply(Turn::text("one"))).await;
        let plugin = h.env().work_dir().join("parity-plugin");
        std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
        std::fs::write(
            plugin.join(".claude-plugin/plugin.json"),
            r#"{"name": "parity-plugin", "version": "1.0.0"}"#,
        )
        .unwrap();
        let messages = run(h
            .options()
            .plugin(Plugin::local(&plugin))
            .skills(Skills::Named(vec!["parity-skill".into()])))
        .await;
        let init = messages
            .iter()
            .map(Message::to_value)
            .find(|v| v["subtype"] == "init")
            .expect("system/init");
        let plugins = init["plugins"].to_string();
        assert!(plugins.contains("parity-plugin"), "{plugins}");
        // Delivered in `initialize` instead of `--plugin-dir`.
        let again = run(h
            .options()
            .plugin(Plugin::local(&plugin))
            .plugins_via_initialize(true))
        .await;
        let init2 = again
            .iter()
            .map(Message::to_value)
            .find(|v| v["subtype"] == "init")
            .expect("system/init");
        assert!(
            init2["plugins"].to_string().contains("parity-plugin"),
            "{}",
            init2["plugins"]
        );
        // The CLI applied the skill rule: `Skill` is among the tools.
        assert!(
            init["tools"].as_array().unwrap().contains(&json!("Skill")),
            "{}",
            init["tools"]
        );
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_fails_rather_than_run_unsandboxed() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turn(Turn::text("one"))).await;
        if which("bwrap") && which("socat") {
            eprintln!("bubblewrap is installed: the sandbox is available here");
            return h.finish().await;
        }
        // The CLI refuses to start (exit 1, before the handshake).
        let (messages, error) =
            drain(query("go", h.options().sandbox(SandboxSettings::enabled()))).await;
        assert!(messages.is_empty(), "{messages:?}");
        match error {
            Some(claude_code_agent::Error::CliExited {
                code: Some(1),
                stderr_tail,
                ..
            }) => assert!(
                stderr_tail.contains("sandbox required but unavailable"),
                "{stderr_tail}"
            ),
            other => panic!("expected the CLI to refuse, got {other:?}"),
        }
        assert!(h.mock().conversation_requests().is_empty());
        // Saying `fail_if_unavailable: false` runs unsandboxed, as the
        // Python SDK's default does.
        let mut lax = SandboxSettings::enabled();
        lax.fail_if_unavailable = Some(false);
        let messages = run(h.options().sandbox(lax)).await;
        assert!(!results(&messages)[0].is_error);
        h.finish().await;
    })
    .await
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The permission prompt tool answers for the CLI: here an in-process tool
/// that denies, and the model gets its message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_prompt_tool_name_decides() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results()),
        )
        .await;
        let calc = Server::builder("calc", "1.0.0")
            .tool(Tool::new(
                "add",
                "Add",
                |x: Operands| async move { x.a + x.b },
            ))
            .build();
        let judge = Server::builder("judge", "1.0.0")
            .tool(
                Tool::new(
                    "decide",
                    "Answers permission prompts",
                    |_v: Value| async move {
                        json!({"behavior": "deny", "message": "the judge says no"}).to_string()
                    },
                )
                .input_schema(json!({"type": "object"})),
            )
            .build();
        run(h
            .options()
            .mcp_server(calc)
            .mcp_server(judge)
            .permission_prompt_tool_name("mcp__judge__decide"))
        .await;
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert!(sent[0].text().contains("the judge says no"), "{sent:?}");
        h.finish().await;
    })
    .await
}

/// As root the CLI refuses `--allow-dangerously-skip-permissions` unless
/// `IS_SANDBOX=1`; with it, the flag is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_dangerously_skip_permissions_is_accepted_in_a_sandbox() {
    with_timeout(async {
        let h = Harness::start_with_env(
            MockModel::builder().turn(Turn::text("one")),
            &[("IS_SANDBOX", "1")],
        )
        .await;
        let client = claude_code_agent::Client::connect(
            h.options().allow_dangerously_skip_permissions(true),
        )
        .await
        .expect("connect");
        let mode = client
            .set_permission_mode(claude_code_agent::PermissionMode::BypassPermissions)
            .await
            .expect("bypass allowed");
        assert_eq!(
            mode,
            Some(claude_code_agent::PermissionMode::BypassPermissions)
        );
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// `env_remove` removes a variable the CLI would otherwise get: without
/// the API key the turn fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_remove_takes_a_variable_away() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turn(Turn::text("one"))).await;
        let (messages, _) = drain(query("go", h.options().env_remove("ANTHROPIC_API_KEY"))).await;
        assert!(h.mock().conversation_requests().is_empty(), "{messages:?}");
        let result = results(&messages).pop();
        assert!(result.as_ref().is_none_or(|r| r.is_error), "{result:?}");
        // The later `env` wins over an earlier `env_remove`.
        let messages = run(h
            .options()
            .env_remove("ANTHROPIC_API_KEY")
            .env("ANTHROPIC_API_KEY", "sk-test"))
        .await;
        assert!(!results(&messages)[0].is_error);
        h.finish().await;
    })
    .await
}

/// A custom spawn: the CLI under a shell wrapper that stays its parent.
/// The wrapper's output shows it ran; dropping the session mid-turn still
/// leaves no process behind (the harness checks at `finish`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_with_runs_the_cli_under_a_wrapper() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::text("one"))
                .turn(Turn::text("slow").delay(std::time::Duration::from_secs(60))),
        )
        .await;
        let wrap = |cmd: CliCommand| {
            Ok(cmd.wrap(
                "/bin/sh",
                [
                    "-c",
                    "echo wrapped-by-test >&2; \"$@\"; echo after >&2",
                    "sh",
                ],
            ))
        };
        let mut q = query("go", h.options().spawn_with(wrap));
        use futures::StreamExt;
        let mut seen = Vec::new();
        while let Some(m) = q.next().await {
            seen.push(m.expect("message"));
        }
        assert!(
            h.stderr_text().contains("wrapped-by-test"),
            "{}",
            h.stderr_text()
        );
        assert_eq!(results(&seen).len(), 1);

        let client = claude_code_agent::Client::connect(h.options().spawn_with(wrap))
            .await
            .expect("connect");
        // The CLI is a child of the shell, not the process the SDK started.
        assert_ne!(
            client.initialize_response().pid,
            Some(u64::from(client.pid()))
        );
        client.query("slow").await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        drop(client);
        h.finish().await;
    })
    .await
}

/// The session options: a fixed id, then resume, continue + fork, and
/// resume at a message; with the limits and tool filters alongside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_id_resume_continue_fork_and_resume_at() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().default_reply(Turn::text("ok"))).await;
        let id = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
        let extra = h.env().work_dir().join("extra");
        std::fs::create_dir_all(&extra).unwrap();
        let first = run(h
            .options()
            .session_id(id)
            .max_turns(3)
            .max_budget_usd(10.0)
            .strict_mcp_config(true)
            .setting_sources([])
            .add_dir(&extra)
            .disallowed_tools(["Bash"]))
        .await;
        assert_eq!(results(&first)[0].session_id.as_deref(), Some(id));
        let sent = h.mock().conversation_requests();
        assert!(sent[0].tool("Bash").is_none(), "Bash was disallowed");
        assert!(sent[0].tool("Read").is_some());
        let assistant_uuid = first
            .iter()
            .find_map(|m| match m {
                Message::Assistant(a) => a.uuid.clone(),
                _ => None,
            })
            .expect("an assistant uuid");

        let resumed = run(h.options().resume(id)).await;
        assert_eq!(results(&resumed)[0].session_id.as_deref(), Some(id));
        let forked = run(h.options().continue_conversation(true).fork_session(true)).await;
        assert_ne!(
            results(&forked)[0].session_id.as_deref(),
            Some(id),
            "a fork gets a new id"
        );
        let at = run(h.options().resume(id).resume_session_at(&assistant_uuid)).await;
        assert_eq!(results(&at).len(), 1);

        let sent = h.mock().conversation_requests();
        assert_eq!(sent.len(), 4);
        // Resumed conversations carry the first prompt ("go") and answer.
        for r in &sent[1..] {
            assert!(r.messages().len() >= 3, "{:?}", r.messages());
        }
        // Resuming at the first answer drops what came after it.
        assert!(sent[3].messages().len() < sent[2].messages().len() + 2);
        h.finish().await;
    })
    .await
}

/// `verbatim_prompts`: an `@file` mention is sent as written, not expanded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbatim_prompts_are_sent_as_written() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().default_reply(Turn::text("ok"))).await;
        std::fs::write(h.env().work_dir().join("note.txt"), "NOTE-CONTENT-31").unwrap();
        let prompt = "look at @note.txt";
        let (messages, error) = drain(query(prompt, h.options())).await;
        assert!(
            error.is_none() && results(&messages).len() == 1,
            "{error:?}"
        );
        let (messages, error) = drain(query(prompt, h.options().verbatim_prompts(true))).await;
        assert!(
            error.is_none() && results(&messages).len() == 1,
            "{error:?}"
        );
        let sent = h.mock().conversation_requests();
        let body = |i: usize| serde_json::to_string(sent[i].messages()).unwrap();
        assert!(
            body(0).contains("NOTE-CONTENT-31"),
            "not expanded: {}",
            body(0)
        );
        assert!(
            !body(1).contains("NOTE-CONTENT-31"),
            "expanded: {}",
            body(1)
        );
        assert!(body(1).contains(prompt));
        h.finish().await;
    })
    .await
}

/// A system prompt in blocks around the dynamic boundary (sent in
/// `initialize`, no `--system-prompt`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_prompt_blocks_reach_the_model() {
    use claude_code_agent::{SYSTEM_PROMPT_DYNAMIC_BOUNDARY, SystemPrompt};
    with_timeout(async {
        let h = Harness::start(MockModel::builder().default_reply(Turn::text("ok"))).await;
        run(h.options().system_prompt_config(SystemPrompt::Blocks(vec![
            "Static part BK1.".into(),
            SYSTEM_PROMPT_DYNAMIC_BOUNDARY.into(),
            "Dynamic part BK2.".into(),
        ])))
        .await;
        // The CLI offers no `AskUserQuestion` to an SDK session, so its
        // configuration (`ask_user_question`) cannot show here: asking for
        // it alone leaves the model no tool at all.
        run(h.options().tools(["AskUserQuestion"])).await;
        let sent = h.mock().conversation_requests();
        let system = sent[0].system_text();
        assert!(system.contains("BK1") && system.contains("BK2"), "{system}");
        assert!(!system.contains(SYSTEM_PROMPT_DYNAMIC_BOUNDARY), "{system}");
        assert!(
            sent[1].tool_names().is_empty(),
            "{:?}",
            sent[1].tool_names()
        );
        h.finish().await;
    })
    .await
}
