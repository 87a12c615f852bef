//! [`AccessToken`]: what a verified OAuth access token says about the
//! request's client and user, as the transport hands it to tools
//! ([`ToolContext::access_token`](super::ToolContext::access_token)).
//!
//! Compiled without the HTTP features: tools read it whatever the
//! transport. The HTTP server's verifiers (feature `http-server`, and
//! `oauth-server` for JWTs) make it.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// A verified access token: its subject, its client, its scopes, when it
/// expires, and every claim it carried (a JWT's payload, or an RFC 7662
/// introspection response), as the token verifier of the Streamable HTTP
/// server's protected resource made it.
///
/// It never holds the token itself, so it may be logged or shown.
///
/// ```
/// use claude_code_agent_mcp::AccessToken;
/// use serde_json::json;
///
/// let claims = json!({
///     "sub": "user-42",
///     "client_id": "my-app",
///     "scope": "files:read files:write",
///     "exp": 2_000_000_000u64,
///     "tenant": "acme",
/// });
/// let token = AccessToken::from_claims(claims.as_object().unwrap().clone());
/// assert_eq!(token.subject(), Some("user-42"));
/// assert_eq!(token.client_id(), Some("my-app"));
/// assert!(token.has_scope("files:write"));
/// assert_eq!(token.claim("tenant"), Some(&json!("acme")));
/// ```
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct AccessToken {
    subject: Option<String>,
    client_id: Option<String>,
    scopes: Vec<String>,
    expires_at: Option<SystemTime>,
    claims: Map<String, Value>,
}

impl AccessToken {
    /// A token described by its claims: the subject from `sub`, the client
    /// from `client_id` (else `azp`), the scopes from `scope` (a
    /// space-separated string) or `scp` (an array of strings, or a string),
    /// the expiry from `exp` (seconds since the Unix epoch).
    pub fn from_claims(claims: Map<String, Value>) -> Self {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let subject = text("sub");
        let client_id = text("client_id").or_else(|| text("azp"));
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => {
                s.split_ascii_whitespace().map(str::to_owned).collect()
            }
            (_, Some(Value::Array(list))) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let expires_at = claims
            .get("exp")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e15)
            .and_then(|s| UNIX_EPOCH.checked_add(Duration::from_secs_f64(s)));
        Self {
            subject,
            client_id,
            scopes,
            expires_at,
            claims,
        }
    }

    /// A token with no claims, for a verifier that knows nothing about its
    /// tokens but that they are valid (a static token). Give it scopes with
    /// [`with_scopes`](Self::with_scopes).
    pub fn anonymous() -> Self {
        Self::from_claims(Map::new())
    }

    /// The same token with these scopes (replacing those of its claims).
    #[must_use]
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The user (or client) the token was issued for: `sub`.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The OAuth client the token was issued to: `client_id`, else `azp`.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes the token grants.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// When the token expires (`exp`), if it says.
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_at
    }

    /// Every claim the token carried.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// One claim.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken")
            .field("subject", &self.subject)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .field("claims", &self.claims.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn token(claims: Value) -> AccessToken {
        AccessToken::from_claims(claims.as_object().unwrap().clone())
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        assert_eq!(token(json!({"scope": " a  b "})).scopes(), ["a", "b"]);
        assert_eq!(token(json!({"scp": ["a", 1, "b"]})).scopes(), ["a", "b"]);
        assert_eq!(token(json!({"scp": "a b"})).scopes(), ["a", "b"]);
        assert!(token(json!({"scope": 3})).scopes().is_empty());
        assert!(AccessToken::anonymous().with_scopes(["x"]).has_scope("x"));
    }

    #[test]
    fn expiry_and_names() {
        let t = token(json!({"exp": 10, "azp": "c", "sub": "s"}));
        assert_eq!(t.expires_at(), Some(UNIX_EPOCH + Duration::from_secs(10)));
        assert_eq!(t.client_id(), Some("c"));
        assert_eq!(token(json!({"exp": -1})).expires_at(), None);
        assert_eq!(token(json!({"exp": "soon"})).expires_at(), None);
    }
}
