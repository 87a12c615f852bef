//! The Claude Code CLI's built-in tools, typed: what the model sends each
//! one ([`BuiltinTool`]) and what each reports back ([`BuiltinToolOutput`]).
//!
//! Where you meet a tool call, `builtin_tool()` reads it:
//! [`ToolUseBlock::builtin_tool`](crate::message::ToolUseBlock::builtin_tool)
//! in messages, [`HookInput::builtin_tool`](crate::HookInput::builtin_tool)
//! (and the tool events' own inputs) in hooks, and [`BuiltinTool::parse`]
//! with the name and input a `can_use_tool` callback gets. A `PostToolUse`
//! hook reads the tool's report with
//! [`HookInput::builtin_tool_output`](crate::HookInput::builtin_tool_output).
//!
//! ```
//! use claude_code_agent::tools::BuiltinTool;
//! use serde_json::json;
//!
//! let input = json!({"command": "cargo test", "timeout": 60000});
//! match BuiltinTool::parse("Bash", &input) {
//!     BuiltinTool::Bash(bash) => {
//!         assert_eq!(bash.command, "cargo test");
//!         assert_eq!(bash.timeout, Some(60000));
//!     }
//!     other => panic!("not Bash: {other:?}"),
//! }
//! ```
//!
//! Reading never fails. A tool this crate does not know (one a newer CLI
//! added, an MCP tool `mcp__<server>__<tool>`, `Skill`, …), or an input that
//! does not fit its tool's type (a required field missing or of another
//! type), is [`BuiltinTool::Unknown`] with the name and the input as they
//! came. A field the CLI adds is kept in the struct's `extra`, and
//! `to_value()` gives back the JSON it was read from. Values the TypeScript
//! SDK types as string unions (`output_mode`, `status`, …) are `String`s,
//! their values listed in the docs: the CLI adds values more often than
//! fields. The old names of renamed tools are read too (`Task` is
//! [`BuiltinTool::Agent`], `KillShell` and `KillBash` are
//! [`BuiltinTool::TaskStop`], `ProposeGoal` is [`BuiltinTool::SetGoal`],
//! `ListMcpResources` and `ReadMcpResource(Dir)` the `…Tool` ones).
//!
//! # Where the types come from
//!
//! Written by hand from the TypeScript SDK's `sdk-tools.d.ts` (package
//! `@anthropic-ai/claude-agent-sdk`, version 0.3.337, the one
//! `docs/parity.md` compares with): each struct bears the name of its
//! TypeScript interface and has its wire keys, in snake case in Rust.
//! Nested objects the SDK's users rarely take apart are `Value`s or maps,
//! their keys listed in the docs. `scripts/check-builtin-tools [VERSION]`
//! downloads the published package and fails when a type's keys differ
//! from ours or a new `*Input` or `*Output` type has no struct here, so
//! moving to a new TypeScript SDK starts with running it. Not modelled:
//!
//! * `McpInput`: not modelled, an MCP tool's input is its server's.
//! * `McpOutput`: not modelled, an MCP tool's result is its server's.
//! * `ArtifactOutput`: not modelled, a union of a dozen actions' reports
//!   (its outputs are [`BuiltinToolOutput::Unknown`]).
//! * `ProjectsOutput`: not modelled, a union of seven methods' reports.
//! * `ListMcpResourcesOutput`: modelled as [`McpResourceListing`] (one item
//!   of the list it is).

mod inputs;
mod outputs;

use serde_json::Value;

use crate::wire::Wire;

pub use inputs::*;
pub use outputs::*;

/// The old names of renamed tools, and the name each has now.
const RENAMED: &[(&str, &str)] = &[
    ("Task", "Agent"),
    ("KillShell", "TaskStop"),
    ("KillBash", "TaskStop"),
    ("ProposeGoal", "SetGoal"),
    ("ListMcpResources", "ListMcpResourcesTool"),
    ("ReadMcpResource", "ReadMcpResourceTool"),
    ("ReadMcpResourceDir", "ReadMcpResourceDirTool"),
];

/// The current name of the tool called `name`.
fn current_name(name: &str) -> &str {
    RENAMED
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new)
}

/// Declares an enum over the built-in tools, one variant per tool with its
/// CLI name, and `Unknown` for any other.
macro_rules! tool_enum {
    (
        $(#[$meta:meta])*
        pub enum $enum:ident { Unknown { name, $raw:ident } }
        $(
            $(#[$vmeta:meta])*
            $variant:ident($ty:ty) = $name:literal;
        )*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant, reason = "variants are decoded in place; boxing would only add allocations")]
        pub enum $enum {
            $(
                $(#[$vmeta])*
                $variant($ty),
            )*
            /// A tool this crate does not type (a newer CLI's, an MCP
            /// tool), or a value that does not fit its tool's type: kept
            /// as it came.
            Unknown {
                /// The tool's name.
                name: String,
                /// The JSON, unchanged.
                $raw: Value,
            },
        }

        impl $enum {
            /// Reads the JSON of a call of tool `name` (or of its old
            /// name). Never fails: what does not fit is [`Self::Unknown`].
            pub fn parse(name: &str, $raw: &Value) -> Self {
                let $raw = $raw.clone();
                let typed = match current_name(name) {
                    $($name => <$ty as Wire>::from_wire($raw).map(Self::$variant),)*
                    _ => Err($raw),
                };
                typed.unwrap_or_else(|$raw| Self::Unknown { name: name.to_owned(), $raw })
            }

            /// The tool's name: its current name for a typed tool (`Agent`
            /// for one called as `Task`), the name as it came for
            /// [`Self::Unknown`].
            pub fn name(&self) -> &str {
                match self {
                    $(Self::$variant(_) => $name,)*
                    Self::Unknown { name, .. } => name,
                }
            }

            /// The JSON again, equal to what was read.
            pub fn to_value(&self) -> Value {
                match self {
                    $(Self::$variant(v) => serde_json::to_value(crate::wire::AsWire(v)).unwrap_or(Value::Null),)*
                    Self::Unknown { $raw, .. } => $raw.clone(),
                }
            }
        }
    };
}

/// Declares [`BuiltinTool`] and [`BuiltinToolOutput`] from one table: each
/// tool's variant, input type, output type when it has a typed one, and
/// name.
macro_rules! builtin_tools {
    ($(
        $(#[$vmeta:meta])*
        $variant:ident($input:ty $(, $output:ty)?) = $name:literal;
    )*) => {
        tool_enum! {
            /// A call of a built-in tool: its input, typed by the tool's name.
            ///
            /// [`BuiltinTool::parse`] reads it from a name and an input;
            /// messages' `tool_use` blocks and the hooks' tool events read
            /// theirs with `builtin_tool()`.
            pub enum BuiltinTool { Unknown { name, input } }
            $($(#[$vmeta])* $variant($input) = $name;)*
        }

        tool_enum! {
            /// What a built-in tool reports: the `tool_response` of a
            /// `PostToolUse` hook input, the `tool_use_result` of the user
            /// message carrying the result; typed by the tool's name.
            ///
            /// [`BuiltinToolOutput::parse`] reads it from a name and the
            /// JSON; `PostToolUse` inputs read theirs with
            /// `builtin_tool_output()`. The tools whose output is not typed
            /// (`Artifact`, `Projects`) are [`BuiltinToolOutput::Unknown`].
            pub enum BuiltinToolOutput { Unknown { name, output } }
            $($(
                #[doc = concat!("What `", $name, "` reports.")]
                $variant($output) = $name;
            )?)*
        }
    };
}

builtin_tools! {
    /// `Agent` (and `Task`): start a subagent.
    Agent(AgentInput, AgentOutput) = "Agent";
    /// `Bash`: run a shell command.
    Bash(BashInput, BashOutput) = "Bash";
    /// `ExitPlanMode`: present the plan.
    ExitPlanMode(ExitPlanModeInput, ExitPlanModeOutput) = "ExitPlanMode";
    /// `Edit`: replace a string in a file.
    Edit(FileEditInput, FileEditOutput) = "Edit";
    /// `Read`: read a file.
    Read(FileReadInput, FileReadOutput) = "Read";
    /// `Write`: write a file.
    Write(FileWriteInput, FileWriteOutput) = "Write";
    /// `Glob`: find files by name.
    Glob(GlobInput, GlobOutput) = "Glob";
    /// `Grep`: search file contents.
    Grep(GrepInput, GrepOutput) = "Grep";
    /// `TaskStop` (and `KillShell`, `KillBash`): stop a background task.
    TaskStop(TaskStopInput, TaskStopOutput) = "TaskStop";
    /// `ListMcpResourcesTool`.
    ListMcpResources(ListMcpResourcesInput, Vec<McpResourceListing>) = "ListMcpResourcesTool";
    /// `RefreshMcpTools`.
    RefreshMcpTools(RefreshMcpToolsInput, RefreshMcpToolsOutput) = "RefreshMcpTools";
    /// `NotebookEdit`: change a notebook cell.
    NotebookEdit(NotebookEditInput, NotebookEditOutput) = "NotebookEdit";
    /// `ReadMcpResourceDirTool`.
    ReadMcpResourceDir(ReadMcpResourceDirInput, ReadMcpResourceDirOutput) = "ReadMcpResourceDirTool";
    /// `ReadMcpResourceTool`.
    ReadMcpResource(ReadMcpResourceInput, ReadMcpResourceOutput) = "ReadMcpResourceTool";
    /// `ReportFindings`: a review's findings.
    ReportFindings(ReportFindingsInput, ReportFindingsOutput) = "ReportFindings";
    /// `TodoWrite`: replace the todo list.
    TodoWrite(TodoWriteInput, TodoWriteOutput) = "TodoWrite";
    /// `WebFetch`: fetch a page.
    WebFetch(WebFetchInput, WebFetchOutput) = "WebFetch";
    /// `WebSearch`: search the web.
    WebSearch(WebSearchInput, WebSearchOutput) = "WebSearch";
    /// `AskUserQuestion`: ask the user.
    AskUserQuestion(AskUserQuestionInput, AskUserQuestionOutput) = "AskUserQuestion";
    /// `SendFeedback`.
    SendFeedback(SendFeedbackInput, SendFeedbackOutput) = "SendFeedback";
    /// `ClaudeDesign`.
    ClaudeDesign(ClaudeDesignInput, ClaudeDesignOutput) = "ClaudeDesign";
    /// `Projects`.
    Projects(ProjectsInput) = "Projects";
    /// `EnterPlanMode`.
    EnterPlanMode(EnterPlanModeInput, EnterPlanModeOutput) = "EnterPlanMode";
    /// `TaskCreate`.
    TaskCreate(TaskCreateInput, TaskCreateOutput) = "TaskCreate";
    /// `TaskGet`.
    TaskGet(TaskGetInput, TaskGetOutput) = "TaskGet";
    /// `TaskUpdate`.
    TaskUpdate(TaskUpdateInput, TaskUpdateOutput) = "TaskUpdate";
    /// `TaskList`.
    TaskList(TaskListInput, TaskListOutput) = "TaskList";
    /// `Workflow`.
    Workflow(WorkflowInput, WorkflowOutput) = "Workflow";
    /// `CronCreate`.
    CronCreate(CronCreateInput, CronCreateOutput) = "CronCreate";
    /// `CronDelete`.
    CronDelete(CronDeleteInput, CronDeleteOutput) = "CronDelete";
    /// `CronList`.
    CronList(CronListInput, CronListOutput) = "CronList";
    /// `ScheduleWakeup`.
    ScheduleWakeup(ScheduleWakeupInput, ScheduleWakeupOutput) = "ScheduleWakeup";
    /// `RemoteTrigger`.
    RemoteTrigger(RemoteTriggerInput, RemoteTriggerOutput) = "RemoteTrigger";
    /// `ShowOnboardingRolePicker`.
    ShowOnboardingRolePicker(ShowOnboardingRolePickerInput, ShowOnboardingRolePickerOutput) = "ShowOnboardingRolePicker";
    /// `OfferChromeSetup`.
    OfferChromeSetup(OfferChromeSetupInput, OfferChromeSetupOutput) = "OfferChromeSetup";
    /// `ReadNotifications`.
    ReadNotifications(ReadNotificationsInput, ReadNotificationsOutput) = "ReadNotifications";
    /// `Monitor`.
    Monitor(MonitorInput, MonitorOutput) = "Monitor";
    /// `propose_skills`.
    ProposeSkills(ProposeSkillsInput, ProposeSkillsOutput) = "propose_skills";
    /// `SetGoal` (and `ProposeGoal`).
    SetGoal(ProposeGoalInput, ProposeGoalOutput) = "SetGoal";
    /// `Artifact`.
    Artifact(ArtifactInput) = "Artifact";
    /// `PushNotification`.
    PushNotification(PushNotificationInput, PushNotificationOutput) = "PushNotification";
    /// `EnterWorktree`.
    EnterWorktree(EnterWorktreeInput, EnterWorktreeOutput) = "EnterWorktree";
    /// `ExitWorktree`.
    ExitWorktree(ExitWorktreeInput, ExitWorktreeOutput) = "ExitWorktree";
}

#[cfg(test)]
mod tests;
