//! What [`Tool::new`](super::Tool::new) accepts as a handler: [`ToolHandler`],
//! implemented for `Fn(T) -> Fut` and `Fn(T, ToolContext) -> Fut` (the
//! marker type parameter keeps the two impls apart, as axum's handler
//! arity does).

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::{self, BoxFuture};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::context::{CallContext, ToolContext};
use super::result::IntoToolResult;
use super::schema;
use crate::types::CallToolResult;

/// The type-erased handler: arguments, what the context is made of (made
/// only for a handler that takes one), "declares an output schema".
pub(crate) type ErasedHandler =
    dyn Fn(Value, CallContext<'_>, bool) -> BoxFuture<'static, CallToolResult> + Send + Sync;

/// A function [`Tool::new`](super::Tool::new) can call for each
/// `tools/call`: an `async` closure or function (anything returning a
/// `Future`) of the tool's arguments, with or without the call's
/// [`ToolContext`]:
///
/// | handler | arguments | input schema |
/// |---|---|---|
/// | `Fn(T) -> Fut` | `T: Deserialize + JsonSchema`, deserialized | derived from `T` |
/// | `Fn(T, ToolContext) -> Fut` | the same, and the call's context | derived from `T` |
/// | `Fn(serde_json::Value) -> Fut` (or `Map<String, Value>`), with or without `ToolContext` | the JSON object as sent, not converted | any object (`{"type":"object","properties":{}}`): set yours with [`Tool::input_schema`](super::Tool::input_schema) |
///
/// `Fut::Output` is any [`IntoToolResult`]. A handler declared without a
/// context gets none built for its calls.
///
/// The handler, its future and `T` must be `Send` and `'static`.
///
/// The marker `M` (`(T,)` or `(T, ToolContext)`) is how the compiler tells
/// the two forms apart; it is inferred, never written. Since the handler's
/// arity is not known in advance, write a closure's parameter types out:
/// `|args: Add| …`, `|args: Add, ctx: ToolContext| …` (`|_| …` does not
/// compile). A tool without arguments takes `()`.
///
/// The trait is sealed: it cannot be implemented outside this crate.
///
/// ```compile_fail,E0277
/// use claude_code_agent_mcp::Tool;
///
/// // Not a handler: three parameters.
/// let tool = Tool::new("t", "d", |a: (), b: (), c: ()| async move { "x" });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    label = "not a function of the tool's arguments, or of them and a `ToolContext`",
    note = "a tool handler is `Fn(T) -> impl Future` or `Fn(T, ToolContext) -> impl Future`: \
            `|args: Add| async move {{ … }}`, `|args: Add, ctx: ToolContext| async move {{ … }}`, \
            or an `async fn` of those parameters",
    note = "a tool without arguments takes `()`: `|_: ()| async {{ … }}`"
)]
pub trait ToolHandler<M> {
    /// The arguments the handler takes (`T`).
    type Args;
    /// The handler's output: what [`Tool::new`](super::Tool::new) turns
    /// into the call's result ([`IntoToolResult`]).
    type Output;
    /// The future the handler returns.
    type Future: Future<Output = Self::Output>;

    /// Not a public API: calls the handler, making its context if it takes one.
    #[doc(hidden)]
    fn call(&self, args: Self::Args, parts: private::Parts<'_>) -> Self::Future;
}

pub(crate) mod private {
    use super::CallContext;

    /// What a call's context is made of. Only this crate can make one,
    /// which seals [`ToolHandler`](super::ToolHandler).
    pub struct Parts<'a>(pub(crate) CallContext<'a>);
}

// Only the arity is required here, the rest by `Tool::new` (`erase`): a
// closure of the right arity then selects its impl, and a wrong argument or
// result type is reported as what it is, not as "not a tool handler".
impl<F, Fut, T> ToolHandler<(T,)> for F
where
    F: Fn(T) -> Fut,
    Fut: Future,
{
    type Args = T;
    type Output = Fut::Output;
    type Future = Fut;

    fn call(&self, args: T, _: private::Parts<'_>) -> Fut {
        self(args)
    }
}

impl<F, Fut, T> ToolHandler<(T, ToolContext)> for F
where
    F: Fn(T, ToolContext) -> Fut,
    Fut: Future,
{
    type Args = T;
    type Output = Fut::Output;
    type Future = Fut;

    fn call(&self, args: T, parts: private::Parts<'_>) -> Fut {
        self(args, parts.0.into_tool_context())
    }
}

/// `handler` type-erased, and the input schema derived from its arguments.
pub(crate) fn erase<M, H>(handler: H) -> (Value, Arc<ErasedHandler>)
where
    H: ToolHandler<M> + Send + Sync + 'static,
    H::Args: DeserializeOwned + JsonSchema + Send + 'static,
    H::Future: Send + 'static,
    H::Output: IntoToolResult,
{
    let (input_schema, unit) = schema::generate::<H::Args>();
    let erased = move |args: Value, ctx: CallContext<'_>, structured: bool| {
        // A unit type deserializes from `null`, not from `{}`.
        let args = if unit { Value::Null } else { args };
        match take_args::<H::Args>(args) {
            Ok(args) => {
                let fut = handler.call(args, private::Parts(ctx));
                async move { fut.await.into_call_tool_result(structured) }.boxed()
            }
            Err(e) => {
                future::ready(CallToolResult::error(format!("Invalid arguments: {e}"))).boxed()
            }
        }
    };
    (input_schema, Arc::new(erased))
}

/// The arguments as a `T`: moved as they are when `T` is [`Value`] or a
/// [`Map`] (raw arguments), deserialized otherwise.
fn take_args<T: DeserializeOwned + 'static>(args: Value) -> Result<T, serde_json::Error> {
    let args = match cast::<Value, T>(args) {
        Ok(args) => return Ok(args),
        Err(args) => args,
    };
    let args = match args {
        Value::Object(map) => match cast::<Map<String, Value>, T>(map) {
            Ok(args) => return Ok(args),
            Err(map) => Value::Object(map),
        },
        other => other,
    };
    serde_json::from_value(args)
}

/// `value` itself when `T` is `V`, else `Err(value)`: no allocation, and
/// for known types a comparison the compiler folds.
fn cast<V: 'static, T: 'static>(value: V) -> Result<T, V> {
    let mut slot = Some(value);
    if let Some(same) = (&mut slot as &mut dyn Any).downcast_mut::<Option<T>>()
        && let Some(value) = same.take()
    {
        return Ok(value);
    }
    match slot {
        Some(value) => Err(value),
        None => unreachable!("the slot is emptied only when `T` is `V`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_arguments_are_moved_typed_ones_deserialized() {
        let args = json!({"a": 1});
        assert_eq!(take_args::<Value>(args.clone()).unwrap(), args);
        let map = take_args::<Map<String, Value>>(args.clone()).unwrap();
        assert_eq!(map["a"], 1);

        #[derive(serde::Deserialize)]
        struct A {
            a: u8,
        }
        assert_eq!(take_args::<A>(args).unwrap().a, 1);
        assert!(take_args::<A>(json!({"a": "one"})).is_err());
        assert!(take_args::<Map<String, Value>>(json!(null)).is_err());
    }

    #[test]
    fn cast_is_identity_only_for_the_same_type() {
        assert_eq!(cast::<u8, u8>(3), Ok(3));
        assert_eq!(cast::<u8, u16>(3), Err(3));
    }
}
