//! User callbacks the CLI calls back into: permissions, hooks,
//! elicitations and dialogs.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::{
    ElicitationRequest, ElicitationResponse, HookEvent, HookFailure, HookInput, HookMatcherConfig,
    HookOutput, InitializeRequest, PermissionResult, PermissionUpdate, UserDialogRequest,
    UserDialogResult,
};

pub(crate) type CanUseToolFn = Arc<
    dyn Fn(String, Value, PermissionContext) -> BoxFuture<'static, PermissionResult> + Send + Sync,
>;

pub(crate) type HookFn =
    Arc<dyn Fn(HookInput, HookContext) -> BoxFuture<'static, HookOutput> + Send + Sync>;

pub(crate) type ElicitationFn = Arc<
    dyn Fn(ElicitationRequest, DialogContext) -> BoxFuture<'static, ElicitationResponse>
        + Send
        + Sync,
>;

pub(crate) type UserDialogFn = Arc<
    dyn Fn(UserDialogRequest, DialogContext) -> BoxFuture<'static, UserDialogResult> + Send + Sync,
>;

pub(crate) fn boxed_can_use_tool<F, Fut>(f: F) -> CanUseToolFn
where
    F: Fn(String, Value, PermissionContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = PermissionResult> + Send + 'static,
{
    Arc::new(move |tool, input, ctx| Box::pin(f(tool, input, ctx)))
}

pub(crate) fn boxed_hook<F, Fut>(f: F) -> HookFn
where
    F: Fn(HookInput, HookContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HookOutput> + Send + 'static,
{
    Arc::new(move |input, ctx| Box::pin(f(input, ctx)))
}

/// What the CLI tells a permission callback besides the tool and its input.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PermissionContext {
    /// The model's `tool_use` id.
    pub tool_use_id: Option<String>,
    /// Rules the CLI suggests for "always allow".
    pub suggestions: Vec<PermissionUpdate>,
    /// The path that triggered the question, for file tools.
    pub blocked_path: Option<String>,
    /// Why the CLI asks.
    pub decision_reason: Option<String>,
    /// Cancelled when the CLI withdraws the question (for example on
    /// interrupt) or the session ends. The callback's future is dropped at
    /// the same moment, so code awaiting inside it does not run on; watch the
    /// token from a task of its own to clean up.
    pub cancellation: CancellationToken,
    /// The whole request as the CLI sent it.
    pub raw: Value,
}

/// What a hook callback gets besides its input.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HookContext {
    /// The `tool_use` id the hook is about, when it is about a tool.
    pub tool_use_id: Option<String>,
    /// Cancelled when the CLI withdraws the request or the session ends; the
    /// callback's future is dropped at the same moment (see
    /// [`PermissionContext::cancellation`]).
    pub cancellation: CancellationToken,
}

/// What an [`on_elicitation`](crate::Options::on_elicitation) or
/// [`on_user_dialog`](crate::Options::on_user_dialog) callback gets besides
/// the request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DialogContext {
    /// The `request_id` of the CLI's `control_request`.
    pub request_id: String,
    /// Cancelled when the CLI withdraws the question (the server gave up,
    /// the turn was interrupted) or the session ends; the callback's future
    /// is dropped at the same moment (see [`PermissionContext::cancellation`]).
    pub cancellation: CancellationToken,
}

/// Which tools a hook applies to, and its timeout.
#[derive(Clone)]
pub struct HookMatcher {
    pub(crate) matcher: Option<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) on_failure: Option<HookFailure>,
    pub(crate) callbacks: Vec<HookFn>,
}

impl fmt::Debug for HookMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookMatcher")
            .field("matcher", &self.matcher)
            .field("timeout", &self.timeout)
            .field("on_failure", &self.on_failure)
            .field("callbacks", &self.callbacks.len())
            .finish()
    }
}

impl HookMatcher {
    /// Matches tools by name or pattern (e.g. `"Bash"`, `"mcp__calc__.*"`); `None` matches all.
    pub fn new(matcher: Option<&str>) -> Self {
        Self {
            matcher: matcher.map(str::to_owned),
            timeout: None,
            on_failure: None,
            callbacks: Vec::new(),
        }
    }

    /// How long the CLI waits for the hook (it sends whole seconds).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// What a failing callback (an error, a panic, a timeout) means:
    /// [`HookFailure::Block`] blocks the action. The session refuses to
    /// start with `Block` on a CLI that does not say it honours it
    /// (`hook_on_failure_supported` in its `initialize` answer), as the
    /// official SDKs do. Without it the CLI goes on (`Continue`).
    pub fn on_failure(mut self, on_failure: HookFailure) -> Self {
        self.on_failure = Some(on_failure);
        self
    }

    pub(crate) fn with_callback(mut self, callback: HookFn) -> Self {
        self.callbacks.push(callback);
        self
    }
}

/// The callbacks of one session: the permission callback, the hook
/// callbacks by the id the CLI sends back in `hook_callback`, and the
/// elicitation and dialog callbacks.
#[derive(Default)]
pub(crate) struct Callbacks {
    pub(crate) can_use_tool: Option<CanUseToolFn>,
    hooks: HashMap<String, HookFn>,
    pub(crate) on_elicitation: Option<ElicitationFn>,
    pub(crate) on_user_dialog: Option<UserDialogFn>,
}

impl Callbacks {
    /// Gives every hook callback an id (`hook_0`, `hook_1`, …) and adds its
    /// matcher to `init`, the `initialize` request that tells the CLI which
    /// ids to call for which events.
    pub(crate) fn register(
        can_use_tool: Option<CanUseToolFn>,
        hooks: &[(HookEvent, HookMatcher)],
        mut init: InitializeRequest,
    ) -> (Self, InitializeRequest) {
        let mut registry = HashMap::new();
        for (event, matcher) in hooks {
            let mut ids = Vec::with_capacity(matcher.callbacks.len());
            for callback in &matcher.callbacks {
                let id = format!("hook_{}", registry.len());
                registry.insert(id.clone(), callback.clone());
                ids.push(id);
            }
            let mut config = HookMatcherConfig::new(matcher.matcher.clone(), ids);
            if let Some(t) = matcher.timeout {
                config = config.with_timeout(t.as_secs_f64().ceil() as u64);
            }
            config.on_failure = matcher.on_failure.clone();
            init = init.with_hook(event.clone(), config);
        }
        let callbacks = Self {
            can_use_tool,
            hooks: registry,
            ..Self::default()
        };
        (callbacks, init)
    }

    /// The hook callback registered under `id`.
    pub(crate) fn hook(&self, id: &str) -> Option<&HookFn> {
        self.hooks.get(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hooks_get_ids_in_order_and_land_in_initialize() {
        let hook = || boxed_hook(|_input, _ctx| async { HookOutput::default() });
        let hooks = vec![
            (
                HookEvent::PreToolUse,
                HookMatcher::new(Some("Bash"))
                    .timeout(Duration::from_millis(1500))
                    .with_callback(hook())
                    .with_callback(hook()),
            ),
            (
                HookEvent::Stop,
                HookMatcher::new(None)
                    .on_failure(HookFailure::Block)
                    .with_callback(hook()),
            ),
        ];
        let (callbacks, init) = Callbacks::register(None, &hooks, InitializeRequest::new());
        assert!(callbacks.hook("hook_2").is_some());
        assert!(callbacks.hook("hook_3").is_none());
        assert_eq!(
            init.to_value(),
            json!({"subtype": "initialize", "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 2}],
                "Stop": [{"matcher": null, "hookCallbackIds": ["hook_2"], "onFailure": "block"}],
            }})
        );
        let (_, none) = Callbacks::register(None, &[], InitializeRequest::new());
        assert_eq!(
            none.to_value(),
            json!({"subtype": "initialize", "hooks": null})
        );
    }
}
