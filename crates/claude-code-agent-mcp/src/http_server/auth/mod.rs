//! The resource-server side of MCP Authorization (revisions 2025-06-18 and
//! 2025-11-25): a [`ProtectedResource`] checks every request's bearer
//! token with a [`TokenVerifier`], answers with RFC 6750 challenges that
//! point at its RFC 9728 metadata, and serves that metadata.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::server::AccessToken;

mod check;
#[cfg(feature = "oauth-server")]
mod introspection;
#[cfg(feature = "oauth-server")]
mod jwt;
#[cfg(feature = "oauth-server")]
mod jwt_key;
pub(crate) use check::{authorize, chain, check_tool_scopes, metadata_response};
#[cfg(feature = "oauth-server")]
pub use introspection::IntrospectionVerifier;
#[cfg(feature = "oauth-server")]
pub use jwt::JwtVerifier;
#[cfg(feature = "oauth-server")]
pub use jwt_key::{JwtAlgorithm, KeyError, VerificationKey};

/// The path of RFC 9728's metadata document (the path-aware form appends
/// the resource's path to it).
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Checks an access token and says what it grants.
///
/// The Streamable HTTP server calls it once per request of a
/// [`ProtectedResource`] with the token of the request's
/// `Authorization: Bearer` header, and hands the [`AccessToken`] it returns
/// to the handler (tools read it with
/// [`ToolContext::access_token`](crate::ToolContext::access_token)). The
/// server bounds each call with [`ProtectedResource::verify_timeout`].
///
/// Built in: [`StaticToken`] and, with the feature `oauth-server`,
/// `JwtVerifier` and `IntrospectionVerifier`. Your own (a session store,
/// another token format):
///
/// ```
/// use claude_code_agent_mcp::AccessToken;
/// use claude_code_agent_mcp::http_server::{TokenVerifier, VerifyError};
/// use futures::future::BoxFuture;
///
/// struct Users;
///
/// impl TokenVerifier for Users {
///     fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessToken, VerifyError>> {
///         Box::pin(async move {
///             match token {
///                 "alice-token" => Ok(AccessToken::anonymous().with_scopes(["files:read"])),
///                 _ => Err(VerifyError::invalid("unknown token")),
///             }
///         })
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`: the [`AccessToken`] it stands for, or why not.
    /// Never log or return the token itself.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessToken, VerifyError>>;
}

impl<T: TokenVerifier + ?Sized> TokenVerifier for Arc<T> {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessToken, VerifyError>> {
        (**self).verify(token)
    }
}

type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Why a [`TokenVerifier`] refused a token, or could not tell.
///
/// Every kind but [`Unavailable`](Self::Unavailable) is answered with 401
/// and `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3.1),
/// with a fixed description of the kind (never the token, never your
/// message); `Unavailable` is 503. The whole error, causes included, is
/// logged at `debug` (`warn` for `Unavailable`) with the token blanked out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The token is not one this verifier accepts (malformed, unknown,
    /// revoked, a claim missing or wrong, an algorithm not allowed).
    #[error("invalid access token: {reason}")]
    Invalid {
        /// What is wrong with it.
        reason: String,
        /// The underlying error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The token has expired (`exp`, past the leeway).
    #[error("the access token has expired")]
    Expired,
    /// The token is not valid yet (`nbf`, before the leeway).
    #[error("the access token is not valid yet")]
    NotYetValid,
    /// The token was issued for another resource (`aud`).
    #[error("the access token was issued for another audience")]
    WrongAudience,
    /// The token was issued by an authorization server this resource does
    /// not trust (`iss`).
    #[error("the access token was issued by an untrusted issuer")]
    WrongIssuer,
    /// The token's signature does not verify.
    #[error("the access token's signature does not verify")]
    BadSignature,
    /// No key the verifier knows signed the token (its `kid` is unknown).
    #[error("the access token was signed with an unknown key")]
    UnknownKey,
    /// The verifier could not check the token now (its key set or
    /// introspection endpoint is unreachable, or it took too long): 503.
    #[error("the access token could not be verified: {reason}")]
    Unavailable {
        /// What failed.
        reason: String,
        /// The underlying error, if any.
        #[source]
        source: Option<BoxError>,
    },
}

impl VerifyError {
    /// [`Invalid`](Self::Invalid) with no underlying error.
    pub fn invalid(reason: impl Into<String>) -> Self {
        Self::Invalid {
            reason: reason.into(),
            source: None,
        }
    }

    /// [`Unavailable`](Self::Unavailable), caused by `source`.
    pub fn unavailable(
        reason: impl Into<String>,
        source: impl Into<Box<dyn StdError + Send + Sync + 'static>>,
    ) -> Self {
        Self::Unavailable {
            reason: reason.into(),
            source: Some(source.into()),
        }
    }

    /// Whether the verifier could not tell (503) rather than refused the
    /// token (401).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }

    /// The `error_description` sent to the client: fixed per kind.
    fn description(&self) -> &'static str {
        match self {
            Self::Invalid { .. } => "The access token is invalid",
            Self::Expired => "The access token expired",
            Self::NotYetValid => "The access token is not valid yet",
            Self::WrongAudience => "The access token is not meant for this resource",
            Self::WrongIssuer => {
                "The access token was not issued by a trusted authorization server"
            }
            Self::BadSignature => "The access token's signature is invalid",
            Self::UnknownKey => "The access token was signed with an unknown key",
            Self::Unavailable { .. } => "The access token could not be verified",
        }
    }
}

/// The simplest [`TokenVerifier`]: one fixed token, compared in constant
/// time, granting the scopes you give it. What
/// [`StreamableHttpConfig::bearer_token`](super::StreamableHttpConfig::bearer_token)
/// checks, as a verifier for a [`ProtectedResource`].
#[derive(Clone)]
pub struct StaticToken {
    token: String,
    granted: AccessToken,
}

impl StaticToken {
    /// Accepts exactly `token`, granting no scope.
    pub fn new(token: impl Into<String>) -> Self {
        Self {
            token: token.into(),
            granted: AccessToken::anonymous(),
        }
    }

    /// The scopes the token grants.
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.granted = self.granted.with_scopes(scopes);
        self
    }
}

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticToken")
            .field("scopes", &self.granted.scopes())
            .finish_non_exhaustive()
    }
}

impl TokenVerifier for StaticToken {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessToken, VerifyError>> {
        let result = if constant_time_eq(token.as_bytes(), self.token.as_bytes()) {
            Ok(self.granted.clone())
        } else {
            Err(VerifyError::invalid("not the configured token"))
        };
        Box::pin(std::future::ready(result))
    }
}

/// Compares without stopping at the first difference (the length is not
/// hidden).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An MCP server as an OAuth 2.1 protected resource (MCP Authorization,
/// RFC 9728, RFC 6750), set with
/// [`StreamableHttpConfig::protected_resource`](super::StreamableHttpConfig::protected_resource).
///
/// The server then
///
/// * serves its metadata (RFC 9728: `resource`, `authorization_servers`,
///   `scopes_supported`, `bearer_methods_supported`, …) with `GET` at
///   `/.well-known/oauth-protected-resource` and at the path-aware
///   `/.well-known/oauth-protected-resource/<path>` (e.g. `…/mcp`),
///   unauthenticated, with `Access-Control-Allow-Origin: *`;
/// * requires `Authorization: Bearer <token>` on every request to the
///   endpoint, checked by the [verifier](TokenVerifier): without one, 401
///   with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (the
///   absolute URL of the path-aware metadata, the
///   [required scopes](Self::required_scopes)); with a token the verifier
///   refuses, the same plus `error="invalid_token"` and an
///   `error_description`; with a malformed `Authorization` (another scheme,
///   no token, more than one token, characters RFC 6750's `b64token` does
///   not allow, two headers) also 401, with `error="invalid_request"` — not
///   RFC 6750's suggested 400, because MCP clients start their
///   authorization flow on 401 only; a verifier that fails or does not
///   answer within [`verify_timeout`](Self::verify_timeout): 503;
/// * refuses a token without the [required scopes](Self::required_scopes)
///   of every request, or a `tools/call` of a tool whose
///   [scopes](Self::tool_scopes) the token lacks, with 403 and
///   `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`
///   naming every scope the call needs;
/// * hands the verified [`AccessToken`] to the handler:
///   [`ToolContext::access_token`](crate::ToolContext::access_token);
/// * binds each session to the subject and client of the token that opened
///   it: a request naming the session with a token of another subject or
///   client gets 404, as for an unknown session (a session id is no
///   credential).
///
/// The token is never logged nor echoed in a response.
///
/// ```
/// use claude_code_agent_mcp::http_server::{ProtectedResource, StaticToken, StreamableHttpConfig};
///
/// let resource = ProtectedResource::new(
///     "https://mcp.example.com/mcp",
///     StaticToken::new("s3cret").scopes(["files:read", "files:write"]),
/// )
/// .authorization_server("https://auth.example.com")
/// .scopes_supported(["files:read", "files:write"])
/// .resource_name("Example files")
/// .required_scopes(["files:read"])
/// .tool_scopes("delete_file", ["files:write"]);
/// assert_eq!(
///     resource.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// let config = StreamableHttpConfig::default()
///     .allow_host("mcp.example.com")
///     .protected_resource(resource);
/// # drop(config);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ProtectedResource {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    resource_name: Option<String>,
    resource_documentation: Option<String>,
    verifier: SharedVerifier,
    required_scopes: Vec<String>,
    tool_scopes: HashMap<String, Vec<String>>,
    verify_timeout: Duration,
}

impl ProtectedResource {
    /// The resource at `resource` — the absolute URL of the MCP endpoint as
    /// clients know it (`https://mcp.example.com/mcp`), which tokens must
    /// name as their audience — whose tokens `verifier` checks.
    pub fn new(resource: impl Into<String>, verifier: impl TokenVerifier) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            resource_name: None,
            resource_documentation: None,
            verifier: SharedVerifier(Arc::new(verifier)),
            required_scopes: Vec::new(),
            tool_scopes: HashMap::new(),
            verify_timeout: Duration::from_secs(10),
        }
    }

    /// Adds an authorization server (its issuer URL) whose tokens this
    /// resource accepts: `authorization_servers` in the metadata.
    #[must_use]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes this resource understands: `scopes_supported` in the
    /// metadata.
    #[must_use]
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A human-readable name: `resource_name` in the metadata.
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// A page for developers: `resource_documentation` in the metadata.
    #[must_use]
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.resource_documentation = Some(url.into());
        self
    }

    /// The scopes every request needs (403 `insufficient_scope` without
    /// them), also named in the 401 challenges (default none).
    #[must_use]
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes a `tools/call` of `tool` needs besides the
    /// [required](Self::required_scopes) ones (403 `insufficient_scope`
    /// naming them all without them). Replaces what was set for `tool`.
    #[must_use]
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.tool_scopes
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// How long the verifier may take on one request (default 10 s); past
    /// it the request gets 503.
    #[must_use]
    pub fn verify_timeout(mut self, timeout: Duration) -> Self {
        self.verify_timeout = timeout;
        self
    }

    /// The resource's URL.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The absolute URL of the path-aware metadata document, as the
    /// challenges' `resource_metadata` names it: the resource's origin,
    /// `/.well-known/oauth-protected-resource`, then its path.
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_url(&self.resource);
        format!("{origin}{WELL_KNOWN}{path}")
    }

    /// The resource's path (`/mcp`), where its path-aware metadata is.
    pub(crate) fn resource_path(&self) -> &str {
        split_url(&self.resource).1
    }

    /// RFC 9728's metadata document.
    pub(crate) fn metadata(&self) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            doc["scopes_supported"] = json!(self.scopes_supported);
        }
        if let Some(name) = &self.resource_name {
            doc["resource_name"] = json!(name);
        }
        if let Some(url) = &self.resource_documentation {
            doc["resource_documentation"] = json!(url);
        }
        doc
    }
}

impl fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("tool_scopes", &self.tool_scopes)
            .field("verify_timeout", &self.verify_timeout)
            .finish_non_exhaustive()
    }
}

/// The verifier of a [`ProtectedResource`], shared by its clones.
///
/// Unwind-safe whatever the verifier, so that [`ProtectedResource`] and
/// the configuration holding it stay so: the server only calls it, and a
/// panic in it is the request's, never observed half-done by a catcher.
#[derive(Clone)]
struct SharedVerifier(Arc<dyn TokenVerifier>);

impl std::panic::UnwindSafe for SharedVerifier {}
impl std::panic::RefUnwindSafe for SharedVerifier {}

/// `scheme://authority` and the path of a URL (without its query and
/// fragment, and without a trailing `/`; empty for the root).
fn split_url(url: &str) -> (&str, &str) {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let (origin, path) = match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    };
    (origin, path.trim_end_matches('/'))
}
