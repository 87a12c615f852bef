//! Requests the server sends to the client (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`, …): their errors, waiting for the
//! client's answer in the session's [`RequestTable`], and withdrawing a
//! request that ends unanswered.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, ErrorObject, RequestId};
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
    /// The client did not declare the capability the request needs
    /// (`sampling`, `sampling.tools`, `elicitation`, `elicitation.form`,
    /// `elicitation.url`, `roots`), so it was not sent.
    #[error("the client did not declare the `{capability}` capability, which {method} needs")]
    CapabilityNotDeclared {
        /// The request's method.
        method: String,
        /// The capability, as a path: `sampling`, `elicitation.url`, …
        capability: String,
    },
    /// At the stateless revision (2026-07-28), the request does not carry
    /// the answer to this key yet: it is asked of the client in the
    /// `input_required` result the request ends with, and the handler runs
    /// again with the answer when the client retries (see
    /// [`ToolContext::ask`](super::ToolContext::ask)). Return it (`?`):
    /// whatever the handler returns, the request is answered with the
    /// question.
    #[error("the client is asked for input {key:?}; the request runs again with its answer")]
    InputRequired {
        /// The key the input was asked under.
        key: String,
    },
    /// The session moved to another replica of a Streamable HTTP service
    /// sharing an event store (the client's requests now reach that one,
    /// which took the session over): the client's answer cannot reach the
    /// replica that sent the request, so it ends unanswered.
    #[error(
        "session {session} moved to another replica of the server: the client's answer \
         cannot reach this one"
    )]
    SessionMoved {
        /// The session's id (`Mcp-Session-Id`).
        session: String,
    },
}

/// What became of a request to the client: its `result`, or why there is
/// none (the client's error: [`ClientRequestError::Rejected`]).
pub(crate) type Answer = Result<Value, ClientRequestError>;

/// The table of a session's requests in flight: ours (to the client, each
/// waiting for its answer) and the client's `tools/call`s (each with the
/// token that cancels it).
pub(crate) type Requests = RequestTable<RequestId, oneshot::Sender<Answer>, CancellationToken>;

/// Reads a response message (`result` or `error`) into an [`Answer`].
pub(crate) fn answer_of(message: &serde_json::Map<String, Value>) -> Answer {
    match message.get("error") {
        Some(error) => Err(ClientRequestError::Rejected(
            serde_json::from_value(error.clone()).unwrap_or_else(|_| {
                ErrorObject::internal(format!("malformed error from the client: {error}"))
            }),
        )),
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    }
}

/// Waits for the answer to our request `id`. If the wait ends without one
/// — the timeout, or this future dropped (the tool call waiting on it was
/// cancelled or timed out) — the request is forgotten and withdrawn:
/// `notifications/cancelled` goes to the client through `send`.
pub(crate) async fn wait(
    requests: &Requests,
    id: RequestId,
    rx: oneshot::Receiver<Answer>,
    timeout: Duration,
    send: impl Fn(Value),
) -> Result<Value, ClientRequestError> {
    let mut outstanding = Outstanding {
        requests,
        id,
        send,
        reason: "the server stopped waiting: the call that made it ended",
    };
    match tokio::time::timeout(timeout, rx).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(ClientRequestError::Closed),
        Err(_) => {
            outstanding.reason = "the server stopped waiting: no answer in time";
            Err(ClientRequestError::Timeout(timeout))
        }
    }
}

/// A request of ours in flight. Dropped while still in the table (no
/// answer came, the connection did not close), it is taken out and
/// withdrawn.
struct Outstanding<'a, F: Fn(Value)> {
    requests: &'a Requests,
    id: RequestId,
    send: F,
    reason: &'static str,
}

impl<F: Fn(Value)> Drop for Outstanding<'_, F> {
    fn drop(&mut self) {
        if self.requests.complete_ours(&self.id).is_some() {
            tracing::debug!(id = %self.id, reason = self.reason, "withdrawing a request to the client");
            (self.send)(jsonrpc::notification(
                "notifications/cancelled",
                Some(json!({"requestId": self.id.to_value(), "reason": self.reason})),
            ));
        }
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
        let got = wait(&requests, id, rx, Duration::from_secs(1), |m| panic!("{m}")).await;
        assert_eq!(got, Ok(json!({"ok":1})));
    }

    #[tokio::test]
    async fn errors_timeouts_and_close() {
        let requests = Requests::new();
        let id = RequestId::from("srv-1");
        let (tx, rx) = oneshot::channel();
        requests.register_ours(id.clone(), tx).unwrap();
        resolve(&requests, &id, json!({"error":{"code":-1,"message":"no"}}));
        let got = wait(&requests, id, rx, Duration::from_secs(1), |m| panic!("{m}")).await;
        assert!(matches!(got, Err(ClientRequestError::Rejected(e)) if e.code == -1));

        let id = RequestId::from("srv-2");
        let (tx, rx) = oneshot::channel();
        requests.register_ours(id.clone(), tx).unwrap();
        let withdrawn = std::sync::Mutex::new(Vec::new());
        let record = |m| withdrawn.lock().unwrap().push(m);
        let got = wait(&requests, id.clone(), rx, Duration::from_millis(10), record).await;
        assert_eq!(
            got,
            Err(ClientRequestError::Timeout(Duration::from_millis(10)))
        );
        assert!(!resolve(&requests, &id, json!({"result":{}})));
        let withdrawn = withdrawn.into_inner().unwrap();
        assert_eq!(withdrawn.len(), 1);
        assert_eq!(withdrawn[0]["method"], "notifications/cancelled");
        assert_eq!(withdrawn[0]["params"]["requestId"], "srv-2");

        let id = RequestId::from("srv-3");
        let (tx, rx) = oneshot::channel();
        requests.register_ours(id.clone(), tx).unwrap();
        requests.close_ours();
        let got = wait(&requests, id, rx, Duration::from_secs(1), |m| panic!("{m}")).await;
        assert_eq!(got, Err(ClientRequestError::Closed));
    }
}
