//! The mock's state, shared by the [`MockModel`](super::MockModel) handle and the HTTP
//! handlers: the script of turns, the recorded requests, and which turn answers a
//! request (the retries of a failed step included).

use std::collections::VecDeque;
use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, Uri};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::request::{Answer, RecordedRequest, RequestKind};
use super::turn::{Turn, TurnKind};
use super::{Classifier, MockModelBuilder};

/// How many nested [`Turn::dynamic`] results are followed before giving up.
const MAX_DYNAMIC_DEPTH: usize = 8;

/// Everything a running mock knows: its configuration, the script and the record.
pub(super) struct MockServer {
    state: Mutex<ScriptState>,
    pub(super) default_reply: Turn,
    pub(super) side_call_reply: Turn,
    pub(super) classifier: Classifier,
    pub(super) input_tokens: Option<u64>,
    started: Instant,
    /// Bumped on every new request and answer ([`MockModel::wait_for`](super::MockModel::wait_for)).
    pub(super) changed: watch::Sender<u64>,
    pub(super) shutdown: CancellationToken,
}

/// What changes while the mock runs.
pub(super) struct ScriptState {
    /// The turns not used yet, each with its index in the script.
    pub(super) script: VecDeque<(usize, Turn)>,
    next_script_index: usize,
    pub(super) requests: Vec<RecordedRequest>,
    failed_step: Option<FailedStep>,
}

/// The last conversation request answered with an API error, for retry detection.
struct FailedStep {
    fingerprint: u64,
    script_index: Option<usize>,
    turn: Turn,
    /// Further attempts that still get the error (`None`: unlimited).
    remaining: Option<u32>,
}

/// The turn chosen for a request.
pub(super) struct Choice {
    pub(super) turn: Turn,
    pub(super) answer: Answer,
    /// The request repeats one that got an API error.
    pub(super) is_retry: bool,
}

impl ScriptState {
    pub(super) fn push(&mut self, turn: Turn) {
        self.script.push_back((self.next_script_index, turn));
        self.next_script_index += 1;
    }
}

impl MockServer {
    /// The state of a mock configured by `builder`, with its script loaded.
    pub(super) fn new(builder: MockModelBuilder, shutdown: CancellationToken) -> MockServer {
        let mut state = ScriptState {
            script: VecDeque::new(),
            next_script_index: 0,
            requests: Vec::new(),
            failed_step: None,
        };
        for turn in builder.script {
            state.push(turn);
        }
        MockServer {
            state: Mutex::new(state),
            default_reply: builder.default_reply,
            side_call_reply: builder.side_call_reply,
            classifier: builder.classifier,
            input_tokens: builder.input_tokens,
            started: Instant::now(),
            changed: watch::channel(0u64).0,
            shutdown,
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, ScriptState> {
        // A panicking user closure never runs under this lock, so poisoning only
        // follows a bug in the mock itself; keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the waiters of [`MockModel::wait_for`](super::MockModel::wait_for).
    pub(super) fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Records a request; returns its index.
    pub(super) fn record(&self, mut req: RecordedRequest) -> usize {
        let mut st = self.lock();
        let index = st.requests.len();
        req.index = index;
        st.requests.push(req);
        drop(st);
        self.bump();
        index
    }

    /// Notes which reply a request got, before it is sent.
    pub(super) fn set_answer(&self, index: usize, answer: &Answer) {
        if let Some(r) = self.lock().requests.get_mut(index) {
            r.answer = answer.clone();
        }
    }

    /// Records the answer sent to a request.
    pub(super) fn finish(&self, index: usize, answer: Answer, status: u16, response: Value) {
        let mut st = self.lock();
        if let Some(r) = st.requests.get_mut(index) {
            r.answer = answer;
            r.status = status;
            r.response = response;
        }
        drop(st);
        self.bump();
    }

    /// Marks a request as abandoned by the client.
    pub(super) fn disconnected(&self, index: usize) {
        if let Some(r) = self.lock().requests.get_mut(index) {
            r.client_disconnected = true;
        }
        self.bump();
    }

    /// A record of a request, not yet answered.
    pub(super) fn new_request(
        &self,
        kind: RequestKind,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> RecordedRequest {
        RecordedRequest {
            index: 0,
            kind,
            method: method.to_string(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: serde_json::from_slice(body).unwrap_or(Value::Null),
            body_len: body.len(),
            elapsed: self.started.elapsed(),
            received_at: SystemTime::now(),
            answer: Answer::Pending,
            status: 0,
            client_disconnected: false,
            response: Value::Null,
        }
    }

    /// Chooses the turn answering a `POST /v1/messages` of this kind: a retry of the
    /// failed step gets its error again (while it lasts); a conversation request
    /// otherwise takes the next scripted turn or the default reply; a side call gets
    /// the side-call reply. Remembers a new failed step.
    pub(super) fn choose(&self, kind: RequestKind, body: &Value) -> Choice {
        if kind != RequestKind::Conversation {
            return Choice {
                turn: self.side_call_reply.clone(),
                answer: Answer::SideCall,
                is_retry: false,
            };
        }
        let fp = fingerprint(body);
        let mut st = self.lock();
        if let Some(f) = &mut st.failed_step
            && f.fingerprint == fp
            && f.remaining != Some(0)
        {
            if let Some(n) = &mut f.remaining {
                *n -= 1;
            }
            return Choice {
                turn: f.turn.clone(),
                answer: f.script_index.map_or(Answer::Default, Answer::Retry),
                is_retry: true,
            };
        }
        st.failed_step = None;
        let (turn, answer) = match st.script.pop_front() {
            Some((i, t)) => (t, Answer::Script(i)),
            None => (self.default_reply.clone(), Answer::Default),
        };
        drop(st);
        Choice {
            turn,
            answer,
            is_retry: false,
        }
    }

    /// After dynamic turns are resolved: a conversation step answered with an API
    /// error is remembered, so that its retries get the same error.
    pub(super) fn remember_failure(&self, kind: RequestKind, body: &Value, choice: &Choice) {
        if kind != RequestKind::Conversation || choice.is_retry {
            return;
        }
        if let TurnKind::Error { times, .. } = &choice.turn.kind {
            let script_index = match choice.answer {
                Answer::Script(i) => Some(i),
                _ => None,
            };
            self.lock().failed_step = Some(FailedStep {
                fingerprint: fingerprint(body),
                script_index,
                turn: choice.turn.clone(),
                remaining: times.map(|n| n - 1),
            });
        }
    }
}

/// Follows [`Turn::dynamic`] responders (outside any lock) until a concrete turn: a
/// responder that panics gives an internal error, nesting deeper than
/// [`MAX_DYNAMIC_DEPTH`] an API error. An outer delay applies unless the inner turn
/// has its own.
pub(super) fn resolve_dynamic(mut turn: Turn, request: &RecordedRequest) -> Turn {
    let mut depth = 0;
    while let TurnKind::Dynamic(f) = &turn.kind {
        let f = f.clone();
        let outer_delay = turn.delay;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(request)));
        turn = match result {
            Ok(t) => t,
            Err(_) => Turn::internal_error(),
        };
        if turn.delay.is_zero() {
            turn.delay = outer_delay;
        }
        depth += 1;
        if depth >= MAX_DYNAMIC_DEPTH {
            turn = Turn::api_error(
                500,
                "api_error",
                "mock model: dynamic turns nested too deeply",
            );
        }
    }
    turn
}

/// Hash of the request's `messages` without `cache_control` markers.
fn fingerprint(body: &Value) -> u64 {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "cache_control")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    let messages = body.get("messages").map(strip).unwrap_or(Value::Null);
    let mut h = DefaultHasher::new();
    h.write(messages.to_string().as_bytes());
    h.finish()
}
