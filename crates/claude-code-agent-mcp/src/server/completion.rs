//! `completion/complete`: argument suggestions for prompts and resource templates.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use crate::jsonrpc::ErrorObject;

/// What `completion/complete` asks to complete.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CompletionRef {
    /// `ref/prompt`: an argument of the prompt with this name.
    Prompt(String),
    /// `ref/resource`: a variable of the resource template with this URI template.
    Resource(String),
    /// A reference of another type, as sent.
    Other(Value),
}

/// One `completion/complete` request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// What is being completed.
    pub reference: CompletionRef,
    /// The argument's (or template variable's) name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Arguments already filled in (`context.arguments`).
    pub context: HashMap<String, String>,
}

/// At most this many values go out in one completion (MCP's limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

pub(crate) type CompletionHandler =
    dyn Fn(CompletionRequest) -> BoxFuture<'static, Vec<String>> + Send + Sync;

pub(crate) fn erase<F, Fut>(f: F) -> Arc<CompletionHandler>
where
    F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Arc::new(move |req| f(req).boxed())
}

/// Reads the request; `-32602` when it is malformed.
pub(crate) fn parse(params: &Map<String, Value>) -> Result<CompletionRequest, ErrorObject> {
    let bad = |m: &str| ErrorObject::invalid_params(format!("completion/complete: {m}"));
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("needs a \"ref\" object"))?;
    let text = |key: &str| {
        reference
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let reference = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            CompletionRef::Prompt(text("name").ok_or_else(|| bad("ref/prompt needs a \"name\""))?)
        }
        Some("ref/resource") => {
            CompletionRef::Resource(text("uri").ok_or_else(|| bad("ref/resource needs a \"uri\""))?)
        }
        _ => CompletionRef::Other(Value::Object(reference.clone())),
    };
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("needs an \"argument\" object"))?;
    let name = argument
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("argument needs a \"name\""))?;
    let value = argument
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let context = params
        .get("context")
        .and_then(|c| c.get("arguments"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(CompletionRequest {
        reference,
        argument: name.to_owned(),
        value: value.to_owned(),
        context,
    })
}

/// The `completion/complete` result for these values.
pub(crate) fn result(mut values: Vec<String>) -> Value {
    let total = values.len();
    values.truncate(MAX_COMPLETION_VALUES);
    json!({"completion": {"values": values, "total": total, "hasMore": total > MAX_COMPLETION_VALUES}})
}
