//! The Tasks extension (SEP-2663) on the server: a `tools/call` of a tool
//! that runs as a task ([`TaskSupport`]) is answered at once with the task
//! (`resultType: "task"`) while the call runs on in a Tokio task of its
//! own; `tasks/get`, `tasks/update` and `tasks/cancel` follow it.
//!
//! A task's record (its `Task`, the replica's lease, the caller it belongs
//! to) is kept in a [`TaskStore`](super::TaskStore): the server's own
//! [`MemoryTaskStore`], or the event store of the Streamable HTTP service
//! that serves it, so that every replica answers for every task. The replica running a task
//! holds it in its table of running tasks: its live state (read first by
//! `tasks/get` there), the token that cancels it, and the session through
//! which the tool's requests to the client become the task's
//! `inputRequests` (answered by `tasks/update`, which resolves them as a
//! client's responses would).
//!
//! With a shared store, the running replica renews its lease every third
//! of [`task_lease`](super::ServerBuilder::task_lease); a replica that
//! reads a task whose lease ran out writes it as failed (its replica is
//! gone). A cancel through another replica writes the final `cancelled`
//! record; the running replica sees it when it next writes, or reads it
//! for a `tasks/get`, and stops the call.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::task_store::{MemoryTaskStore, StoreError, StoreRef};

use super::call::{self, Served, ToolCall};
use super::context::RequestContext;
use super::session::{Session, SessionInner};
use super::tool::TaskSupport;
use super::{ServerInner, stateless};
use crate::jsonrpc::{self, ErrorObject};
use crate::types::{
    CallToolResult, ClientCapabilities, STATELESS_PROTOCOL_VERSION, Task, TaskStatus, iso8601,
    json_type_name,
};

/// How a server runs and keeps its tasks (set on its builder).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskSettings {
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Duration,
    pub(crate) max_tasks: usize,
    pub(crate) max_bytes: usize,
}

/// A server's tasks: its settings, its own store, the tasks it runs.
pub(crate) struct Tasks {
    /// The server, for the calls tasks run (which outlive their request).
    server: Weak<ServerInner>,
    settings: TaskSettings,
    own: StoreRef,
    running: Mutex<HashMap<String, Arc<Running>>>,
    /// Who listens to a running task's status (`subscriptions/listen`
    /// with `taskIds`), by task: each listener's session, held weakly.
    watchers: Mutex<HashMap<String, Vec<Weak<SessionInner>>>>,
}

/// The most task ids one `subscriptions/listen` is agreed to (the rest are
/// left out of its acknowledgement).
pub(crate) const MAX_WATCHED_TASKS: usize = 1024;

/// A task this server runs.
struct Running {
    live: Mutex<Task>,
    /// Fired by `tasks/cancel`.
    cancel: CancellationToken,
    /// The call's session: its requests to the client are the task's
    /// `inputRequests`.
    session: Session,
    /// The live state changed: the driver writes it to the store.
    changed: Notify,
    principal: Option<String>,
}

/// A task's record in its store.
#[derive(Serialize, Deserialize)]
struct Record {
    task: Task,
    /// Until when (ms since the Unix epoch) the running replica vouches
    /// for the task (shared stores only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease_until: Option<u64>,
    /// Whose task it is: the subject (or client id) of the access token of
    /// the call that made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<String>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// 128 random bits, hex: unguessable, as the extension requires of a
/// task id that is its own bearer handle.
fn new_task_id() -> Result<String, ErrorObject> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ErrorObject::internal(format!("no randomness for a task id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn not_found(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "Failed to retrieve task: no task {id:?} (unknown, expired, or not yours)"
    ))
}

fn store_failed(what: &str, e: &StoreError) -> ErrorObject {
    ErrorObject::internal(format!("{what}: {e}"))
}

/// The principal of a request: who its access token names.
pub(crate) fn principal(ctx: &RequestContext) -> Option<String> {
    let token = ctx.access_token()?;
    token
        .subject()
        .or_else(|| token.client_id())
        .map(str::to_owned)
}

impl Tasks {
    pub(crate) fn new(server: Weak<ServerInner>, settings: TaskSettings) -> Self {
        let own = MemoryTaskStore::new(settings.max_tasks, settings.max_bytes);
        Self {
            server,
            settings,
            own: StoreRef {
                store: Arc::new(own),
                timeout: Duration::from_secs(5),
            },
            running: Mutex::new(HashMap::new()),
            watchers: Mutex::new(HashMap::new()),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Running>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The store of a request: its transport's, else the server's own.
    fn store_of(&self, ctx: &RequestContext) -> (StoreRef, bool) {
        match &ctx.task_store {
            Some(store) => (store.clone(), true),
            None => (self.own.clone(), false),
        }
    }

    /// Agrees to tell `session` of each task among `ids` (at most
    /// [`MAX_WATCHED_TASKS`]) that runs here and is `who`'s: its
    /// `notifications/tasks` from now to its end. Returns those ids.
    pub(crate) fn watch(
        &self,
        session: &Session,
        ids: &[String],
        who: Option<&str>,
    ) -> Vec<String> {
        let agreed: Vec<String> = {
            let running = self.running();
            ids.iter()
                .filter(|id| {
                    running
                        .get(id.as_str())
                        .is_some_and(|r| r.principal.as_deref() == who)
                })
                .take(MAX_WATCHED_TASKS)
                .cloned()
                .collect()
        };
        let mut watchers = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        for id in &agreed {
            let list = watchers.entry(id.clone()).or_default();
            list.retain(|w| w.strong_count() > 0);
            list.push(session.downgrade());
        }
        agreed
    }

    /// Tells `task`'s listeners its state (`notifications/tasks`, the task
    /// as `tasks/get` has it); after its last, forgets them.
    fn announce(&self, task: &Task) {
        let listeners: Vec<Session> = {
            let mut watchers = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
            let list = if task.status.is_terminal() {
                watchers.remove(&task.task_id).unwrap_or_default()
            } else {
                watchers.get(&task.task_id).cloned().unwrap_or_default()
            };
            list.iter()
                .filter_map(Weak::upgrade)
                .map(Session::from_inner)
                .collect()
        };
        if listeners.is_empty() {
            return;
        }
        let Ok(params) = serde_json::to_value(task) else {
            return;
        };
        let note = jsonrpc::notification("notifications/tasks", Some(params));
        for session in listeners {
            session.notify(note.clone());
        }
    }

    /// Lets go of a task's listeners without a word.
    fn forget_watchers(&self, id: &str) {
        self.watchers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// How many tasks this server runs now.
    pub(crate) fn running_count(&self) -> usize {
        self.running().len()
    }
}

/// Whether `call` runs as a task: its tool supports tasks and its request
/// declares the extension; `-32021` for a tool that runs only as a task
/// and a request that does not.
pub(crate) fn wants_task(server: &ServerInner, call: &ToolCall<'_>) -> Result<bool, ErrorObject> {
    let Some(tool) = server.tool(&call.name) else {
        return Ok(false);
    };
    let meta = call
        .meta
        .as_deref()
        .filter(|m| crate::types::is_stateless_meta(m));
    match tool.tool.task_support {
        TaskSupport::Forbidden => Ok(false),
        _ if meta.is_some() && stateless::declares_tasks(meta) => Ok(true),
        TaskSupport::Required => Err(stateless::tasks_extension_required()),
        TaskSupport::Optional => Ok(false),
    }
}

/// Starts `call` as a task: its record written (so that `tasks/get`
/// finds it at once), the call run on in a task of its own; answers the
/// `CreateTaskResult`.
pub(crate) async fn start(
    server: &ServerInner,
    call: ToolCall<'_>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let tasks = &server.tasks;
    let meta = call.meta.clone().unwrap_or_default();
    stateless::validate_meta(Some(&*meta))?;
    let arguments = match call.arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "tools/call: \"arguments\" must be an object, not {}",
                json_type_name(&other)
            )));
        }
    };
    let settings = tasks.settings;
    if tasks.running_count() >= settings.max_tasks {
        return Err(ErrorObject::internal(format!(
            "the server runs {} tasks, its limit (ServerBuilder::max_tasks): try again when some end",
            settings.max_tasks
        )));
    }
    let Some(owner) = tasks.server.upgrade() else {
        return Err(ErrorObject::internal("the server is shutting down"));
    };
    let (store, shared) = tasks.store_of(&ctx);
    let id = new_task_id()?;
    let now = now_ms();
    let mut task = Task::new(
        id.clone(),
        TaskStatus::Working,
        &iso8601(now),
        Some(millis(settings.ttl)),
    );
    task.poll_interval_ms = Some(millis(settings.poll_interval));
    let principal = principal(&ctx);
    let record = Record {
        task: task.clone(),
        lease_until: shared.then(|| now + millis(settings.lease)),
        principal: principal.clone(),
    };
    let bytes = serde_json::to_vec(&record).map_err(|e| ErrorObject::internal(e.to_string()))?;
    store
        .run(
            "create the task",
            store.store.create_task(&id, &bytes, settings.ttl),
        )
        .await
        .map_err(|e| store_failed("the task could not be created", &e))?;

    let capabilities = stateless::client_capabilities(&meta)
        .map(|c| ClientCapabilities::from_value(&Value::Object(c.clone())))
        .unwrap_or_default();
    let running = Arc::new_cyclic(|me: &Weak<Running>| {
        let me = me.clone();
        let session = Session::with_notifier(move |message| {
            if let Some(running) = me.upgrade() {
                running.heard(message);
            }
        });
        session.set_negotiated(STATELESS_PROTOCOL_VERSION, capabilities);
        session.mark_initialized();
        session.set_client_requests(true);
        Running {
            live: Mutex::new(task.clone()),
            cancel: CancellationToken::new(),
            session,
            changed: Notify::new(),
            principal,
        }
    });
    tasks.running().insert(id.clone(), Arc::clone(&running));
    let mut call_ctx = RequestContext::with_session(running.session.clone());
    call_ctx.access_token = ctx.access_token.clone();
    let job = Job {
        name: call.name.into_owned(),
        arguments,
        meta,
        ctx: call_ctx,
    };
    tokio::spawn(drive(owner, running, id, job, store, shared));

    let mut created =
        serde_json::to_value(&task).map_err(|e| ErrorObject::internal(e.to_string()))?;
    created["resultType"] = "task".into();
    Ok(created)
}

/// What a task's call needs besides the server.
struct Job {
    name: String,
    arguments: Value,
    meta: Arc<Map<String, Value>>,
    ctx: RequestContext,
}

/// How a task's call ended.
enum End {
    Answered(Result<CallToolResult, ErrorObject>),
    Cancelled,
    /// Its record was made final elsewhere (cancelled through another
    /// replica, or written off as failed): nothing more is written.
    Settled,
}

/// Runs a task's call to its end, writing its record as it changes (and,
/// with a shared store, renewing its lease), then its final record.
async fn drive(
    server: Arc<ServerInner>,
    running: Arc<Running>,
    id: String,
    job: Job,
    store: StoreRef,
    shared: bool,
) {
    let settings = server.tasks.settings;
    let request_id = Value::String(id.clone());
    let call = ToolCall {
        id: &request_id,
        name: Cow::Owned(job.name),
        arguments: Some(job.arguments),
        meta: Some(job.meta),
        input_responses: None,
        request_state: None,
        as_task: true,
    };
    // Boxed, so that dropping it drops the handler (not only a pin).
    let mut run = Box::pin(call::run(&server, call, Served::Stateless(job.ctx)));
    let every = settings.lease / 3;
    let mut renew = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let end = loop {
        tokio::select! {
            biased;
            () = running.cancel.cancelled() => break End::Cancelled,
            answer = &mut run => break End::Answered(answer),
            () = running.changed.notified() => {
                if !running.write(&store, &id, shared, settings, false).await {
                    break End::Settled;
                }
                server.tasks.announce(&running.live().clone());
            }
            _ = renew.tick(), if shared => {
                if !running.write(&store, &id, shared, settings, false).await {
                    break End::Settled;
                }
            }
        }
    };
    // The handler is dropped now (its token fires if it did not finish).
    drop(run);
    running.session.close();
    let settled = matches!(end, End::Settled);
    if !settled {
        running.settle(end);
        if !running.write(&store, &id, shared, settings, true).await {
            tracing::debug!(task = %id, "the task's record was settled elsewhere first");
        }
    }
    // Its listeners hear its last state; settled elsewhere, this replica
    // does not know it: they are let go (a poll tells).
    let mut last = running.live().clone();
    if settled {
        last.status = TaskStatus::Unknown("settled".into());
        server.tasks.forget_watchers(&id);
    } else {
        server.tasks.announce(&last);
    }
    server.tasks.running().remove(&id);
}

impl Running {
    fn live(&self) -> std::sync::MutexGuard<'_, Task> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task as `tasks/get` has it here: its live state, unless its
    /// record in a shared store is final already (cancelled through
    /// another replica, or written off): then that record, which nothing
    /// replaces, and the call is stopped now rather than at its next
    /// write. So a task polled round-robin never goes back to `working`.
    async fn current(&self, tasks: &Tasks, ctx: &RequestContext, id: &str) -> Task {
        let live = self.live().clone();
        if ctx.task_store.is_none() || live.status.is_terminal() {
            return live;
        }
        match load(tasks, ctx, id, self.principal.as_deref()).await {
            Ok(kept) if kept.status.is_terminal() => {
                self.cancel.cancel();
                kept
            }
            // Not final, or unreadable: the live state is the newest.
            _ => live,
        }
    }

    /// A message the call's session sends: a request to the client is an
    /// input request of the task; its withdrawal takes it back. Nothing
    /// else of a task reaches the client (the extension carries no
    /// progress or log messages of a task).
    fn heard(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        let changed = {
            let mut task = self.live();
            match (method, message.get("id")) {
                (Some(method), Some(Value::String(key))) => {
                    let mut request = Map::new();
                    request.insert("method".into(), method.into());
                    if let Some(params) = message.get("params") {
                        request.insert("params".into(), params.clone());
                    }
                    task.input_requests
                        .get_or_insert_with(Map::new)
                        .insert(key.clone(), Value::Object(request));
                    task.status = TaskStatus::InputRequired;
                    true
                }
                (Some("notifications/cancelled"), None) => {
                    let key = jsonrpc::at(&message, &["params", "requestId"])
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    key.is_some_and(|key| take_input(&mut task, &key))
                }
                _ => false,
            }
        };
        if changed {
            self.touched();
        }
    }

    fn touched(&self) {
        self.live().last_updated_at = iso8601(now_ms());
        self.changed.notify_one();
    }

    /// The live state, ended so.
    fn settle(&self, end: End) {
        let mut task = self.live();
        task.input_requests = None;
        match end {
            End::Answered(Ok(result)) => {
                task.status = TaskStatus::Completed;
                task.result = Some(result);
            }
            End::Answered(Err(error)) => {
                task.status = TaskStatus::Failed;
                task.status_message = Some(error.message.clone());
                task.error = Some(error);
            }
            End::Cancelled => {
                task.status = TaskStatus::Cancelled;
                task.status_message = Some("cancelled by the client".into());
            }
            End::Settled => {}
        }
        task.last_updated_at = iso8601(now_ms());
    }

    /// Writes the live state (`last`: as final). `false` if the record is
    /// final already (settled elsewhere) or gone. A final record the store
    /// refuses (a result over its bound) is written as failed, saying why.
    async fn write(
        &self,
        store: &StoreRef,
        id: &str,
        shared: bool,
        settings: TaskSettings,
        last: bool,
    ) -> bool {
        let record = Record {
            task: self.live().clone(),
            lease_until: (shared && !last).then(|| now_ms() + millis(settings.lease)),
            principal: self.principal.clone(),
        };
        let Ok(bytes) = serde_json::to_vec(&record) else {
            return true;
        };
        let outcome = store
            .run("update the task", store.store.update_task(id, &bytes, last))
            .await;
        match outcome {
            Ok(applied) => applied,
            Err(e) if last => {
                tracing::warn!(task = %id, error = %e, "the task's final record was refused");
                let mut task = record.task;
                task.result = None;
                task.status = TaskStatus::Failed;
                let error = store_failed("the task's result could not be kept", &e);
                task.status_message = Some(error.message.clone());
                task.error = Some(error);
                *self.live() = task.clone();
                let record = Record { task, ..record };
                let bytes = serde_json::to_vec(&record).unwrap_or_default();
                let update = store.store.update_task(id, &bytes, true);
                store.run("update the task", update).await.unwrap_or(false)
            }
            Err(e) => {
                // Kept in memory; the next change or renewal writes it.
                tracing::warn!(task = %id, error = %e, "a task's record could not be written");
                true
            }
        }
    }
}

/// Takes `key` out of a task's input requests; the task works on once none
/// is left. Whether it was there.
fn take_input(task: &mut Task, key: &str) -> bool {
    let Some(requests) = task.input_requests.as_mut() else {
        return false;
    };
    let found = requests.remove(key).is_some();
    if requests.is_empty() {
        task.input_requests = None;
        if task.status == TaskStatus::InputRequired {
            task.status = TaskStatus::Working;
        }
    }
    found
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` (stateless requests,
/// their `_meta` checked).
pub(crate) async fn request(
    server: &ServerInner,
    method: &str,
    params: Map<String, Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let meta = params.get("_meta").and_then(Value::as_object);
    if !stateless::declares_tasks(meta) {
        return Err(stateless::tasks_extension_required());
    }
    let id = match params.get("taskId") {
        Some(Value::String(id)) => id.as_str(),
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "{method}: \"taskId\" must be a string, not {}",
                json_type_name(other)
            )));
        }
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "{method} needs a \"taskId\""
            )));
        }
    };
    let tasks = &server.tasks;
    let who = principal(&ctx);
    let local = tasks.running().get(id).cloned();
    let local = match local {
        Some(running) if running.principal != who => return Err(not_found(id)),
        local => local,
    };
    let ack = json!({});
    match method {
        "tasks/get" => {
            let task = match local {
                Some(running) => running.current(tasks, &ctx, id).await,
                None => load(tasks, &ctx, id, who.as_deref()).await?,
            };
            let mut got =
                serde_json::to_value(&task).map_err(|e| ErrorObject::internal(e.to_string()))?;
            got["resultType"] = "complete".into();
            Ok(got)
        }
        "tasks/cancel" => {
            if let Some(running) = local {
                running.cancel.cancel();
                return Ok(ack);
            }
            let task = load(tasks, &ctx, id, who.as_deref()).await?;
            if task.status.is_terminal() {
                return Ok(ack);
            }
            // Running on another replica: its final record, written here;
            // that replica stops the call when it next writes.
            let mut task = task;
            task.status = TaskStatus::Cancelled;
            task.status_message = Some("cancelled by the client".into());
            task.input_requests = None;
            task.last_updated_at = iso8601(now_ms());
            settle_elsewhere(tasks, &ctx, id, task, who).await?;
            Ok(ack)
        }
        "tasks/update" => {
            let responses = match params.get("inputResponses") {
                Some(Value::Object(responses)) => responses,
                Some(other) => {
                    return Err(ErrorObject::invalid_params(format!(
                        "tasks/update: \"inputResponses\" must be an object, not {}",
                        json_type_name(other)
                    )));
                }
                None => {
                    return Err(ErrorObject::invalid_params(
                        "tasks/update needs \"inputResponses\"",
                    ));
                }
            };
            let Some(running) = local else {
                let task = load(tasks, &ctx, id, who.as_deref()).await?;
                if task.status.is_terminal() {
                    return Ok(ack);
                }
                return Err(ErrorObject::invalid_params(format!(
                    "tasks/update: task {id:?} runs on another replica; its input is taken \
                     only there (route tasks/update by its Mcp-Name header)"
                )));
            };
            // Unknown or answered keys are ignored, as the extension says.
            let mut answered = false;
            for (key, response) in responses {
                if !take_input(&mut running.live(), key) {
                    continue;
                }
                let mut message = Map::new();
                message.insert("result".into(), response.clone());
                running
                    .session
                    .resolve_response(&Value::String(key.clone()), &message);
                answered = true;
            }
            if answered {
                running.touched();
            }
            Ok(ack)
        }
        _ => Err(ErrorObject::method_not_found(method)),
    }
}

/// A task as its store has it (for `who`); one whose replica stopped
/// vouching for it is written off as failed first.
async fn load(
    tasks: &Tasks,
    ctx: &RequestContext,
    id: &str,
    who: Option<&str>,
) -> Result<Task, ErrorObject> {
    let (store, _) = tasks.store_of(ctx);
    let stored = store
        .run("read the task", store.store.load_task(id))
        .await
        .map_err(|e| store_failed("the task could not be read", &e))?
        .ok_or_else(|| not_found(id))?;
    let record: Record = serde_json::from_slice(&stored.record).map_err(|e| {
        ErrorObject::internal(format!("task {id:?}: its record does not decode: {e}"))
    })?;
    if record.principal.as_deref() != who {
        return Err(not_found(id));
    }
    let mut task = record.task;
    let lapsed = record.lease_until.is_some_and(|until| until < now_ms());
    if !stored.last && lapsed && !task.status.is_terminal() {
        task.status = TaskStatus::Failed;
        task.input_requests = None;
        let error = ErrorObject::internal(
            "the server replica running this task stopped before it finished",
        );
        task.status_message = Some(error.message.clone());
        task.error = Some(error);
        task.last_updated_at = iso8601(now_ms());
        return settle_elsewhere(tasks, ctx, id, task, record.principal).await;
    }
    Ok(task)
}

/// Writes `task` as the final record of a task this replica does not run;
/// if another write settled it first, that one is read back.
fn settle_elsewhere<'a>(
    tasks: &'a Tasks,
    ctx: &'a RequestContext,
    id: &'a str,
    task: Task,
    principal: Option<String>,
) -> futures::future::BoxFuture<'a, Result<Task, ErrorObject>> {
    Box::pin(async move {
        let (store, _) = tasks.store_of(ctx);
        let record = Record {
            task,
            lease_until: None,
            principal,
        };
        let bytes =
            serde_json::to_vec(&record).map_err(|e| ErrorObject::internal(e.to_string()))?;
        let applied = store
            .run("update the task", store.store.update_task(id, &bytes, true))
            .await
            .map_err(|e| store_failed("the task could not be updated", &e))?;
        if applied {
            Ok(record.task)
        } else {
            load(tasks, ctx, id, record.principal.as_deref()).await
        }
    })
}
