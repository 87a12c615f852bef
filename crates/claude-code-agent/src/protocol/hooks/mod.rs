//! Hook callbacks: the 35 events of the TypeScript SDK 0.3.337
//! (`HOOK_EVENTS`), the input the CLI sends in `hook_callback` for each, and
//! the output the SDK answers with.
//!
//! Events this version does not know still work: register them with
//! [`HookEvent::Other`]; their input arrives as [`HookInput::Unknown`] and
//! the output's event-specific fields can be set by name in
//! [`HookSpecificOutput::extra`].

mod inputs;
mod output;

use serde_json::Value;

use crate::tools::{BuiltinTool, BuiltinToolOutput};
use crate::wire::{string_enum, wire_enum};

pub use inputs::*;
pub use output::{
    ElicitationAction, HookDecision, HookOutput, HookSpecificOutput, PermissionDecision,
};

string_enum! {
    /// What the CLI does when a hook callback fails (`onFailure` of a
    /// matcher): go on as if it had no opinion, or block the action.
    pub enum HookFailure default Continue {
        /// Go on (the CLI's behaviour without `onFailure`).
        "continue" => Continue,
        /// Block the action, as a `deny` would.
        "block" => Block,
    }
}

/// Declares [`HookEvent`], [`HookInput`], [`HookInput::event`] and the
/// `each_input!` accessor from one list of events.
macro_rules! hook_events {
    ($($(#[$m:meta])* $wire:literal => $variant:ident($input:ident)),* $(,)?) => {
        string_enum! {
            /// A hook event (`hook_event_name`, and the keys of `initialize.hooks`).
            pub enum HookEvent default PreToolUse {
                $($(#[$m])* $wire => $variant,)*
            }
        }

        wire_enum! {
            /// The `input` of a `hook_callback` request, by `hook_event_name`.
            pub enum HookInput on "hook_event_name" {
                $($(#[$m])* $wire => $variant($input),)*
            }
        }

        impl HookInput {
            /// The event (`hook_event_name`).
            pub fn event(&self) -> HookEvent {
                match self {
                    $(Self::$variant(_) => HookEvent::$variant,)*
                    Self::Unknown(v) => HookEvent::from(
                        v.get("hook_event_name").and_then(Value::as_str).unwrap_or(""),
                    ),
                }
            }

            /// The base fields of any input, typed or not.
            fn base(&self) -> Base<'_> {
                match self {
                    $(Self::$variant(m) => Base {
                        session_id: m.session_id.as_deref(),
                        cwd: m.cwd.as_deref(),
                        transcript_path: m.transcript_path.as_deref(),
                        prompt_id: m.prompt_id.as_deref(),
                        agent_id: m.agent_id.as_deref(),
                    },)*
                    Self::Unknown(v) => {
                        let s = |k: &str| v.get(k).and_then(Value::as_str);
                        Base {
                            session_id: s("session_id"),
                            cwd: s("cwd"),
                            transcript_path: s("transcript_path"),
                            prompt_id: s("prompt_id"),
                            agent_id: s("agent_id"),
                        }
                    }
                }
            }
        }
    };
}

/// The base fields of an input, borrowed.
struct Base<'a> {
    session_id: Option<&'a str>,
    cwd: Option<&'a str>,
    transcript_path: Option<&'a str>,
    prompt_id: Option<&'a str>,
    agent_id: Option<&'a str>,
}

hook_events! {
    /// Before a tool runs; may allow, deny, ask or defer, or change the input.
    "PreToolUse" => PreToolUse(PreToolUseInput),
    /// After a tool succeeded; may replace its output.
    "PostToolUse" => PostToolUse(PostToolUseInput),
    /// After a tool failed.
    "PostToolUseFailure" => PostToolUseFailure(PostToolUseFailureInput),
    /// After all tool calls of one model response.
    "PostToolBatch" => PostToolBatch(PostToolBatchInput),
    /// On a notification.
    "Notification" => Notification(NotificationInput),
    /// When a prompt is submitted.
    "UserPromptSubmit" => UserPromptSubmit(UserPromptSubmitInput),
    /// When a slash command or MCP prompt is expanded.
    "UserPromptExpansion" => UserPromptExpansion(UserPromptExpansionInput),
    /// When a session starts (not sent to SDK callbacks by CLI 2.1.332).
    "SessionStart" => SessionStart(SessionStartInput),
    /// When a session ends (not sent to SDK callbacks by CLI 2.1.332).
    "SessionEnd" => SessionEnd(SessionEndInput),
    /// When the main agent is about to stop.
    "Stop" => Stop(StopInput),
    /// When a turn ended on an API error.
    "StopFailure" => StopFailure(StopFailureInput),
    /// When an interrupt ended the main conversation's turn (output ignored).
    "Interrupt" => Interrupt(InterruptInput),
    /// When a subagent starts.
    "SubagentStart" => SubagentStart(SubagentStartInput),
    /// When a subagent is about to stop.
    "SubagentStop" => SubagentStop(SubagentStopInput),
    /// Before compaction.
    "PreCompact" => PreCompact(PreCompactInput),
    /// After compaction.
    "PostCompact" => PostCompact(PostCompactInput),
    /// Before the model changes; may allow, deny or ask.
    "PreModelSwitch" => PreModelSwitch(PreModelSwitchInput),
    /// After the model changed.
    "PostModelSwitch" => PostModelSwitch(PostModelSwitchInput),
    /// When a permission dialog would be shown; may decide it.
    "PermissionRequest" => PermissionRequest(PermissionRequestInput),
    /// When a tool call was denied without a prompt; may ask for a retry.
    "PermissionDenied" => PermissionDenied(PermissionDeniedInput),
    /// On `--init` / maintenance (not sent to SDK callbacks by CLI 2.1.332).
    "Setup" => Setup(SetupInput),
    /// When an agent-team teammate goes idle.
    "TeammateIdle" => TeammateIdle(TeammateIdleInput),
    /// When a task-list entry is created.
    "TaskCreated" => TaskCreated(TaskCreatedInput),
    /// When a task-list entry is completed.
    "TaskCompleted" => TaskCompleted(TaskCompletedInput),
    /// When an MCP server asks the user for input; may answer it.
    "Elicitation" => Elicitation(ElicitationInput),
    /// When the user answered an elicitation; may change the answer.
    "ElicitationResult" => ElicitationResult(ElicitationResultInput),
    /// When a settings file changes.
    "ConfigChange" => ConfigChange(ConfigChangeInput),
    /// When a git worktree is to be created; must give its path.
    "WorktreeCreate" => WorktreeCreate(WorktreeCreateInput),
    /// When a git worktree is to be removed.
    "WorktreeRemove" => WorktreeRemove(WorktreeRemoveInput),
    /// When a CLAUDE.md / memory file is loaded.
    "InstructionsLoaded" => InstructionsLoaded(InstructionsLoadedInput),
    /// When the working directory changes; may set paths to watch.
    "CwdChanged" => CwdChanged(CwdChangedInput),
    /// When a watched file changes; may set paths to watch.
    "FileChanged" => FileChanged(FileChangedInput),
    /// When a working directory is added.
    "DirectoryAdded" => DirectoryAdded(DirectoryAddedInput),
    /// When assistant text is about to be displayed; may replace it.
    "MessageDisplay" => MessageDisplay(MessageDisplayInput),
    /// Before a skill's shell command runs; may allow, deny, ask or defer.
    "PreSkillShellCommand" => PreSkillShellCommand(PreSkillShellCommandInput),
}

impl HookEvent {
    /// The 35 events the TypeScript SDK 0.3.337 lists in `HOOK_EVENTS`, in
    /// its order.
    pub const ALL: [HookEvent; 35] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::PostToolUseFailure,
        Self::PostToolBatch,
        Self::Notification,
        Self::UserPromptSubmit,
        Self::UserPromptExpansion,
        Self::SessionStart,
        Self::SessionEnd,
        Self::Stop,
        Self::StopFailure,
        Self::Interrupt,
        Self::SubagentStart,
        Self::SubagentStop,
        Self::PreCompact,
        Self::PostCompact,
        Self::PreModelSwitch,
        Self::PostModelSwitch,
        Self::PermissionRequest,
        Self::PermissionDenied,
        Self::Setup,
        Self::TeammateIdle,
        Self::TaskCreated,
        Self::TaskCompleted,
        Self::Elicitation,
        Self::ElicitationResult,
        Self::ConfigChange,
        Self::WorktreeCreate,
        Self::WorktreeRemove,
        Self::InstructionsLoaded,
        Self::CwdChanged,
        Self::FileChanged,
        Self::DirectoryAdded,
        Self::MessageDisplay,
        Self::PreSkillShellCommand,
    ];
}

impl HookInput {
    /// The session id.
    pub fn session_id(&self) -> Option<&str> {
        self.base().session_id
    }

    /// The working directory.
    pub fn cwd(&self) -> Option<&str> {
        self.base().cwd
    }

    /// The transcript path.
    pub fn transcript_path(&self) -> Option<&str> {
        self.base().transcript_path
    }

    /// The prompt this event belongs to (`prompt_id`).
    pub fn prompt_id(&self) -> Option<&str> {
        self.base().prompt_id
    }

    /// The subagent the event comes from (`agent_id`).
    pub fn agent_id(&self) -> Option<&str> {
        self.base().agent_id
    }

    /// The tool, for tool events.
    pub fn tool_name(&self) -> Option<&str> {
        match self {
            Self::PreToolUse(m) => m.tool_name.as_deref(),
            Self::PostToolUse(m) => m.tool_name.as_deref(),
            Self::PostToolUseFailure(m) => m.tool_name.as_deref(),
            Self::PermissionRequest(m) => m.tool_name.as_deref(),
            Self::PermissionDenied(m) => m.tool_name.as_deref(),
            Self::PreSkillShellCommand(m) => m.tool_name.as_deref(),
            Self::Unknown(v) => v.get("tool_name").and_then(Value::as_str),
            _ => None,
        }
    }

    /// The tool's input, for tool events.
    pub fn tool_input(&self) -> Option<&Value> {
        match self {
            Self::PreToolUse(m) => m.tool_input.as_ref(),
            Self::PostToolUse(m) => m.tool_input.as_ref(),
            Self::PostToolUseFailure(m) => m.tool_input.as_ref(),
            Self::PermissionRequest(m) => m.tool_input.as_ref(),
            Self::PermissionDenied(m) => m.tool_input.as_ref(),
            Self::PreSkillShellCommand(m) => m.tool_input.as_ref(),
            Self::Unknown(v) => v.get("tool_input"),
            _ => None,
        }
    }

    /// The tool's input typed by its name, for tool events (see
    /// [`PreToolUseInput::builtin_tool`]); `None` for other events.
    ///
    /// ```
    /// use claude_code_agent::tools::BuiltinTool;
    /// use claude_code_agent::{HookEvent, HookMatcher, HookOutput, Options};
    ///
    /// let options = Options::new().hook(
    ///     HookEvent::PreToolUse,
    ///     HookMatcher::new(Some("Bash|Edit")),
    ///     |input, _ctx| async move {
    ///         match input.builtin_tool() {
    ///             Some(BuiltinTool::Bash(bash)) if bash.command.contains("rm -rf") => {
    ///                 HookOutput::deny_tool("not that")
    ///             }
    ///             Some(BuiltinTool::Edit(edit)) if edit.file_path.ends_with(".lock") => {
    ///                 HookOutput::deny_tool("lock files are generated")
    ///             }
    ///             _ => HookOutput::default(),
    ///         }
    ///     },
    /// );
    /// # let _ = options;
    /// ```
    pub fn builtin_tool(&self) -> Option<BuiltinTool> {
        let name = self.tool_name()?;
        Some(BuiltinTool::parse(
            name,
            self.tool_input().unwrap_or(&Value::Null),
        ))
    }

    /// What the tool reported, typed by its name, for `PostToolUse` (see
    /// [`PostToolUseInput::builtin_tool_output`]); `None` for other events.
    pub fn builtin_tool_output(&self) -> Option<BuiltinToolOutput> {
        match self {
            Self::PostToolUse(m) => m.builtin_tool_output(),
            _ => None,
        }
    }

    /// The MCP server of the tool, for tool events about an MCP tool.
    pub fn mcp_server(&self) -> Option<&McpServerProvenance> {
        match self {
            Self::PreToolUse(m) => m.mcp_server.as_ref(),
            Self::PostToolUse(m) => m.mcp_server.as_ref(),
            Self::PostToolUseFailure(m) => m.mcp_server.as_ref(),
            Self::PermissionRequest(m) => m.mcp_server.as_ref(),
            Self::PermissionDenied(m) => m.mcp_server.as_ref(),
            _ => None,
        }
    }
}
