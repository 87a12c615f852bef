//! The client's side of multi round-trip requests (2026-07-28): a
//! `tools/call`, `prompts/get` or `resources/read` answered with an
//! `input_required` result is answered through the handlers the client
//! registered ([`ClientOptions::on_elicitation`](super::ClientOptions::on_elicitation),
//! [`on_sampling`](super::ClientOptions::on_sampling),
//! [`on_roots_list`](super::ClientOptions::on_roots_list)) — the ones that
//! answer a session's requests to the client — and sent again with the
//! answers (`inputResponses`) and the `requestState` echoed exactly, under
//! a new id, at most [`MAX_INPUT_ROUNDS`] times. The caller sees only the
//! final result.

use serde_json::{Map, Value};

use super::Error;
use super::options::ClientOptions;
use crate::types::{InputRequiredResult, is_input_required};

/// The most `input_required` rounds the client answers for one request;
/// past them the request fails.
pub const MAX_INPUT_ROUNDS: usize = 16;

/// The question in `result` (a result's JSON), if it is an
/// `input_required` one.
pub(crate) fn asked(method: &str, result: &Value) -> Option<Result<InputRequiredResult, Error>> {
    InputRequiredResult::from_value(result)
        .map(|asked| asked.map_err(|why| Error::invalid_response(format!("{method}: {why}"))))
}

/// Whether a result's fields say `input_required`.
pub(crate) fn is_asking(result: &Map<String, Value>) -> bool {
    is_input_required(result)
}

/// Answers every request of `asked` through the client's handlers, one
/// after the other (a person may be asked): the retry's `inputResponses`.
pub(crate) async fn answer(
    options: &ClientOptions,
    method: &str,
    asked: &InputRequiredResult,
) -> Result<Map<String, Value>, Error> {
    let mut answers = Map::new();
    for (key, request) in &asked.input_requests {
        let handler = match request.method.as_str() {
            "elicitation/create" => options.elicitation.as_ref(),
            "sampling/createMessage" => options.sampling.as_ref(),
            "roots/list" => options.roots.as_ref(),
            _ => None,
        };
        let Some(handler) = handler else {
            return Err(Error::refused(format!(
                "{method}: the server asks for input {key:?} with {}, which this client has no handler for",
                request.method
            )));
        };
        let params = match &request.params {
            Value::Null => Value::Object(Map::new()),
            params => params.clone(),
        };
        let answer = handler(params).await.map_err(|e| {
            Error::refused(format!(
                "{method}: the {} handler gave no answer to input {key:?}",
                request.method
            ))
            .with_source(e)
        })?;
        answers.insert(key.clone(), answer);
    }
    Ok(answers)
}

/// The params of the retry: the original ones with the answers and the
/// state (only when the server sent one).
pub(crate) fn retry(
    mut params: Map<String, Value>,
    answers: Map<String, Value>,
    asked: InputRequiredResult,
) -> Map<String, Value> {
    params.remove("requestState");
    params.insert("inputResponses".into(), Value::Object(answers));
    if let Some(state) = asked.request_state {
        params.insert("requestState".into(), state.into());
    }
    params
}

/// The error of a request still asking after [`MAX_INPUT_ROUNDS`] rounds.
pub(crate) fn too_many_rounds(method: &str) -> Error {
    Error::invalid_response(format!(
        "{method}: the server still asks for input after {MAX_INPUT_ROUNDS} rounds"
    ))
}

/// The error of an `input_required` result where the client cannot answer
/// (a direct in-process call of a client without input handlers).
pub(crate) fn unanswerable(method: &str) -> Error {
    Error::refused(format!(
        "{method}: the server asks for input, and this client has no handler to answer it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn requests_are_answered_by_the_handlers_and_the_state_echoed() {
        let options = ClientOptions::new("t", "1")
            .on_elicitation(|p| async move {
                Ok(json!({"action": "accept", "content": {"m": p["message"]}}))
            })
            .on_roots_list(|_| async { Ok(json!({"roots": []})) });
        let asked = InputRequiredResult::from_value(&json!({
            "resultType": "input_required",
            "inputRequests": {
                "name": {"method": "elicitation/create", "params": {"message": "Name?"}},
                "roots": {"method": "roots/list"}
            },
            "requestState": "s1"
        }))
        .unwrap()
        .unwrap();
        let answers = answer(&options, "tools/call", &asked).await.unwrap();
        assert_eq!(answers["name"]["content"]["m"], "Name?");
        assert_eq!(answers["roots"], json!({"roots": []}));
        let params = json!({"name": "t", "arguments": {}, "requestState": "old"});
        let params = retry(params.as_object().unwrap().clone(), answers, asked);
        assert_eq!(params["requestState"], "s1");
        assert_eq!(params["inputResponses"]["roots"], json!({"roots": []}));

        // No state sent: none echoed, not even an old one.
        let stateless = InputRequiredResult::default();
        let params = retry(params, Map::new(), stateless);
        assert!(!params.contains_key("requestState"));
    }

    #[tokio::test]
    async fn input_without_a_handler_or_refused_fails_the_request() {
        let asked = InputRequiredResult::from_value(&json!({
            "resultType": "input_required",
            "inputRequests": {"s": {"method": "sampling/createMessage", "params": {}}}
        }))
        .unwrap()
        .unwrap();
        let none = ClientOptions::new("t", "1");
        let e = answer(&none, "tools/call", &asked).await.unwrap_err();
        assert!(e.is_refused());
        assert!(e.to_string().contains("no handler"), "{e}");
        let refusing = ClientOptions::new("t", "1")
            .on_sampling(|_| async { Err(crate::jsonrpc::ErrorObject::internal("no model")) });
        let e = answer(&refusing, "tools/call", &asked).await.unwrap_err();
        let source = std::error::Error::source(&e).unwrap();
        assert!(source.to_string().contains("no model"), "{source}");
    }
}
