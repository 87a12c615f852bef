//! The sessions API on sessions the real CLI just wrote: a session with an
//! in-process tool call and a subagent, listed, read, renamed (and resumed by
//! its new title), tagged, archived, forked (and the fork resumed), deleted.

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::sessions::{
    ForkOptions, MessageType, SessionError, SessionMessage, SessionOptions, archive_session,
    delete_session, fork_session, list_sessions, list_subagents, rename_session, session_info,
    session_messages, subagent_messages, tag_session, unarchive_session,
};
use claude_code_agent::{Options, query};
use claude_code_agent_testkit::mock_api::RecordedRequest;
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::json;

const PROMPT: &str = "add 2 and 3 then ask a subagent";
const SUB_PROMPT: &str = "Say sub hi";
const TITLE: &str = "Sessions test title";

fn calc() -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
            x.a + x.b
        }))
        .build()
}

pub(crate) fn text_of(v: &serde_json::Value) -> String {
    match v.get("content") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(serde_json::Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The model: the subagent (its conversation starts with its prompt) says
/// "sub hi"; the main conversation adds with the calculator, then runs a
/// general-purpose subagent in the foreground, then sums up; later prompts
/// get an answer naming them.
fn model(req: &RecordedRequest) -> Turn {
    let first_user = req
        .messages()
        .iter()
        .find(|m| m["role"] == "user")
        .map(text_of)
        .unwrap_or_default();
    if first_user.contains(SUB_PROMPT) {
        return Turn::text("sub hi");
    }
    let results: Vec<String> = req.tool_results().iter().map(|r| r.text()).collect();
    if results.iter().any(|r| r == "5") {
        return Turn::tool_use(
            "Task",
            json!({"description": "Sub check", "prompt": SUB_PROMPT,
                   "subagent_type": "general-purpose", "run_in_background": false}),
        );
    }
    if !results.is_empty() {
        return Turn::text("All done: 5");
    }
    let last = req.last_user_text().unwrap_or_default();
    for (asked, answer) in [
        ("resumed by title", "Title answer."),
        ("after the fork", "Fork answer."),
    ] {
        if last.contains(asked) {
            return Turn::text(answer);
        }
    }
    Turn::text("Let me add.").with_tool_use("mcp__calc__add", json!({"a": 2, "b": 3}))
}

/// Runs one prompt to its result; returns the session id.
async fn run(h: &Harness, prompt: &str, options: Options) -> String {
    let (messages, error) = drain(query(prompt, options)).await;
    assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
    let result = results(&messages).into_iter().next();
    let result = result.unwrap_or_else(|| panic!("no result: {messages:?}"));
    assert!(!result.is_error, "{result:?}\n{}", h.stderr_text());
    result
        .session_id
        .clone()
        .expect("the result names its session")
}

fn summary(messages: &[SessionMessage]) -> Vec<(MessageType, String)> {
    messages
        .iter()
        .map(|m| {
            let blocks = m.content_blocks();
            let what = match blocks.first().and_then(|b| b["type"].as_str()) {
                Some("tool_use") => {
                    format!("tool_use {}", blocks[0]["name"].as_str().unwrap_or(""))
                }
                Some("tool_result") => format!("tool_result {}", text_of(&blocks[0])),
                _ => m.text(),
            };
            (m.kind, what)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_api_on_sessions_the_cli_wrote() {
    with_timeout(async {
        let h = Harness::start(MockModel::builder().fallback(model)).await;
        let tools = |o: Options| {
            o.mcp_server(calc())
                .allowed_tools(["mcp__calc__add", "Task"])
        };
        let sid = run(&h, PROMPT, tools(h.options())).await;
        let options = SessionOptions::new()
            .config_dir(h.env().config_dir())
            .dir(h.env().work_dir());

        // listed, with what the CLI recorded
        let listed = list_sessions(&options).unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        let info = &listed[0];
        assert_eq!(info.session_id, sid);
        assert_eq!(info.first_prompt.as_deref(), Some(PROMPT));
        assert_eq!(info.summary, PROMPT);
        let cwd = std::fs::canonicalize(h.env().work_dir()).unwrap();
        assert_eq!(info.cwd.as_deref(), cwd.to_str());
        let file = h
            .env()
            .config_dir()
            .join("projects")
            .join(claude_code_agent::sessions::sanitize_path(
                cwd.to_str().unwrap(),
            ))
            .join(format!("{sid}.jsonl"));
        assert_eq!(
            info.file_size,
            std::fs::metadata(&file).unwrap().len(),
            "{}",
            file.display()
        );
        assert_eq!(session_info(&sid, &options).unwrap().as_ref(), Some(info));
        // this SDK's sessions are programmatic ones, as `claude -p`'s
        assert!(
            list_sessions(&options.clone().include_programmatic(false))
                .unwrap()
                .is_empty()
        );

        // the conversation, one entry per content block
        let messages = session_messages(&sid, &options).unwrap();
        use MessageType::{Assistant, User};
        let expected = [
            (User, PROMPT.to_owned()),
            (Assistant, "Let me add.".to_owned()),
            (Assistant, "tool_use mcp__calc__add".to_owned()),
            (User, "tool_result 5".to_owned()),
            (Assistant, "tool_use Task".to_owned()),
        ];
        let got = summary(&messages);
        assert_eq!(got[..5], expected, "{got:#?}");
        assert_eq!(got.len(), 7, "{got:#?}");
        assert_eq!(got[5].0, User);
        assert!(
            got[5].1.starts_with("tool_result") && got[5].1.contains("sub hi"),
            "{got:#?}"
        );
        assert_eq!(got[6], (Assistant, "All done: 5".to_owned()));
        assert!(messages.iter().all(|m| m.session_id == sid));

        // the subagent
        let task_call = messages[4].content_blocks()[0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let agents = list_subagents(&sid, &options).unwrap();
        assert_eq!(agents.len(), 1, "{agents:?}");
        let sub = subagent_messages(&sid, &agents[0], &options).unwrap();
        assert_eq!(
            summary(&sub),
            [
                (User, SUB_PROMPT.to_owned()),
                (Assistant, "sub hi".to_owned())
            ]
        );
        assert!(
            sub.iter()
                .all(|m| m.parent_tool_use_id.as_deref() == Some(task_call.as_str()))
        );

        // renamed: the CLI finds the session by its new title (and not before)
        let (before, error) =
            drain(query("resumed by title", tools(h.options()).resume(TITLE))).await;
        assert!(results(&before).is_empty());
        assert!(
            matches!(&error, Some(claude_code_agent::Error::CliExited { stderr_tail, .. })
                if stderr_tail.contains("does not match any session title")),
            "{error:?}"
        );
        rename_session(&sid, &format!("  {TITLE} "), &options).unwrap();
        assert_eq!(
            session_info(&sid, &options)
                .unwrap()
                .unwrap()
                .custom_title
                .as_deref(),
            Some(TITLE)
        );
        let resumed = run(&h, "resumed by title", tools(h.options()).resume(TITLE)).await;
        assert_eq!(
            resumed, sid,
            "--resume=<title> continued the renamed session"
        );
        let history = h.mock().last_conversation_request().unwrap();
        assert!(
            text_of(&history.messages()[0]).contains(PROMPT),
            "{:?}",
            history.messages()[0]
        );
        let after = session_messages(&sid, &options).unwrap();
        assert_eq!(
            summary(&after[7..]),
            [
                (User, "resumed by title".to_owned()),
                (Assistant, "Title answer.".to_owned())
            ]
        );
        assert_eq!(
            session_info(&sid, &options).unwrap().unwrap().summary,
            TITLE,
            "the title outlives the CLI's run"
        );

        // tagged, untagged; archived, unarchived
        tag_session(&sid, Some("exp\u{200b}1"), &options).unwrap();
        assert_eq!(
            session_info(&sid, &options)
                .unwrap()
                .unwrap()
                .tag
                .as_deref(),
            Some("exp1")
        );
        tag_session(&sid, None, &options).unwrap();
        assert_eq!(session_info(&sid, &options).unwrap().unwrap().tag, None);
        archive_session(&sid, &options).unwrap();
        assert_eq!(
            session_info(&sid, &options).unwrap().unwrap().archived,
            Some(true)
        );
        unarchive_session(&sid, &options).unwrap();
        assert_eq!(
            session_info(&sid, &options).unwrap().unwrap().archived,
            Some(false)
        );

        // forked after the first turn: the CLI resumes the fork, with only
        // that turn as history
        let fork = fork_session(
            &sid,
            &ForkOptions::new().up_to_message(&messages[6].uuid),
            &options,
        )
        .unwrap();
        let fork_info = session_info(&fork, &options).unwrap().unwrap();
        assert_eq!(fork_info.custom_title, Some(format!("{TITLE} (fork)")));
        assert_eq!(
            summary(&session_messages(&fork, &options).unwrap()),
            summary(&messages)
        );
        let continued = run(&h, "after the fork", tools(h.options()).resume(&fork)).await;
        assert_eq!(continued, fork);
        let history = h.mock().last_conversation_request().unwrap();
        let texts: Vec<String> = history.messages().iter().map(text_of).collect();
        assert!(texts[0].contains(PROMPT), "{texts:#?}");
        assert!(
            texts.iter().any(|t| t.contains("All done: 5")),
            "{texts:#?}"
        );
        assert!(
            !texts.iter().any(|t| t.contains("resumed by title")),
            "the fork ends before: {texts:#?}"
        );
        let forked = session_messages(&fork, &options).unwrap();
        assert_eq!(
            summary(&forked[7..]),
            [
                (User, "after the fork".to_owned()),
                (Assistant, "Fork answer.".to_owned())
            ]
        );
        assert_eq!(list_sessions(&options).unwrap().len(), 2);

        // deleted: the transcripts and the subagent's folder
        delete_session(&fork, &options).unwrap();
        delete_session(&sid, &options).unwrap();
        assert!(list_sessions(&options).unwrap().is_empty());
        assert!(!file.exists());
        assert!(
            !file.with_extension("").exists(),
            "the session's folder is gone"
        );
        assert!(matches!(
            session_messages(&sid, &options),
            Err(SessionError::NotFound { .. })
        ));
        assert!(matches!(
            delete_session(&sid, &options),
            Err(SessionError::NotFound { .. })
        ));

        h.finish().await;
    })
    .await;
}
