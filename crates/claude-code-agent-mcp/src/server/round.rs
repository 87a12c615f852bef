//! Asking the client for input mid-request at the stateless revision
//! (2026-07-28, multi round-trip requests): one [`Round`] per request that
//! may ask (`tools/call`, `prompts/get`, `resources/read`).
//!
//! The revision has no requests from the server to the client. A handler
//! that needs the user (an elicitation), the client's model (sampling) or
//! its roots asks with [`ToolContext::ask`](super::ToolContext::ask), under
//! a key of its choosing. When the request already carries the answer
//! under that key (the client's `inputResponses`, or an earlier round's
//! answers kept in the `requestState`), `ask` returns it. Otherwise `ask`
//! records the request and fails with [`ClientRequestError::InputRequired`];
//! when the handler ends, whatever it returned, the request is answered
//! with an `input_required` result carrying every request it asked and a
//! sealed `requestState` (`request_state.rs`) holding the answers it used.
//! The client answers and sends the request again; the handler runs again
//! from the top, and this time its `ask`s return.
//!
//! So a handler runs once per round: what it does before its last `ask`
//! is done again on each retry, and must give the same asks (their keys
//! and order) for the same answers. The answers are the client's: nothing
//! but their shape (each an object) is checked here.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};

use super::auth::AccessToken;
use super::outbound::ClientRequestError;
use super::request_state::{self, MAX_INPUT_ROUNDS, Payload, RequestStateKey};
use crate::jsonrpc::ErrorObject;
use crate::types::{ClientCapabilities, InputRequest, InputRequiredResult, json_type_name};

/// The input one request has and asks for.
#[derive(Debug)]
pub(crate) struct Round {
    /// The answers the request carries: earlier rounds' and this retry's.
    answers: Map<String, Value>,
    /// What the handler asked and found an answer to (kept for the next round).
    used: Mutex<Map<String, Value>>,
    /// What it asked and found none to (the next round's requests).
    asked: Mutex<BTreeMap<String, InputRequest>>,
    /// Rounds of input so far.
    rounds: u32,
    /// The request's digest (`request_state::binding`).
    binding: String,
    capabilities: ClientCapabilities,
}

/// What names a request: its method, its tool (or prompt, or resource)
/// and its arguments.
pub(crate) struct RequestName<'a> {
    pub(crate) method: &'a str,
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a Value,
}

/// Who is calling, for the binding of a state: the access token's subject
/// and client (empty without a token).
pub(crate) fn caller(token: &AccessToken) -> String {
    let part = |p: Option<&str>| p.map(|p| format!("{}:{p}", p.len())).unwrap_or_default();
    format!("{}|{}", part(token.subject()), part(token.client_id()))
}

/// How a server seals its rounds: its key and the states' lifetime.
#[derive(Debug, Clone)]
pub(crate) struct Sealing {
    pub(crate) key: RequestStateKey,
    pub(crate) ttl: Duration,
}

impl Round {
    /// The round of a request `named` so, made by `caller`, carrying
    /// `input_responses` and `request_state` (its params' members, as
    /// sent): `-32602` when either is not of its type, or the state is
    /// refused.
    pub(crate) fn begin(
        sealing: &Sealing,
        named: &RequestName<'_>,
        caller: &str,
        input_responses: Option<Value>,
        request_state: Option<Value>,
        capabilities: ClientCapabilities,
    ) -> Result<Self, ErrorObject> {
        let binding = request_state::binding(named.method, named.name, named.arguments, caller);
        let (mut answers, rounds) = match request_state {
            None => (Map::new(), 0),
            Some(Value::String(state)) => {
                let payload = request_state::open(&sealing.key, &state, &binding)
                    .map_err(|refused| ErrorObject::invalid_params(refused.to_string()))?;
                (payload.answers, payload.round)
            }
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "requestState must be a string, not {}",
                    json_type_name(&other)
                )));
            }
        };
        match input_responses {
            None => {}
            Some(Value::Object(responses)) => {
                for (key, response) in responses {
                    if !response.is_object() {
                        return Err(ErrorObject::invalid_params(format!(
                            "inputResponses[{key:?}] must be an object (the client's result), not {}",
                            json_type_name(&response)
                        )));
                    }
                    answers.insert(key, response);
                }
            }
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "inputResponses must be an object, not {}",
                    json_type_name(&other)
                )));
            }
        }
        Ok(Self {
            answers,
            used: Mutex::default(),
            asked: Mutex::default(),
            rounds,
            binding,
            capabilities,
        })
    }

    /// The answer to `request` under `key`, or, without one, the request
    /// noted for the next round (see the module docs).
    pub(crate) fn ask(
        &self,
        key: &str,
        request: InputRequest,
    ) -> Result<Value, ClientRequestError> {
        if let Some(capability) = self
            .capabilities
            .missing_for(&request.method, &request.params)
        {
            return Err(ClientRequestError::CapabilityNotDeclared {
                method: request.method,
                capability: capability.to_owned(),
            });
        }
        if let Some(answer) = self.answers.get(key) {
            lock(&self.used).insert(key.to_owned(), answer.clone());
            return Ok(answer.clone());
        }
        lock(&self.asked).entry(key.to_owned()).or_insert(request);
        Err(ClientRequestError::InputRequired {
            key: key.to_owned(),
        })
    }

    /// The client capabilities the request declared.
    pub(crate) fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// The `input_required` result of a handler that asked for input it
    /// did not have, `None` if it asked for none; an error when one more
    /// round is over [`MAX_INPUT_ROUNDS`] or the state would be too large.
    pub(crate) fn input_required(
        &self,
        sealing: &Sealing,
    ) -> Option<Result<InputRequiredResult, String>> {
        let asked = std::mem::take(&mut *lock(&self.asked));
        if asked.is_empty() {
            return None;
        }
        let round = self.rounds + 1;
        if round > MAX_INPUT_ROUNDS {
            return Some(Err(format!(
                "it needed more than {MAX_INPUT_ROUNDS} rounds of input from the client"
            )));
        }
        let payload = Payload {
            exp: 0,
            round,
            binding: self.binding.clone(),
            answers: std::mem::take(&mut *lock(&self.used)),
        };
        let Some(state) = request_state::seal(&sealing.key, payload, sealing.ttl) else {
            return Some(Err(format!(
                "the answers it gathered are over the requestState limit of {} bytes",
                request_state::MAX_REQUEST_STATE_BYTES
            )));
        };
        Some(Ok(InputRequiredResult {
            input_requests: asked,
            request_state: Some(state),
            ..InputRequiredResult::default()
        }))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sealing() -> Sealing {
        Sealing {
            key: RequestStateKey::random(),
            ttl: Duration::from_secs(60),
        }
    }

    fn named(arguments: &Value) -> RequestName<'_> {
        RequestName {
            method: "tools/call",
            name: "t",
            arguments,
        }
    }

    fn caps() -> ClientCapabilities {
        ClientCapabilities::from_value(&json!({"elicitation": {}, "roots": {}}))
    }

    fn ask_name(round: &Round) -> Result<Value, ClientRequestError> {
        round.ask("name", InputRequest::elicitation("Name?", json!({})))
    }

    #[test]
    fn answers_are_kept_across_rounds_in_the_state() {
        let sealing = sealing();
        let args = json!({"x": 1});
        // Round 1: nothing to answer with.
        let first = Round::begin(&sealing, &named(&args), "", None, None, caps()).unwrap();
        assert_eq!(
            ask_name(&first),
            Err(ClientRequestError::InputRequired { key: "name".into() })
        );
        let asked = first.input_required(&sealing).unwrap().unwrap();
        assert_eq!(asked.input_requests["name"].method, "elicitation/create");
        // Round 2: the answer to "name"; "roots" is asked next.
        let responses = json!({"name": {"action": "accept"}, "extra": {"ignored": true}});
        let second = Round::begin(
            &sealing,
            &named(&args),
            "",
            Some(responses),
            asked.request_state.map(Value::from),
            caps(),
        )
        .unwrap();
        assert_eq!(ask_name(&second).unwrap()["action"], "accept");
        assert!(second.ask("roots", InputRequest::list_roots()).is_err());
        let asked = second.input_required(&sealing).unwrap().unwrap();
        assert_eq!(asked.input_requests.keys().collect::<Vec<_>>(), ["roots"]);
        // Round 3: "name" comes from the state, "roots" from the retry.
        let third = Round::begin(
            &sealing,
            &named(&args),
            "",
            Some(json!({"roots": {"roots": []}})),
            asked.request_state.map(Value::from),
            caps(),
        )
        .unwrap();
        assert_eq!(ask_name(&third).unwrap()["action"], "accept");
        assert!(third.ask("roots", InputRequest::list_roots()).is_ok());
        assert!(third.input_required(&sealing).is_none());
    }

    #[test]
    fn bad_input_and_undeclared_capabilities_are_refused() {
        let sealing = sealing();
        let args = json!({});
        let begin =
            |responses, state| Round::begin(&sealing, &named(&args), "", responses, state, caps());
        let e = begin(Some(json!({"name": 12345})), None).unwrap_err();
        assert_eq!(e.code, -32602);
        assert!(
            e.message
                .contains("inputResponses[\"name\"] must be an object"),
            "{e:?}"
        );
        let e = begin(Some(Value::Null), None).unwrap_err();
        assert_eq!(e.message, "inputResponses must be an object, not null");
        let e = begin(None, Some(json!("mrtr1.x.y"))).unwrap_err();
        assert_eq!(
            e.message,
            "requestState is not one this server issued (malformed)"
        );
        let e = begin(None, Some(json!(7))).unwrap_err();
        assert_eq!(e.message, "requestState must be a string, not a number");
        let round = begin(None, None).unwrap();
        let sampling = round.ask("s", InputRequest::sampling_text("hi", 10));
        assert_eq!(
            sampling,
            Err(ClientRequestError::CapabilityNotDeclared {
                method: "sampling/createMessage".into(),
                capability: "sampling".into()
            })
        );
        assert!(round.input_required(&sealing).is_none());
    }

    #[test]
    fn rounds_are_bounded() {
        let sealing = sealing();
        let args = json!({});
        let mut state: Option<Value> = None;
        for n in 1..=MAX_INPUT_ROUNDS + 1 {
            let round =
                Round::begin(&sealing, &named(&args), "", None, state.take(), caps()).unwrap();
            let _ = round.ask(&format!("k{n}"), InputRequest::list_roots());
            match round.input_required(&sealing).unwrap() {
                Ok(asked) => state = asked.request_state.map(Value::from),
                Err(e) => {
                    assert_eq!(n, MAX_INPUT_ROUNDS + 1);
                    assert!(e.contains("more than 16 rounds"), "{e}");
                    return;
                }
            }
        }
        panic!("the rounds were not bounded");
    }
}
