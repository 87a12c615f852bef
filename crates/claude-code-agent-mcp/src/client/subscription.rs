//! `subscriptions/listen` (the stateless 2026-07-28 revision): a request
//! that stays open and carries the notifications asked for, until the
//! client drops it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::{FutureExt, Stream, StreamExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::options::RequestOptions;
use super::{Error, McpClient, NotificationStream, ServerNotification};
use crate::types::SubscriptionFilter;

/// The notification that opens every subscription's stream.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

impl McpClient {
    /// Opens a `subscriptions/listen` stream (servers of the stateless
    /// 2026-07-28 revision) for the notifications in `filter`, and waits
    /// (at most the request timeout) for the server's acknowledgement.
    ///
    /// What the stream carries also reaches
    /// [`on_notification`](super::ClientOptions::on_notification) and
    /// [`notifications`](Self::notifications), like any notification; the
    /// [`Subscription`] yields those of this stream only. It stays open,
    /// with no timeout, until the `Subscription` is dropped: then the
    /// server is told (over HTTP the stream is closed; elsewhere
    /// `notifications/cancelled` names the request). The subscription
    /// keeps the connection open while it lives, as a clone of the client
    /// would.
    ///
    /// A server of an older revision has no `subscriptions/listen`: it is
    /// refused before anything is sent ([`Error::is_refused`]); such a
    /// server sends its notifications unasked (over HTTP on the GET stream,
    /// `HttpOptions::get_stream`).
    #[cfg_attr(
        feature = "http-client",
        doc = "([`HttpOptions::get_stream`](super::HttpOptions::get_stream))"
    )]
    ///
    /// ```
    /// use claude_code_agent_mcp::client::McpClient;
    /// use claude_code_agent_mcp::types::SubscriptionFilter;
    /// use claude_code_agent_mcp::{Server, Tool};
    /// use futures::StreamExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = Server::builder("demo", "1.0.0").build();
    /// let client = McpClient::in_process(server.clone()).await?;
    /// let mut changes = client.listen(SubscriptionFilter::new().tools_list_changed()).await?;
    /// assert!(changes.acknowledged().tools_list_changed);
    ///
    /// server.add_tool(Tool::new("new", "A new tool", |_: ()| async { "hi" }));
    /// let note = changes.next().await.unwrap();
    /// assert_eq!(note.method(), "notifications/tools/list_changed");
    /// # Ok::<(), claude_code_agent_mcp::client::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        let state = self.server_state();
        if !state.stateless {
            return Err(Error::refused(format!(
                "subscriptions/listen belongs to the stateless 2026-07-28 revision; this server speaks {}, and sends its notifications unasked",
                state.protocol_version
            )));
        }
        let inner = Arc::clone(&self.inner);
        let id = inner.next_id();
        let key = id.to_value();
        let rx = inner.subscribe().ok_or_else(|| inner.closed_error())?;
        let tag = key.clone();
        let mut notes =
            NotificationStream::filtered(Some(rx), move |h| h.subscription.as_ref() == Some(&tag));
        let params = json!({ "notifications": filter });
        // Task status needs the Tasks extension declared.
        let base = match filter.task_ids {
            Some(_) => self.task_options("subscriptions/listen")?,
            None => RequestOptions::default(),
        };
        let options = RequestOptions {
            unbounded: true,
            ..base
        };
        let request = Arc::clone(&inner);
        let mut task = tokio::spawn(async move {
            request
                .request_with_id(id, "subscriptions/listen", Some(params), options)
                .await
        });
        let acknowledged = async {
            loop {
                tokio::select! {
                    note = notes.next() => match note {
                        Some(ServerNotification::Other { method, params }) if method == ACKNOWLEDGED => {
                            let agreed = params
                                .as_ref()
                                .and_then(|p| p.get("notifications"))
                                .cloned()
                                .unwrap_or(Value::Null);
                            return serde_json::from_value(agreed).map_err(|e| {
                                Error::invalid_response(
                                    "subscriptions/listen: unusable acknowledgement",
                                )
                                .with_source(e)
                            });
                        }
                        // The server may not send anything before it; skip.
                        Some(_) => {}
                        None => return Err(inner.closed_error()),
                    },
                    outcome = &mut task => return Err(ended(outcome)),
                }
            }
        };
        let timeout = inner.options.request_timeout;
        let acknowledged = match tokio::time::timeout(timeout, acknowledged).await {
            Ok(Ok(agreed)) => agreed,
            Ok(Err(e)) => {
                task.abort();
                return Err(e);
            }
            Err(_) => {
                task.abort();
                return Err(Error::timeout(format!(
                    "subscriptions/listen: no acknowledgement within {}",
                    super::deadline::fmt_duration(timeout)
                )));
            }
        };
        Ok(Subscription {
            id: key,
            acknowledged,
            notes,
            task,
            ended: None,
        })
    }
}

/// Why the request under a subscription ended.
fn ended(outcome: Result<Result<Value, Error>, tokio::task::JoinError>) -> Error {
    match outcome {
        Ok(Ok(_)) => Error::invalid_response(
            "the server answered subscriptions/listen, which ends the subscription",
        ),
        Ok(Err(e)) => e,
        Err(e) => {
            Error::transport("subscriptions/listen: the request's task failed").with_source(e)
        }
    }
}

/// An open `subscriptions/listen` stream ([`McpClient::listen`]): a
/// [`Stream`] of the notifications that carry its id, in order. It ends
/// when the server ends the subscription, the transport fails or the
/// client closes ([`ended`](Self::ended) says why); dropping it ends the
/// subscription.
///
/// Bounded like [`NotificationStream`]: a subscription that is not read
/// keeps the newest [`NOTIFICATION_BUFFER`](super::NOTIFICATION_BUFFER)
/// and counts the rest in [`missed`](Self::missed).
pub struct Subscription {
    id: Value,
    acknowledged: SubscriptionFilter,
    notes: NotificationStream,
    task: JoinHandle<Result<Value, Error>>,
    ended: Option<Error>,
}

impl Subscription {
    /// The subscription's id: the JSON-RPC id of its `subscriptions/listen`
    /// request, which every notification on it carries in `_meta`.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// What the server agreed to send (a part of what was asked for: what
    /// it does not support is left out).
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// Why the subscription ended, once the stream has ended: the error
    /// its `subscriptions/listen` request failed with (an
    /// [`ErrorKind::Closed`](super::ErrorKind::Closed) one when the client
    /// closed).
    pub fn ended(&self) -> Option<&Error> {
        self.ended.as_ref()
    }

    /// How many notifications were lost because the stream was not read.
    pub fn missed(&self) -> u64 {
        self.notes.missed()
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("acknowledged", &self.acknowledged)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Stream for Subscription {
    type Item = ServerNotification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match this.notes.poll_next_unpin(cx) {
                Poll::Ready(Some(note)) if note.method() == ACKNOWLEDGED => continue,
                Poll::Ready(Some(note)) => return Poll::Ready(Some(note)),
                Poll::Ready(None) => {
                    this.ended
                        .get_or_insert_with(|| Error::closed("the client was closed"));
                    return Poll::Ready(None);
                }
                Poll::Pending => break,
            }
        }
        if this.ended.is_some() {
            return Poll::Ready(None);
        }
        match this.task.poll_unpin(cx) {
            Poll::Ready(outcome) => {
                this.ended = Some(ended(outcome));
                // What arrived before the end is still delivered.
                match this.notes.poll_next_unpin(cx) {
                    Poll::Ready(Some(note)) if note.method() != ACKNOWLEDGED => {
                        Poll::Ready(Some(note))
                    }
                    _ => Poll::Ready(None),
                }
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // Drops the request: the server is told (see `McpClient::listen`).
        self.task.abort();
    }
}
