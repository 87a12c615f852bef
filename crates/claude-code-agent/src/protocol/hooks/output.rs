//! The answer to a `hook_callback`: [`HookOutput`] and its event-specific
//! part [`HookSpecificOutput`].

use serde_json::{Map, Value};

use super::HookEvent;
use crate::protocol::PermissionResult;
use crate::wire::{string_enum, wire_struct};

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
        /// Pause the call for the host to resume later (`PreToolUse`,
        /// `PreSkillShellCommand`).
        "defer" => Defer,
    }
}

string_enum! {
    /// `action` of an `Elicitation` / `ElicitationResult` hook output.
    pub enum ElicitationAction default Accept {
        /// Answer with `content`.
        "accept" => Accept,
        /// Refuse.
        "decline" => Decline,
        /// Dismiss.
        "cancel" => Cancel,
    }
}

wire_struct! {
    /// `hookSpecificOutput` of a hook answer: the fields of every event's
    /// specific output (TypeScript `*HookSpecificOutput`), in one struct.
    /// `hook_event_name` must be the event being answered; set only the
    /// fields that event reads (each says which), or use the constructors on
    /// [`HookOutput`].
    pub struct HookSpecificOutput {
        /// The event this output is for.
        req hook_event_name: HookEvent = "hookEventName",
        /// `PreToolUse`, `PreSkillShellCommand`, `PreModelSwitch`: allow,
        /// deny, ask (or defer, not for `PreModelSwitch`).
        opt permission_decision: PermissionDecision = "permissionDecision",
        /// With `permission_decision`: why.
        opt permission_decision_reason: String = "permissionDecisionReason",
        /// `PreToolUse`, `PreSkillShellCommand`: replacement tool input.
        opt updated_input: Value = "updatedInput",
        /// Text added to the model's context: `PreToolUse`, `PostToolUse`,
        /// `PostToolUseFailure`, `PostToolBatch`, `Notification`,
        /// `UserPromptSubmit`, `UserPromptExpansion`, `SessionStart`,
        /// `Setup`, `Stop`, `SubagentStart`, `SubagentStop`, `PostModelSwitch`.
        opt additional_context: String = "additionalContext",
        /// `PostToolUse`: context for the auto-mode classifier.
        opt classifier_context: String = "classifierContext",
        /// `PostToolUse`: replacement output of any tool.
        opt updated_tool_output: Value = "updatedToolOutput",
        /// `PostToolUse`: replacement output of an MCP tool.
        opt updated_mcp_tool_output: Value = "updatedMCPToolOutput",
        /// `UserPromptSubmit`, `SessionStart`: set the session's title.
        opt session_title: String = "sessionTitle",
        /// `UserPromptSubmit`, `UserPromptExpansion`: keep the original
        /// prompt out of the conversation.
        opt suppress_original_prompt: bool = "suppressOriginalPrompt",
        /// `SessionStart`: a first user message to send.
        opt initial_user_message: String = "initialUserMessage",
        /// `SessionStart`, `CwdChanged`, `FileChanged`: paths to watch
        /// (for `FileChanged` events).
        opt watch_paths: Vec<String> = "watchPaths",
        /// `SessionStart`: reload skills.
        opt reload_skills: bool = "reloadSkills",
        /// `PermissionRequest`: the decision, allow (with updated input or
        /// permissions) or deny (with a message, maybe interrupting).
        opt decision: PermissionResult = "decision",
        /// `PermissionDenied`: let the model retry the call.
        opt retry: bool = "retry",
        /// `Elicitation`, `ElicitationResult`: the answer's action.
        opt action: ElicitationAction = "action",
        /// `Elicitation`, `ElicitationResult`: the answer's content.
        opt content: Map<String, Value> = "content",
        /// `WorktreeCreate` (required there): the created worktree's path.
        opt worktree_path: String = "worktreePath",
        /// `MessageDisplay`: the text to display instead.
        opt display_content: String = "displayContent",
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
    /// use claude_code_agent::protocol::{HookEvent, HookOutput};
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
        /// A terminal escape sequence for the CLI's terminal (interactive only).
        opt terminal_sequence: String = "terminalSequence",
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

    /// An answer carrying only `spec` (build it with
    /// [`HookSpecificOutput::new`] and set its fields).
    pub fn specific_output(spec: HookSpecificOutput) -> Self {
        Self {
            hook_specific_output: Some(spec),
            ..Self::default()
        }
    }

    fn with_spec(event: HookEvent, set: impl FnOnce(&mut HookSpecificOutput)) -> Self {
        let mut spec = HookSpecificOutput::new(event);
        set(&mut spec);
        Self::specific_output(spec)
    }

    /// PreToolUse: pause the call; the host resumes it later.
    pub fn defer_tool() -> Self {
        Self::pre_tool_use(PermissionDecision::Defer, None)
    }

    /// PostToolUse: the model sees `output` instead of the tool's output
    /// (`updatedToolOutput`; for MCP tools the CLI also reads
    /// `updatedMCPToolOutput`, set by [`Self::replace_mcp_tool_output`]).
    pub fn replace_tool_output(output: Value) -> Self {
        Self::with_spec(HookEvent::PostToolUse, |s| {
            s.updated_tool_output = Some(output)
        })
    }

    /// PostToolUse: the model sees `output` (an MCP `CallToolResult`)
    /// instead of the MCP tool's output (`updatedMCPToolOutput`).
    pub fn replace_mcp_tool_output(output: Value) -> Self {
        Self::with_spec(HookEvent::PostToolUse, |s| {
            s.updated_mcp_tool_output = Some(output)
        })
    }

    /// PermissionRequest: decide the dialog (`decision`).
    pub fn permission_request(decision: PermissionResult) -> Self {
        Self::with_spec(HookEvent::PermissionRequest, |s| {
            s.decision = Some(decision)
        })
    }

    /// PreModelSwitch: allow, deny or ask about the switch.
    pub fn model_switch(decision: PermissionDecision, reason: impl Into<String>) -> Self {
        Self::with_spec(HookEvent::PreModelSwitch, |s| {
            s.permission_decision = Some(decision);
            s.permission_decision_reason = Some(reason.into());
        })
    }

    /// PermissionDenied: let the model retry the denied call.
    pub fn retry_denied() -> Self {
        Self::with_spec(HookEvent::PermissionDenied, |s| s.retry = Some(true))
    }

    /// Elicitation / ElicitationResult: answer (or change the answer).
    pub fn elicitation(
        event: HookEvent,
        action: ElicitationAction,
        content: Option<Map<String, Value>>,
    ) -> Self {
        Self::with_spec(event, |s| {
            s.action = Some(action);
            s.content = content;
        })
    }

    /// WorktreeCreate: the path of the worktree the hook created.
    pub fn worktree_created(path: impl Into<String>) -> Self {
        Self::with_spec(HookEvent::WorktreeCreate, |s| {
            s.worktree_path = Some(path.into())
        })
    }

    /// MessageDisplay: display `text` instead of the chunk.
    pub fn display(text: impl Into<String>) -> Self {
        Self::with_spec(HookEvent::MessageDisplay, |s| {
            s.display_content = Some(text.into())
        })
    }

    /// CwdChanged / FileChanged / SessionStart: paths to watch.
    pub fn watch_paths(event: HookEvent, paths: Vec<String>) -> Self {
        Self::with_spec(event, |s| s.watch_paths = Some(paths))
    }

    fn specific(&mut self, event: HookEvent) -> &mut HookSpecificOutput {
        self.hook_specific_output
            .get_or_insert_with(|| HookSpecificOutput::new(event))
    }
}
