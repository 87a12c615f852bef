//! Requests the server sends to the client (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`, …): their errors, and waiting for
//! the client's answer in the session's [`RequestTable`].

use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{ErrorObject, RequestId};
use crate::transport::RequestTable;

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

/// What the client answered: its `result`, or its error.
pub(crate) type Answer = Result<Value, ErrorObject>;

/// The table of a session's requests in flight: ours (to the client, each
/// waiting for its answer) and the client's `tools/call`s (each with the
/// token that cancels it).
pub(crate) type Requests = RequestTable<RequestId, oneshot::Sender<Answer>, CancellationToken>;

/// Reads a response message (`result` or `error`) into an [`Answer`].
pub(crate) fn answer_of(message: &serde_json::Map<String, Value>) -> Answer {
    match message.get("error") {
        Some(error) => Err(serde_json::from_value(error.clone()).unwrap_or_else(|_| {
            ErrorObject::internal(format!("malformed error from the client: {error}"))
        })),
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    }
}

/// Waits for the answer to our request `id`, forgetting it on timeout or drop.
pub(crate) async fn wait(
    requests: &Requests,
    id: RequestId,
    rx: oneshot::Receiver<Answer>,
    timeout: Duration,
) -> Result<Value, ClientRequestError> {
    struct Forget<'a>(&'a Requests, &'a RequestId);
    impl Drop for Forget<'_> {
        fn drop(&mut self) {
            self.0.complete_ours(self.1);
        }
    }
    let _forget = Forget(requests, &id);
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

    fn resolve(requests: &Requests, id: &RequestId, message: Value) -> bool {
        match requests.complete_ours(id) {
            Some(tx) => tx.send(answer_of(message.as_object().unwrap())).is_ok(),
            None => false,
        }
    }

    #[tokio::test]
    async fn answers_reach_their_waiter_once() {
        let requests = Requests::new();
        let id = RequestId::from("srv-0");
        let (tx, rx) = oneshot::channel();
        requests.register_ours(id.clone(), tx).unwrap();
        assert!(resolve(&requests, &id, json!({"result":{"ok":1}})));
        assert!(!resolve(&requests, &id, json!({"result":{"ok":1}})));
        let got = wait(&requests, id, rx, Duration::from_secs(1)).await;
        assert_eq!(got, Ok(json!({"ok":1})));
    }

    #[tokio::test]
    async fn errors_timeouts_and_close() {
        let requests = Requests::new();
        let id = RequestId::from("srv-1");
        let (tx, rx) = oneshot::channel();
        requests.register_ours(id.clone(), tx).unwrap();
        resolve(&requests, &id, json!({"error":{"code":-1,"message":"no"}}));
        let got = wait(&requests, id, rx, Duration::from_secs(1)).await;
        assert!(matches!(got, Err(ClientRequestError::Rejected(e)) if e.code == -1));

        let id = RequestId::from("srv-2");
        let (tx, rx) = oneshot::channel();
        requests.register_ours(id.clone(), tx).unwrap();
        let got = wait(&requests, id.clone(), rx, Duration::from_millis(10)).await;
        assert_eq!(
            got,
            Err(ClientRequestError::Timeout(Duration::from_millis(10)))
        );
        assert!(!resolve(&requests, &id, json!({"result":{}})));

        let id = RequestId::from("srv-3");
        let (tx, rx) = oneshot::channel();
        requests.register_ours(id.clone(), tx).unwrap();
        requests.close_ours();
        let got = wait(&requests, id, rx, Duration::from_secs(1)).await;
        assert_eq!(got, Err(ClientRequestError::Closed));
    }
}
