//! The input of each built-in tool, one struct per `*Input` type of the
//! TypeScript SDK's `sdk-tools.d.ts`, with its name and wire keys.

use serde_json::{Map, Value};

use crate::wire::wire_struct;

wire_struct! {
    /// `Agent` (formerly `Task`): start a subagent.
    pub struct AgentInput {
        /// A short description of the task (3–5 words).
        req description: String = "description",
        /// The task for the agent.
        req prompt: String = "prompt",
        /// Which agent definition to use (`general-purpose`, `Explore`,
        /// `fork`, one of yours, …).
        opt subagent_type: String = "subagent_type",
        /// Model override: `sonnet`, `opus`, `haiku`, …
        opt model: String = "model",
        /// Reasoning effort: `low`, `medium`, `high`, `xhigh`, `max`.
        opt effort: String = "effort",
        /// Whether the agent runs in the background.
        opt run_in_background: bool = "run_in_background",
        /// A name the agent can be addressed by while it runs.
        opt name: String = "name",
        /// Deprecated and ignored by the CLI.
        opt team_name: String = "team_name",
        /// Deprecated and ignored by the CLI: a permission mode.
        opt mode: String = "mode",
        /// `worktree` or `remote`.
        opt isolation: String = "isolation",
    }
}

wire_struct! {
    /// `Bash`: run a shell command.
    pub struct BashInput {
        /// The command.
        req command: String = "command",
        /// Timeout in milliseconds.
        opt timeout: u64 = "timeout",
        /// What the command does, in a few words, for the user.
        opt description: String = "description",
        /// Run it as a background task.
        opt run_in_background: bool = "run_in_background",
        /// Run it outside the sandbox.
        opt dangerously_disable_sandbox: bool = "dangerouslyDisableSandbox",
    }
}

wire_struct! {
    /// `ExitPlanMode`: present the plan and leave plan mode. The CLI adds
    /// the plan itself to the input it reports (`plan`, `planFilePath`,
    /// kept in `extra`).
    pub struct ExitPlanModeInput {
        /// Deprecated: `[{"tool": "Bash", "prompt": …}]`.
        opt allowed_prompts: Vec<Value> = "allowedPrompts",
    }
}

wire_struct! {
    /// `Edit`: replace a string in a file.
    pub struct FileEditInput {
        /// Absolute path of the file.
        req file_path: String = "file_path",
        /// The text to replace.
        req old_string: String = "old_string",
        /// What to replace it with.
        req new_string: String = "new_string",
        /// Replace every occurrence (default: only one, which must be unique).
        opt replace_all: bool = "replace_all",
    }
}

wire_struct! {
    /// `Read`: read a file (text, image, PDF, notebook).
    pub struct FileReadInput {
        /// Absolute path of the file.
        req file_path: String = "file_path",
        /// First line to read (1-based).
        opt offset: u64 = "offset",
        /// How many lines to read.
        opt limit: u64 = "limit",
        /// Page range of a PDF (`"1-5"`).
        opt pages: String = "pages",
        /// Read a text file beyond the usual size limits.
        opt allow_large: bool = "allow_large",
    }
}

wire_struct! {
    /// `Write`: write a whole file.
    pub struct FileWriteInput {
        /// Absolute path of the file.
        req file_path: String = "file_path",
        /// Its new content.
        req content: String = "content",
    }
}

wire_struct! {
    /// `Glob`: find files by name pattern.
    pub struct GlobInput {
        /// The glob (`**/*.rs`).
        req pattern: String = "pattern",
        /// Directory to search (default: the working directory).
        opt path: String = "path",
    }
}

wire_struct! {
    /// `Grep`: search file contents with ripgrep.
    pub struct GrepInput {
        /// The regular expression.
        req pattern: String = "pattern",
        /// File or directory to search.
        opt path: String = "path",
        /// Glob filtering the files (`rg --glob`).
        opt glob: String = "glob",
        /// `content`, `files_with_matches` (the default) or `count`.
        opt output_mode: String = "output_mode",
        /// Lines before each match (`-B`).
        opt before: u64 = "-B",
        /// Lines after each match (`-A`).
        opt after: u64 = "-A",
        /// Lines around each match (`-C`, an alias of `context`).
        opt around: u64 = "-C",
        /// Lines around each match.
        opt context: u64 = "context",
        /// Show line numbers (`-n`).
        opt line_numbers: bool = "-n",
        /// Case-insensitive (`-i`).
        opt case_insensitive: bool = "-i",
        /// Only the matching parts (`-o`).
        opt only_matching: bool = "-o",
        /// File type (`rg --type`).
        opt file_type: String = "type",
        /// At most this many lines or entries.
        opt head_limit: u64 = "head_limit",
        /// Skip this many lines or entries first.
        opt offset: u64 = "offset",
        /// `.` matches newlines and patterns span lines.
        opt multiline: bool = "multiline",
    }
}

wire_struct! {
    /// `TaskStop` (formerly `KillShell`, `KillBash`): stop a background task.
    pub struct TaskStopInput {
        /// The task's id (or a named agent's).
        opt task_id: String = "task_id",
        /// Deprecated spelling of `task_id`.
        opt shell_id: String = "shell_id",
    }
}

wire_struct! {
    /// `ListMcpResourcesTool`: list the MCP servers' resources.
    pub struct ListMcpResourcesInput {
        /// Only this server's.
        opt server: String = "server",
    }
}

wire_struct! {
    /// `RefreshMcpTools`: list the MCP servers' tools again.
    pub struct RefreshMcpToolsInput {
        /// Only this server.
        opt server: String = "server",
    }
}

wire_struct! {
    /// `NotebookEdit`: change a Jupyter notebook cell.
    pub struct NotebookEditInput {
        /// Absolute path of the notebook.
        req notebook_path: String = "notebook_path",
        /// The cell (for `insert`, the new cell goes after it).
        opt cell_id: String = "cell_id",
        /// The cell's new source.
        req new_source: String = "new_source",
        /// `code` or `markdown`.
        opt cell_type: String = "cell_type",
        /// `replace` (the default), `insert` or `delete`.
        opt edit_mode: String = "edit_mode",
    }
}

wire_struct! {
    /// `ReadMcpResourceDirTool`: list a directory resource of an MCP server.
    pub struct ReadMcpResourceDirInput {
        /// The server.
        req server: String = "server",
        /// The directory's URI.
        req uri: String = "uri",
    }
}

wire_struct! {
    /// `ReadMcpResourceTool`: read a resource of an MCP server.
    pub struct ReadMcpResourceInput {
        /// The server.
        req server: String = "server",
        /// The resource's URI.
        req uri: String = "uri",
    }
}

wire_struct! {
    /// `ReportFindings`: a code review's findings.
    pub struct ReportFindingsInput {
        /// Effort the review ran at.
        opt level: String = "level",
        /// The findings, most severe first: objects with `file`, `line`,
        /// `summary`, `failure_scenario`, `severity`, …
        req findings: Vec<Value> = "findings",
    }
}

wire_struct! {
    /// One item of a todo list (`TodoWrite`).
    pub struct TodoItem {
        /// What to do.
        opt content: String = "content",
        /// `pending`, `in_progress` or `completed`.
        opt status: String = "status",
        /// The same in the present continuous, shown while in progress.
        opt active_form: String = "activeForm",
    }
}

wire_struct! {
    /// `TodoWrite`: replace the todo list.
    pub struct TodoWriteInput {
        /// The new list.
        req todos: Vec<TodoItem> = "todos",
    }
}

wire_struct! {
    /// `WebFetch`: fetch a URL and ask a model about it.
    pub struct WebFetchInput {
        /// The URL.
        req url: String = "url",
        /// What to ask about the page.
        req prompt: String = "prompt",
        /// Character position to read on from.
        opt offset: u64 = "offset",
    }
}

wire_struct! {
    /// `WebSearch`: search the web.
    pub struct WebSearchInput {
        /// The query.
        req query: String = "query",
        /// Only results from these domains.
        opt allowed_domains: Vec<String> = "allowed_domains",
        /// No results from these domains.
        opt blocked_domains: Vec<String> = "blocked_domains",
    }
}

wire_struct! {
    /// `AskUserQuestion`: ask the user multiple-choice questions.
    pub struct AskUserQuestionInput {
        /// One to four questions: objects with `question`, `header`,
        /// `options` (`label`, `description`) and `multiSelect`.
        req questions: Vec<Value> = "questions",
        /// The answers, by question text, once given.
        opt answers: Map<String, Value> = "answers",
        /// Per-question notes, by question text.
        opt annotations: Map<String, Value> = "annotations",
        /// Tracking metadata (`source`).
        opt metadata: Map<String, Value> = "metadata",
    }
}

wire_struct! {
    /// `SendFeedback`: feedback about Claude Code.
    pub struct SendFeedbackInput {
        /// `bug`, `idea` or `missing_capability`.
        req kind: String = "type",
        /// A title.
        req title: String = "title",
        /// The details.
        req details: String = "details",
        /// The area of the product.
        opt area: String = "area",
        /// How it failed.
        opt failure_mode: String = "failure_mode",
        /// What the user was doing: `code_edit`, `debug`, …
        opt task_category: String = "task_category",
    }
}

wire_struct! {
    /// `ClaudeDesign`: an operation of Claude Design.
    pub struct ClaudeDesignInput {
        /// The operation.
        req operation: String = "operation",
        /// Its arguments.
        req arguments: Map<String, Value> = "arguments",
    }
}

wire_struct! {
    /// `Projects`: a claude.ai project's knowledge.
    pub struct ProjectsInput {
        /// `project_info`, `read`, `search`, `write`, `delete`, …
        req method: String = "method",
        /// A document's path.
        opt path: String = "path",
        /// Content to write.
        opt content: String = "content",
        /// A local file to upload or download to.
        opt local_path: String = "local_path",
        /// Show the document to the user.
        opt present_to_user: bool = "present_to_user",
        /// A search query.
        opt query: String = "query",
        /// How many results.
        opt n: u64 = "n",
    }
}

wire_struct! {
    /// `EnterPlanMode`: switch to plan mode (no parameters).
    pub struct EnterPlanModeInput {}
}

wire_struct! {
    /// `TaskCreate`: add a task to the task list.
    pub struct TaskCreateInput {
        /// A title.
        req subject: String = "subject",
        /// What needs doing.
        req description: String = "description",
        /// The present continuous form, shown while in progress.
        opt active_form: String = "activeForm",
        /// Your own metadata.
        opt metadata: Map<String, Value> = "metadata",
    }
}

wire_struct! {
    /// `TaskGet`: one task of the task list.
    pub struct TaskGetInput {
        /// The task's id.
        req task_id: String = "taskId",
    }
}

wire_struct! {
    /// `TaskUpdate`: change a task of the task list.
    pub struct TaskUpdateInput {
        /// The task's id.
        req task_id: String = "taskId",
        /// New title.
        opt subject: String = "subject",
        /// New description.
        opt description: String = "description",
        /// New present continuous form.
        opt active_form: String = "activeForm",
        /// `pending`, `in_progress`, `completed` or `deleted`.
        opt status: String = "status",
        /// Tasks this one blocks.
        opt add_blocks: Vec<String> = "addBlocks",
        /// Tasks blocking this one.
        opt add_blocked_by: Vec<String> = "addBlockedBy",
        /// New owner.
        opt owner: String = "owner",
        /// Metadata to merge (`null` values delete keys).
        opt metadata: Map<String, Value> = "metadata",
    }
}

wire_struct! {
    /// `TaskList`: the task list (no parameters).
    pub struct TaskListInput {}
}

wire_struct! {
    /// `Workflow`: run a workflow script.
    pub struct WorkflowInput {
        /// The script's source.
        opt script: String = "script",
        /// A saved workflow's name.
        opt name: String = "name",
        /// What it does.
        opt description: String = "description",
        /// A title.
        opt title: String = "title",
        /// Its arguments.
        opt args: Map<String, Value> = "args",
        /// A script file.
        opt script_path: String = "scriptPath",
        /// A run to resume.
        opt resume_from_run_id: String = "resumeFromRunId",
    }
}

wire_struct! {
    /// `CronCreate`: schedule a prompt.
    pub struct CronCreateInput {
        /// Five-field cron expression, local time.
        req cron: String = "cron",
        /// The prompt to send.
        req prompt: String = "prompt",
        /// Repeat (default) or fire once.
        opt recurring: bool = "recurring",
        /// Survive the session.
        opt durable: bool = "durable",
    }
}

wire_struct! {
    /// `CronDelete`: cancel a scheduled prompt.
    pub struct CronDeleteInput {
        /// Its id.
        req id: String = "id",
    }
}

wire_struct! {
    /// `CronList`: the scheduled prompts (no parameters).
    pub struct CronListInput {}
}

wire_struct! {
    /// `ScheduleWakeup`: resume this session later.
    pub struct ScheduleWakeupInput {
        /// Seconds from now.
        opt delay_seconds: f64 = "delaySeconds",
        /// Why, for the user.
        opt reason: String = "reason",
        /// The prompt to resume with.
        opt prompt: String = "prompt",
        /// Cancel the pending wakeups.
        opt stop: bool = "stop",
        /// Schedule nothing.
        opt noop: bool = "noop",
    }
}

wire_struct! {
    /// `RemoteTrigger`: manage remote triggers.
    pub struct RemoteTriggerInput {
        /// `list`, `get`, `create`, `update`, `run`, …
        req action: String = "action",
        /// The trigger.
        opt trigger_id: String = "trigger_id",
        /// A session.
        opt session_id: String = "session_id",
        /// Pagination cursor.
        opt cursor: String = "cursor",
        /// The request body.
        opt body: Map<String, Value> = "body",
    }
}

wire_struct! {
    /// `ShowOnboardingRolePicker` (no parameters).
    pub struct ShowOnboardingRolePickerInput {}
}

wire_struct! {
    /// `OfferChromeSetup`: offer to connect Chrome.
    pub struct OfferChromeSetupInput {
        /// Why.
        opt reason: String = "reason",
    }
}

wire_struct! {
    /// `ReadNotifications` (no parameters).
    pub struct ReadNotificationsInput {}
}

wire_struct! {
    /// `Monitor`: watch a command's output or a WebSocket in the background.
    pub struct MonitorInput {
        /// What is watched, for the user.
        req description: String = "description",
        /// How long to watch, in milliseconds.
        req timeout_ms: u64 = "timeout_ms",
        /// The command to run.
        opt command: String = "command",
        /// A WebSocket to watch (`url`, …).
        opt ws: Map<String, Value> = "ws",
    }
}

wire_struct! {
    /// `propose_skills`: propose skills to save.
    pub struct ProposeSkillsInput {
        /// The proposals.
        req proposals: Vec<Value> = "proposals",
    }
}

wire_struct! {
    /// `SetGoal` (formerly `ProposeGoal`): propose a goal for the session.
    pub struct ProposeGoalInput {
        /// When the goal is met.
        req condition: String = "condition",
        /// Ask the user first.
        opt ask_user: bool = "ask_user",
    }
}

wire_struct! {
    /// `Artifact`: publish and manage artifacts.
    pub struct ArtifactInput {
        /// What to do (`publish`, `list`, `read`, …; default `publish`).
        opt action: String = "action",
        /// A file to publish.
        opt file_path: String = "file_path",
        /// A favicon.
        opt favicon: String = "favicon",
        /// An icon.
        opt icon: String = "icon",
        /// Page size.
        opt limit: u64 = "limit",
        /// Pagination token.
        opt page_token: String = "page_token",
        /// `mine`, `shared` or `all`.
        opt scope: String = "scope",
        /// A title.
        opt title: String = "title",
        /// A description.
        opt description: String = "description",
        /// A version label.
        opt label: String = "label",
        /// An artifact's URL.
        opt url: String = "url",
        /// A prompt.
        opt prompt: String = "prompt",
        /// Overwrite.
        opt force: bool = "force",
        /// Pin it.
        opt pin: bool = "pin",
        /// Where to write files.
        opt out_dir: String = "out_dir",
        /// Files to upload.
        opt file_paths: Vec<String> = "file_paths",
        /// An asset.
        opt asset_id: String = "asset_id",
        /// Only what came after this.
        opt after: String = "after",
        /// Capabilities it asks for.
        opt capabilities: Map<String, Value> = "capabilities",
        /// Contract version (`latest`).
        opt contract: String = "contract",
    }
}

wire_struct! {
    /// `PushNotification`: notify the user's devices.
    pub struct PushNotificationInput {
        /// The message.
        req message: String = "message",
        /// `proactive`.
        opt status: String = "status",
    }
}

wire_struct! {
    /// `EnterWorktree`: work in a git worktree.
    pub struct EnterWorktreeInput {
        /// The worktree's name.
        opt name: String = "name",
        /// An existing worktree's path.
        opt path: String = "path",
    }
}

wire_struct! {
    /// `ExitWorktree`: leave the worktree.
    pub struct ExitWorktreeInput {
        /// `keep` or `remove`.
        req action: String = "action",
        /// Remove it even with uncommitted changes.
        opt discard_changes: bool = "discard_changes",
    }
}
