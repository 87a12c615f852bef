//! Checking one request: its bearer token (RFC 6750 §2.1), the verifier's
//! verdict, the scopes it needs for all requests and for the tool it
//! calls, the challenges of a refusal, and the metadata document.

use std::error::Error as StdError;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{ProtectedResource, VerifyError};
use crate::jsonrpc::{self, ErrorObject};
use crate::server::AccessToken;

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

/// An error and its causes, one line (for logs).
pub(crate) fn chain(e: &dyn StdError) -> String {
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
    let body_name = crate::jsonrpc::at(message, &["params", "name"]).and_then(Value::as_str);
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
    use super::super::*;
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
