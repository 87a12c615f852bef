//! Reading every built-in tool's input and output, and what is not one.

use serde_json::{Value, json};

use super::*;

/// One real-shaped input per typed tool, by its current name.
fn inputs() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Agent",
            json!({"description": "Find the bug", "prompt": "Look for the off-by-one in src/", "subagent_type": "Explore", "run_in_background": false}),
        ),
        (
            "Bash",
            json!({"command": "cargo test", "timeout": 120000, "description": "Run the tests", "run_in_background": false, "dangerouslyDisableSandbox": false}),
        ),
        (
            "ExitPlanMode",
            json!({"allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}], "plan": "1. fix\n2. test"}),
        ),
        (
            "Edit",
            json!({"file_path": "/work/a.rs", "old_string": "let x = 1;", "new_string": "let x = 2;", "replace_all": false}),
        ),
        (
            "Read",
            json!({"file_path": "/work/a.rs", "offset": 10, "limit": 20}),
        ),
        (
            "Write",
            json!({"file_path": "/work/b.txt", "content": "hello\n"}),
        ),
        ("Glob", json!({"pattern": "**/*.rs", "path": "/work"})),
        (
            "Grep",
            json!({"pattern": "fn main", "path": "/work", "glob": "*.rs", "output_mode": "content", "-n": true, "-i": false, "-C": 2, "-B": 1, "-A": 3, "-o": false, "context": 2, "type": "rust", "head_limit": 50, "offset": 0, "multiline": false}),
        ),
        ("TaskStop", json!({"task_id": "b1x2"})),
        ("ListMcpResourcesTool", json!({"server": "docs"})),
        ("RefreshMcpTools", json!({"server": "docs"})),
        (
            "NotebookEdit",
            json!({"notebook_path": "/work/n.ipynb", "cell_id": "c1", "new_source": "print(1)", "cell_type": "code", "edit_mode": "replace"}),
        ),
        (
            "ReadMcpResourceDirTool",
            json!({"server": "docs", "uri": "file:///docs/"}),
        ),
        (
            "ReadMcpResourceTool",
            json!({"server": "docs", "uri": "file:///docs/a.md"}),
        ),
        (
            "ReportFindings",
            json!({"level": "high", "findings": [{"file": "src/a.rs", "line": 3, "summary": "off by one", "failure_scenario": "n = 0 panics"}]}),
        ),
        (
            "TodoWrite",
            json!({"todos": [{"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"}]}),
        ),
        (
            "WebFetch",
            json!({"url": "https://example.com", "prompt": "Summarise"}),
        ),
        (
            "WebSearch",
            json!({"query": "rust serde flatten", "allowed_domains": ["docs.rs"], "blocked_domains": []}),
        ),
        (
            "AskUserQuestion",
            json!({"questions": [{"question": "Which?", "header": "Pick", "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}], "multiSelect": false}]}),
        ),
        (
            "SendFeedback",
            json!({"type": "bug", "title": "Crash", "details": "It crashed", "task_category": "debug"}),
        ),
        (
            "ClaudeDesign",
            json!({"operation": "list", "arguments": {}}),
        ),
        (
            "Projects",
            json!({"method": "search", "query": "deploy", "n": 5}),
        ),
        ("EnterPlanMode", json!({})),
        (
            "TaskCreate",
            json!({"subject": "Fix it", "description": "The bug", "activeForm": "Fixing it"}),
        ),
        ("TaskGet", json!({"taskId": "1"})),
        (
            "TaskUpdate",
            json!({"taskId": "1", "status": "completed", "addBlockedBy": ["2"]}),
        ),
        ("TaskList", json!({})),
        (
            "Workflow",
            json!({"name": "release", "args": {"version": "1.2"}}),
        ),
        (
            "CronCreate",
            json!({"cron": "*/5 * * * *", "prompt": "check CI", "recurring": true}),
        ),
        ("CronDelete", json!({"id": "c1"})),
        ("CronList", json!({})),
        (
            "ScheduleWakeup",
            json!({"delaySeconds": 300, "reason": "wait for CI", "prompt": "check CI"}),
        ),
        (
            "RemoteTrigger",
            json!({"action": "run", "trigger_id": "t1"}),
        ),
        ("ShowOnboardingRolePicker", json!({})),
        ("OfferChromeSetup", json!({"reason": "to test the page"})),
        ("ReadNotifications", json!({})),
        (
            "Monitor",
            json!({"description": "tail the log", "timeout_ms": 60000, "command": "tail -f log"}),
        ),
        ("propose_skills", json!({"proposals": [{"name": "deploy"}]})),
        (
            "SetGoal",
            json!({"condition": "tests pass", "ask_user": true}),
        ),
        (
            "Artifact",
            json!({"action": "publish", "file_path": "/work/index.html", "title": "Demo"}),
        ),
        (
            "PushNotification",
            json!({"message": "Done", "status": "proactive"}),
        ),
        ("EnterWorktree", json!({"name": "fix"})),
        ("ExitWorktree", json!({"action": "keep"})),
    ]
}

#[test]
fn every_tool_is_read_typed_and_written_back_as_it_came() {
    let inputs = inputs();
    let names: std::collections::BTreeSet<_> = inputs.iter().map(|(n, _)| *n).collect();
    assert_eq!(names.len(), 43, "one input per typed tool");
    for (name, input) in inputs {
        let tool = BuiltinTool::parse(name, &input);
        assert!(
            !matches!(tool, BuiltinTool::Unknown { .. }),
            "{name} was not typed: {input}"
        );
        assert_eq!(tool.name(), name);
        assert_eq!(tool.to_value(), input, "{name}");
    }
}

#[test]
fn fields_are_read_under_their_wire_keys() {
    let BuiltinTool::Bash(bash) = BuiltinTool::parse(
        "Bash",
        &json!({"command": "ls", "timeout": 5000, "dangerouslyDisableSandbox": true}),
    ) else {
        panic!("not Bash")
    };
    assert_eq!(bash.command, "ls");
    assert_eq!(bash.timeout, Some(5000));
    assert_eq!(bash.dangerously_disable_sandbox, Some(true));
    assert!(bash.extra.is_empty());

    let BuiltinTool::Grep(grep) = BuiltinTool::parse(
        "Grep",
        &json!({"pattern": "x", "-C": 2, "-i": true, "type": "rust"}),
    ) else {
        panic!("not Grep")
    };
    assert_eq!(grep.around, Some(2));
    assert_eq!(grep.case_insensitive, Some(true));
    assert_eq!(grep.file_type.as_deref(), Some("rust"));

    let BuiltinTool::TodoWrite(todo) = BuiltinTool::parse(
        "TodoWrite",
        &json!({"todos": [{"content": "a", "status": "pending", "activeForm": "doing a"}]}),
    ) else {
        panic!("not TodoWrite")
    };
    assert_eq!(todo.todos[0].active_form.as_deref(), Some("doing a"));
}

#[test]
fn an_unknown_tool_is_kept_with_its_name_and_input() {
    for name in [
        "Skill",
        "SendMessage",
        "mcp__calc__add",
        "SomeToolOfTomorrow",
    ] {
        let input = json!({"a": 1, "nested": {"b": [2]}});
        let tool = BuiltinTool::parse(name, &input);
        assert_eq!(
            tool,
            BuiltinTool::Unknown {
                name: name.to_owned(),
                input: input.clone()
            }
        );
        assert_eq!(tool.name(), name);
        assert_eq!(tool.to_value(), input);
        let output = BuiltinToolOutput::parse(name, &input);
        assert_eq!(output.name(), name);
        assert!(matches!(output, BuiltinToolOutput::Unknown { .. }));
    }
}

#[test]
fn an_unknown_field_is_kept_in_extra() {
    let input = json!({"command": "ls", "sandbox_profile": "strict", "new": {"x": 1}});
    let BuiltinTool::Bash(bash) = BuiltinTool::parse("Bash", &input) else {
        panic!("not Bash")
    };
    assert_eq!(bash.extra["sandbox_profile"], "strict");
    assert_eq!(bash.extra["new"], json!({"x": 1}));
    assert_eq!(BuiltinTool::Bash(bash).to_value(), input);
}

#[test]
fn an_input_that_does_not_fit_its_tool_is_unknown_not_an_error() {
    for (name, input) in [
        ("Bash", json!({"description": "no command"})),
        (
            "Edit",
            json!({"file_path": "/a", "old_string": 1, "new_string": "x"}),
        ),
        ("Read", json!("not an object")),
        ("Write", Value::Null),
    ] {
        let tool = BuiltinTool::parse(name, &input);
        assert_eq!(
            tool,
            BuiltinTool::Unknown {
                name: name.to_owned(),
                input
            }
        );
    }
    // A field of the wrong type that is optional stays in `extra`.
    let BuiltinTool::Bash(bash) =
        BuiltinTool::parse("Bash", &json!({"command": "ls", "timeout": "soon"}))
    else {
        panic!("not Bash")
    };
    assert_eq!(bash.timeout, None);
    assert_eq!(bash.extra["timeout"], "soon");
}

#[test]
fn old_names_are_read_as_the_renamed_tools() {
    let agent = json!({"description": "d", "prompt": "p"});
    assert!(matches!(
        BuiltinTool::parse("Task", &agent),
        BuiltinTool::Agent(_)
    ));
    let stop = json!({"shell_id": "s1"});
    for name in ["KillShell", "KillBash"] {
        let BuiltinTool::TaskStop(t) = BuiltinTool::parse(name, &stop) else {
            panic!("{name}")
        };
        assert_eq!(t.shell_id.as_deref(), Some("s1"));
    }
    let goal = json!({"condition": "done"});
    assert_eq!(BuiltinTool::parse("ProposeGoal", &goal).name(), "SetGoal");
    let resource = json!({"server": "docs", "uri": "file:///a"});
    assert!(matches!(
        BuiltinTool::parse("ReadMcpResource", &resource),
        BuiltinTool::ReadMcpResource(_)
    ));
    assert!(matches!(
        BuiltinTool::parse("ReadMcpResourceDir", &resource),
        BuiltinTool::ReadMcpResourceDir(_)
    ));
    assert_eq!(
        BuiltinTool::parse("ListMcpResources", &json!({})).name(),
        "ListMcpResourcesTool"
    );
    let stopped = json!({"message": "stopped", "task_id": "b1", "task_type": "local_bash"});
    assert!(matches!(
        BuiltinToolOutput::parse("KillShell", &stopped),
        BuiltinToolOutput::TaskStop(_)
    ));
}

/// One real-shaped report per tool whose output is typed.
fn outputs() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Agent",
            json!({"status": "completed", "agentId": "a1", "content": [{"type": "text", "text": "found it"}], "totalToolUseCount": 3, "totalDurationMs": 1200, "totalTokens": 900, "usage": {"input_tokens": 10, "output_tokens": 5}, "prompt": "look"}),
        ),
        (
            "Bash",
            json!({"stdout": "ok\n", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false}),
        ),
        (
            "ExitPlanMode",
            json!({"plan": "1. fix", "isAgent": false, "filePath": "/p/plan.md"}),
        ),
        (
            "Edit",
            json!({"filePath": "/a", "oldString": "x", "newString": "y", "originalFile": "x\n", "structuredPatch": [], "userModified": false, "replaceAll": false}),
        ),
        (
            "Read",
            json!({"type": "image", "file": {"base64": "iVBOR", "type": "image/png", "originalSize": 67}}),
        ),
        (
            "Write",
            json!({"type": "update", "filePath": "/a", "content": "y", "structuredPatch": [], "originalFile": "x"}),
        ),
        (
            "Glob",
            json!({"durationMs": 2, "numFiles": 0, "filenames": [], "truncated": false}),
        ),
        (
            "Grep",
            json!({"mode": "files_with_matches", "numFiles": 1, "filenames": ["a.rs"]}),
        ),
        (
            "TaskStop",
            json!({"message": "stopped", "task_id": "b1", "task_type": "local_bash", "command": "sleep 60"}),
        ),
        (
            "ListMcpResourcesTool",
            json!([{"uri": "file:///a", "name": "a", "mimeType": "text/plain", "server": "docs"}]),
        ),
        (
            "RefreshMcpTools",
            json!({"server": "docs", "status": "refreshed", "toolCount": 3, "added": ["x"], "removed": []}),
        ),
        (
            "NotebookEdit",
            json!({"new_source": "print(2)", "cell_id": "c1", "cell_type": "code", "language": "python", "edit_mode": "replace", "notebook_path": "/n.ipynb", "original_file": "{}", "updated_file": "{}"}),
        ),
        (
            "ReadMcpResourceDirTool",
            json!({"resources": [{"uri": "file:///d/a", "name": "a"}]}),
        ),
        (
            "ReadMcpResourceTool",
            json!({"contents": [{"uri": "file:///a", "mimeType": "text/plain", "text": "hi"}]}),
        ),
        (
            "ReportFindings",
            json!({"count": 0, "level": "high", "findings": []}),
        ),
        (
            "TodoWrite",
            json!({"oldTodos": [], "newTodos": [{"content": "a", "status": "pending", "activeForm": "doing a"}]}),
        ),
        (
            "WebFetch",
            json!({"bytes": 1256, "code": 200, "codeText": "OK", "result": "A page", "durationMs": 340, "url": "https://example.com"}),
        ),
        (
            "WebSearch",
            json!({"query": "rust", "results": [{"tool_use_id": "srvtoolu_1", "content": [{"title": "Rust", "url": "https://rust-lang.org"}]}, "Rust is a language."], "durationSeconds": 1.5}),
        ),
        (
            "AskUserQuestion",
            json!({"questions": [{"question": "Which?", "header": "Pick", "options": [], "multiSelect": false}], "answers": {"Which?": "A"}}),
        ),
        (
            "SendFeedback",
            json!({"success": true, "message": "Thanks"}),
        ),
        (
            "ClaudeDesign",
            json!({"operation": "list", "content": [{"type": "text", "text": "[]"}]}),
        ),
        ("EnterPlanMode", json!({"message": "Entered plan mode"})),
        (
            "TaskCreate",
            json!({"task": {"id": "1", "subject": "Fix it"}}),
        ),
        ("TaskGet", json!({"task": null})),
        (
            "TaskUpdate",
            json!({"success": true, "taskId": "1", "updatedFields": ["status"], "statusChange": {"from": "pending", "to": "completed"}}),
        ),
        (
            "TaskList",
            json!({"tasks": [{"id": "1", "subject": "Fix it", "status": "pending", "blockedBy": []}]}),
        ),
        (
            "Workflow",
            json!({"status": "async_launched", "taskId": "w1", "workflowName": "release"}),
        ),
        (
            "CronCreate",
            json!({"id": "c1", "humanSchedule": "every Monday at 9:00", "recurring": true}),
        ),
        ("CronDelete", json!({"id": "c1"})),
        (
            "CronList",
            json!({"jobs": [{"id": "c1", "cron": "0 9 * * 1", "humanSchedule": "every Monday at 9:00", "prompt": "check"}]}),
        ),
        (
            "ScheduleWakeup",
            json!({"scheduledFor": 1765100000000u64, "clampedDelaySeconds": 300, "wasClamped": false}),
        ),
        ("RemoteTrigger", json!({"status": 200, "json": "{}"})),
        ("ShowOnboardingRolePicker", json!({"role": "engineer"})),
        ("OfferChromeSetup", json!({"outcome": "not_now"})),
        (
            "ReadNotifications",
            json!({"notifications": [], "remaining": 0}),
        ),
        ("Monitor", json!({"taskId": "m1", "timeoutMs": 60000})),
        ("propose_skills", json!({"proposalCount": 2})),
        (
            "SetGoal",
            json!({"condition": "tests pass", "askUser": false}),
        ),
        (
            "PushNotification",
            json!({"message": "sent", "pushSent": true}),
        ),
        (
            "EnterWorktree",
            json!({"worktreePath": "/w/.claude/worktrees/fix", "worktreeBranch": "fix", "message": "Entered"}),
        ),
        (
            "ExitWorktree",
            json!({"action": "keep", "originalCwd": "/w", "worktreePath": "/w/.claude/worktrees/fix", "message": "Kept"}),
        ),
    ]
}

#[test]
fn every_typed_report_is_read_typed_and_written_back_as_it_came() {
    let outputs = outputs();
    assert_eq!(outputs.len(), 41, "every tool but Artifact and Projects");
    for (name, output) in outputs {
        let typed = BuiltinToolOutput::parse(name, &output);
        assert!(
            !matches!(typed, BuiltinToolOutput::Unknown { .. }),
            "{name}'s report was not typed: {output}"
        );
        assert_eq!(typed.name(), name);
        assert_eq!(typed.to_value(), output, "{name}");
    }
}

#[test]
fn outputs_are_read_typed() {
    let bash = json!({"stdout": "hi\n", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false});
    let BuiltinToolOutput::Bash(out) = BuiltinToolOutput::parse("Bash", &bash) else {
        panic!("not Bash")
    };
    assert_eq!(out.stdout.as_deref(), Some("hi\n"));
    assert_eq!(out.interrupted, Some(false));

    let read = json!({"type": "text", "file": {"filePath": "/a", "content": "x", "numLines": 1, "startLine": 1, "totalLines": 1}});
    let BuiltinToolOutput::Read(out) = BuiltinToolOutput::parse("Read", &read) else {
        panic!("not Read")
    };
    assert_eq!(out.kind.as_deref(), Some("text"));
    let file = out.file.as_ref().unwrap();
    assert_eq!(file.content.as_deref(), Some("x"));
    assert_eq!(file.total_lines, Some(1));
    assert_eq!(BuiltinToolOutput::Read(out).to_value(), read);

    let edit = json!({"filePath": "/a", "oldString": "1", "newString": "2", "originalFile": "1\n", "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-1", "+2"]}], "userModified": false, "replaceAll": false});
    let BuiltinToolOutput::Edit(out) = BuiltinToolOutput::parse("Edit", &edit) else {
        panic!("not Edit")
    };
    assert_eq!(
        out.structured_patch.as_ref().unwrap()[0]
            .lines
            .as_ref()
            .unwrap(),
        &["-1", "+2"]
    );
    assert_eq!(out.original_file.as_deref(), Some("1\n"));

    let write = json!({"type": "create", "filePath": "/b", "content": "x", "structuredPatch": [], "originalFile": null});
    let BuiltinToolOutput::Write(out) = BuiltinToolOutput::parse("Write", &write) else {
        panic!("not Write")
    };
    assert_eq!(out.kind.as_deref(), Some("create"));
    assert_eq!(out.original_file, None);
    assert_eq!(
        BuiltinToolOutput::Write(out).to_value(),
        write,
        "null is kept"
    );

    let glob = json!({"filenames": ["/a.rs"], "durationMs": 3, "numFiles": 1, "truncated": false});
    let BuiltinToolOutput::Glob(out) = BuiltinToolOutput::parse("Glob", &glob) else {
        panic!("not Glob")
    };
    assert_eq!(out.filenames.as_deref(), Some(&["/a.rs".to_owned()][..]));

    let grep = json!({"mode": "content", "numFiles": 0, "filenames": [], "content": "a.rs:1:fn main", "numLines": 1});
    let BuiltinToolOutput::Grep(out) = BuiltinToolOutput::parse("Grep", &grep) else {
        panic!("not Grep")
    };
    assert_eq!(out.content.as_deref(), Some("a.rs:1:fn main"));

    let todo = json!({"oldTodos": [], "newTodos": [{"content": "a", "status": "pending", "activeForm": "doing a"}]});
    let BuiltinToolOutput::TodoWrite(out) = BuiltinToolOutput::parse("TodoWrite", &todo) else {
        panic!("not TodoWrite")
    };
    assert_eq!(out.new_todos.unwrap()[0].status.as_deref(), Some("pending"));

    let listed = json!([{"uri": "file:///a", "name": "a", "server": "docs"}]);
    let BuiltinToolOutput::ListMcpResources(out) =
        BuiltinToolOutput::parse("ListMcpResourcesTool", &listed)
    else {
        panic!("not ListMcpResources")
    };
    assert_eq!(out[0].server.as_deref(), Some("docs"));

    // A tool whose output is not typed (`Artifact`) is kept as it came.
    let artifact = json!({"url": "https://x", "path": "/p"});
    assert_eq!(
        BuiltinToolOutput::parse("Artifact", &artifact),
        BuiltinToolOutput::Unknown {
            name: "Artifact".into(),
            output: artifact
        }
    );
}

#[test]
fn a_tool_use_block_and_hook_inputs_read_their_tool() {
    use crate::message::ContentBlock;
    use crate::protocol::HookInput;

    let block = ContentBlock::from_value(
        json!({"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {"file_path": "/a", "old_string": "x", "new_string": "y"}}),
    );
    let BuiltinTool::Edit(edit) = block.as_tool_use().unwrap().builtin_tool() else {
        panic!("not Edit")
    };
    assert_eq!(edit.new_string, "y");

    let pre = HookInput::from_value(
        json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_2"}),
    );
    let Some(BuiltinTool::Bash(bash)) = pre.builtin_tool() else {
        panic!("not Bash: {pre:?}")
    };
    assert_eq!(bash.command, "ls");
    assert_eq!(pre.builtin_tool_output(), None, "PreToolUse has no output");

    let post = HookInput::from_value(
        json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a\n", "stderr": "", "interrupted": false}}),
    );
    let Some(BuiltinToolOutput::Bash(out)) = post.builtin_tool_output() else {
        panic!("not Bash: {post:?}")
    };
    assert_eq!(out.stdout.as_deref(), Some("a\n"));
    let HookInput::PostToolUse(typed) = &post else {
        panic!()
    };
    assert_eq!(typed.builtin_tool(), post.builtin_tool());

    let stop = HookInput::from_value(json!({"hook_event_name": "Stop"}));
    assert_eq!(stop.builtin_tool(), None);
}
