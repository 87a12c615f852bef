//! The input of every hook event, as the CLI sends it in `hook_callback`
//! (the TypeScript SDK's `*HookInput` types, same field names).
//!
//! Every input carries the base fields ([`hook_input!`]); fields the CLI
//! adds later stay in `extra`. Field values the SDKs type as string unions
//! are `String`s here, their values listed in the docs: the CLI adds values
//! more often than fields.

use serde_json::{Map, Value};

use super::super::permission::PermissionUpdate;
use crate::shared_types::PermissionMode;
use crate::tools::{BuiltinTool, BuiltinToolOutput};
use crate::wire::wire_struct;

/// Declares a hook input struct with the fields every event carries
/// (TypeScript `BaseHookInput`).
macro_rules! hook_input {
    ($(#[$m:meta])* $name:ident = $event:literal { $($body:tt)* }) => {
        wire_struct! {
            $(#[$m])*
            pub struct $name tags { "hook_event_name" = $event } {
                /// The session id.
                opt session_id: String = "session_id",
                /// Path of the session transcript (JSONL).
                opt transcript_path: String = "transcript_path",
                /// Working directory.
                opt cwd: String = "cwd",
                /// Correlates a prompt with every event until the next prompt.
                opt prompt_id: String = "prompt_id",
                /// Current permission mode.
                opt permission_mode: PermissionMode = "permission_mode",
                /// The subagent's id, when the event comes from a subagent.
                opt agent_id: String = "agent_id",
                /// The subagent's type (or the main-thread `--agent`).
                opt agent_type: String = "agent_type",
                /// Reasoning effort of the current turn, `{"level": "medium"}`.
                opt effort: HookEffort = "effort",
                $($body)*
            }
        }
    };
}

wire_struct! {
    /// `effort` of a hook input.
    pub struct HookEffort {
        /// `low`, `medium`, `high`, `xhigh`, `max`.
        opt level: String = "level",
    }
}

wire_struct! {
    /// `mcp_server` of a tool hook input: which MCP server a tool comes from.
    pub struct McpServerProvenance {
        /// The server's name.
        opt name: String = "name",
        /// `sdk` (in-process), `dynamic`, a settings scope, …
        opt source: String = "source",
        /// Only on tool hook inputs, and only ever `true`: Claude Desktop or
        /// the VS Code extension started this session and says this server
        /// is its own. Some such servers run commands or control the
        /// computer, so check `name` and the tool too before allowing a
        /// call. Absent means unknown.
        opt built_in: bool = "built_in",
    }
}

wire_struct! {
    /// One call of a `PostToolBatch` input.
    pub struct PostToolBatchToolCall {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// Its output.
        opt tool_response: Value = "tool_response",
    }
}

wire_struct! {
    /// A background task, in `Stop` / `SubagentStop` inputs.
    pub struct BackgroundTaskSummary {
        /// The task id.
        opt id: String = "id",
        /// `local_bash`, `local_agent`, …
        opt kind: String = "type",
        /// Its status.
        opt status: String = "status",
        /// What it does.
        opt description: String = "description",
        /// The shell command.
        opt command: String = "command",
        /// The agent type.
        opt agent_type: String = "agent_type",
        /// The MCP server.
        opt server: String = "server",
        /// The tool.
        opt tool: String = "tool",
        /// The name.
        opt name: String = "name",
    }
}

wire_struct! {
    /// A scheduled prompt, in `Stop` / `SubagentStop` inputs.
    pub struct SessionCronSummary {
        /// The cron id.
        opt id: String = "id",
        /// Cron expression.
        opt schedule: String = "schedule",
        /// Whether it repeats.
        opt recurring: bool = "recurring",
        /// The prompt it sends.
        opt prompt: String = "prompt",
    }
}

hook_input! {
    /// `PreToolUse`: before a tool runs.
    PreToolUseInput = "PreToolUse" {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// The MCP server of an MCP tool.
        opt mcp_server: McpServerProvenance = "mcp_server",
    }
}

hook_input! {
    /// `PostToolUse`: after a tool succeeded.
    PostToolUseInput = "PostToolUse" {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// Its output.
        opt tool_response: Value = "tool_response",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// How long the tool ran.
        opt duration_ms: u64 = "duration_ms",
        /// The MCP server of an MCP tool.
        opt mcp_server: McpServerProvenance = "mcp_server",
    }
}

hook_input! {
    /// `PostToolUseFailure`: after a tool failed.
    PostToolUseFailureInput = "PostToolUseFailure" {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// The error text.
        opt error: String = "error",
        /// Whether the failure was an interrupt.
        opt is_interrupt: bool = "is_interrupt",
        /// How long the tool ran.
        opt duration_ms: u64 = "duration_ms",
        /// The MCP server of an MCP tool.
        opt mcp_server: McpServerProvenance = "mcp_server",
    }
}

hook_input! {
    /// `PostToolBatch`: after all tool calls of one model response ran.
    PostToolBatchInput = "PostToolBatch" {
        /// The calls, in order.
        opt tool_calls: Vec<PostToolBatchToolCall> = "tool_calls",
    }
}

hook_input! {
    /// `PermissionRequest`: a permission dialog would be shown.
    PermissionRequestInput = "PermissionRequest" {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// Suggested rules.
        opt permission_suggestions: Vec<PermissionUpdate> = "permission_suggestions",
        /// The MCP server of an MCP tool.
        opt mcp_server: McpServerProvenance = "mcp_server",
    }
}

hook_input! {
    /// `PermissionDenied`: a tool call was denied without a prompt (auto mode).
    PermissionDeniedInput = "PermissionDenied" {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// Why it was denied.
        opt reason: String = "reason",
        /// The MCP server of an MCP tool.
        opt mcp_server: McpServerProvenance = "mcp_server",
    }
}

hook_input! {
    /// `PreSkillShellCommand`: before a skill's shell command runs.
    PreSkillShellCommandInput = "PreSkillShellCommand" {
        /// The tool (`Bash`).
        opt tool_name: String = "tool_name",
        /// `{"command": …}`.
        opt tool_input: Value = "tool_input",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// The skill's command name.
        opt command_name: String = "command_name",
        /// Where the command comes from.
        opt command_source: String = "command_source",
        /// `user`, `claude` or `other`.
        opt invoked_by: String = "invoked_by",
    }
}

hook_input! {
    /// `Notification`: the CLI would show a notification.
    NotificationInput = "Notification" {
        /// The text.
        opt message: String = "message",
        /// The title.
        opt title: String = "title",
        /// `permission_prompt`, `idle_prompt`, …
        opt notification_type: String = "notification_type",
    }
}

hook_input! {
    /// `UserPromptSubmit`: a prompt was submitted.
    UserPromptSubmitInput = "UserPromptSubmit" {
        /// The prompt.
        opt prompt: String = "prompt",
        /// `user`, `sdk`, `system`, `loop_wakeup`, `schedule_wakeup`, `poll_event`.
        opt source: String = "source",
        /// The session's title.
        opt session_title: String = "session_title",
    }
}

hook_input! {
    /// `UserPromptExpansion`: a slash command or MCP prompt was expanded.
    UserPromptExpansionInput = "UserPromptExpansion" {
        /// `slash_command` or `mcp_prompt`.
        opt expansion_type: String = "expansion_type",
        /// The command.
        opt command_name: String = "command_name",
        /// Its arguments.
        opt command_args: String = "command_args",
        /// Where the command comes from.
        opt command_source: String = "command_source",
        /// The expanded prompt.
        opt prompt: String = "prompt",
    }
}

hook_input! {
    /// `SessionStart` (never sent to SDK callbacks by CLI 2.1.332: it fires
    /// before `initialize` registers them).
    SessionStartInput = "SessionStart" {
        /// `startup`, `resume`, `clear`, `compact` or `fork`.
        opt source: String = "source",
        /// The model.
        opt model: String = "model",
        /// The session's title.
        opt session_title: String = "session_title",
        /// Seconds since the last model response (on resume).
        opt seconds_since_last_response: f64 = "seconds_since_last_response",
        /// Tokens in the context.
        opt context_tokens: u64 = "context_tokens",
        /// Whether the prompt cache has likely expired.
        opt prompt_cache_likely_expired: bool = "prompt_cache_likely_expired",
        /// Estimated cost of writing the cache again.
        opt estimated_cache_write_usd: f64 = "estimated_cache_write_usd",
    }
}

hook_input! {
    /// `SessionEnd` (never sent to SDK callbacks by CLI 2.1.332: it fires
    /// after stdin is closed).
    SessionEndInput = "SessionEnd" {
        /// `clear`, `resume`, `logout`, `prompt_input_exit`, `other`, …
        opt reason: String = "reason",
    }
}

hook_input! {
    /// `Stop`: the main agent is about to stop.
    StopInput = "Stop" {
        /// Whether a Stop hook already made the model continue.
        opt stop_hook_active: bool = "stop_hook_active",
        /// The last assistant text.
        opt last_assistant_message: String = "last_assistant_message",
        /// Background tasks still running.
        opt background_tasks: Vec<BackgroundTaskSummary> = "background_tasks",
        /// Scheduled prompts.
        opt session_crons: Vec<SessionCronSummary> = "session_crons",
    }
}

hook_input! {
    /// `StopFailure`: the turn ended on an API error.
    StopFailureInput = "StopFailure" {
        /// The error kind (`rate_limit`, `authentication_failed`, …).
        opt error: String = "error",
        /// Details.
        opt error_details: String = "error_details",
        /// The last assistant text.
        opt last_assistant_message: String = "last_assistant_message",
    }
}

hook_input! {
    /// `Interrupt`: an interrupt ended the main conversation's turn. Fires
    /// once, except where the work goes on by itself or Claude Code is
    /// exiting; its output is ignored.
    InterruptInput = "Interrupt" {
        /// Who stopped the turn: `user` (a person, or a client request that
        /// does not say who sent it, such as an SDK's `interrupt`),
        /// `session` (another session's Claude) or `system` (a
        /// `PermissionRequest` hook, a plugin, a permission check, or an app
        /// or service acting by itself).
        opt source: String = "source",
        /// What ended the turn: `stop` (Esc, Ctrl+C, an interrupt request),
        /// `permission_denied`, `rewind` (back to an earlier message, or to
        /// edit the prompt) or `other`.
        opt reason: String = "reason",
        /// How the stop arrived, when known: `terminal` or `client` (a
        /// request from an app, a phone, an SDK program or a service).
        opt via: String = "via",
    }
}

hook_input! {
    /// `SubagentStart` (`agent_id`, `agent_type` are the base fields).
    SubagentStartInput = "SubagentStart" {}
}

hook_input! {
    /// `SubagentStop`: a subagent is about to stop.
    SubagentStopInput = "SubagentStop" {
        /// Whether a stop hook already made the subagent continue.
        opt stop_hook_active: bool = "stop_hook_active",
        /// The subagent's transcript.
        opt agent_transcript_path: String = "agent_transcript_path",
        /// The last assistant text.
        opt last_assistant_message: String = "last_assistant_message",
        /// Background tasks still running.
        opt background_tasks: Vec<BackgroundTaskSummary> = "background_tasks",
        /// Scheduled prompts.
        opt session_crons: Vec<SessionCronSummary> = "session_crons",
    }
}

hook_input! {
    /// `PreCompact`: before compaction.
    PreCompactInput = "PreCompact" {
        /// `manual` or `auto`.
        opt trigger: String = "trigger",
        /// Instructions given to `/compact` (`null` when none: then `None`).
        opt custom_instructions: String = "custom_instructions",
    }
}

hook_input! {
    /// `PostCompact`: after compaction.
    PostCompactInput = "PostCompact" {
        /// `manual` or `auto`.
        opt trigger: String = "trigger",
        /// The summary the conversation was compacted to.
        opt compact_summary: String = "compact_summary",
    }
}

/// Declares the two model-switch inputs, which share their fields.
macro_rules! model_switch_input {
    ($(#[$m:meta])* $name:ident = $event:literal) => {
        hook_input! {
            $(#[$m])*
            $name = $event {
                /// The model before.
                opt from_model: String = "from_model",
                /// The model after.
                opt to_model: String = "to_model",
                /// What was asked for (`null`: the default).
                opt requested_model: String = "requested_model",
                /// `command`, `picker`, `sdk` (and for `PostModelSwitch` `auto`, `resume`).
                opt source: String = "source",
                /// Tokens in the context.
                opt context_tokens: u64 = "context_tokens",
                /// Whether the prompt cache is warm.
                opt prompt_cache_warm: bool = "prompt_cache_warm",
                /// `5m` or `1h`.
                opt cache_ttl: String = "cache_ttl",
                /// Estimated cost of writing the cache for the new model.
                opt estimated_cache_write_usd: f64 = "estimated_cache_write_usd",
                /// `configured`, `catalog` or `default`.
                opt pricing: String = "pricing",
            }
        }
    };
}

model_switch_input! {
    /// `PreModelSwitch`: before the model changes (`set_model`, `/model`).
    PreModelSwitchInput = "PreModelSwitch"
}

model_switch_input! {
    /// `PostModelSwitch`: after the model changed.
    PostModelSwitchInput = "PostModelSwitch"
}

hook_input! {
    /// `Setup` (never sent to SDK callbacks by CLI 2.1.332).
    SetupInput = "Setup" {
        /// `init` or `maintenance`.
        opt trigger: String = "trigger",
    }
}

hook_input! {
    /// `TeammateIdle`: an agent-team teammate went idle.
    TeammateIdleInput = "TeammateIdle" {
        /// The teammate.
        opt teammate_name: String = "teammate_name",
        /// The team.
        opt team_name: String = "team_name",
    }
}

/// Declares the two task inputs, which share their fields.
macro_rules! task_input {
    ($(#[$m:meta])* $name:ident = $event:literal) => {
        hook_input! {
            $(#[$m])*
            $name = $event {
                /// The task id.
                opt task_id: String = "task_id",
                /// Its subject.
                opt task_subject: String = "task_subject",
                /// Its description.
                opt task_description: String = "task_description",
                /// The teammate it belongs to.
                opt teammate_name: String = "teammate_name",
                /// The team.
                opt team_name: String = "team_name",
            }
        }
    };
}

task_input! {
    /// `TaskCreated`: a task-list entry was created.
    TaskCreatedInput = "TaskCreated"
}

task_input! {
    /// `TaskCompleted`: a task-list entry was completed.
    TaskCompletedInput = "TaskCompleted"
}

hook_input! {
    /// `Elicitation`: an MCP server asks the user for input.
    ElicitationInput = "Elicitation" {
        /// The server.
        opt mcp_server_name: String = "mcp_server_name",
        /// What it asks.
        opt message: String = "message",
        /// `form` or `url`.
        opt mode: String = "mode",
        /// The URL (`url` mode).
        opt url: String = "url",
        /// The elicitation id.
        opt elicitation_id: String = "elicitation_id",
        /// The schema of the answer (`form` mode).
        opt requested_schema: Map<String, Value> = "requested_schema",
    }
}

hook_input! {
    /// `ElicitationResult`: the user answered an elicitation.
    ElicitationResultInput = "ElicitationResult" {
        /// The server.
        opt mcp_server_name: String = "mcp_server_name",
        /// The elicitation id.
        opt elicitation_id: String = "elicitation_id",
        /// `form` or `url`.
        opt mode: String = "mode",
        /// `accept`, `decline` or `cancel`.
        opt action: String = "action",
        /// The answer.
        opt content: Map<String, Value> = "content",
    }
}

hook_input! {
    /// `ConfigChange`: a settings file changed.
    ConfigChangeInput = "ConfigChange" {
        /// `user_settings`, `project_settings`, `local_settings`, `policy_settings`, `skills`.
        opt source: String = "source",
        /// The file.
        opt file_path: String = "file_path",
    }
}

hook_input! {
    /// `WorktreeCreate`: a git worktree is to be created.
    WorktreeCreateInput = "WorktreeCreate" {
        /// The worktree's name.
        opt name: String = "name",
    }
}

hook_input! {
    /// `WorktreeRemove`: a git worktree is to be removed.
    WorktreeRemoveInput = "WorktreeRemove" {
        /// Its path.
        opt worktree_path: String = "worktree_path",
    }
}

hook_input! {
    /// `InstructionsLoaded`: a CLAUDE.md / memory file was loaded.
    InstructionsLoadedInput = "InstructionsLoaded" {
        /// The file.
        opt file_path: String = "file_path",
        /// `User`, `Project`, `Local` or `Managed`.
        opt memory_type: String = "memory_type",
        /// `session_start`, `nested_traversal`, `path_glob_match`, `include`, `compact`.
        opt load_reason: String = "load_reason",
        /// Path globs of the file's rules.
        opt globs: Vec<String> = "globs",
        /// The file whose access loaded it.
        opt trigger_file_path: String = "trigger_file_path",
        /// The file that included it.
        opt parent_file_path: String = "parent_file_path",
    }
}

hook_input! {
    /// `CwdChanged`: the working directory changed.
    CwdChangedInput = "CwdChanged" {
        /// Before.
        opt old_cwd: String = "old_cwd",
        /// After.
        opt new_cwd: String = "new_cwd",
    }
}

hook_input! {
    /// `FileChanged`: a watched file changed.
    FileChangedInput = "FileChanged" {
        /// The file.
        opt file_path: String = "file_path",
        /// `change`, `add` or `unlink`.
        opt event: String = "event",
    }
}

hook_input! {
    /// `DirectoryAdded`: a working directory was added.
    DirectoryAddedInput = "DirectoryAdded" {
        /// The directory.
        opt directory: String = "directory",
        /// `slash_command` or `register_repo_root`.
        opt source: String = "source",
    }
}

hook_input! {
    /// `MessageDisplay`: assistant text is about to be displayed.
    MessageDisplayInput = "MessageDisplay" {
        /// The turn.
        opt turn_id: String = "turn_id",
        /// The message.
        opt message_id: String = "message_id",
        /// Index of this chunk in the message.
        opt index: u64 = "index",
        /// Whether this is the last chunk.
        opt final_: bool = "final",
        /// The text of this chunk.
        opt delta: String = "delta",
    }
}

/// `builtin_tool()` on the inputs of the events about one tool call.
macro_rules! typed_tool_call {
    ($($name:ident),*) => {$(
        impl $name {
            /// The tool's input typed by its name ([`BuiltinTool::Bash`]
            /// for `Bash`, …, [`BuiltinTool::Unknown`] for a tool this
            /// crate does not type); `None` when the CLI sent no
            /// `tool_name`.
            pub fn builtin_tool(&self) -> Option<BuiltinTool> {
                let name = self.tool_name.as_deref()?;
                Some(BuiltinTool::parse(name, self.tool_input.as_ref().unwrap_or(&Value::Null)))
            }
        }
    )*};
}

typed_tool_call!(
    PreToolUseInput,
    PostToolUseInput,
    PostToolUseFailureInput,
    PermissionRequestInput,
    PermissionDeniedInput
);

impl PostToolUseInput {
    /// What the tool reported (`tool_response`) typed by its name
    /// ([`BuiltinToolOutput::Bash`] for `Bash`, …,
    /// [`BuiltinToolOutput::Unknown`] for a tool this crate does not type);
    /// `None` without a `tool_name` or a `tool_response`.
    pub fn builtin_tool_output(&self) -> Option<BuiltinToolOutput> {
        let name = self.tool_name.as_deref()?;
        Some(BuiltinToolOutput::parse(name, self.tool_response.as_ref()?))
    }
}
