//! `{"type":"system", "subtype":…}` messages.

use serde_json::{Map, Value};

use crate::shared_types::{McpServerState, PermissionMode};
use crate::wire::{string_enum, wire_enum, wire_struct};

pub use super::system_events::{
    CommandsChanged, ControlRequestProgress, ElicitationComplete, FileFailure, FilesPersisted,
    LocalCommandOutput, MemoryRecall, MirrorError, ModelRefusalFallback, ModelRefusalNoFallback,
    PersistedFile, PluginInstall, RecalledMemory, SessionTitleChanged, SessionWritesLost,
    WorkerShuttingDown,
};

/// Declares [`SystemMessage`] and its accessors from one list of subtypes;
/// every payload struct has `session_id` and `uuid` fields.
macro_rules! system_messages {
    ($($(#[$m:meta])* $wire:literal => $variant:ident($inner:ty)),* $(,)?) => {
        wire_enum! {
            /// A `system` message, by `subtype`. Unknown subtypes (and known ones
            /// whose required fields are missing) are kept whole in
            /// [`SystemMessage::Unknown`].
            pub enum SystemMessage on "subtype" {
                $($(#[$m])* $wire => $variant($inner),)*
            }
        }

        impl SystemMessage {
            /// The `subtype`.
            pub fn subtype(&self) -> Option<&str> {
                match self {
                    $(Self::$variant(_) => Some($wire),)*
                    Self::Unknown(v) => v.get("subtype").and_then(Value::as_str),
                }
            }

            /// The `session_id`.
            pub fn session_id(&self) -> Option<&str> {
                match self {
                    $(Self::$variant(m) => m.session_id.as_deref(),)*
                    Self::Unknown(v) => v.get("session_id").and_then(Value::as_str),
                }
            }

            /// The message's `uuid`.
            pub fn uuid(&self) -> Option<&str> {
                match self {
                    $(Self::$variant(m) => m.uuid.as_deref(),)*
                    Self::Unknown(v) => v.get("uuid").and_then(Value::as_str),
                }
            }
        }
    };
}

system_messages! {
    /// `init`: sent at the start of every turn (not at process start).
    "init" => Init(SystemInit),
    /// `status`: `requesting` before API calls, compaction progress, mode changes.
    "status" => Status(SystemStatus),
    /// `api_retry`: an API call failed and will be retried.
    "api_retry" => ApiRetry(ApiRetry),
    /// `session_state_changed`: `running` / `idle` / `requires_action`.
    "session_state_changed" => SessionStateChanged(SessionStateChanged),
    /// `permission_denied`: a tool call was denied without asking.
    "permission_denied" => PermissionDenied(PermissionDenied),
    /// `informational`: a message for the user (e.g. a failed hook callback).
    "informational" => Informational(Informational),
    /// `notification`: a UI notification.
    "notification" => Notification(Notification),
    /// `thinking_tokens`: running estimate of thinking tokens.
    "thinking_tokens" => ThinkingTokens(ThinkingTokens),
    /// `compact_boundary`: the conversation was compacted here.
    "compact_boundary" => CompactBoundary(CompactBoundary),
    /// `background_tasks_changed`: the list of background tasks changed.
    "background_tasks_changed" => BackgroundTasksChanged(BackgroundTasksChanged),
    /// `hook_started` (shell hooks, with `--include-hook-events`).
    "hook_started" => HookStarted(HookEventMessage),
    /// `hook_progress`.
    "hook_progress" => HookProgress(HookEventMessage),
    /// `hook_response`.
    "hook_response" => HookResponse(HookEventMessage),
    /// `task_started` (background agents and shell tasks).
    "task_started" => TaskStarted(TaskEventMessage),
    /// `task_progress`.
    "task_progress" => TaskProgress(TaskEventMessage),
    /// `task_updated` (the new state is in `patch`).
    "task_updated" => TaskUpdated(TaskEventMessage),
    /// `task_notification`.
    "task_notification" => TaskNotification(TaskEventMessage),
    /// `control_request_progress`: a control request is being worked on.
    "control_request_progress" => ControlRequestProgress(ControlRequestProgress),
    /// `model_refusal_fallback`: the model refused; another model answers.
    "model_refusal_fallback" => ModelRefusalFallback(ModelRefusalFallback),
    /// `model_refusal_no_fallback`: the model refused; no fallback.
    "model_refusal_no_fallback" => ModelRefusalNoFallback(ModelRefusalNoFallback),
    /// `local_command_output`: output of a local slash command.
    "local_command_output" => LocalCommandOutput(LocalCommandOutput),
    /// `plugin_install`: plugin installation progress.
    "plugin_install" => PluginInstall(PluginInstall),
    /// `worker_shutting_down`: the CLI is shutting down.
    "worker_shutting_down" => WorkerShuttingDown(WorkerShuttingDown),
    /// `commands_changed`: the slash commands changed.
    "commands_changed" => CommandsChanged(CommandsChanged),
    /// `files_persisted`: files were uploaded.
    "files_persisted" => FilesPersisted(FilesPersisted),
    /// `memory_recall`: memories were recalled.
    "memory_recall" => MemoryRecall(MemoryRecall),
    /// `elicitation_complete`: an MCP server's URL elicitation finished.
    "elicitation_complete" => ElicitationComplete(ElicitationComplete),
    /// `mirror_error`: a session-store mirror write failed (made by the
    /// official SDKs; decoded if a peer sends it).
    "mirror_error" => MirrorError(MirrorError),
    /// `session_writes_lost`: transcript writes failed (disk full).
    "session_writes_lost" => SessionWritesLost(SessionWritesLost),
    /// `session_title_changed`: the session's title changed (not typed by
    /// either official SDK; CLI 2.1.332 sends it).
    "session_title_changed" => SessionTitleChanged(SessionTitleChanged),
}

wire_struct! {
    /// One entry of `system/init.mcp_servers`.
    pub struct InitMcpServer {
        /// The server's name.
        req name: String = "name",
        /// `connected`, `failed`, `pending`, …
        opt status: McpServerState = "status",
        /// `sdk` for in-process servers, `dynamic` for `--mcp-config` ones.
        opt source: String = "source",
    }
}

wire_struct! {
    /// `system/init`: the session's configuration for this turn. The CLI sends
    /// many more fields than modelled here; they are in `extra`.
    pub struct SystemInit tags { "type" = "system", "subtype" = "init" } {
        /// Working directory.
        opt cwd: String = "cwd",
        /// The session id.
        opt session_id: String = "session_id",
        /// Tool names available to the model (`mcp__server__tool` for MCP tools).
        opt tools: Vec<String> = "tools",
        /// MCP servers and their status.
        opt mcp_servers: Vec<InitMcpServer> = "mcp_servers",
        /// The model.
        opt model: String = "model",
        /// The permission mode.
        opt permission_mode: PermissionMode = "permissionMode",
        /// Slash commands.
        opt slash_commands: Vec<String> = "slash_commands",
        /// Where the API key comes from.
        opt api_key_source: String = "apiKeySource",
        /// The CLI's version.
        opt claude_code_version: String = "claude_code_version",
        /// The output style.
        opt output_style: String = "output_style",
        /// Agent names.
        opt agents: Vec<String> = "agents",
        /// Skill names.
        opt skills: Vec<String> = "skills",
        /// Loaded plugins.
        opt plugins: Vec<Value> = "plugins",
        /// Capability flags of the CLI.
        opt capabilities: Vec<String> = "capabilities",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/status`.
    pub struct SystemStatus tags { "type" = "system", "subtype" = "status" } {
        /// `requesting`, `compacting`, … (`null` after a mode change: then `None`).
        opt status: String = "status",
        /// The new permission mode, after `set_permission_mode`.
        opt permission_mode: PermissionMode = "permissionMode",
        /// `success` or `failed`, after compaction.
        opt compact_result: String = "compact_result",
        /// Why compaction failed.
        opt compact_error: String = "compact_error",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/api_retry`.
    pub struct ApiRetry tags { "type" = "system", "subtype" = "api_retry" } {
        /// Attempt number (1-based).
        opt attempt: u64 = "attempt",
        /// Maximum retries.
        opt max_retries: u64 = "max_retries",
        /// Delay before the retry, in milliseconds.
        opt retry_delay_ms: u64 = "retry_delay_ms",
        /// HTTP status of the failure.
        opt error_status: u64 = "error_status",
        /// Error kind (`overloaded`, …).
        opt error: String = "error",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

string_enum! {
    /// The session state reported by `session_state_changed`.
    pub enum SessionState default Idle {
        /// Working on a turn.
        "running" => Running,
        /// Waiting for input.
        "idle" => Idle,
        /// Waiting for the host (e.g. a permission answer).
        "requires_action" => RequiresAction,
    }
}

wire_struct! {
    /// `system/session_state_changed`.
    pub struct SessionStateChanged tags { "type" = "system", "subtype" = "session_state_changed" } {
        /// The new state.
        opt state: SessionState = "state",
        /// Whether only the SDK host sees this event.
        opt sdk_host_only: bool = "sdk_host_only",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/permission_denied`: a tool call was denied without a prompt.
    pub struct PermissionDenied tags { "type" = "system", "subtype" = "permission_denied" } {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
        /// The denial text.
        opt message: String = "message",
        /// The subagent whose call was denied.
        opt agent_id: String = "agent_id",
        /// Kind of the reason (`rule`, `mode`, `classifier`, …).
        opt decision_reason_type: String = "decision_reason_type",
        /// The reason.
        opt decision_reason: String = "decision_reason",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/informational`.
    pub struct Informational tags { "type" = "system", "subtype" = "informational" } {
        /// The text.
        opt content: String = "content",
        /// `info`, `warning`, …
        opt level: String = "level",
        /// A machine tag, e.g. `hook_callback_failed`.
        opt tag: String = "tag",
        /// The tool call it is about.
        opt tool_use_id: String = "tool_use_id",
        /// Whether the turn stops after it.
        opt prevent_continuation: bool = "prevent_continuation",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/notification`.
    pub struct Notification tags { "type" = "system", "subtype" = "notification" } {
        /// Notification key, e.g. `stop-hook-error`.
        opt key: String = "key",
        /// The text.
        opt text: String = "text",
        /// `low`, `medium`, `high`, `immediate`.
        opt priority: String = "priority",
        /// Display color.
        opt color: String = "color",
        /// How long to show it.
        opt timeout_ms: u64 = "timeout_ms",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/thinking_tokens`.
    pub struct ThinkingTokens tags { "type" = "system", "subtype" = "thinking_tokens" } {
        /// Estimated thinking tokens so far.
        opt estimated_tokens: u64 = "estimated_tokens",
        /// Change since the previous estimate.
        opt estimated_tokens_delta: i64 = "estimated_tokens_delta",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/compact_boundary`.
    pub struct CompactBoundary tags { "type" = "system", "subtype" = "compact_boundary" } {
        /// `{trigger, pre_tokens, …}`.
        opt compact_metadata: Value = "compact_metadata",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/background_tasks_changed`.
    pub struct BackgroundTasksChanged tags { "type" = "system", "subtype" = "background_tasks_changed" } {
        /// The current background tasks.
        opt tasks: Vec<Value> = "tasks",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/hook_started`, `hook_progress`, `hook_response` (shell hooks).
    pub struct HookEventMessage tags { "type" = "system" } {
        /// Which of the three.
        req subtype: String = "subtype",
        /// Hook run id.
        opt hook_id: String = "hook_id",
        /// Hook name.
        opt hook_name: String = "hook_name",
        /// Hook event (`PreToolUse`, …).
        opt hook_event: String = "hook_event",
        /// Captured stdout.
        opt stdout: String = "stdout",
        /// Captured stderr.
        opt stderr: String = "stderr",
        /// Combined output.
        opt output: String = "output",
        /// Exit code (`hook_response`).
        opt exit_code: i64 = "exit_code",
        /// `success`, `error`, `cancelled` (`hook_response`).
        opt outcome: String = "outcome",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}

wire_struct! {
    /// `system/task_started`, `task_progress`, `task_updated`, `task_notification`
    /// (background agents and tasks).
    pub struct TaskEventMessage tags { "type" = "system" } {
        /// Which of the four.
        req subtype: String = "subtype",
        /// The task id.
        opt task_id: String = "task_id",
        /// The tool call that started the task.
        opt tool_use_id: String = "tool_use_id",
        /// What the task does.
        opt description: String = "description",
        /// `completed`, `failed`, `stopped`, … (`task_notification`).
        opt status: String = "status",
        /// Summary (`task_notification`, `task_progress`).
        opt summary: String = "summary",
        /// Token usage so far: `{total_tokens, tool_uses, duration_ms}`.
        opt usage: Value = "usage",
        /// The run of the task (a task may run more than once).
        opt run_id: String = "run_id",
        /// `task_updated`: what changed, `{status, description, end_time,
        /// total_paused_ms, error, is_backgrounded}` (a stopped task's
        /// status is only here).
        opt patch: Map<String, Value> = "patch",
        /// `task_notification`: the file holding the task's output.
        opt output_file: String = "output_file",
        /// `task_notification`: set only when a resumed process closed the
        /// task: `worker_restart` (the worker restarted and found the task
        /// orphaned; status `stopped`) or `unfinished_at_resume` (the
        /// transcript has no record of the task's end; status `stopped` or
        /// `failed`, and no turn starts for it).
        opt reason: String = "reason",
        /// The subagent type.
        opt subagent_type: String = "subagent_type",
        /// `local_bash`, `local_agent`, … On `task_notification` only with
        /// reason `unfinished_at_resume` (`local_agent` or `local_workflow`).
        opt task_type: String = "task_type",
        /// `task_notification` of a shell task: how long its command ran, in
        /// milliseconds, from launch until it exited or was stopped (absent
        /// for other tasks and from older CLIs).
        opt duration_ms: u64 = "duration_ms",
        /// Whether it runs in the background.
        opt is_backgrounded: bool = "is_backgrounded",
        /// The task that started it.
        opt parent_task_id: String = "parent_task_id",
        /// `task_progress`: the last tool it used.
        opt last_tool_name: String = "last_tool_name",
        /// `task_started`: the subagent's prompt.
        opt prompt: String = "prompt",
        /// The session id.
        opt session_id: String = "session_id",
        /// The message's uuid.
        opt uuid: String = "uuid",
    }
}
