//! What each built-in tool reports, one struct per `*Output` type of the
//! TypeScript SDK's `sdk-tools.d.ts`, with its name and wire keys. This is
//! the `tool_response` of a `PostToolUse` hook input (and the
//! `tool_use_result` of the user message that carries the tool's result),
//! not the text the model sees.
//!
//! Every field is optional, required ones too: the CLI reports what it has,
//! and a field it stops writing must not make the whole output unreadable.
//! A union of the TypeScript SDK (`AgentOutput`, `FileReadOutput`) is one
//! struct with the fields of all its variants, told apart by `status` or
//! `kind`.

use serde_json::{Map, Value};

use super::inputs::TodoItem;
use crate::wire::wire_struct;

wire_struct! {
    /// `Agent`: a finished subagent (`status` `completed`), one started in
    /// the background (`async_launched`) or remotely (`remote_launched`).
    pub struct AgentOutput {
        /// `completed`, `async_launched` or `remote_launched`.
        opt status: String = "status",
        /// The agent's id.
        opt agent_id: String = "agentId",
        /// The agent's type.
        opt agent_type: String = "agentType",
        /// Its final answer: text blocks (`{"type": "text", "text": …}`).
        opt content: Vec<Value> = "content",
        /// The model it ran on.
        opt resolved_model: String = "resolvedModel",
        /// Every model it used, in order.
        opt models_used: Vec<String> = "modelsUsed",
        /// How many tools it called.
        opt total_tool_use_count: u64 = "totalToolUseCount",
        /// How long it ran.
        opt total_duration_ms: f64 = "totalDurationMs",
        /// Tokens it used.
        opt total_tokens: u64 = "totalTokens",
        /// Its API usage (`input_tokens`, `output_tokens`, …).
        opt usage: Map<String, Value> = "usage",
        /// The tools it used.
        opt tools_used: Vec<String> = "toolsUsed",
        /// Counts of reads, searches, commands, edits and lines changed.
        opt tool_stats: Map<String, Value> = "toolStats",
        /// The prompt it was given.
        opt prompt: String = "prompt",
        /// Its worktree, when isolated in one.
        opt worktree_path: String = "worktreePath",
        /// Its worktree's branch.
        opt worktree_branch: String = "worktreeBranch",
        /// `true` for a background agent.
        opt is_async: bool = "isAsync",
        /// The task's description (background and remote agents).
        opt description: String = "description",
        /// The file its progress is written to (background and remote agents).
        opt output_file: String = "outputFile",
        /// Whether the caller can read `output_file`.
        opt can_read_output_file: bool = "canReadOutputFile",
        /// The remote task's id.
        opt task_id: String = "taskId",
        /// The remote session's URL.
        opt session_url: String = "sessionUrl",
    }
}

wire_struct! {
    /// `Bash`: what the command wrote.
    pub struct BashOutput {
        /// Standard output.
        opt stdout: String = "stdout",
        /// Standard error.
        opt stderr: String = "stderr",
        /// Where the full output was saved, when it was cut.
        opt raw_output_path: String = "rawOutputPath",
        /// Whether the command was interrupted.
        opt interrupted: bool = "interrupted",
        /// Whether stdout is an image.
        opt is_image: bool = "isImage",
        /// The background task's id, for a command run in the background.
        opt background_task_id: String = "backgroundTaskId",
        /// The user moved it to the background.
        opt backgrounded_by_user: bool = "backgroundedByUser",
        /// It timed out after this many milliseconds.
        opt timed_out_after_ms: u64 = "timedOutAfterMs",
        /// The background command's working directory, when it differs.
        opt background_cwd_hint: String = "backgroundCwdHint",
        /// The background command ends with the final response.
        opt background_ends_with_final_response: bool = "backgroundEndsWithFinalResponse",
        /// The background command wakes its owner when it ends.
        opt background_wakes_owner: bool = "backgroundWakesOwner",
        /// It ran outside the sandbox.
        opt dangerously_disable_sandbox: bool = "dangerouslyDisableSandbox",
        /// What a non-zero exit code meant.
        opt return_code_interpretation: String = "returnCodeInterpretation",
        /// The command writes nothing when it succeeds.
        opt no_output_expected: bool = "noOutputExpected",
        /// Structured content blocks.
        opt structured_content: Vec<Value> = "structuredContent",
        /// Where a large output was saved.
        opt persisted_output_path: String = "persistedOutputPath",
        /// Its size in bytes.
        opt persisted_output_size: u64 = "persistedOutputSize",
        /// A hint that a file read earlier changed.
        opt stale_read_file_state_hint: String = "staleReadFileStateHint",
        /// A hint about GitHub's rate limit.
        opt gh_rate_limit_hint: String = "ghRateLimitHint",
        /// A git commit, push, merge or pull request the command made.
        opt git_operation: Map<String, Value> = "gitOperation",
    }
}

wire_struct! {
    /// `ExitPlanMode`: the plan presented.
    pub struct ExitPlanModeOutput {
        /// The plan (`null` when there is none).
        nul plan: String = "plan",
        /// Whether a subagent presented it.
        opt is_agent: bool = "isAgent",
        /// The plan's file.
        opt file_path: String = "filePath",
        /// Whether the task tool is available.
        opt has_task_tool: bool = "hasTaskTool",
        /// The user edited the plan.
        opt plan_was_edited: bool = "planWasEdited",
        /// A teammate waits for its leader's approval.
        opt awaiting_leader_approval: bool = "awaitingLeaderApproval",
        /// That approval request's id.
        opt request_id: String = "requestId",
    }
}

wire_struct! {
    /// One hunk of a unified diff (`structuredPatch`).
    pub struct PatchHunk {
        /// First line in the old file.
        opt old_start: u64 = "oldStart",
        /// Lines in the old file.
        opt old_lines: u64 = "oldLines",
        /// First line in the new file.
        opt new_start: u64 = "newStart",
        /// Lines in the new file.
        opt new_lines: u64 = "newLines",
        /// The lines, each starting with ` `, `-` or `+`.
        opt lines: Vec<String> = "lines",
    }
}

wire_struct! {
    /// `Edit`: the change made.
    pub struct FileEditOutput {
        /// The file.
        opt file_path: String = "filePath",
        /// The text replaced.
        opt old_string: String = "oldString",
        /// The text it was replaced with.
        opt new_string: String = "newString",
        /// The file before (`null` when not kept).
        nul original_file: String = "originalFile",
        /// The diff.
        opt structured_patch: Vec<PatchHunk> = "structuredPatch",
        /// The user changed the proposed edit.
        opt user_modified: bool = "userModified",
        /// Every occurrence was replaced.
        opt replace_all: bool = "replaceAll",
        /// The git diff of the file (`filename`, `status`, `additions`, …).
        opt git_diff: Map<String, Value> = "gitDiff",
        /// The change was staged.
        opt staged: bool = "staged",
    }
}

wire_struct! {
    /// `Write`: the file written.
    pub struct FileWriteOutput {
        /// `create` or `update`.
        opt kind: String = "type",
        /// The file.
        opt file_path: String = "filePath",
        /// What was written.
        opt content: String = "content",
        /// The diff (empty for a new file).
        opt structured_patch: Vec<PatchHunk> = "structuredPatch",
        /// The file before (`null` for a new file).
        nul original_file: String = "originalFile",
        /// The git diff of the file.
        opt git_diff: Map<String, Value> = "gitDiff",
        /// The user changed the proposed content.
        opt user_modified: bool = "userModified",
        /// The change was staged.
        opt staged: bool = "staged",
    }
}

wire_struct! {
    /// `Glob`: the files found.
    pub struct GlobOutput {
        /// How long the search took.
        opt duration_ms: f64 = "durationMs",
        /// How many files are listed.
        opt num_files: u64 = "numFiles",
        /// The files.
        opt filenames: Vec<String> = "filenames",
        /// The list was cut.
        opt truncated: bool = "truncated",
        /// How many matched in all.
        opt total_matches: u64 = "totalMatches",
        /// Whether `total_matches` is exact.
        opt count_is_complete: bool = "countIsComplete",
        /// The search timed out.
        opt timed_out: bool = "timedOut",
    }
}

wire_struct! {
    /// `Grep`: the matches.
    pub struct GrepOutput {
        /// `content`, `files_with_matches` or `count`.
        opt mode: String = "mode",
        /// How many files are listed.
        opt num_files: u64 = "numFiles",
        /// The files.
        opt filenames: Vec<String> = "filenames",
        /// The matching lines (`content` mode).
        opt content: String = "content",
        /// Lines in `content`.
        opt num_lines: u64 = "numLines",
        /// How many matches (`count` mode).
        opt num_matches: u64 = "numMatches",
        /// Files before the limit.
        opt total_files: u64 = "totalFiles",
        /// Lines before the limit.
        opt total_lines: u64 = "totalLines",
        /// The `head_limit` applied.
        opt applied_limit: u64 = "appliedLimit",
        /// The `offset` applied.
        opt applied_offset: u64 = "appliedOffset",
        /// The search timed out.
        opt timed_out: bool = "timedOut",
    }
}

wire_struct! {
    /// `TaskStop`: the task stopped.
    pub struct TaskStopOutput {
        /// What happened.
        opt message: String = "message",
        /// The task.
        opt task_id: String = "task_id",
        /// Its type (`local_bash`, `local_agent`, …).
        opt task_type: String = "task_type",
        /// Its command, for a shell.
        opt command: String = "command",
    }
}

wire_struct! {
    /// `NotebookEdit`: the cell changed.
    pub struct NotebookEditOutput {
        /// The cell's new source.
        opt new_source: String = "new_source",
        /// Its old source.
        opt old_source: String = "old_source",
        /// Its old type.
        opt old_cell_type: String = "old_cell_type",
        /// The cell.
        opt cell_id: String = "cell_id",
        /// `code` or `markdown`.
        opt cell_type: String = "cell_type",
        /// The notebook's language.
        opt language: String = "language",
        /// `replace`, `insert` or `delete`.
        opt edit_mode: String = "edit_mode",
        /// What went wrong.
        opt error: String = "error",
        /// The notebook.
        opt notebook_path: String = "notebook_path",
        /// The notebook before.
        opt original_file: String = "original_file",
        /// The notebook after.
        opt updated_file: String = "updated_file",
    }
}

wire_struct! {
    /// `ListMcpResourcesTool`: one resource of the list it reports.
    pub struct McpResourceListing {
        /// The resource's URI.
        opt uri: String = "uri",
        /// Its name.
        opt name: String = "name",
        /// Its MIME type.
        opt mime_type: String = "mimeType",
        /// What it is.
        opt description: String = "description",
        /// The server it comes from.
        opt server: String = "server",
    }
}

wire_struct! {
    /// `RefreshMcpTools`: one server refreshed.
    pub struct RefreshMcpToolsOutput {
        /// The server.
        opt server: String = "server",
        /// `refreshed`, `error` or `not_connected`.
        opt status: String = "status",
        /// Its tools now.
        opt tool_count: u64 = "toolCount",
        /// Tools added.
        opt added: Vec<String> = "added",
        /// Tools removed.
        opt removed: Vec<String> = "removed",
        /// What went wrong.
        opt error: String = "error",
    }
}

wire_struct! {
    /// `ReadMcpResourceDirTool`: a directory's entries.
    pub struct ReadMcpResourceDirOutput {
        /// Entries: `uri`, `name`, `mimeType`.
        opt resources: Vec<Value> = "resources",
        /// What went wrong.
        opt error: String = "error",
    }
}

wire_struct! {
    /// `ReadMcpResourceTool`: a resource's contents.
    pub struct ReadMcpResourceOutput {
        /// Contents: `uri`, `mimeType`, `text` or `blobSavedTo`.
        opt contents: Vec<Value> = "contents",
        /// What went wrong.
        opt error: String = "error",
    }
}

wire_struct! {
    /// `ReportFindings`: the findings recorded.
    pub struct ReportFindingsOutput {
        /// How many.
        opt count: u64 = "count",
        /// The review's effort level.
        opt level: String = "level",
        /// The findings, as in the input.
        opt findings: Vec<Value> = "findings",
    }
}

wire_struct! {
    /// `TodoWrite`: the list before and after.
    pub struct TodoWriteOutput {
        /// Before.
        opt old_todos: Vec<TodoItem> = "oldTodos",
        /// After.
        opt new_todos: Vec<TodoItem> = "newTodos",
    }
}

wire_struct! {
    /// `WebFetch`: the page fetched and the model's answer about it.
    pub struct WebFetchOutput {
        /// Size of the page.
        opt bytes: u64 = "bytes",
        /// HTTP status code.
        opt code: u64 = "code",
        /// HTTP status text.
        opt code_text: String = "codeText",
        /// The answer to the prompt.
        opt result: String = "result",
        /// How long it took.
        opt duration_ms: f64 = "durationMs",
        /// The URL fetched.
        opt url: String = "url",
        /// The artifact version read (`slug`, `ver`).
        opt artifact_read: Map<String, Value> = "artifactRead",
    }
}

wire_struct! {
    /// `WebSearch`: the results.
    pub struct WebSearchOutput {
        /// The query.
        opt query: String = "query",
        /// Results: `{tool_use_id, content: [{title, url, snippet}]}` objects
        /// and commentary strings.
        opt results: Vec<Value> = "results",
        /// How long it took.
        opt duration_seconds: f64 = "durationSeconds",
        /// How many searches ran.
        opt search_count: u64 = "searchCount",
    }
}

wire_struct! {
    /// `AskUserQuestion`: the user's answers.
    pub struct AskUserQuestionOutput {
        /// The questions asked.
        opt questions: Vec<Value> = "questions",
        /// The answers, by question text.
        opt answers: Map<String, Value> = "answers",
        /// A free-form response.
        opt response: String = "response",
        /// Per-question notes.
        opt annotations: Map<String, Value> = "annotations",
        /// The time after which an unanswered question was given up.
        opt afk_timeout_ms: u64 = "afkTimeoutMs",
    }
}

wire_struct! {
    /// `SendFeedback`: whether it was sent.
    pub struct SendFeedbackOutput {
        /// Sent.
        opt success: bool = "success",
        /// What happened.
        opt message: String = "message",
    }
}

wire_struct! {
    /// `EnterWorktree`: the worktree entered.
    pub struct EnterWorktreeOutput {
        /// Its path.
        opt worktree_path: String = "worktreePath",
        /// Its branch.
        opt worktree_branch: String = "worktreeBranch",
        /// What happened.
        opt message: String = "message",
    }
}

wire_struct! {
    /// `ExitWorktree`: the worktree left.
    pub struct ExitWorktreeOutput {
        /// `keep` or `remove`.
        opt action: String = "action",
        /// The directory returned to.
        opt original_cwd: String = "originalCwd",
        /// The worktree.
        opt worktree_path: String = "worktreePath",
        /// Its branch.
        opt worktree_branch: String = "worktreeBranch",
        /// Its tmux session.
        opt tmux_session_name: String = "tmuxSessionName",
        /// Uncommitted files discarded.
        opt discarded_files: u64 = "discardedFiles",
        /// Commits discarded.
        opt discarded_commits: u64 = "discardedCommits",
        /// What happened.
        opt message: String = "message",
    }
}

wire_struct! {
    /// `TaskCreate`: the task created (`id`, `subject`, `description`).
    pub struct TaskCreateOutput {
        /// The task.
        opt task: Map<String, Value> = "task",
    }
}

wire_struct! {
    /// `TaskGet`: the task (`id`, `subject`, `description`, `status`,
    /// `blocks`, `blockedBy`), `None` when there is none.
    pub struct TaskGetOutput {
        /// The task.
        nul task: Map<String, Value> = "task",
    }
}

wire_struct! {
    /// `TaskUpdate`: what changed.
    pub struct TaskUpdateOutput {
        /// Whether it was updated.
        opt success: bool = "success",
        /// The task.
        opt task_id: String = "taskId",
        /// The fields changed.
        opt updated_fields: Vec<String> = "updatedFields",
        /// What went wrong.
        opt error: String = "error",
        /// `{from, to}` of the status.
        opt status_change: Map<String, Value> = "statusChange",
    }
}

wire_struct! {
    /// `TaskList`: the tasks (`id`, `subject`, `status`, `owner`,
    /// `blockedBy`).
    pub struct TaskListOutput {
        /// The tasks.
        opt tasks: Vec<Value> = "tasks",
    }
}

wire_struct! {
    /// `RemoteTrigger`: the API's answer.
    pub struct RemoteTriggerOutput {
        /// HTTP status.
        opt status: u64 = "status",
        /// The body, as JSON text.
        opt json: String = "json",
        /// A summary.
        opt summary: String = "summary",
    }
}

wire_struct! {
    /// `ShowOnboardingRolePicker`: the role picked.
    pub struct ShowOnboardingRolePickerOutput {
        /// The role.
        opt role: String = "role",
        /// The picker was dismissed.
        opt dismissed: bool = "dismissed",
    }
}

wire_struct! {
    /// `OfferChromeSetup`: what the user chose.
    pub struct OfferChromeSetupOutput {
        /// `connected`, `not_now` or `no_attempt_yet`.
        opt outcome: String = "outcome",
    }
}

wire_struct! {
    /// `ReadNotifications`: the notifications.
    pub struct ReadNotificationsOutput {
        /// The notifications.
        opt notifications: Vec<Value> = "notifications",
        /// How many are left unread.
        opt remaining: u64 = "remaining",
        /// When they were read.
        opt read_at: String = "read_at",
    }
}

wire_struct! {
    /// `ScheduleWakeup`: when the session wakes.
    pub struct ScheduleWakeupOutput {
        /// When, in milliseconds since the epoch.
        opt scheduled_for: f64 = "scheduledFor",
        /// The delay used.
        opt clamped_delay_seconds: f64 = "clampedDelaySeconds",
        /// The delay asked for was out of range.
        opt was_clamped: bool = "wasClamped",
        /// The wakeups were cancelled.
        opt stopped: bool = "stopped",
        /// How many.
        opt cancelled_wakeups: u64 = "cancelledWakeups",
    }
}

wire_struct! {
    /// `Monitor`: the monitor started.
    pub struct MonitorOutput {
        /// Its task id.
        opt task_id: String = "taskId",
        /// Its timeout.
        opt timeout_ms: u64 = "timeoutMs",
        /// It outlives the turn.
        opt persistent: bool = "persistent",
        /// It stayed in the sandbox.
        opt kept_in_sandbox_by_check: bool = "keptInSandboxByCheck",
    }
}

wire_struct! {
    /// `propose_skills`: how many were proposed.
    pub struct ProposeSkillsOutput {
        /// How many.
        opt proposal_count: u64 = "proposalCount",
    }
}

wire_struct! {
    /// `SetGoal`: the goal set.
    pub struct ProposeGoalOutput {
        /// When the goal is met.
        opt condition: String = "condition",
        /// The user was asked.
        opt ask_user: bool = "askUser",
    }
}

wire_struct! {
    /// `EnterPlanMode`: plan mode entered.
    pub struct EnterPlanModeOutput {
        /// What happened.
        opt message: String = "message",
    }
}

wire_struct! {
    /// `Workflow`: the run started.
    pub struct WorkflowOutput {
        /// `async_launched` or `remote_launched`.
        opt status: String = "status",
        /// Its task id.
        opt task_id: String = "taskId",
        /// `local_workflow` or `remote_agent`.
        opt task_type: String = "taskType",
        /// The workflow.
        opt workflow_name: String = "workflowName",
        /// The run's id.
        opt run_id: String = "runId",
        /// A summary.
        opt summary: String = "summary",
        /// Where its transcripts go.
        opt transcript_dir: String = "transcriptDir",
        /// Its script.
        opt script_path: String = "scriptPath",
        /// The remote session.
        opt session_url: String = "sessionUrl",
        /// A warning.
        opt warning: String = "warning",
        /// What went wrong.
        opt error: String = "error",
    }
}

wire_struct! {
    /// `CronCreate`: the prompt scheduled.
    pub struct CronCreateOutput {
        /// Its id.
        opt id: String = "id",
        /// The schedule in words.
        opt human_schedule: String = "humanSchedule",
        /// It repeats.
        opt recurring: bool = "recurring",
        /// It survives the session.
        opt durable: bool = "durable",
        /// When it fires next, in milliseconds since the epoch.
        opt next_fire_at: f64 = "nextFireAt",
        /// How long it lives.
        opt max_age_ms: u64 = "maxAgeMs",
        /// Other one-shot prompts pending (`id`, `humanSchedule`, `prompt`).
        opt other_one_shots: Vec<Value> = "otherOneShots",
    }
}

wire_struct! {
    /// `CronDelete`: the prompt cancelled.
    pub struct CronDeleteOutput {
        /// Its id.
        opt id: String = "id",
        /// A loop's wakeup ended with it.
        opt ended_loop_wakeup: bool = "endedLoopWakeup",
    }
}

wire_struct! {
    /// `CronList`: the scheduled prompts (`id`, `cron`, `humanSchedule`,
    /// `prompt`, `recurring`, `durable`, `nextFireAt`).
    pub struct CronListOutput {
        /// The prompts.
        opt jobs: Vec<Value> = "jobs",
    }
}

wire_struct! {
    /// `PushNotification`: whether it went out.
    pub struct PushNotificationOutput {
        /// What happened.
        opt message: String = "message",
        /// Sent to devices.
        opt push_sent: bool = "pushSent",
        /// Shown locally.
        opt local_sent: bool = "localSent",
        /// `config_off`, `user_present` or `no_transport`.
        opt disabled_reason: String = "disabledReason",
        /// When.
        opt sent_at: String = "sentAt",
    }
}

wire_struct! {
    /// `ClaudeDesign`: the operation's result.
    pub struct ClaudeDesignOutput {
        /// The operation.
        opt operation: String = "operation",
        /// Its content blocks.
        opt content: Vec<Value> = "content",
        /// It failed.
        opt is_error: bool = "isError",
    }
}

wire_struct! {
    /// `Read`'s `file`: the fields of every kind of file read, each set for
    /// the kinds that have it.
    pub struct FileReadFile {
        /// The file (text, notebook, pdf, parts).
        opt file_path: String = "filePath",
        /// The text read (text).
        opt content: String = "content",
        /// Lines read (text).
        opt num_lines: u64 = "numLines",
        /// The first line read (text).
        opt start_line: u64 = "startLine",
        /// Lines in the file (text).
        opt total_lines: u64 = "totalLines",
        /// A whole-file read was cut at the token cap (text).
        opt truncated_by_token_cap: bool = "truncatedByTokenCap",
        /// Base64 data (image, pdf).
        opt base64: String = "base64",
        /// The image's MIME type (image).
        opt media_type: String = "type",
        /// Size of the file (image, pdf, parts).
        opt original_size: u64 = "originalSize",
        /// Sizes before and after resizing (image).
        opt dimensions: Map<String, Value> = "dimensions",
        /// The cells (notebook).
        opt cells: Vec<Value> = "cells",
        /// Pages extracted (parts).
        opt count: u64 = "count",
        /// Where the page images are (parts).
        opt output_dir: String = "outputDir",
    }
}

wire_struct! {
    /// `Read`: what was read; `kind` says which fields of `file` are set.
    pub struct FileReadOutput {
        /// `text`, `image`, `notebook`, `pdf` or `parts`.
        opt kind: String = "type",
        /// The file.
        opt file: FileReadFile = "file",
        /// The artifact version read (`slug`, `ver`).
        opt artifact_read: Map<String, Value> = "artifactRead",
        /// The first page extracted (parts).
        opt first_page: u64 = "firstPage",
        /// The page images (parts; not kept on the reported result).
        opt pages: Vec<Value> = "pages",
    }
}
