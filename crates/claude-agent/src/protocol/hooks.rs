//! Hook callbacks: events, the input the CLI sends in `hook_callback`, and the
//! output the SDK answers with.

use serde_json::Value;

use super::permission::{PermissionMode, PermissionUpdate};
use crate::message::wire::{string_enum, wire_enum, wire_struct};

string_enum! {
    /// A hook event (`hook_event_name`, and the keys of `initialize.hooks`).
    pub enum HookEvent default PreToolUse {
        /// Before a tool runs; may allow, deny or ask, or change the input.
        "PreToolUse" => PreToolUse,
        /// After a tool succeeded.
        "PostToolUse" => PostToolUse,
        /// After a tool failed.
        "PostToolUseFailure" => PostToolUseFailure,
        /// When a prompt is submitted.
        "UserPromptSubmit" => UserPromptSubmit,
        /// When the main agent is about to stop.
        "Stop" => Stop,
        /// When a subagent is about to stop.
        "SubagentStop" => SubagentStop,
        /// When a subagent starts.
        "SubagentStart" => SubagentStart,
        /// Before compaction.
        "PreCompact" => PreCompact,
        /// On a notification.
        "Notification" => Notification,
        /// When a session starts.
        "SessionStart" => SessionStart,
        /// When a session ends.
        "SessionEnd" => SessionEnd,
        /// When a permission dialog would be shown.
        "PermissionRequest" => PermissionRequest,
    }
}

/// Declares a hook input struct with the fields every event carries.
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
                /// Current permission mode.
                opt permission_mode: PermissionMode = "permission_mode",
                /// The subagent's id, when the event comes from a subagent.
                opt agent_id: String = "agent_id",
                /// The subagent's type.
                opt agent_type: String = "agent_type",
                $($body)*
            }
        }
    };
}

hook_input! {
    /// `PreToolUse` input.
    PreToolUseInput = "PreToolUse" {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// The call id.
        opt tool_use_id: String = "tool_use_id",
    }
}

hook_input! {
    /// `PostToolUse` input.
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
    }
}

hook_input! {
    /// `PostToolUseFailure` input.
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
    }
}

hook_input! {
    /// `UserPromptSubmit` input.
    UserPromptSubmitInput = "UserPromptSubmit" {
        /// The prompt.
        opt prompt: String = "prompt",
    }
}

hook_input! {
    /// `Stop` input.
    StopInput = "Stop" {
        /// Whether a Stop hook already made the model continue.
        opt stop_hook_active: bool = "stop_hook_active",
        /// The last assistant text.
        opt last_assistant_message: String = "last_assistant_message",
    }
}

hook_input! {
    /// `SubagentStop` input.
    SubagentStopInput = "SubagentStop" {
        /// Whether a stop hook already made the subagent continue.
        opt stop_hook_active: bool = "stop_hook_active",
        /// The subagent's transcript.
        opt agent_transcript_path: String = "agent_transcript_path",
    }
}

hook_input! {
    /// `SubagentStart` input (`agent_id`, `agent_type`).
    SubagentStartInput = "SubagentStart" {}
}

hook_input! {
    /// `PreCompact` input.
    PreCompactInput = "PreCompact" {
        /// `manual` or `auto`.
        opt trigger: String = "trigger",
        /// Instructions given to `/compact`.
        opt custom_instructions: String = "custom_instructions",
    }
}

hook_input! {
    /// `Notification` input.
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
    /// `SessionStart` input.
    SessionStartInput = "SessionStart" {
        /// `startup`, `resume`, `clear` or `compact`.
        opt source: String = "source",
        /// The model.
        opt model: String = "model",
    }
}

hook_input! {
    /// `SessionEnd` input.
    SessionEndInput = "SessionEnd" {
        /// Why the session ends.
        opt reason: String = "reason",
    }
}

hook_input! {
    /// `PermissionRequest` input.
    PermissionRequestInput = "PermissionRequest" {
        /// The tool.
        opt tool_name: String = "tool_name",
        /// Its input.
        opt tool_input: Value = "tool_input",
        /// Suggested rules.
        opt permission_suggestions: Vec<PermissionUpdate> = "permission_suggestions",
    }
}

wire_enum! {
    /// The `input` of a `hook_callback` request, by `hook_event_name`.
    pub enum HookInput on "hook_event_name" {
        /// `PreToolUse`.
        "PreToolUse" => PreToolUse(PreToolUseInput),
        /// `PostToolUse`.
        "PostToolUse" => PostToolUse(PostToolUseInput),
        /// `PostToolUseFailure`.
        "PostToolUseFailure" => PostToolUseFailure(PostToolUseFailureInput),
        /// `UserPromptSubmit`.
        "UserPromptSubmit" => UserPromptSubmit(UserPromptSubmitInput),
        /// `Stop`.
        "Stop" => Stop(StopInput),
        /// `SubagentStop`.
        "SubagentStop" => SubagentStop(SubagentStopInput),
        /// `SubagentStart`.
        "SubagentStart" => SubagentStart(SubagentStartInput),
        /// `PreCompact`.
        "PreCompact" => PreCompact(PreCompactInput),
        /// `Notification`.
        "Notification" => Notification(NotificationInput),
        /// `SessionStart`.
        "SessionStart" => SessionStart(SessionStartInput),
        /// `SessionEnd`.
        "SessionEnd" => SessionEnd(SessionEndInput),
        /// `PermissionRequest`.
        "PermissionRequest" => PermissionRequest(PermissionRequestInput),
    }
}

/// Expands `$body` with `$m` bound to the input struct of every variant.
macro_rules! each_input {
    ($self:expr, $m:ident => $body:expr, $unknown:ident => $ubody:expr) => {
        match $self {
            HookInput::PreToolUse($m) => $body,
            HookInput::PostToolUse($m) => $body,
            HookInput::PostToolUseFailure($m) => $body,
            HookInput::UserPromptSubmit($m) => $body,
            HookInput::Stop($m) => $body,
            HookInput::SubagentStop($m) => $body,
            HookInput::SubagentStart($m) => $body,
            HookInput::PreCompact($m) => $body,
            HookInput::Notification($m) => $body,
            HookInput::SessionStart($m) => $body,
            HookInput::SessionEnd($m) => $body,
            HookInput::PermissionRequest($m) => $body,
            HookInput::Unknown($unknown) => $ubody,
        }
    };
}

impl HookInput {
    /// The event (`hook_event_name`).
    pub fn event(&self) -> HookEvent {
        match self {
            Self::PreToolUse(_) => HookEvent::PreToolUse,
            Self::PostToolUse(_) => HookEvent::PostToolUse,
            Self::PostToolUseFailure(_) => HookEvent::PostToolUseFailure,
            Self::UserPromptSubmit(_) => HookEvent::UserPromptSubmit,
            Self::Stop(_) => HookEvent::Stop,
            Self::SubagentStop(_) => HookEvent::SubagentStop,
            Self::SubagentStart(_) => HookEvent::SubagentStart,
            Self::PreCompact(_) => HookEvent::PreCompact,
            Self::Notification(_) => HookEvent::Notification,
            Self::SessionStart(_) => HookEvent::SessionStart,
            Self::SessionEnd(_) => HookEvent::SessionEnd,
            Self::PermissionRequest(_) => HookEvent::PermissionRequest,
            Self::Unknown(v) => HookEvent::from(
                v.get("hook_event_name")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ),
        }
    }

    /// The session id.
    pub fn session_id(&self) -> Option<&str> {
        each_input!(self, m => m.session_id.as_deref(), v => v.get("session_id").and_then(Value::as_str))
    }

    /// The working directory.
    pub fn cwd(&self) -> Option<&str> {
        each_input!(self, m => m.cwd.as_deref(), v => v.get("cwd").and_then(Value::as_str))
    }

    /// The transcript path.
    pub fn transcript_path(&self) -> Option<&str> {
        each_input!(self, m => m.transcript_path.as_deref(), v => v.get("transcript_path").and_then(Value::as_str))
    }

    /// The tool, for tool events.
    pub fn tool_name(&self) -> Option<&str> {
        match self {
            Self::PreToolUse(m) => m.tool_name.as_deref(),
            Self::PostToolUse(m) => m.tool_name.as_deref(),
            Self::PostToolUseFailure(m) => m.tool_name.as_deref(),
            Self::PermissionRequest(m) => m.tool_name.as_deref(),
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
            Self::Unknown(v) => v.get("tool_input"),
            _ => None,
        }
    }
}

string_enum! {
    /// Top-level `decision` of a hook answer.
    pub enum HookDecision default Block {
        /// Block: for `Stop`, make the model continue; for prompts, reject it.
        "block" => Block,
        /// Approve (deprecated spelling for PreToolUse).
        "approve" => Approve,
    }
}

string_enum! {
    /// `permissionDecision` of a PreToolUse hook.
    pub enum PermissionDecision default Allow {
        /// Run the tool without asking.
        "allow" => Allow,
        /// Do not run it.
        "deny" => Deny,
        /// Ask the permission callback / user.
        "ask" => Ask,
    }
}

wire_struct! {
    /// `hookSpecificOutput` of a hook answer.
    pub struct HookSpecificOutput {
        /// The event this output is for.
        req hook_event_name: HookEvent = "hookEventName",
        /// PreToolUse: allow, deny or ask.
        opt permission_decision: PermissionDecision = "permissionDecision",
        /// PreToolUse: why.
        opt permission_decision_reason: String = "permissionDecisionReason",
        /// Text added to the model's context (PostToolUse, UserPromptSubmit, SessionStart, …).
        opt additional_context: String = "additionalContext",
        /// PreToolUse: replacement tool input.
        opt updated_input: Value = "updatedInput",
        /// PostToolUse: replacement output of an MCP tool.
        opt updated_mcp_tool_output: Value = "updatedMCPToolOutput",
    }
}

impl HookSpecificOutput {
    /// An empty output for `event`.
    pub fn new(event: HookEvent) -> Self {
        Self {
            hook_event_name: event,
            ..Self::default()
        }
    }
}

wire_struct! {
    /// The answer to a `hook_callback` request (the CLI's hook JSON output).
    /// `HookOutput::default()` is `{}`: no opinion.
    ///
    /// ```
    /// use claude_agent::protocol::{HookEvent, HookOutput};
    /// use serde_json::json;
    /// assert_eq!(HookOutput::default().to_value(), json!({}));
    /// assert_eq!(
    ///     HookOutput::deny_tool("no").to_value(),
    ///     json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    ///            "permissionDecision": "deny", "permissionDecisionReason": "no"}})
    /// );
    /// assert_eq!(HookOutput::block("again").to_value(), json!({"decision": "block", "reason": "again"}));
    /// ```
    pub struct HookOutput {
        /// `false` stops the session after the hook (`continue`).
        opt continue_: bool = "continue",
        /// Why it stops (with `continue: false`).
        opt stop_reason: String = "stopReason",
        /// Hide the hook's output from the transcript.
        opt suppress_output: bool = "suppressOutput",
        /// A message shown to the user.
        opt system_message: String = "systemMessage",
        /// `block` (or `approve`).
        opt decision: HookDecision = "decision",
        /// Why; shown to the model with `block`.
        opt reason: String = "reason",
        /// Event-specific output.
        opt hook_specific_output: HookSpecificOutput = "hookSpecificOutput",
        /// Run the hook asynchronously.
        opt async_: bool = "async",
        /// Timeout of an asynchronous hook, in milliseconds.
        opt async_timeout: u64 = "asyncTimeout",
    }
}

impl HookOutput {
    fn pre_tool_use(decision: PermissionDecision, reason: Option<String>) -> Self {
        let mut specific = HookSpecificOutput::new(HookEvent::PreToolUse);
        specific.permission_decision = Some(decision);
        specific.permission_decision_reason = reason;
        Self {
            hook_specific_output: Some(specific),
            ..Self::default()
        }
    }

    /// PreToolUse: run the tool without asking.
    pub fn allow_tool() -> Self {
        Self::pre_tool_use(PermissionDecision::Allow, None)
    }

    /// PreToolUse: do not run the tool; the model sees `reason`.
    pub fn deny_tool(reason: impl Into<String>) -> Self {
        Self::pre_tool_use(PermissionDecision::Deny, Some(reason.into()))
    }

    /// PreToolUse: ask the permission callback / user.
    pub fn ask_tool(reason: impl Into<String>) -> Self {
        Self::pre_tool_use(PermissionDecision::Ask, Some(reason.into()))
    }

    /// `{"decision":"block","reason":…}`: for `Stop`/`SubagentStop`, makes the
    /// model continue with `reason`; for `UserPromptSubmit`, rejects the prompt.
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            decision: Some(HookDecision::Block),
            reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Adds `text` to the model's context (`hookSpecificOutput.additionalContext`).
    pub fn additional_context(event: HookEvent, text: impl Into<String>) -> Self {
        let mut specific = HookSpecificOutput::new(event);
        specific.additional_context = Some(text.into());
        Self {
            hook_specific_output: Some(specific),
            ..Self::default()
        }
    }

    /// `{"continue":false,"stopReason":…}`: stop the session.
    pub fn stop(reason: impl Into<String>) -> Self {
        Self {
            continue_: Some(false),
            stop_reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Sets `permissionDecisionReason` (creates a PreToolUse output if needed).
    pub fn with_decision_reason(mut self, reason: impl Into<String>) -> Self {
        self.specific(HookEvent::PreToolUse)
            .permission_decision_reason = Some(reason.into());
        self
    }

    /// PreToolUse: run the tool with this input instead.
    pub fn with_updated_input(mut self, input: Value) -> Self {
        self.specific(HookEvent::PreToolUse).updated_input = Some(input);
        self
    }

    /// Sets `systemMessage`.
    pub fn with_system_message(mut self, message: impl Into<String>) -> Self {
        self.system_message = Some(message.into());
        self
    }

    /// Sets `suppressOutput: true`.
    pub fn suppress_output(mut self) -> Self {
        self.suppress_output = Some(true);
        self
    }

    fn specific(&mut self, event: HookEvent) -> &mut HookSpecificOutput {
        self.hook_specific_output
            .get_or_insert_with(|| HookSpecificOutput::new(event))
    }
}
