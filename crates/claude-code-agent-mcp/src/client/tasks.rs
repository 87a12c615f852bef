//! The Tasks extension (SEP-2663) on the client: a `tools/call` the server
//! may answer with a task, and the task followed to its result
//! (`tasks/get`, `tasks/update`, `tasks/cancel`).
//!
//! The extension is the stateless revision's (2026-07-28): each of these
//! requests declares it in its `_meta` client capabilities, beside the
//! client's own; with a server of an older revision they are refused
//! before anything is sent.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::answer::Answer;
use super::options::RequestOptions;
use super::{Error, McpClient};
use crate::jsonrpc::ErrorObject;
use crate::types::{
    CLIENT_CAPABILITIES_META, CallToolResult, STATELESS_PROTOCOL_VERSION, TASKS_EXTENSION, Task,
    TaskStatus, ToolCallOutcome,
};

/// How long [`McpClient::wait_task`] waits between two polls when the
/// server names no interval.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The shortest and longest waits between two polls, whatever the server
/// asks for.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(60));

impl McpClient {
    /// The options of a request that declares the Tasks extension (the
    /// client's capabilities, with it), or why tasks cannot be used.
    pub(super) fn task_options(&self, what: &str) -> Result<RequestOptions, Error> {
        let version = self.protocol_version();
        if version != STATELESS_PROTOCOL_VERSION {
            return Err(Error::refused(format!(
                "{what}: tasks (the io.modelcontextprotocol/tasks extension) need protocol \
                 revision {STATELESS_PROTOCOL_VERSION}; this server speaks {version}"
            )));
        }
        let mut capabilities = self
            .inner
            .stateless_meta
            .get()
            .and_then(|m| m.get(CLIENT_CAPABILITIES_META))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let extensions = capabilities
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(extensions) = extensions {
            extensions.insert(TASKS_EXTENSION.into(), json!({}));
        }
        Ok(RequestOptions::new().meta(CLIENT_CAPABILITIES_META, Value::Object(capabilities)))
    }

    async fn task_request(&self, method: &str, params: Value) -> Result<Value, Error> {
        let options = self.task_options(method)?;
        self.send_request_with(method, Some(params), options).await
    }

    /// `tools/call`, letting the server run it as a task (the Tasks
    /// extension): [`ToolCallOutcome::Task`] when it does (follow it with
    /// [`wait_task`](Self::wait_task), [`get_task`](Self::get_task),
    /// [`cancel_task`](Self::cancel_task)), [`ToolCallOutcome::Done`] when
    /// it answers at once (a tool it does not run as a task, or one it
    /// finished fast enough).
    ///
    /// Needs a server of the 2026-07-28 revision; otherwise refused
    /// ([`ErrorKind::Refused`](super::ErrorKind::Refused)) before anything
    /// is sent. Errors are [`call_tool`](Self::call_tool)'s.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<ToolCallOutcome, Error> {
        let options = self.task_options("tools/call")?;
        let params = json!({"name": name, "arguments": arguments});
        let answer = self
            .inner
            .request_answer("tools/call", Some(params), options)
            .await?;
        let value: Value = answer.decode("tools/call")?;
        if value.get("resultType").and_then(Value::as_str) == Some("task") {
            Answer::Value(value)
                .decode("tools/call")
                .map(|task| ToolCallOutcome::Task(Box::new(task)))
        } else {
            Answer::Value(value)
                .decode("tools/call")
                .map(ToolCallOutcome::Done)
        }
    }

    /// `tasks/get`: the task as the server has it now (its `result` once
    /// completed, its `error` once failed, its `input_requests` while it
    /// waits for input).
    ///
    /// A task the server does not know (never made, expired, someone
    /// else's) is a JSON-RPC error `-32602`.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        let result = self
            .task_request("tasks/get", json!({"taskId": task_id}))
            .await?;
        Answer::Value(result).decode("tasks/get")
    }

    /// `tasks/update`: answers some of the task's `input_requests`, each
    /// response under its request's key (the `result` the request would
    /// have had: `{"action":"accept","content":{…}}` for an elicitation).
    /// The server ignores keys it is not waiting on.
    pub async fn update_task(
        &self,
        task_id: &str,
        input_responses: Map<String, Value>,
    ) -> Result<(), Error> {
        let params = json!({"taskId": task_id, "inputResponses": input_responses});
        self.task_request("tasks/update", params).await.map(drop)
    }

    /// `tasks/cancel`: asks the server to cancel the task. The server
    /// acknowledges at once; the task ends `cancelled`, unless it finished
    /// first ([`get_task`](Self::get_task) tells). Cancelling an ended task
    /// is no error.
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        self.task_request("tasks/cancel", json!({"taskId": task_id}))
            .await
            .map(drop)
    }

    /// Follows the task to its end, polling `tasks/get` at the interval the
    /// server asks for (`pollIntervalMs`, else
    /// [`DEFAULT_TASK_POLL_INTERVAL`]; kept between 10 ms and 60 s), and
    /// returns its result.
    ///
    /// While the task waits for input, its requests are answered with the
    /// client's handlers ([`ClientOptions::on_elicitation`](super::ClientOptions::on_elicitation),
    /// `on_sampling`, `on_roots_list`) and the answers sent with
    /// `tasks/update`, each request once. A request the client has no
    /// handler for, or that its handler fails, ends the wait with an error
    /// saying so ([`ErrorKind::Refused`](super::ErrorKind::Refused), or the
    /// handler's JSON-RPC error), the task left waiting: answer it with
    /// [`update_task`](Self::update_task), or cancel it.
    ///
    /// A task that failed is its JSON-RPC error
    /// ([`ErrorKind::JsonRpc`](super::ErrorKind::JsonRpc)); one that was
    /// cancelled is [`ErrorKind::Cancelled`](super::ErrorKind::Cancelled).
    /// Each poll is bounded by the request timeout; the wait itself ends
    /// with the task, which the server keeps no longer than its TTL (bound
    /// it further with `tokio::time::timeout`; dropping the future leaves
    /// the task running: cancel it with [`cancel_task`](Self::cancel_task)).
    pub async fn wait_task(&self, task_id: &str) -> Result<CallToolResult, Error> {
        let mut answered: HashSet<String> = HashSet::new();
        loop {
            let task = self.get_task(task_id).await?;
            match task.status {
                TaskStatus::Completed => {
                    return task.result.ok_or_else(|| {
                        Error::invalid_response(format!(
                            "tasks/get: task {task_id:?} is completed but carries no result"
                        ))
                    });
                }
                TaskStatus::Failed => {
                    let error = task.error.unwrap_or_else(|| {
                        ErrorObject::internal(format!("task {task_id:?} failed without saying why"))
                    });
                    return Err(Error::from(error));
                }
                TaskStatus::Cancelled => {
                    let why = task.status_message.as_deref().unwrap_or("cancelled");
                    return Err(Error::cancelled(format!(
                        "task {task_id:?} was cancelled: {why}"
                    )));
                }
                TaskStatus::InputRequired => {
                    let requests = task.input_requests.unwrap_or_default();
                    let responses = self.answer_inputs(task_id, requests, &mut answered).await?;
                    if !responses.is_empty() {
                        self.update_task(task_id, responses).await?;
                        continue;
                    }
                }
                _ => {}
            }
            let interval = task
                .poll_interval_ms
                .map_or(DEFAULT_TASK_POLL_INTERVAL, Duration::from_millis)
                .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
            tokio::time::sleep(interval).await;
        }
    }

    /// Answers the input requests not answered yet, with the client's
    /// handlers.
    async fn answer_inputs(
        &self,
        task_id: &str,
        requests: Map<String, Value>,
        answered: &mut HashSet<String>,
    ) -> Result<Map<String, Value>, Error> {
        let mut responses = Map::new();
        for (key, request) in requests {
            if !answered.insert(key.clone()) {
                continue;
            }
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let options = &self.inner.options;
            let handler = match method {
                "sampling/createMessage" => options.sampling.clone(),
                "elicitation/create" => options.elicitation.clone(),
                "roots/list" => options.roots.clone(),
                _ => None,
            };
            let Some(handler) = handler else {
                return Err(Error::refused(format!(
                    "task {task_id:?} asks the client for {method:?} (input {key:?}), which this \
                     client has no handler for: answer it with update_task, or cancel the task"
                )));
            };
            responses.insert(key, handler(params).await.map_err(Error::from)?);
        }
        Ok(responses)
    }
}
