//! The resource-server side of MCP Authorization (revisions 2025-06-18 and
//! 2025-11-25): a [`ProtectedResource`] checks every request's bearer
//! token with a [`TokenVerifier`], answers with RFC 6750 challenges that
//! point at its RFC 9728 metadata, and serves that metadata.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::jsonrpc::{self, ErrorObject};
use crate::server::AccessToken;

#[cfg(feature = "oauth-server")]
mod introspection;
#[cfg(feature = "oauth-server")]
mod jwt;
#[cfg(feature = "oauth-server")]
pub use introspection::IntrospectionVerifier;
#[cfg(feature = "oauth-server")]
pub use jwt::JwtVerifier;

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

/// The token of an `Authorization: Bearer` header: `Ok(None)` without
/// one, `Err` for one that is not a single well-formed bearer token.
fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err("More than one Authorization header");
    }
    let value = value
        .to_str()
        .map_err(|_| "The Authorization header is not visible ASCII")?;
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err("The Authorization header must use the Bearer scheme");
    }
    let token = rest.trim_matches(' ');
    if token.is_empty() {
        return Err("The Authorization header has no token");
    }
    // RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    let body = token.trim_end_matches('=');
    let b64 = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b);
    if body.is_empty() || !body.bytes().all(b64) {
        return Err("The bearer token is malformed");
    }
    Ok(Some(token))
}

/// A quoted-string of an auth-param: no quote or backslash in our values,
/// and nothing outside RFC 6750's `error_description` characters.
fn quoted(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            ' ' | '!' | '#'..='[' | ']'..='~' => c,
            _ => '?',
        })
        .collect()
}

/// A `WWW-Authenticate: Bearer …` challenge.
fn challenge(
    resource: &ProtectedResource,
    error: Option<(&str, &str)>,
    scopes: &[String],
) -> HeaderValue {
    let mut params = Vec::new();
    if let Some((code, description)) = error {
        params.push(format!("error=\"{}\"", quoted(code)));
        params.push(format!("error_description=\"{}\"", quoted(description)));
    }
    params.push(format!(
        "resource_metadata=\"{}\"",
        quoted(&resource.metadata_url())
    ));
    if !scopes.is_empty() {
        params.push(format!("scope=\"{}\"", quoted(&scopes.join(" "))));
    }
    let value = format!("Bearer {}", params.join(", "));
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

fn refusal(status: StatusCode, id: &Value, message: &str, challenge: HeaderValue) -> Response {
    let title = if status == StatusCode::FORBIDDEN {
        "Forbidden"
    } else {
        "Unauthorized"
    };
    let mut response = error(
        status,
        id,
        jsonrpc::INVALID_REQUEST,
        format!("{title}: {message}"),
    );
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, challenge);
    response
}

/// A JSON-RPC error as an HTTP response with this status (as `guard.rs`
/// words them; `guard.rs` is above this module, which config.rs holds).
fn error(status: StatusCode, id: &Value, code: i64, message: impl Into<String>) -> Response {
    let body = jsonrpc::error_response(id, ErrorObject::new(code, message));
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `text` with every occurrence of `secret` blanked out (for logs).
fn redact(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        text.to_owned()
    } else {
        text.replace(secret, "[redacted]")
    }
}

/// An error and its causes, one line.
fn chain(e: &dyn StdError) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Checks the request's token: the verified token, or the response that
/// refuses the request (401, 403 for the required scopes, 503).
pub(crate) async fn authorize(
    resource: &ProtectedResource,
    headers: &HeaderMap,
) -> Result<Arc<AccessToken>, Response> {
    let required = &resource.required_scopes;
    let token = match bearer_token(headers) {
        Ok(Some(token)) => token,
        Ok(None) => {
            return Err(refusal(
                StatusCode::UNAUTHORIZED,
                &Value::Null,
                "an access token is required",
                challenge(resource, None, required),
            ));
        }
        Err(why) => {
            tracing::debug!(reason = why, "malformed Authorization header");
            return Err(refusal(
                StatusCode::UNAUTHORIZED,
                &Value::Null,
                why,
                challenge(resource, Some(("invalid_request", why)), required),
            ));
        }
    };
    let verified = match tokio::time::timeout(
        resource.verify_timeout,
        resource.verifier.0.verify(token),
    )
    .await
    {
        Ok(verified) => verified,
        Err(_) => Err(VerifyError::Unavailable {
            reason: format!(
                "the verifier did not answer within {}",
                crate::server::limits::human(resource.verify_timeout)
            ),
            source: None,
        }),
    };
    let access = match verified {
        Ok(access) => access,
        Err(e) if e.is_unavailable() => {
            tracing::warn!(error = %redact(&chain(&e), token), "access token verification unavailable");
            let mut response = error(
                StatusCode::SERVICE_UNAVAILABLE,
                &Value::Null,
                jsonrpc::INTERNAL_ERROR,
                "Service Unavailable: the access token could not be verified now; try again later",
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            return Err(response);
        }
        Err(e) => {
            tracing::debug!(error = %redact(&chain(&e), token), "access token refused");
            let description = e.description();
            return Err(refusal(
                StatusCode::UNAUTHORIZED,
                &Value::Null,
                description,
                challenge(resource, Some(("invalid_token", description)), required),
            ));
        }
    };
    if let Some(missing) = required.iter().find(|s| !access.has_scope(s)) {
        tracing::debug!(scope = %missing, "access token lacks a required scope");
        return Err(insufficient(resource, &Value::Null, required.clone()));
    }
    Ok(Arc::new(access))
}

fn insufficient(resource: &ProtectedResource, id: &Value, needed: Vec<String>) -> Response {
    let description = format!("this request needs the scopes {}", needed.join(" "));
    refusal(
        StatusCode::FORBIDDEN,
        id,
        &description,
        challenge(
            resource,
            Some(("insufficient_scope", &description)),
            &needed,
        ),
    )
}

/// The scopes a `tools/call` of `message` needs that `access` lacks: 403
/// naming every scope the call needs. Checks each call of a batch. The
/// tool is the one the body names and, at 2026-07-28, the one `Mcp-Name`
/// names (`header_name`; the two must agree, which `stateless.rs` checks
/// later: until then both are held to their scopes).
pub(crate) fn check_tool_scopes(
    resource: &ProtectedResource,
    access: &AccessToken,
    message: &Value,
    header_name: Option<&str>,
) -> Result<(), Response> {
    if resource.tool_scopes.is_empty() {
        return Ok(());
    }
    if let Value::Array(batch) = message {
        return batch
            .iter()
            .try_for_each(|m| check_tool_scopes(resource, access, m, None));
    }
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return Ok(());
    }
    let body_name = message.pointer("/params/name").and_then(Value::as_str);
    let mut needed = resource.required_scopes.clone();
    let mut lacking = false;
    for name in [body_name, header_name].into_iter().flatten() {
        for scope in resource.tool_scopes.get(name).into_iter().flatten() {
            lacking |= !access.has_scope(scope);
            if !needed.contains(scope) {
                needed.push(scope.clone());
            }
        }
    }
    if !lacking {
        return Ok(());
    }
    tracing::debug!(tool = body_name, "access token lacks the tool's scopes");
    let id = message.get("id").unwrap_or(&Value::Null);
    Err(insufficient(resource, id, needed))
}

/// `GET` of the metadata document.
pub(crate) fn metadata_response(resource: &ProtectedResource) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        resource.metadata().to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, value.parse().unwrap());
        h
    }

    #[test]
    fn bearer_headers_are_parsed_strictly() {
        assert_eq!(bearer_token(&HeaderMap::new()), Ok(None));
        assert_eq!(
            bearer_token(&auth("Bearer abc.DEF-_~+/==")),
            Ok(Some("abc.DEF-_~+/=="))
        );
        assert_eq!(bearer_token(&auth("bearer   abc  ")), Ok(Some("abc")));
        for bad in [
            "Basic dXNlcjpw",
            "Bearer",
            "Bearer ",
            "Bearer a b",
            "Bearer a\"b",
            "Bearer ==",
            "Bearerabc",
        ] {
            assert!(bearer_token(&auth(bad)).is_err(), "{bad}");
        }
        let mut two = auth("Bearer a");
        two.append(header::AUTHORIZATION, "Bearer b".parse().unwrap());
        assert!(bearer_token(&two).is_err());
    }

    #[test]
    fn metadata_urls_are_path_aware() {
        let r = |url: &str| ProtectedResource::new(url, StaticToken::new("x"));
        assert_eq!(
            r("https://h.example/mcp").metadata_url(),
            "https://h.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            r("http://127.0.0.1:9/a/b/?q#f").metadata_url(),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/a/b"
        );
        assert_eq!(
            r("https://h.example").metadata_url(),
            "https://h.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(r("https://h.example/").resource_path(), "");
    }

    #[test]
    fn challenges_quote_safely() {
        let r = ProtectedResource::new("https://h/mcp", StaticToken::new("x"));
        let c = challenge(
            &r,
            Some(("invalid_token", "a \"b\"\n\\")),
            &["s1".into(), "s2".into()],
        );
        assert_eq!(
            c.to_str().unwrap(),
            "Bearer error=\"invalid_token\", error_description=\"a ?b???\", \
             resource_metadata=\"https://h/.well-known/oauth-protected-resource/mcp\", \
             scope=\"s1 s2\""
        );
    }
}
