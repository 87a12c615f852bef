//! Requests the server sends to the client (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`, …) and the table that routes the
//! client's answers back to whoever is waiting.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::jsonrpc::{ErrorObject, RequestId};

/// How long a server→client request waits for its answer unless told otherwise.
pub const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a request to the client got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The transport cannot carry requests to the client (in process, or the
    /// Claude Code CLI's `mcp_message` bridge).
    #[error("server-to-client requests are not supported on this transport")]
    NotSupported,
    /// The connection ended before the client answered.
    #[error("the connection closed before the client answered")]
    Closed,
    /// The client did not answer in time.
    #[error("the client did not answer within {0:?}")]
    Timeout(Duration),
    /// The client answered with a JSON-RPC error.
    #[error("the client answered with an error: {0}")]
    Rejected(ErrorObject),
}

type Answer = Result<Value, ErrorObject>;

/// Requests sent to the client that still wait for their answer.
#[derive(Default)]
pub(crate) struct Pending {
    next: AtomicU64,
    waiting: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
}

impl Pending {
    /// A fresh id and the receiver its answer will arrive on.
    pub(crate) fn register(&self) -> (RequestId, oneshot::Receiver<Answer>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(format!("srv-{n}"));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        (id, rx)
    }

    /// Forgets a request (it timed out or its waiter went away).
    pub(crate) fn forget(&self, id: &RequestId) {
        self.lock().remove(id);
    }

    /// Delivers a response message (`result` or `error`); returns whether a
    /// request was waiting for it.
    pub(crate) fn resolve(&self, id: &Value, message: &serde_json::Map<String, Value>) -> bool {
        let Some(id) = RequestId::from_value(id) else {
            return false;
        };
        let Some(tx) = self.lock().remove(&id) else {
            return false;
        };
        let answer = match message.get("error") {
            Some(error) => Err(serde_json::from_value(error.clone()).unwrap_or_else(|_| {
                ErrorObject::internal(format!("malformed error from the client: {error}"))
            })),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        tx.send(answer).is_ok()
    }

    /// Fails every waiting request with [`ClientRequestError::Closed`].
    pub(crate) fn close_all(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<Answer>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Waits for the answer to request `id`, forgetting it on timeout or drop.
pub(crate) async fn wait(
    pending: &Pending,
    id: RequestId,
    rx: oneshot::Receiver<Answer>,
    timeout: Duration,
) -> Result<Value, ClientRequestError> {
    struct Forget<'a>(&'a Pending, &'a RequestId);
    impl Drop for Forget<'_> {
        fn drop(&mut self) {
            self.0.forget(self.1);
        }
    }
    let _forget = Forget(pending, &id);
    match tokio::time::timeout(timeout, rx).await {
        Ok(Ok(Ok(result))) => Ok(result),
        Ok(Ok(Err(error))) => Err(ClientRequestError::Rejected(error)),
        Ok(Err(_)) => Err(ClientRequestError::Closed),
        Err(_) => Err(ClientRequestError::Timeout(timeout)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn answers_reach_their_waiter_once() {
        let pending = Pending::default();
        let (id, rx) = pending.register();
        let msg = json!({"result":{"ok":1}});
        assert!(pending.resolve(&id.to_value(), msg.as_object().unwrap()));
        assert!(!pending.resolve(&id.to_value(), msg.as_object().unwrap()));
        let got = wait(&pending, id, rx, Duration::from_secs(1)).await;
        assert_eq!(got, Ok(json!({"ok":1})));
    }

    #[tokio::test]
    async fn errors_timeouts_and_close() {
        let pending = Pending::default();
        let (id, rx) = pending.register();
        let msg = json!({"error":{"code":-1,"message":"no"}});
        pending.resolve(&id.to_value(), msg.as_object().unwrap());
        let got = wait(&pending, id, rx, Duration::from_secs(1)).await;
        assert!(matches!(got, Err(ClientRequestError::Rejected(e)) if e.code == -1));

        let (id, rx) = pending.register();
        let got = wait(&pending, id.clone(), rx, Duration::from_millis(10)).await;
        assert_eq!(
            got,
            Err(ClientRequestError::Timeout(Duration::from_millis(10)))
        );
        assert!(!pending.resolve(&id.to_value(), msg.as_object().unwrap()));

        let (id, rx) = pending.register();
        pending.close_all();
        let got = wait(&pending, id, rx, Duration::from_secs(1)).await;
        assert_eq!(got, Err(ClientRequestError::Closed));
    }
}
