//! Prompts: a name, arguments and an async handler that returns messages.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use super::context::Asking;
use super::outbound::ClientRequestError;
use super::session::Session;
use crate::types::{self, Content, GetPromptResult, InputRequest, PromptArgument, PromptMessage};

/// What a prompt handler gets: the arguments (all strings, as MCP sends
/// them) and the session.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PromptRequest {
    /// The arguments the client gave. Every required argument is present.
    pub arguments: HashMap<String, String>,
    /// The session the request arrived on, if any.
    pub session: Option<Session>,
    pub(crate) asking: Asking,
}

impl PromptRequest {
    /// Asks the client for input while the prompt is filled in, as a tool
    /// does with [`ToolContext::ask`](super::ToolContext::ask): on a session
    /// as a request to the client, at the stateless revision through an
    /// `input_required` result and the client's retry (the handler runs
    /// again with the answer).
    pub async fn ask(&self, key: &str, request: InputRequest) -> Result<Value, ClientRequestError> {
        self.asking.ask(self.session.as_ref(), key, request).await
    }

    /// The value of argument `name`.
    pub fn arg(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }
}

/// What a prompt handler may return: messages (`Vec<PromptMessage>`), a
/// whole [`GetPromptResult`], a plain `String` (one user text message), or
/// a `Result` of these whose error becomes a JSON-RPC error (`-32603`).
pub trait IntoPromptResult: Send {
    /// Converts into a `prompts/get` result.
    fn into_prompt_result(self) -> Result<GetPromptResult, String>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, String> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, String> {
        Ok(GetPromptResult {
            messages: self,
            ..GetPromptResult::default()
        })
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, String> {
        vec![user(Content::text(self))].into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: fmt::Display + Send> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, String> {
        self.map_err(|e| e.to_string())?.into_prompt_result()
    }
}

/// A message from the user with this content.
pub fn user(content: Content) -> PromptMessage {
    message("user", content)
}

/// A message from the assistant with this content.
pub fn assistant(content: Content) -> PromptMessage {
    message("assistant", content)
}

fn message(role: &str, content: Content) -> PromptMessage {
    PromptMessage {
        role: role.to_owned(),
        content,
        extra: Default::default(),
    }
}

pub(crate) type PromptHandler =
    dyn Fn(PromptRequest) -> BoxFuture<'static, Result<GetPromptResult, String>> + Send + Sync;

/// A prompt template the client can list and fill in (`prompts/list`,
/// `prompts/get`). A `prompts/get` missing a required argument is answered
/// with `-32602` before the handler runs.
///
/// ```
/// use claude_code_agent_mcp::Content;
/// use claude_code_agent_mcp::server::{Prompt, PromptRequest, prompt_user};
///
/// let review = Prompt::new("review", |req: PromptRequest| async move {
///     vec![prompt_user(Content::text(format!("Review this code:\n{}", req.arg("code").unwrap_or_default())))]
/// })
/// .description("Ask for a code review")
/// .argument("code", "The code to review", true);
/// assert_eq!(review.info().arguments[0].required, Some(true));
/// ```
#[derive(Clone)]
pub struct Prompt {
    pub(crate) info: types::Prompt,
    pub(crate) handler: Arc<PromptHandler>,
}

impl Prompt {
    /// A prompt named `name`, filled in by `handler`.
    pub fn new<F, Fut, R>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(PromptRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult + 'static,
    {
        let info = serde_json::from_value(serde_json::json!({"name": name.into()}))
            .expect("a name makes a prompt");
        let handler: Arc<PromptHandler> = Arc::new(move |req| {
            handler(req)
                .map(IntoPromptResult::into_prompt_result)
                .boxed()
        });
        Self { info, handler }
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Adds an argument (in order).
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let argument: PromptArgument = serde_json::from_value(serde_json::json!({
            "name": name.into(), "description": description.into(), "required": required
        }))
        .expect("a name makes an argument");
        self.info.arguments.push(argument);
        self
    }

    /// The prompt as `prompts/list` describes it.
    pub fn info(&self) -> &types::Prompt {
        &self.info
    }

    /// The arguments as strings; `-32602`-worthy complaints otherwise.
    pub(crate) fn check_arguments(
        &self,
        given: Option<&Value>,
    ) -> Result<HashMap<String, String>, String> {
        let mut arguments = HashMap::new();
        match given {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (k, v) in map {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        Value::Number(_) | Value::Bool(_) => v.to_string(),
                        Value::Null => continue,
                        other => {
                            return Err(format!(
                                "argument \"{k}\" must be a string, not {}",
                                types::json_type_name(other)
                            ));
                        }
                    };
                    arguments.insert(k.clone(), v);
                }
            }
            Some(other) => {
                return Err(format!(
                    "\"arguments\" must be an object, not {}",
                    types::json_type_name(other)
                ));
            }
        }
        let missing: Vec<&str> = self
            .info
            .arguments
            .iter()
            .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "prompt \"{}\" is missing required argument(s): {}",
                self.info.name,
                missing.join(", ")
            ));
        }
        Ok(arguments)
    }
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}
