//! Checks every request passes before it reaches the server: `Host` and
//! `Origin` (DNS rebinding), the bearer token, `MCP-Protocol-Version`.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::auth::constant_time_eq;
use super::config::StreamableHttpConfig;
use crate::jsonrpc::{self, ErrorObject};
use crate::types::SESSION_PROTOCOL_VERSIONS;

/// The protocol revision assumed when a request has no `MCP-Protocol-Version`.
pub const ASSUMED_PROTOCOL_VERSION: &str = "2025-03-26";

/// A JSON-RPC error as an HTTP response with this status.
pub(crate) fn error(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: impl Into<String>,
) -> Response {
    let body = jsonrpc::error_response(id, ErrorObject::new(code, message));
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The host name of a `Host` value or an origin's authority: lowercase,
/// without the port; IPv6 literals keep their brackets.
fn host_name(authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => authority[..=end].to_owned(),
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_owned(),
        _ => authority,
    }
}

/// `Host` and `Origin` must name an allowed host (403 otherwise).
pub(crate) fn check_host_and_origin(
    headers: &HeaderMap,
    config: &StreamableHttpConfig,
) -> Result<(), Response> {
    if !config.check_host {
        return Ok(());
    }
    let forbidden = |what: &str| {
        error(
            StatusCode::FORBIDDEN,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            format!("Forbidden: {what}"),
        )
    };
    let allowed = |host: &str| config.allowed_hosts.iter().any(|h| *h == host);
    match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
        Some(host) if allowed(&host_name(host)) => {}
        Some(host) => return Err(forbidden(&format!("Host {host:?} is not allowed"))),
        None => return Err(forbidden("a Host header is required")),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin
            .to_str()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let ok = config.allowed_origins.contains(&origin)
            || origin.split_once("://").is_some_and(|(scheme, authority)| {
                matches!(scheme, "http" | "https") && allowed(&host_name(authority))
            });
        if !ok {
            return Err(forbidden(&format!("Origin {origin:?} is not allowed")));
        }
    }
    Ok(())
}

/// `Authorization: Bearer <token>` when a token is configured (401 otherwise).
pub(crate) fn check_bearer(
    headers: &HeaderMap,
    config: &StreamableHttpConfig,
) -> Result<(), Response> {
    let Some(expected) = &config.bearer_token else {
        return Ok(());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| {
            h.strip_prefix("Bearer ")
                .or_else(|| h.strip_prefix("bearer "))
        });
    let challenge = match given {
        Some(token) if constant_time_eq(token.trim().as_bytes(), expected.as_bytes()) => {
            return Ok(());
        }
        Some(_) => r#"Bearer realm="mcp", error="invalid_token""#,
        None => r#"Bearer realm="mcp""#,
    };
    let mut response = error(
        StatusCode::UNAUTHORIZED,
        &Value::Null,
        jsonrpc::INVALID_REQUEST,
        "Unauthorized",
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        challenge.parse().expect("a valid header value"),
    );
    Err(response)
}

/// The request's `MCP-Protocol-Version` (or the assumed one); 400 when we
/// do not speak it.
pub(crate) fn check_protocol_version(headers: &HeaderMap, id: &Value) -> Result<String, Response> {
    let Some(value) = headers.get("mcp-protocol-version") else {
        return Ok(ASSUMED_PROTOCOL_VERSION.to_owned());
    };
    let version = value.to_str().unwrap_or_default().trim();
    if SESSION_PROTOCOL_VERSIONS.contains(&version) {
        Ok(version.to_owned())
    } else {
        Err(error(
            StatusCode::BAD_REQUEST,
            id,
            jsonrpc::INVALID_REQUEST,
            format!(
                "Bad Request: unsupported MCP-Protocol-Version {version:?} (supported: {})",
                SESSION_PROTOCOL_VERSIONS.join(", ")
            ),
        ))
    }
}

/// Whether the `Accept` header allows `mime` (absent, `*/*` and `type/*` count).
pub(crate) fn accepts(headers: &HeaderMap, mime: &str) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|h| h.to_str().ok()) else {
        return true;
    };
    let major = mime.split('/').next().unwrap_or_default();
    accept.split(',').any(|part| {
        let media = part.split(';').next().unwrap_or_default().trim();
        media == mime || media == "*/*" || media == format!("{major}/*")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn host_names_drop_ports_and_keep_ipv6_brackets() {
        assert_eq!(host_name("LocalHost:3000"), "localhost");
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_name("evil.example.com"), "evil.example.com");
    }

    #[test]
    fn rebinding_attempts_are_refused() {
        let config = StreamableHttpConfig::default();
        let ok = headers(&[
            ("host", "localhost:1234"),
            ("origin", "http://localhost:1234"),
        ]);
        assert!(check_host_and_origin(&ok, &config).is_ok());
        for bad in [
            headers(&[("host", "evil.example.com")]),
            headers(&[("host", "localhost"), ("origin", "http://evil.example.com")]),
            headers(&[("host", "localhost"), ("origin", "null")]),
            headers(&[("host", "localhost.evil.com:80")]),
            headers(&[]),
        ] {
            let r = check_host_and_origin(&bad, &config).unwrap_err();
            assert_eq!(r.status(), StatusCode::FORBIDDEN);
        }
        let custom = config
            .allow_host("mcp.example")
            .allow_origin("https://app.example");
        let h = headers(&[("host", "mcp.example"), ("origin", "https://app.example")]);
        assert!(check_host_and_origin(&h, &custom).is_ok());
    }

    #[test]
    fn bearer_tokens_are_checked() {
        let config = StreamableHttpConfig::default().bearer_token("t0k");
        assert!(check_bearer(&headers(&[("authorization", "Bearer t0k")]), &config).is_ok());
        let r = check_bearer(&headers(&[("authorization", "Bearer nope")]), &config).unwrap_err();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(
            r.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .contains("invalid_token")
        );
        let r = check_bearer(&headers(&[]), &config).unwrap_err();
        assert_eq!(
            r.headers()[header::WWW_AUTHENTICATE],
            r#"Bearer realm="mcp""#
        );
    }

    #[test]
    fn protocol_versions_and_accept() {
        assert_eq!(
            check_protocol_version(&headers(&[]), &Value::Null).unwrap(),
            "2025-03-26"
        );
        assert!(
            check_protocol_version(
                &headers(&[("mcp-protocol-version", "2025-11-25")]),
                &Value::Null
            )
            .is_ok()
        );
        let r = check_protocol_version(
            &headers(&[("mcp-protocol-version", "1999-01-01")]),
            &Value::Null,
        );
        assert_eq!(r.unwrap_err().status(), StatusCode::BAD_REQUEST);
        assert!(accepts(
            &headers(&[("accept", "application/json, text/event-stream")]),
            "text/event-stream"
        ));
        assert!(!accepts(
            &headers(&[("accept", "application/json")]),
            "text/event-stream"
        ));
        assert!(accepts(
            &headers(&[("accept", "text/*")]),
            "text/event-stream"
        ));
    }
}
