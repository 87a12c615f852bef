//! Built-in tools read as types on the real CLI: one session in which the
//! mock model calls Read (a text file and a notebook), Glob, Grep,
//! TodoWrite, Bash, Write, Edit, NotebookEdit and CronCreate, each seen
//! typed in its `tool_use` block, in a `PreToolUse` hook and a
//! `PostToolUse` hook (with the tool's report typed) and, for those that
//! ask (Bash, Write, Edit, NotebookEdit), in the permission callback.

use std::sync::{Arc, Mutex};

use crate::support::*;
use claude_code_agent::tools::{BuiltinTool, BuiltinToolOutput};
use claude_code_agent::{HookEvent, HookMatcher, HookOutput, PermissionResult, query};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::json;

type Seen<T> = Arc<Mutex<Vec<T>>>;

/// The first of `seen` with the tool's name `name`.
fn named<T: Clone>(seen: &Seen<T>, name: &str, name_of: fn(&T) -> &str) -> T {
    let seen = seen.lock().unwrap();
    seen.iter()
        .find(|t| name_of(t) == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} among {} seen", seen.len()))
}

/// The tool's name of a `PostToolUse` seen.
fn post_name((tool, _): &(BuiltinTool, BuiltinToolOutput)) -> &str {
    tool.name()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_the_permission_callback_and_messages_read_builtin_tools_as_types() {
    with_timeout(async {
        // `TodoWrite` is this CLI's todo list only without the Task* tools.
        let h = Harness::start_with_env(
            MockModel::builder().default_reply(Turn::text("done")),
            &[("CLAUDE_CODE_ENABLE_TASKS", "0")],
        )
        .await;
        let work = h.env().work_dir().to_path_buf();
        std::fs::write(work.join("notes.txt"), "hello world\n").unwrap();
        let notes = work.join("notes.txt").display().to_string();
        let fresh = work.join("new.txt").display().to_string();
        let notebook = work.join("book.ipynb").display().to_string();
        std::fs::write(
            &notebook,
            json!({
                "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)"], "outputs": [], "execution_count": null}],
                "metadata": {"language_info": {"name": "python"}},
                "nbformat": 4,
                "nbformat_minor": 5
            })
            .to_string(),
        )
        .unwrap();
        h.mock().push_turn(Turn::tool_uses([
            ("Read", json!({"file_path": notes})),
            ("Read", json!({"file_path": notebook})),
            ("Glob", json!({"pattern": "*.txt"})),
            ("Grep", json!({"pattern": "hello", "output_mode": "content", "-n": true})),
            (
                "TodoWrite",
                json!({"todos": [{"content": "Edit the notes", "status": "in_progress", "activeForm": "Editing the notes"}]}),
            ),
        ]));
        h.mock().push_turn(Turn::tool_uses([
            // Not read-only, so the CLI asks the permission callback.
            ("Bash", json!({"command": "touch ran && echo typed", "description": "Say typed"})),
            ("Write", json!({"file_path": fresh, "content": "fresh\n"})),
            (
                "Edit",
                json!({"file_path": notes, "old_string": "hello", "new_string": "goodbye"}),
            ),
            (
                "NotebookEdit",
                json!({"notebook_path": notebook, "cell_id": "c1", "new_source": "print(2)"}),
            ),
            (
                "CronCreate",
                json!({"cron": "0 9 * * 1", "prompt": "check the notes", "recurring": true}),
            ),
        ]));

        let pre: Seen<BuiltinTool> = Arc::default();
        let post: Seen<(BuiltinTool, BuiltinToolOutput)> = Arc::default();
        let asked: Seen<BuiltinTool> = Arc::default();
        let (pre_log, post_log, asked_log) = (pre.clone(), post.clone(), asked.clone());
        // The CLI offers Glob, Grep and TodoWrite only to a session that
        // names them (in `--tools` or `--allowedTools`); Bash, Write and
        // Edit are left to the permission callback.
        let options = h
            .options()
            .allowed_tools(["Glob", "Grep", "TodoWrite"])
            .hook(HookEvent::PreToolUse, HookMatcher::new(None), move |input, _| {
                pre_log.lock().unwrap().extend(input.builtin_tool());
                async { HookOutput::default() }
            })
            .hook(HookEvent::PostToolUse, HookMatcher::new(None), move |input, _| {
                if let (Some(tool), Some(output)) = (input.builtin_tool(), input.builtin_tool_output()) {
                    post_log.lock().unwrap().push((tool, output));
                }
                async { HookOutput::default() }
            })
            .can_use_tool(move |tool, input, _ctx| {
                asked_log.lock().unwrap().push(BuiltinTool::parse(&tool, &input));
                async { PermissionResult::allow() }
            });

        let (messages, error) = drain(query("tidy the notes", options)).await;
        assert!(error.is_none(), "{error:?}");
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 10, "{sent:?}");
        assert!(sent.iter().all(|r| !r.is_error), "{sent:#?}");
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "goodbye world\n");
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "fresh\n");
        assert!(work.join("ran").exists(), "Bash did not run");

        // The tool_use blocks of the assistant messages.
        let uses: Vec<BuiltinTool> = tool_uses(&messages).iter().map(|u| u.builtin_tool()).collect();
        let uses: Seen<BuiltinTool> = Arc::new(Mutex::new(uses));
        let BuiltinTool::Read(read) = named(&uses, "Read", BuiltinTool::name) else { panic!() };
        assert_eq!(read.file_path, notes);
        let BuiltinTool::Glob(glob) = named(&uses, "Glob", BuiltinTool::name) else { panic!() };
        assert_eq!(glob.pattern, "*.txt");
        let BuiltinTool::Grep(grep) = named(&uses, "Grep", BuiltinTool::name) else { panic!() };
        assert_eq!((grep.pattern.as_str(), grep.line_numbers), ("hello", Some(true)));
        let BuiltinTool::TodoWrite(todo) = named(&uses, "TodoWrite", BuiltinTool::name) else { panic!() };
        assert_eq!(todo.todos[0].active_form.as_deref(), Some("Editing the notes"));
        let BuiltinTool::Write(write) = named(&uses, "Write", BuiltinTool::name) else { panic!() };
        assert_eq!((write.file_path.as_str(), write.content.as_str()), (fresh.as_str(), "fresh\n"));

        let BuiltinTool::NotebookEdit(nb) = named(&uses, "NotebookEdit", BuiltinTool::name) else { panic!() };
        assert_eq!((nb.cell_id.as_deref(), nb.new_source.as_str()), (Some("c1"), "print(2)"));
        let BuiltinTool::CronCreate(cron) = named(&uses, "CronCreate", BuiltinTool::name) else { panic!() };
        assert_eq!((cron.cron.as_str(), cron.recurring), ("0 9 * * 1", Some(true)));

        // The PreToolUse hook and the permission callback: Bash and Edit.
        for seen in [&pre, &asked] {
            let BuiltinTool::Bash(bash) = named(seen, "Bash", BuiltinTool::name) else { panic!() };
            assert_eq!(bash.command, "touch ran && echo typed");
            assert_eq!(bash.description.as_deref(), Some("Say typed"));
            let BuiltinTool::Edit(edit) = named(seen, "Edit", BuiltinTool::name) else { panic!() };
            assert_eq!(edit.file_path, notes);
            assert_eq!((edit.old_string.as_str(), edit.new_string.as_str()), ("hello", "goodbye"));
            assert_ne!(edit.replace_all, Some(true), "the CLI writes the default in");
        }
        assert_eq!(pre.lock().unwrap().len(), 10, "{:?}", pre.lock().unwrap());
        assert!(
            pre.lock().unwrap().iter().all(|t| !matches!(t, BuiltinTool::Unknown { .. })),
            "{:?}",
            pre.lock().unwrap()
        );

        // The PostToolUse hook: each tool's report, typed.
        let reads: Vec<_> = post
            .lock()
            .unwrap()
            .iter()
            .filter_map(|seen| match seen {
                (BuiltinTool::Read(input), BuiltinToolOutput::Read(output)) => {
                    Some((input.file_path.clone(), output.clone()))
                }
                _ => None,
            })
            .collect();
        let (_, book) = reads.iter().find(|(path, _)| *path == notebook).expect("the notebook read");
        assert_eq!(book.kind.as_deref(), Some("notebook"));
        assert_eq!(book.file.as_ref().and_then(|f| f.cells.as_ref()).map(Vec::len), Some(1));
        let (_, read) = reads.iter().find(|(path, _)| *path == notes).expect("the notes read");
        let file = read.file.clone().expect("file");
        assert_eq!(read.kind.as_deref(), Some("text"));
        assert_eq!(file.content.as_deref(), Some("hello world\n"));
        assert_eq!(file.file_path.as_deref(), Some(notes.as_str()));
        let (_, BuiltinToolOutput::Glob(glob)) = named(&post, "Glob", post_name) else { panic!() };
        assert!(glob.filenames.unwrap_or_default().iter().any(|f| f.ends_with("notes.txt")));
        let (_, BuiltinToolOutput::Grep(grep)) = named(&post, "Grep", post_name) else { panic!() };
        assert_eq!(grep.mode.as_deref(), Some("content"));
        assert!(grep.content.unwrap_or_default().contains("hello world"));
        let (_, BuiltinToolOutput::TodoWrite(todo)) = named(&post, "TodoWrite", post_name) else { panic!() };
        assert_eq!(todo.new_todos.unwrap()[0].content.as_deref(), Some("Edit the notes"));
        let (_, BuiltinToolOutput::Bash(bash)) = named(&post, "Bash", post_name) else { panic!() };
        assert_eq!(bash.stdout.as_deref().map(str::trim_end), Some("typed"));
        assert_eq!(bash.interrupted, Some(false));
        let (_, BuiltinToolOutput::Write(write)) = named(&post, "Write", post_name) else { panic!() };
        assert_eq!(write.kind.as_deref(), Some("create"));
        assert_eq!(write.original_file, None);
        let (_, BuiltinToolOutput::Edit(edit)) = named(&post, "Edit", post_name) else { panic!() };
        assert_eq!(edit.original_file.as_deref(), Some("hello world\n"));
        let hunk = &edit.structured_patch.unwrap()[0];
        assert_eq!(
            hunk.lines.as_deref(),
            Some(&["-hello world".to_owned(), "+goodbye world".to_owned()][..])
        );
        let (_, BuiltinToolOutput::NotebookEdit(nb)) = named(&post, "NotebookEdit", post_name) else { panic!() };
        assert_eq!((nb.new_source.as_deref(), nb.cell_id.as_deref()), (Some("print(2)"), Some("c1")));
        let (_, BuiltinToolOutput::CronCreate(cron)) = named(&post, "CronCreate", post_name) else { panic!() };
        assert!(cron.id.is_some_and(|id| !id.is_empty()));
        assert_eq!(cron.recurring, Some(true));
        assert!(
            post.lock().unwrap().iter().all(|(_, o)| !matches!(o, BuiltinToolOutput::Unknown { .. })),
            "{:?}",
            post.lock().unwrap()
        );
        h.finish().await;
    })
    .await
}
