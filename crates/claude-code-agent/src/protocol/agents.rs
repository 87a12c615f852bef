//! Subagent definitions (`initialize.agents.<name>`).

use serde_json::Value;

use super::controls::Effort;
use crate::shared_types::PermissionMode;
use crate::wire::wire_struct;

wire_struct! {
    /// A subagent definition (`initialize.agents.<name>`).
    pub struct AgentDefinition {
        /// When to use the agent.
        req description: String = "description",
        /// Its system prompt.
        req prompt: String = "prompt",
        /// Allowed tools (all when absent).
        opt tools: Vec<String> = "tools",
        /// Forbidden tools.
        opt disallowed_tools: Vec<String> = "disallowedTools",
        /// `sonnet`, `opus`, `haiku`, `inherit` or a model id.
        opt model: String = "model",
        /// Skills the agent may use.
        opt skills: Vec<String> = "skills",
        /// Memory scope: `user`, `project` or `local`.
        opt memory: String = "memory",
        /// MCP servers for the agent: names, or `{name: config}` objects.
        opt mcp_servers: Vec<Value> = "mcpServers",
        /// The agent's first prompt, sent when it starts as the main thread.
        opt initial_prompt: String = "initialPrompt",
        /// The most turns the agent may take.
        opt max_turns: u32 = "maxTurns",
        /// Runs in the background by default.
        opt background: bool = "background",
        /// Its effort level (or a number).
        opt effort: Effort = "effort",
        /// Its permission mode.
        opt permission_mode: PermissionMode = "permissionMode",
    }
}

impl AgentDefinition {
    /// An agent with a description and a prompt.
    pub fn new(description: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            description: description.into(),
            prompt: prompt.into(),
            ..Self::default()
        }
    }

    /// Restricts its tools.
    pub fn with_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Sets its model.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
}
