//! The `requestState` of multi round-trip requests (2026-07-28), sealed:
//! the server's own record of a request's rounds, which travels through
//! the client and comes back on its retry. The client may change it, or
//! send it again later, on another request or as another caller: the
//! specification makes it attacker-controlled input. So it is
//!
//! * **integrity-protected**: an HMAC-SHA-256 tag over the payload with the
//!   server's [`RequestStateKey`] (domain-separated from any other use of
//!   the key); a changed payload or tag fails verification;
//! * **bound to its request**: the payload holds a SHA-256 digest of the
//!   method, the tool (or prompt, or resource), the arguments and the
//!   caller (the access token's subject and client, when there is one),
//!   and a state shown on a request whose digest differs is refused;
//! * **short-lived**: it expires ([`ServerBuilder::request_state_ttl`](super::ServerBuilder::request_state_ttl),
//!   10 minutes by default);
//! * **bounded**: at most [`MAX_REQUEST_STATE_BYTES`] (a larger one is
//!   refused before any work on it) and [`MAX_INPUT_ROUNDS`] rounds.
//!
//! It is signed, not encrypted: what it carries (the client's own answers,
//! a round count) is no secret from the client. It does not make a state
//! single-use; a server that must redeem something at most once keeps that
//! record itself.
//!
//! The wire form is `mrtr1.<base64 payload>.<base64 tag>`; the payload is
//! JSON: `{"exp": <unix seconds>, "round": <n>, "for": <hex digest>,
//! "answers": {…}}`.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::transport::mcp_headers::{base64, base64_decode};

/// The shortest key [`RequestStateKey::new`] takes, in bytes.
pub const MIN_REQUEST_STATE_KEY_BYTES: usize = 32;

/// The largest `requestState` the server issues or reads (256 KiB): the
/// answers of earlier rounds ride in it.
pub const MAX_REQUEST_STATE_BYTES: usize = 256 * 1024;

/// The most rounds of input one request may take; the request that would
/// need one more ends with an error.
pub const MAX_INPUT_ROUNDS: u32 = 16;

/// How long a `requestState` stays valid unless the server says otherwise.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// The prefix of every state this server issues (the format's version).
const PREFIX: &str = "mrtr1.";

/// Mixed into every tag: a tag for a `requestState` is never one for
/// anything else the key might sign.
const DOMAIN: &[u8] = b"claude-code-agent-mcp/request-state/v1\0";

type HmacSha256 = Hmac<Sha256>;

/// The key that seals `requestState`. Every replica of a server behind a
/// load balancer needs the same one (a retry may reach any of them); a
/// server built without one makes a random key, good for that process only.
///
/// ```
/// use claude_code_agent_mcp::server::RequestStateKey;
///
/// assert!(RequestStateKey::new([7u8; 32]).is_ok());
/// let short = RequestStateKey::new(*b"too short").unwrap_err();
/// assert_eq!(short.to_string(), "a requestState key needs at least 32 bytes, not 9");
/// ```
#[derive(Clone)]
pub struct RequestStateKey(std::sync::Arc<[u8]>);

/// A key shorter than [`MIN_REQUEST_STATE_KEY_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a requestState key needs at least {MIN_REQUEST_STATE_KEY_BYTES} bytes, not {0}")]
pub struct KeyTooShort(pub usize);

impl RequestStateKey {
    /// A key of these bytes (at least [`MIN_REQUEST_STATE_KEY_BYTES`] of
    /// them, from a secret store: anyone who has it can forge states).
    pub fn new(key: impl AsRef<[u8]>) -> Result<Self, KeyTooShort> {
        let key = key.as_ref();
        if key.len() < MIN_REQUEST_STATE_KEY_BYTES {
            return Err(KeyTooShort(key.len()));
        }
        Ok(Self(key.into()))
    }

    /// A random key (32 bytes from the operating system).
    ///
    /// # Panics
    ///
    /// If the operating system has no randomness to give.
    pub fn random() -> Self {
        let mut key = [0u8; MIN_REQUEST_STATE_KEY_BYTES];
        getrandom::fill(&mut key).expect("the operating system gives no random bytes");
        Self(key.as_slice().into())
    }

    fn mac(&self, payload: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(DOMAIN);
        mac.update(payload);
        mac
    }
}

impl fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RequestStateKey(<redacted>)")
    }
}

/// What a request is: the digest a state is bound to.
pub(crate) fn binding(method: &str, name: &str, arguments: &Value, caller: &str) -> String {
    let mut hash = Sha256::new();
    for part in [method, name, caller] {
        hash.update(part.len().to_be_bytes());
        hash.update(part.as_bytes());
    }
    canonical(arguments, &mut hash);
    hex(&hash.finalize())
}

/// Feeds `value` to `hash` with object keys sorted: the same arguments
/// give the same digest whatever order the client wrote them in.
fn canonical(value: &Value, hash: &mut Sha256) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hash.update(b"{");
            for key in keys {
                canonical(&Value::String(key.clone()), hash);
                canonical(&map[key], hash);
            }
            hash.update(b"}");
        }
        Value::Array(items) => {
            hash.update(b"[");
            items.iter().for_each(|item| canonical(item, hash));
            hash.update(b"]");
        }
        other => {
            let text = other.to_string();
            hash.update(text.len().to_be_bytes());
            hash.update(text.as_bytes());
        }
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a state records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Payload {
    /// Expiry, in seconds since the Unix epoch.
    pub(crate) exp: u64,
    /// The rounds of input asked for so far.
    pub(crate) round: u32,
    /// The request it belongs to ([`binding`]).
    #[serde(rename = "for")]
    pub(crate) binding: String,
    /// The answers of earlier rounds that the handler used.
    #[serde(default)]
    pub(crate) answers: Map<String, Value>,
}

/// Why a `requestState` was refused: said to the client as `-32602`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("requestState is {0} bytes, over the limit of {MAX_REQUEST_STATE_BYTES}")]
    TooLarge(usize),
    #[error("requestState is not one this server issued (malformed)")]
    Malformed,
    #[error("requestState failed integrity verification")]
    Forged,
    #[error("requestState expired; send the request again without it")]
    Expired,
    #[error(
        "requestState was issued for another request (its method, name, arguments or caller differ)"
    )]
    OtherRequest,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seals `payload` (its expiry set `ttl` from now): `None` when the result
/// would be over [`MAX_REQUEST_STATE_BYTES`].
pub(crate) fn seal(key: &RequestStateKey, mut payload: Payload, ttl: Duration) -> Option<String> {
    payload.exp = now().saturating_add(ttl.as_secs().max(1));
    let json = serde_json::to_vec(&payload).ok()?;
    let tag = key.mac(&json).finalize().into_bytes();
    let sealed = format!("{PREFIX}{}.{}", base64(&json), base64(&tag));
    (sealed.len() <= MAX_REQUEST_STATE_BYTES).then_some(sealed)
}

/// Opens a state shown on the request whose [`binding`] is `expected`.
pub(crate) fn open(key: &RequestStateKey, state: &str, expected: &str) -> Result<Payload, Refused> {
    if state.len() > MAX_REQUEST_STATE_BYTES {
        return Err(Refused::TooLarge(state.len()));
    }
    let (payload, tag) = state
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.split_once('.'))
        .ok_or(Refused::Malformed)?;
    let payload = base64_decode(payload).ok_or(Refused::Malformed)?;
    let tag = base64_decode(tag).ok_or(Refused::Malformed)?;
    key.mac(&payload)
        .verify_slice(&tag)
        .map_err(|_| Refused::Forged)?;
    let payload: Payload = serde_json::from_slice(&payload).map_err(|_| Refused::Malformed)?;
    if payload.exp < now() {
        return Err(Refused::Expired);
    }
    if payload.binding != expected {
        return Err(Refused::OtherRequest);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload(binding: &str) -> Payload {
        let mut answers = Map::new();
        answers.insert("name".into(), json!({"action": "accept"}));
        Payload {
            exp: 0,
            round: 1,
            binding: binding.into(),
            answers,
        }
    }

    #[test]
    fn a_sealed_state_opens_only_unchanged_in_time_on_its_request() {
        let key = RequestStateKey::random();
        let call = binding("tools/call", "greet", &json!({"a": 1, "b": [2]}), "");
        let sealed = seal(&key, payload(&call), Duration::from_secs(60)).unwrap();
        let opened = open(&key, &sealed, &call).unwrap();
        assert_eq!((opened.round, opened.answers), (1, payload("").answers));

        // The same arguments in another order are the same request.
        let reordered = binding("tools/call", "greet", &json!({"b": [2], "a": 1}), "");
        assert_eq!(reordered, call);
        // Another tool, other arguments, another caller: refused.
        for other in [
            binding("tools/call", "other", &json!({"a": 1, "b": [2]}), ""),
            binding("tools/call", "greet", &json!({"a": 2, "b": [2]}), ""),
            binding("tools/call", "greet", &json!({"a": 1, "b": [2]}), "mallory"),
            binding("prompts/get", "greet", &json!({"a": 1, "b": [2]}), ""),
        ] {
            assert_eq!(open(&key, &sealed, &other), Err(Refused::OtherRequest));
        }

        // Another key, a changed payload or tag: forged.
        assert_eq!(
            open(&RequestStateKey::random(), &sealed, &call),
            Err(Refused::Forged)
        );
        let (head, tag) = sealed.rsplit_once('.').unwrap();
        let forged = format!("{}.{tag}", seal_body(&payload(&call)));
        assert_eq!(open(&key, &forged, &call), Err(Refused::Forged));
        let mut flipped = tag.as_bytes().to_vec();
        flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
        let flipped = format!("{head}.{}", String::from_utf8(flipped).unwrap());
        assert_eq!(open(&key, &flipped, &call), Err(Refused::Forged));
        assert_eq!(
            open(&key, &format!("{sealed}-TAMPERED"), &call),
            Err(Refused::Malformed)
        );
        assert_eq!(open(&key, "opaque", &call), Err(Refused::Malformed));

        // Expired: sealed with an expiry in the past.
        let mut old = payload(&call);
        old.exp = 1;
        let json = serde_json::to_vec(&old).unwrap();
        let tag = key.mac(&json).finalize().into_bytes();
        let expired = format!("{PREFIX}{}.{}", base64(&json), base64(&tag));
        assert_eq!(open(&key, &expired, &call), Err(Refused::Expired));

        // Too large: refused before anything else.
        let huge = "x".repeat(MAX_REQUEST_STATE_BYTES + 1);
        assert_eq!(
            open(&key, &huge, &call),
            Err(Refused::TooLarge(MAX_REQUEST_STATE_BYTES + 1))
        );
        let mut big = payload(&call);
        big.answers
            .insert("big".into(), json!("x".repeat(MAX_REQUEST_STATE_BYTES)));
        assert_eq!(seal(&key, big, Duration::from_secs(60)), None);
    }

    /// The payload part of a state, sealed with no key at all.
    fn seal_body(payload: &Payload) -> String {
        let mut other = payload.clone();
        other.round = 9;
        format!("{PREFIX}{}", base64(&serde_json::to_vec(&other).unwrap()))
    }
}
