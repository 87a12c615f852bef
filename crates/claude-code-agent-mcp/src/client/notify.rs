//! Notifications from the server, typed, and a stream of them.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::transport::budget::Charge;
use crate::types::{LoggingMessage, ProgressNotification};

/// A notification as the streams get it: with the `subscriptions/listen`
/// request it came on, if any (`_meta`'s subscription id).
#[derive(Debug, Clone)]
pub(crate) struct Heard {
    pub(crate) subscription: Option<Value>,
    pub(crate) note: Arc<Unread>,
}

/// A notification not yet read by every stream, and its bytes charged to
/// the client's budget: freed when the last stream has read it, or emptied
/// by the client when unread notifications pass the budget
/// ([`evict`](Self::evict); the streams then count it as missed).
pub(crate) struct Unread(Mutex<Option<(ServerNotification, Option<Charge>)>>);

impl Unread {
    pub(crate) fn new(note: ServerNotification, charge: Option<Charge>) -> Arc<Self> {
        Arc::new(Self(Mutex::new(Some((note, charge)))))
    }

    /// The notification, unless it was evicted.
    pub(crate) fn get(&self) -> Option<ServerNotification> {
        let slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.as_ref().map(|(note, _)| note.clone())
    }

    /// Frees the notification and its charge.
    pub(crate) fn evict(&self) {
        let taken = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        drop(taken);
    }
}

impl std::fmt::Debug for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Unread")
    }
}

/// A notification the server sent.
///
/// Unknown methods, and known ones whose params do not decode, are kept as
/// [`ServerNotification::Other`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`
    Progress(ProgressNotification),
    /// `notifications/message`: a log record.
    Log(LoggingMessage),
    /// `notifications/tools/list_changed`
    ToolListChanged,
    /// `notifications/resources/list_changed`
    ResourceListChanged,
    /// `notifications/prompts/list_changed`
    PromptListChanged,
    /// `notifications/resources/updated`
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// `notifications/cancelled`: the server gave up a request it sent.
    Cancelled {
        /// The id of the server's request.
        request_id: Value,
        /// Why, if it said.
        reason: Option<String>,
    },
    /// `notifications/tasks`: a task's state, as `tasks/get` would have
    /// it (the Tasks extension; boxed, a task is large).
    Task(Box<crate::types::Task>),
    /// Anything else, as sent.
    Other {
        /// The method.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
}

impl ServerNotification {
    /// Reads a notification from its method and params.
    pub fn parse(method: &str, params: Option<Value>) -> Self {
        let decoded = match method {
            "notifications/progress" => params
                .clone()
                .and_then(|p| serde_json::from_value(p).ok())
                .map(Self::Progress),
            "notifications/message" => params
                .clone()
                .and_then(|p| serde_json::from_value(p).ok())
                .map(Self::Log),
            "notifications/tools/list_changed" => Some(Self::ToolListChanged),
            "notifications/resources/list_changed" => Some(Self::ResourceListChanged),
            "notifications/prompts/list_changed" => Some(Self::PromptListChanged),
            "notifications/resources/updated" => params
                .as_ref()
                .and_then(|p| p.get("uri")?.as_str())
                .map(|uri| Self::ResourceUpdated {
                    uri: uri.to_owned(),
                }),
            "notifications/tasks" => params
                .clone()
                .and_then(|p| serde_json::from_value(p).ok())
                .map(|task| Self::Task(Box::new(task))),
            "notifications/cancelled" => params.as_ref().and_then(|p| {
                Some(Self::Cancelled {
                    request_id: p.get("requestId")?.clone(),
                    reason: p.get("reason").and_then(Value::as_str).map(str::to_owned),
                })
            }),
            _ => None,
        };
        decoded.unwrap_or_else(|| Self::Other {
            method: method.to_owned(),
            params,
        })
    }

    /// The notification's method name.
    pub fn method(&self) -> &str {
        match self {
            Self::Progress(_) => "notifications/progress",
            Self::Log(_) => "notifications/message",
            Self::ToolListChanged => "notifications/tools/list_changed",
            Self::ResourceListChanged => "notifications/resources/list_changed",
            Self::PromptListChanged => "notifications/prompts/list_changed",
            Self::ResourceUpdated { .. } => "notifications/resources/updated",
            Self::Cancelled { .. } => "notifications/cancelled",
            Self::Task(_) => "notifications/tasks",
            Self::Other { method, .. } => method,
        }
    }
}

/// The server's notifications, from the moment it was made
/// ([`McpClient::notifications`](super::McpClient::notifications)); ends
/// when the client is closed or dropped.
///
/// Bounded: at most [`NOTIFICATION_BUFFER`](super::NOTIFICATION_BUFFER)
/// notifications, and no more bytes than the client's budget
/// ([`ClientOptions::max_held_bytes`](super::ClientOptions::max_held_bytes))
/// leaves, wait for a stream that is not read. One that falls further
/// behind loses the oldest: they are skipped, counted in
/// [`missed`](Self::missed), and a warning is logged. The client itself
/// never waits for a stream, so a slow reader cannot hold up responses
/// (the [`on_notification`](super::ClientOptions::on_notification)
/// callback sees every notification).
pub struct NotificationStream {
    inner: BoxStream<'static, ServerNotification>,
    missed: Arc<AtomicU64>,
}

impl NotificationStream {
    pub(crate) fn new(rx: Option<broadcast::Receiver<Heard>>) -> Self {
        Self::filtered(rx, |_| true)
    }

    /// The notifications `keep` accepts (those of one subscription, say).
    pub(crate) fn filtered(
        rx: Option<broadcast::Receiver<Heard>>,
        keep: impl Fn(&Heard) -> bool + Send + Sync + 'static,
    ) -> Self {
        let missed = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&missed);
        let keep = Arc::new(keep);
        let inner = futures::stream::unfold(rx, move |rx| {
            let counter = Arc::clone(&counter);
            let keep = Arc::clone(&keep);
            async move {
                let mut rx = rx?;
                loop {
                    match rx.recv().await {
                        Ok(heard) if keep(&heard) => match heard.note.get() {
                            Some(note) => return Some((note, Some(rx))),
                            None => {
                                let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
                                if n.is_power_of_two() {
                                    tracing::warn!(
                                        missed = n,
                                        "MCP client: a notification stream fell behind the \
                                         client's byte budget; its oldest notifications were dropped"
                                    );
                                }
                            }
                        },
                        Ok(_) => {}
                        Err(broadcast::error::RecvError::Lagged(n)) => {
                            counter.fetch_add(n, Ordering::Relaxed);
                            tracing::warn!(
                                missed = n,
                                "MCP client: a notification stream fell behind; its oldest notifications were dropped"
                            );
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            }
        })
        .boxed();
        Self { inner, missed }
    }

    /// How many notifications this stream lost by falling behind.
    pub fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for NotificationStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationStream")
            .field("missed", &self.missed())
            .finish_non_exhaustive()
    }
}

impl Stream for NotificationStream {
    type Item = ServerNotification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_known_and_keeps_unknown() {
        let p = ServerNotification::parse(
            "notifications/progress",
            Some(json!({"progressToken":"t","progress":1,"total":3})),
        );
        let ServerNotification::Progress(p) = p else {
            panic!("{p:?}")
        };
        assert_eq!((p.progress, p.total), (1.0, Some(3.0)));
        let l = ServerNotification::parse(
            "notifications/message",
            Some(json!({"level":"info","data":{"a":1}})),
        );
        assert!(matches!(l, ServerNotification::Log(ref m) if m.level == "info"));
        assert_eq!(
            ServerNotification::parse("notifications/tools/list_changed", None),
            ServerNotification::ToolListChanged
        );
        // Undecodable params of a known method are kept, not dropped.
        let bad = ServerNotification::parse("notifications/progress", Some(json!({"x":1})));
        assert_eq!(bad.method(), "notifications/progress");
        assert!(matches!(bad, ServerNotification::Other { .. }));
    }
}
