//! The control requests of the official SDKs' `Client`/`Query`, on the
//! real CLI: what each answers, and the SDK's own guarantees around them
//! (a refused `set_mcp_servers` keeps the servers, a request that is not
//! answered in time fails with `ControlTimeout` and the session goes on).

use std::time::Duration;

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::protocol::SdkRequest;
use claude_code_agent::{
    Client, ContextDetail, Error, McpServerConfig, Message, Plugin, ReloadPluginsOptions,
    UserInput, query,
};
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;
use serde_json::json;

fn calc() -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
            x.a + x.b
        }))
        .build()
}

async fn turn(client: &Client) -> Vec<Message> {
    let (messages, error) = drain(client.receive_response()).await;
    assert!(error.is_none(), "{error:?}");
    messages
}

/// `query()` hands out the handshake answer, the pid and the control
/// requests once it has started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_exposes_the_initialize_answer_and_the_pid() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turn(Turn::text("hi"))).await;
        let mut q = query("go", h.options());
        assert!(q.control().is_none(), "not started before the first poll");
        let first = q.next().await.expect("a message").expect("ok");
        let cli_pid = h.wait_for_cli_pid().await;
        let init = q.initialize_response().expect("started").clone();
        assert_eq!(q.pid(), Some(cli_pid as u32));
        assert_eq!(init.pid, Some(cli_pid as u64));
        assert!(!init.commands.unwrap_or_default().is_empty());
        assert!(!init.models.unwrap_or_default().is_empty());
        assert!(init.account.is_some());
        // Control requests work while the query runs.
        let status = q.control().unwrap().mcp_status().await.expect("mcp_status");
        assert!(status.mcp_servers.is_empty());
        let mut messages = vec![first];
        while let Some(m) = q.next().await {
            messages.push(m.expect("message"));
        }
        assert_eq!(results(&messages).len(), 1);
        // Once over, requests fail at once.
        assert!(q.control().unwrap().mcp_status().await.is_err());
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_files_undoes_a_write_with_checkpointing() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder()).await;
        let file = h.env().work_dir().join("a.txt");
        h.mock().push_turn(Turn::tool_use(
            "Write",
            json!({"file_path": file, "content": "hello\n"}),
        ));
        h.mock().push_turn(Turn::text("written"));
        let client = Client::connect(
            h.options()
                .enable_file_checkpointing(true)
                .allowed_tools(["Write"]),
        )
        .await
        .expect("connect");
        let uuid = "7f1b2c3d-0000-4000-8000-000000000001";
        client
            .query(UserInput::text("write a file").uuid(uuid))
            .await
            .unwrap();
        turn(&client).await;
        assert!(file.exists(), "the Write did not happen");

        let dry = client.rewind_files(uuid, true).await.expect("dry run");
        assert!(dry.can_rewind, "{dry:?}");
        let changed = dry.files_changed.clone().unwrap_or_default();
        assert!(changed.iter().any(|f| f.ends_with("a.txt")), "{dry:?}");
        assert!(file.exists(), "a dry run changed the file");
        let done = client.rewind_files(uuid, false).await.expect("rewind");
        assert!(done.can_rewind, "{done:?}");
        assert!(!file.exists(), "the file is still there after the rewind");
        client.disconnect().await.unwrap();

        // Without checkpointing the CLI answers that it cannot.
        let client = Client::connect(h.options()).await.expect("connect");
        let no = client.rewind_files(uuid, true).await.expect("answered");
        assert!(!no.can_rewind, "{no:?}");
        assert_eq!(no.error.as_deref(), Some("File rewinding is not enabled."));
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_usage_thinking_settings_and_reloads_are_answered() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turn(Turn::text("one"))).await;
        let client = Client::connect(h.options().mcp_server(calc()))
            .await
            .expect("connect");
        client.query("hello").await.unwrap();
        turn(&client).await;

        let usage = client.get_context_usage(None).await.expect("usage");
        assert!(usage.total_tokens > 0 && usage.max_tokens > 0, "{usage:?}");
        assert!(
            usage
                .categories
                .iter()
                // CLI 2.1.302 gives categories no `id`, only a name.
                .any(
                    |c| (c.id.as_deref() == Some("messages") || c.name == "Messages")
                        && c.tokens > 0
                ),
            "{usage:?}"
        );
        let summary = client
            .get_context_usage(Some(ContextDetail::Summary))
            .await
            .expect("summary");
        assert!(!summary.categories.is_empty());

        client
            .set_max_thinking_tokens(
                Some(2048),
                Some(claude_code_agent::ThinkingDisplay::Summarized),
            )
            .await
            .expect("set_max_thinking_tokens");
        client.set_max_thinking_tokens(None, None).await.unwrap();

        client
            .apply_flag_settings(json!({"permissions": {"allow": ["Read"]}}))
            .await
            .expect("apply_flag_settings");
        let settings = client
            .control_request(SdkRequest::get_settings())
            .await
            .unwrap();
        assert_eq!(
            settings["effective"]["permissions"]["allow"],
            json!(["Read"]),
            "{settings}"
        );
        client
            .update_settings("localSettings", json!({"outputStyle": "default"}))
            .await
            .expect("update_settings");

        let again = client.reinitialize().await.expect("reinitialize");
        assert!(!again.commands.unwrap_or_default().is_empty());
        let styles = client.reload_output_styles().await.expect("styles");
        assert!(
            styles
                .available_output_styles
                .iter()
                .any(|s| s == "default")
        );
        let skills = client.reload_skills().await.expect("skills");
        let _ = skills.skills;
        let plugins = client
            .reload_plugins(Default::default())
            .await
            .expect("plugins");
        assert!(!plugins.commands.is_empty(), "{plugins:?}");

        let file = h.env().work_dir().join("seeded.txt");
        std::fs::write(&file, "x").unwrap();
        client
            .seed_read_state(file.to_str().unwrap(), 0)
            .await
            .expect("seed_read_state");
        let r#override = client
            .set_mcp_permission_mode_override("calc", Some("default"))
            .await
            .expect("override");
        assert!(r#override.warning.is_none(), "{override:?}");
        client
            .set_mcp_permission_mode_override("calc", None)
            .await
            .unwrap();

        // What the CLI refuses, with its reason.
        let refused = |r: claude_code_agent::Result<_>| match r {
            Err(Error::ControlError { message, .. }) => message,
            Ok(v) => panic!("expected a refusal, got {v:?}"),
            Err(e) => panic!("expected a refusal, got {e:?}"),
        };
        let denied = refused(
            client
                .read_file("/etc/hostname", Some(10), false)
                .await
                .map(drop),
        );
        assert!(denied.contains("read denied"), "{denied}");
        let sdk = refused(client.mcp_read_resource("calc", "ui://x").await.map(drop));
        assert!(sdk.contains("SDK MCP servers"), "{sdk}");
        let unknown = refused(client.reconnect_mcp_server("nope").await);
        assert!(unknown.contains("Server not found"), "{unknown}");

        let interrupted = client.interrupt_with(true).await.expect("interrupt");
        assert_eq!(interrupted.cancelled, Some(vec![]));
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// A background Bash task, moved there by the model, stopped by
/// `stop_task`: the CLI reports it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_task_stops_a_background_task() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use(
                    "Bash",
                    json!({"command": "sleep 60", "run_in_background": true}),
                ))
                .turn(Turn::text("started"))
                .default_reply(Turn::text("ok")),
        )
        .await;
        let client = Client::connect(h.options().allowed_tools(["Bash"]))
            .await
            .expect("connect");
        client.query("start it").await.unwrap();
        let messages = turn(&client).await;
        let task_id = messages
            .iter()
            .map(Message::to_value)
            .find(|v| v["subtype"] == "task_started")
            .and_then(|v| v["task_id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no task_started: {messages:?}"));
        let bg = client
            .background_tasks(None)
            .await
            .expect("background_tasks");
        let _ = bg.backgrounded;
        client.stop_task(&task_id).await.expect("stop_task");
        let mut stream = client.receive_messages();
        let stopped = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(m) = stream.next().await {
                let v = m.expect("message").to_value();
                if v["task_id"] == task_id.as_str()
                    && (v["status"] == "stopped" || v["patch"]["status"] == "killed")
                {
                    return v;
                }
            }
            panic!("the stream ended");
        })
        .await
        .expect("no stop reported within 20 s");
        assert_eq!(stopped["task_id"], task_id.as_str());
        drop(stream);
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// Issue 12 item 11: when the CLI refuses `mcp_set_servers`, the
/// in-process servers stay as they were and keep answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_set_mcp_servers_keeps_the_servers() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
                .turn(echo_results()),
        )
        .await;
        let client = Client::connect(h.options().mcp_server(calc()).allowed_tools(["mcp__calc"]))
            .await
            .expect("connect");
        let other = Server::builder("other", "1.0.0").build();
        let refused = client
            .set_mcp_servers([
                ("other", McpServerConfig::from(other)),
                ("bad", McpServerConfig::Unknown(json!("not an object"))),
            ])
            .await;
        match refused {
            Err(Error::ControlError { message, .. }) => {
                assert!(message.contains("servers must be"), "{message}")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        client.query("add").await.unwrap();
        let messages = turn(&client).await;
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1, "{messages:?}");
        assert!(!sent[0].is_error, "calc was dropped: {sent:?}");
        assert_eq!(sent[0].text(), "5");
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// Issue 12 item 13: a control request the CLI does not answer in time
/// fails with `ControlTimeout` (here the CLI is stopped with SIGSTOP); the
/// late answer is ignored and the session goes on. (The handshake waits
/// at least 60 s whatever the timeout, so a short one does not fail a slow
/// start.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_control_request_times_out_and_the_session_goes_on() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().turn(Turn::text("after"))).await;
        let client = Client::connect(h.options().control_timeout(Duration::from_secs(2)))
            .await
            .expect("connect");
        let pid = client.pid() as i32;
        kill(pid, libc::SIGSTOP);
        let started = std::time::Instant::now();
        let timed_out = client.mcp_status().await;
        let waited = started.elapsed();
        kill(pid, libc::SIGCONT);
        match timed_out {
            Err(Error::ControlTimeout { subtype, timeout }) => {
                assert_eq!(subtype, "mcp_status");
                assert_eq!(timeout, Duration::from_secs(2));
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(
            waited >= Duration::from_secs(2) && waited < Duration::from_secs(10),
            "{waited:?}"
        );
        // The late answer is dropped; the next request and a turn work.
        client.mcp_status().await.expect("mcp_status after");
        client.query("still there?").await.unwrap();
        let messages = turn(&client).await;
        assert_eq!(results(&messages)[0].result.as_deref(), Some("after"));
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// `reload_plugins` with the TypeScript SDK 0.3.337's options: CLI 2.1.332
/// loads a plugin named in `add_plugins`, and honours `refuse_if_busy` and
/// `hold_on_cache_impact` on an idle session (it lists the capability
/// `reload_plugins_refuse_if_busy_v1`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_plugins_adds_a_plugin_when_idle() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().default_reply(Turn::text("one"))).await;
        let plugin = h.env().work_dir().join("added-plugin");
        std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
        std::fs::create_dir_all(plugin.join("commands")).unwrap();
        std::fs::write(
            plugin.join(".claude-plugin/plugin.json"),
            r#"{"name": "added-plugin", "version": "1.0.0"}"#,
        )
        .unwrap();
        std::fs::write(
            plugin.join("commands/greet.md"),
            "---\ndescription: Greets\n---\nSay hello.\n",
        )
        .unwrap();
        let client = Client::connect(h.options()).await.expect("connect");
        client.query("hello").await.unwrap();
        let messages = turn(&client).await;
        let init = messages
            .iter()
            .map(Message::to_value)
            .find(|v| v["subtype"] == "init")
            .expect("system/init");
        assert!(
            !init["plugins"].to_string().contains("added-plugin"),
            "{}",
            init["plugins"]
        );
        let answer = client
            .reload_plugins(
                ReloadPluginsOptions::new()
                    .add_plugin(Plugin::local(&plugin))
                    .refuse_if_busy(true)
                    .hold_on_cache_impact(true),
            )
            .await
            .expect("reload_plugins");
        assert!(
            serde_json::to_string(&answer.plugins)
                .unwrap()
                .contains("added-plugin"),
            "{answer:?}"
        );
        assert_ne!(answer.held, Some(true), "{answer:?}");
        assert!(
            answer.commands.iter().any(|c| c.name.contains("greet")),
            "{answer:?}"
        );
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// `reload_plugins` with `refuse_if_busy` while a turn is running (the model
/// still answering): a CLI that lists `reload_plugins_refuse_if_busy_v1` in
/// its `initialize` answer refuses with the code `reload_plugins_busy` and
/// reloads nothing (one that does not, 2.1.302, serves it); once the turn
/// is over the same request is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_plugins_refuses_if_busy_mid_turn() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::text("too late").delay(Duration::from_secs(60)))
                .turn(Turn::text("idle again")),
        )
        .await;
        let client = Client::connect(h.options()).await.expect("connect");
        let honours = client
            .control()
            .initialize_response()
            .capabilities
            .as_ref()
            .is_some_and(|c| c.iter().any(|c| c == "reload_plugins_refuse_if_busy_v1"));
        client.query("take your time").await.unwrap();
        assert!(
            h.mock()
                .wait_for_conversation_requests(1, Duration::from_secs(30))
                .await,
            "the model was never asked"
        );
        let busy = client
            .reload_plugins(ReloadPluginsOptions::new().refuse_if_busy(true))
            .await;
        match busy {
            Err(Error::ControlError { subtype, code, .. }) if honours => {
                assert_eq!(subtype, "reload_plugins");
                assert_eq!(code.as_deref(), Some("reload_plugins_busy"));
            }
            // 2.1.302 lists no such capability and serves the reload.
            Ok(served) if !honours => assert!(!served.commands.is_empty(), "{served:?}"),
            other => panic!("capability listed: {honours}; answer: {other:?}"),
        }
        client.interrupt().await.expect("interrupt");
        let _ = turn(&client).await;
        let idle = client
            .reload_plugins(ReloadPluginsOptions::new().refuse_if_busy(true))
            .await
            .expect("an idle session reloads");
        assert!(!idle.commands.is_empty(), "{idle:?}");
        client.query("and now?").await.unwrap();
        let result = results(&turn(&client).await).pop().unwrap();
        assert_eq!(result.result.as_deref(), Some("idle again"));
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}
