//! [`IntrospectionVerifier`]: opaque access tokens checked by the
//! authorization server's RFC 7662 introspection endpoint (feature
//! `oauth-server`).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{TokenVerifier, VerifyError};
use crate::server::AccessToken;

/// The most an introspection response may weigh.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// A [`TokenVerifier`] that asks the authorization server about each token
/// (RFC 7662 token introspection; feature `oauth-server`): what to use
/// when tokens are opaque.
///
/// Each request's token is POSTed to the endpoint (`token=…`, with HTTP
/// Basic client authentication if [`client_credentials`](Self::client_credentials)
/// are given), bounded by [`timeout`](Self::timeout). A token is accepted
/// when the answer says `"active": true`, its `aud` (a string or an array)
/// names one of the [audiences](Self::audience), and its `exp` and `nbf`,
/// if present, hold now. The answer's members become the
/// [`AccessToken`]'s claims (`scope`, `client_id`, `sub`, `exp`, …).
///
/// An accepted token is cached until its `exp` (an answer without `exp`
/// is not cached), so a client's requests cost one introspection per token,
/// not one each; a token revoked at the authorization server is thus
/// accepted until it expires. The cache is bounded
/// ([`cache_capacity`](Self::cache_capacity), 10,000 tokens by default: past
/// it, expired entries go, then the one that expires first), keyed by the
/// token's SHA-256 (the tokens themselves are not kept), and shared by the
/// verifier's clones.
///
/// `"active": false` (whatever the status) is
/// [`VerifyError::Invalid`]; an endpoint that cannot be reached, answers
/// with another error or too late is [`VerifyError::Unavailable`].
///
/// ```
/// use claude_code_agent_mcp::http_server::IntrospectionVerifier;
///
/// let verifier = IntrospectionVerifier::new(
///     "https://auth.example.com/introspect",
///     "https://mcp.example.com/mcp",
/// )
/// .client_credentials("mcp-server", Some("its-secret"));
/// # drop(verifier);
/// ```
#[derive(Clone)]
pub struct IntrospectionVerifier {
    endpoint: String,
    audiences: Vec<String>,
    client: Option<(String, Option<String>)>,
    timeout: Duration,
    http: OnceLock<reqwest::Client>,
    cache: Arc<Mutex<Cache>>,
}

/// Tokens accepted lately: (the token's SHA-256) → (the token, its `exp`).
#[derive(Default)]
struct Cache {
    capacity: usize,
    entries: HashMap<[u8; 32], (AccessToken, SystemTime)>,
}

impl Cache {
    fn get(&mut self, key: &[u8; 32], now: SystemTime) -> Option<AccessToken> {
        match self.entries.get(key) {
            Some((token, until)) if *until > now => Some(token.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn put(&mut self, key: [u8; 32], token: &AccessToken, until: SystemTime, now: SystemTime) {
        if self.capacity == 0 || until <= now {
            return;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            self.entries.retain(|_, (_, at)| *at > now);
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            let first = self.entries.iter().min_by_key(|(_, (_, at))| *at);
            if let Some(first) = first.map(|(k, _)| *k) {
                self.entries.remove(&first);
            }
        }
        self.entries.insert(key, (token.clone(), until));
    }
}

/// Tokens cached by default.
const CACHE_CAPACITY: usize = 10_000;

impl IntrospectionVerifier {
    /// Introspects tokens at `endpoint` (the authorization server's
    /// `introspection_endpoint`), accepting those for `audience` (this
    /// resource's URL).
    pub fn new(endpoint: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            audiences: vec![audience.into()],
            client: None,
            timeout: Duration::from_secs(5),
            http: OnceLock::new(),
            cache: Arc::new(Mutex::new(Cache {
                capacity: CACHE_CAPACITY,
                entries: HashMap::new(),
            })),
        }
    }

    /// How many accepted tokens are cached until they expire (default
    /// 10,000; 0: none, every request is one introspection).
    #[must_use]
    pub fn cache_capacity(self, tokens: usize) -> Self {
        let mut cache = self.lock_cache();
        cache.capacity = tokens;
        cache.entries.clear();
        drop(cache);
        self
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The token, from the cache or else introspected (and then cached
    /// until its `exp`).
    async fn verified(&self, token: &str) -> Result<AccessToken, VerifyError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(found) = self.lock_cache().get(&key, SystemTime::now()) {
            return Ok(found);
        }
        let verified = self.introspect(token).await?;
        if let Some(until) = verified.expires_at() {
            self.lock_cache()
                .put(key, &verified, until, SystemTime::now());
        }
        Ok(verified)
    }

    /// Also accepts tokens for this audience.
    #[must_use]
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Authenticates to the endpoint as this client (HTTP Basic,
    /// `client_secret_basic`).
    #[must_use]
    pub fn client_credentials(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<&str>,
    ) -> Self {
        self.client = Some((client_id.into(), client_secret.map(str::to_owned)));
        self
    }

    /// How long one introspection may take, connection included (default
    /// 5 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    fn client(&self) -> Result<&reqwest::Client, VerifyError> {
        if let Some(client) = self.http.get() {
            return Ok(client);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(self.timeout)
            .timeout(self.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| VerifyError::unavailable("no HTTP client for introspection", e))?;
        Ok(self.http.get_or_init(|| client))
    }

    async fn introspect(&self, token: &str) -> Result<AccessToken, VerifyError> {
        let client = self.client()?;
        let failed = |e: reqwest::Error| {
            VerifyError::unavailable(format!("introspection at {} failed", self.endpoint), e)
        };
        let exchange = async {
            let mut request = client
                .post(&self.endpoint)
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .header(reqwest::header::ACCEPT, "application/json")
                .body(format!(
                    "token={}&token_type_hint=access_token",
                    form_encode(token)
                ));
            if let Some((id, secret)) = &self.client {
                request = request.basic_auth(id, secret.as_deref());
            }
            let mut response = request.send().await.map_err(failed)?;
            let status = response.status();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(failed)? {
                body.extend_from_slice(&chunk);
                if body.len() > MAX_RESPONSE_BYTES {
                    return Err(VerifyError::Unavailable {
                        reason: format!(
                            "the introspection answer of {} is larger than {MAX_RESPONSE_BYTES} bytes",
                            self.endpoint
                        ),
                        source: None,
                    });
                }
            }
            Ok((status, body))
        };
        let (status, body) = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| VerifyError::Unavailable {
                reason: format!(
                    "introspection at {} did not answer within {}",
                    self.endpoint,
                    crate::server::limits::human(self.timeout)
                ),
                source: None,
            })??;
        let answer = serde_json::from_slice::<Map<String, Value>>(&body).ok();
        let active = answer
            .as_ref()
            .and_then(|a| a.get("active"))
            .and_then(Value::as_bool);
        let claims = match (answer, active) {
            (Some(claims), Some(true)) if status.is_success() => claims,
            (_, Some(false)) => return Err(VerifyError::invalid("the token is not active")),
            _ if status.is_success() => {
                return Err(VerifyError::Unavailable {
                    reason: format!(
                        "the introspection answer of {} is not an RFC 7662 response",
                        self.endpoint
                    ),
                    source: None,
                });
            }
            _ => {
                return Err(VerifyError::Unavailable {
                    reason: format!("introspection at {} answered {status}", self.endpoint),
                    source: None,
                });
            }
        };
        self.check(claims)
    }

    fn check(&self, claims: Map<String, Value>) -> Result<AccessToken, VerifyError> {
        let ours = |aud: &Value| {
            aud.as_str()
                .is_some_and(|a| self.audiences.iter().any(|ours| ours == a))
        };
        match claims.get("aud") {
            Some(Value::Array(list)) if list.iter().any(ours) => {}
            Some(aud @ Value::String(_)) if ours(aud) => {}
            _ => return Err(VerifyError::WrongAudience),
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let time = |name: &str| claims.get(name).and_then(Value::as_f64);
        if time("exp").is_some_and(|exp| exp <= now) {
            return Err(VerifyError::Expired);
        }
        if time("nbf").is_some_and(|nbf| nbf > now) {
            return Err(VerifyError::NotYetValid);
        }
        Ok(AccessToken::from_claims(claims))
    }
}

/// `application/x-www-form-urlencoded` of one value.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessToken, VerifyError>> {
        Box::pin(self.verified(token))
    }
}

impl fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("audiences", &self.audiences)
            .field("client_id", &self.client.as_ref().map(|(id, _)| id))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_are_form_encoded() {
        assert_eq!(form_encode("a+b/c=="), "a%2Bb%2Fc%3D%3D");
        assert_eq!(form_encode("x-y_z.~"), "x-y_z.~");
    }

    #[test]
    fn audience_and_times_are_checked() {
        let v = IntrospectionVerifier::new("http://as/introspect", "https://r/mcp");
        let claims = |c: Value| c.as_object().unwrap().clone();
        assert!(v.check(claims(json!({"aud": "https://r/mcp"}))).is_ok());
        assert!(
            v.check(claims(json!({"aud": ["x", "https://r/mcp"]})))
                .is_ok()
        );
        assert!(matches!(
            v.check(claims(json!({"aud": "https://other/mcp"}))),
            Err(VerifyError::WrongAudience)
        ));
        assert!(matches!(
            v.check(claims(json!({}))),
            Err(VerifyError::WrongAudience)
        ));
        assert!(matches!(
            v.check(claims(json!({"aud": "https://r/mcp", "exp": 1}))),
            Err(VerifyError::Expired)
        ));
        assert!(matches!(
            v.check(claims(json!({"aud": "https://r/mcp", "nbf": 9e12}))),
            Err(VerifyError::NotYetValid)
        ));
    }
}
