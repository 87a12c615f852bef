//! Resources, resource templates, prompts and completion: the server's
//! catalog of them, the methods that change it, and the requests that read it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::completion::{self, CompletionHandler};
use super::contain;
use super::context::{Asking, RequestContext};
use super::prompt::{Prompt, PromptRequest};
use super::resource::{Resource, ResourceRequest, ResourceTemplate};
use super::round::{RequestName, Round};
use super::{Server, ServerInner};
use crate::jsonrpc::{self, ErrorObject};
use crate::types::{self, InputRequiredResult, json_type_name};

/// JSON-RPC error code MCP uses for an unknown resource.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// Named items in declaration order — the server's tools, resources,
/// templates and prompts — behind a lock whose poisoning is ignored: every
/// critical section is a single map operation that leaves the map
/// consistent.
pub(crate) struct Registry<T>(RwLock<Names<T>>);

/// Items by name, in list order. Hashed with foldhash (seeded per map), not
/// SipHash: every `tools/call` looks its tool up here, and the names are
/// the server's own (a client only looks them up, never adds one).
pub(crate) type Names<T> = IndexMap<String, T, foldhash::fast::RandomState>;

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self(RwLock::new(Names::default()))
    }
}

impl<T> Registry<T> {
    pub(crate) fn new(items: Names<T>) -> Self {
        Self(RwLock::new(items))
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Names<T>> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Names<T>> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the server holds besides its tools.
#[derive(Default)]
pub(crate) struct Catalog {
    resources: Registry<Resource>,
    templates: Registry<ResourceTemplate>,
    prompts: Registry<Prompt>,
    /// The skills served (`skills/list`, `skills/get`), in order.
    skills: Vec<types::skills::SkillEntry>,
    pub(crate) completion: Option<Arc<CompletionHandler>>,
    /// Set once the server has (had) resources or templates, or prompts:
    /// the capability stays advertised so `list_changed` makes sense.
    has_resources: AtomicBool,
    has_prompts: AtomicBool,
}

impl Catalog {
    pub(crate) fn new(
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
        prompts: Vec<Prompt>,
        skills: Vec<types::skills::SkillEntry>,
        completion: Option<Arc<CompletionHandler>>,
    ) -> Self {
        let catalog = Self {
            skills,
            completion,
            ..Self::default()
        };
        for r in resources {
            catalog.put_resource(r);
        }
        for t in templates {
            catalog.put_template(t);
        }
        for p in prompts {
            catalog.put_prompt(p);
        }
        catalog
    }

    fn put_resource(&self, r: Resource) {
        self.has_resources.store(true, Ordering::Relaxed);
        self.resources.write().insert(r.info.uri.clone(), r);
    }

    fn put_template(&self, t: ResourceTemplate) {
        self.has_resources.store(true, Ordering::Relaxed);
        self.templates
            .write()
            .insert(t.info.uri_template.clone(), t);
    }

    fn put_prompt(&self, p: Prompt) {
        self.has_prompts.store(true, Ordering::Relaxed);
        self.prompts.write().insert(p.info.name.clone(), p);
    }

    /// Adds the capabilities of what the server has to an `initialize` result.
    pub(crate) fn capabilities(&self, caps: &mut Map<String, Value>) {
        if self.has_resources.load(Ordering::Relaxed) {
            caps.insert(
                "resources".into(),
                json!({"subscribe": true, "listChanged": true}),
            );
        }
        if self.has_prompts.load(Ordering::Relaxed) {
            caps.insert("prompts".into(), json!({"listChanged": true}));
        }
        if self.completion.is_some() {
            caps.insert("completions".into(), json!({}));
        }
    }
}

/// Whether `method` is answered here. A server without resources (or
/// prompts) does not advertise the capability and answers its methods with
/// `-32601`, as for any unknown method; `completion/complete` is answered
/// when there is a completion handler, or prompts or resources to complete.
pub(crate) fn handles(catalog: &Catalog, method: &str) -> bool {
    let resources = catalog.has_resources.load(Ordering::Relaxed);
    let prompts = catalog.has_prompts.load(Ordering::Relaxed);
    match method {
        "resources/list"
        | "resources/templates/list"
        | "resources/read"
        | "resources/subscribe"
        | "resources/unsubscribe" => resources,
        "prompts/list" | "prompts/get" => prompts,
        "skills/list" | "skills/get" | "resources/directory/read" => !catalog.skills.is_empty(),
        "completion/complete" => catalog.completion.is_some() || resources || prompts,
        _ => false,
    }
}

/// Answers one of the requests [`handles`] says yes to.
pub(crate) async fn request(
    server: &ServerInner,
    method: &str,
    params: Map<String, Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let catalog = &server.catalog;
    let page = server.page_size;
    match method {
        "resources/list" => {
            let items = catalog.resources.read();
            paginate(
                "resources",
                items.values(),
                |r| to_value(&r.info),
                &params,
                page,
            )
        }
        "resources/templates/list" => {
            let items = catalog.templates.read();
            paginate(
                "resourceTemplates",
                items.values(),
                |t| to_value(&t.info),
                &params,
                page,
            )
        }
        "resources/read" => read_resource(server, &params, ctx).await,
        "resources/subscribe" | "resources/unsubscribe" => {
            let uri = uri_param(&params)?;
            if let Some(session) = ctx.session() {
                if method == "resources/subscribe" {
                    session.subscribe(uri);
                } else {
                    session.unsubscribe(uri);
                }
            }
            Ok(json!({}))
        }
        "prompts/list" => {
            let items = catalog.prompts.read();
            paginate(
                "prompts",
                items.values(),
                |p| to_value(&p.info),
                &params,
                page,
            )
        }
        "prompts/get" => get_prompt(server, &params, ctx).await,
        "skills/list" => paginate("skills", catalog.skills.iter(), to_value, &params, page),
        "skills/get" => super::skill::get(&catalog.skills, &params),
        "resources/directory/read" => {
            let uri = uri_param(&params)?;
            let children = super::skill::children(&catalog.skills, uri).ok_or_else(|| {
                ErrorObject::invalid_params(format!("{uri} is not a directory of a skill"))
                    .with_data(json!({"uri": uri}))
            })?;
            let resources = catalog.resources.read();
            let describe = |uri: &str| resources.get(uri).map(|r| to_value(&r.info));
            let items: Vec<Value> = children.iter().map(|c| c.resource(describe)).collect();
            paginate("resources", items.iter(), Value::clone, &params, page)
        }
        "completion/complete" => {
            let request = completion::parse(&params)?;
            let values = match &catalog.completion {
                Some(handler) => {
                    let limit = server.tool_timeout;
                    contain::catalog("completion/complete", limit, || handler(request)).await?
                }
                None => Vec::new(),
            };
            Ok(completion::result(values))
        }
        _ => Err(ErrorObject::method_not_found(method)),
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn uri_param(params: &Map<String, Value>) -> Result<&str, ErrorObject> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorObject::invalid_params("needs a string \"uri\""))
}

async fn read_resource(
    server: &ServerInner,
    params: &Map<String, Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let (catalog, limit) = (&server.catalog, server.tool_timeout);
    let uri = uri_param(params)?;
    let found = catalog.resources.read().get(uri).map(|r| {
        (
            r.handler.clone(),
            r.info.mime_type.clone(),
            Default::default(),
        )
    });
    let found = found.or_else(|| {
        catalog.templates.read().values().find_map(|t| {
            let vars = t.matches(uri)?;
            Some((t.handler.clone(), t.info.mime_type.clone(), vars))
        })
    });
    let Some((handler, mime, variables)) = found else {
        return Err(
            ErrorObject::new(RESOURCE_NOT_FOUND, format!("Resource not found: {uri}"))
                .with_data(json!({"uri": uri})),
        );
    };
    let given = (params.get("inputResponses"), params.get("requestState"));
    let round = round_of(
        server,
        "resources/read",
        uri,
        &Value::Null,
        params,
        &ctx,
        given,
    )?;
    let parts = ctx.into_parts();
    let request = ResourceRequest {
        uri: uri.to_owned(),
        variables,
        session: parts.session,
        asking: Asking {
            stream: parts.stream,
            round: round.clone(),
        },
    };
    let what = format!("resource {uri:?}");
    let read = contain::catalog(&what, limit, || handler(request)).await?;
    if let Some(asked) = asked(server, round.as_deref(), &what) {
        return asked;
    }
    let mut contents =
        read.map_err(|e| ErrorObject::internal(format!("reading {uri} failed: {e}")))?;
    if let Some(mime) = mime {
        for c in &mut contents {
            c.mime_type.get_or_insert_with(|| mime.clone());
        }
    }
    Ok(json!({"contents": contents}))
}

async fn get_prompt(
    server: &ServerInner,
    params: &Map<String, Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let (catalog, limit) = (&server.catalog, server.tool_timeout);
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorObject::invalid_params("prompts/get needs a string \"name\""))?;
    let Some(prompt) = catalog.prompts.read().get(name).cloned() else {
        return Err(ErrorObject::invalid_params(format!(
            "Unknown prompt: {name}"
        )));
    };
    let arguments = prompt
        .check_arguments(params.get("arguments"))
        .map_err(ErrorObject::invalid_params)?;
    let given = (params.get("inputResponses"), params.get("requestState"));
    let named = params.get("arguments").unwrap_or(&Value::Null);
    let round = round_of(server, "prompts/get", name, named, params, &ctx, given)?;
    let parts = ctx.into_parts();
    let request = PromptRequest {
        arguments,
        session: parts.session,
        asking: Asking {
            stream: parts.stream,
            round: round.clone(),
        },
    };
    let what = format!("prompt {name:?}");
    let got = contain::catalog(&what, limit, || (prompt.handler)(request)).await?;
    if let Some(asked) = asked(server, round.as_deref(), &what) {
        return asked;
    }
    let mut result =
        got.map_err(|e| ErrorObject::internal(format!("prompt \"{name}\" failed: {e}")))?;
    if result.description.is_none() {
        result.description = prompt.info.description.clone();
    }
    Ok(to_value(&result))
}

/// The [`Round`] of a `prompts/get` or `resources/read` of the stateless
/// revision (its `_meta` names a protocol version), `None` for one of a
/// session: what it carries of the client's input (`given`), checked.
fn round_of(
    server: &ServerInner,
    method: &str,
    name: &str,
    arguments: &Value,
    params: &Map<String, Value>,
    ctx: &RequestContext,
    given: (Option<&Value>, Option<&Value>),
) -> Result<Option<Arc<Round>>, ErrorObject> {
    let meta = params.get("_meta").and_then(Value::as_object);
    if !meta.is_some_and(crate::types::is_stateless_meta) {
        return Ok(None);
    }
    let named = RequestName {
        method,
        name,
        arguments,
    };
    let given = (given.0.cloned(), given.1.cloned());
    let round = ctx.begin_round(&server.sealing, &named, given)?;
    Ok(Some(Arc::new(round)))
}

/// The answer of a `prompts/get` or `resources/read` whose handler asked
/// for input it did not have: the `input_required` result (see
/// `round.rs`), whatever the handler returned.
fn asked(
    server: &ServerInner,
    round: Option<&Round>,
    what: &str,
) -> Option<Result<Value, ErrorObject>> {
    let asked = round?.input_required(&server.sealing)?;
    Some(
        asked
            .map(InputRequiredResult::into_value)
            .map_err(|why| ErrorObject::internal(format!("{what} could not finish: {why}"))),
    )
}

/// One page of a list result under `key` (`tools`, `resources`, …): at
/// most `page` items from where the request's `cursor` says, each made by
/// `to_item` (only those on the page), and `nextCursor` when more follow.
/// The cursor is opaque to clients: `<key>:<offset>`.
pub(crate) fn paginate<'a, T: 'a>(
    key: &str,
    items: impl ExactSizeIterator<Item = &'a T>,
    to_item: impl Fn(&T) -> Value,
    params: &Map<String, Value>,
    page: usize,
) -> Result<Value, ErrorObject> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => cursor
            .strip_prefix(key)
            .and_then(|c| c.strip_prefix(':'))
            .and_then(|c| c.parse::<usize>().ok())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor {cursor:?}")))?,
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "\"cursor\" must be a string, not {}",
                json_type_name(other)
            )));
        }
    };
    let total = items.len();
    let end = start.saturating_add(page).min(total);
    let page: Vec<Value> = items
        .skip(start)
        .take(end.saturating_sub(start))
        .map(to_item)
        .collect();
    let mut result = Map::with_capacity(2);
    result.insert(key.into(), Value::Array(page));
    if end < total {
        result.insert("nextCursor".into(), format!("{key}:{end}").into());
    }
    Ok(Value::Object(result))
}

/// Changing resources, templates and prompts while serving.
impl Server {
    /// Adds a resource (or replaces the one with its URI) and sends
    /// `notifications/resources/list_changed` to initialized sessions.
    pub fn add_resource(&self, resource: Resource) {
        self.inner.catalog.put_resource(resource);
        self.inner
            .notify_list_changed("notifications/resources/list_changed");
    }

    /// Removes the resource with this URI; returns whether there was one
    /// (and then notifies, as [`add_resource`](Self::add_resource) does).
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self
            .inner
            .catalog
            .resources
            .write()
            .shift_remove(uri)
            .is_some();
        if removed {
            self.inner
                .notify_list_changed("notifications/resources/list_changed");
        }
        removed
    }

    /// Adds a resource template (or replaces the one with its URI template)
    /// and sends `notifications/resources/list_changed`.
    pub fn add_resource_template(&self, template: ResourceTemplate) {
        self.inner.catalog.put_template(template);
        self.inner
            .notify_list_changed("notifications/resources/list_changed");
    }

    /// Removes the template with this URI template; returns whether there was one.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        let removed = self
            .inner
            .catalog
            .templates
            .write()
            .shift_remove(uri_template)
            .is_some();
        if removed {
            self.inner
                .notify_list_changed("notifications/resources/list_changed");
        }
        removed
    }

    /// Adds a prompt (or replaces the one with its name) and sends
    /// `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, prompt: Prompt) {
        self.inner.catalog.put_prompt(prompt);
        self.inner
            .notify_list_changed("notifications/prompts/list_changed");
    }

    /// Removes the prompt with this name; returns whether there was one.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self
            .inner
            .catalog
            .prompts
            .write()
            .shift_remove(name)
            .is_some();
        if removed {
            self.inner
                .notify_list_changed("notifications/prompts/list_changed");
        }
        removed
    }

    /// Tells every session subscribed to `uri` (`resources/subscribe`) that
    /// it changed: `notifications/resources/updated`. Returns how many
    /// sessions were told.
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        let message =
            jsonrpc::notification("notifications/resources/updated", Some(json!({"uri": uri})));
        let mut told = 0;
        for session in self.inner.live_sessions() {
            if session.is_subscribed(uri) {
                session.notify(message.clone());
                told += 1;
            }
        }
        told
    }

    /// The resources as `resources/list` describes them.
    pub fn resources(&self) -> Vec<types::Resource> {
        self.inner
            .catalog
            .resources
            .read()
            .values()
            .map(|r| r.info.clone())
            .collect()
    }

    /// The resource templates as `resources/templates/list` describes them.
    pub fn resource_templates(&self) -> Vec<types::ResourceTemplate> {
        self.inner
            .catalog
            .templates
            .read()
            .values()
            .map(|t| t.info.clone())
            .collect()
    }

    /// The prompts as `prompts/list` describes them.
    pub fn prompts(&self) -> Vec<types::Prompt> {
        self.inner
            .catalog
            .prompts
            .read()
            .values()
            .map(|p| p.info.clone())
            .collect()
    }
}
