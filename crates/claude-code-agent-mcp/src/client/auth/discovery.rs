//! Where to authorize: the protected resource metadata (RFC 9728) and the
//! authorization server metadata (RFC 8414, OpenID Connect discovery), with
//! the 2025-03-26 revision's fallbacks.

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::challenge::Challenge;
use crate::client::Error;
use crate::client::body::{BodyError, read_capped};

/// The cap on a metadata document or an OAuth answer.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// What discovery found for one MCP server.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The `resource` parameter (RFC 8707): the metadata's `resource` as
    /// written, or the server's URL when it has no metadata.
    pub(crate) resource: String,
    /// The resource's `scopes_supported`.
    pub(crate) scopes_supported: Option<Vec<String>>,
    pub(crate) server: ServerMetadata,
    /// Found through the 2025-03-26 fallbacks (no resource metadata).
    pub(crate) legacy: bool,
}

/// An authorization server's metadata, as much of it as the flow uses.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ServerMetadata {
    #[serde(default)]
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) token_endpoint: String,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    pub(crate) grant_types_supported: Option<Vec<String>>,
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// Whether token requests carry DPoP proofs: the server takes ES256 ones.
    pub(crate) fn takes_dpop(&self) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"))
    }
}

#[derive(Debug, Deserialize)]
struct ResourceMetadata {
    resource: String,
    #[serde(default)]
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
}

/// Discovers how to authorize for `server_url`, from its challenge.
pub(crate) async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    challenge: &Challenge,
) -> Result<Discovered, Error> {
    let server = Url::parse(server_url).map_err(|e| {
        Error::unauthorized(format!(
            "OAuth: the server URL {server_url:?} does not parse"
        ))
        .with_source(e)
    })?;
    let origin = server.origin().ascii_serialization();
    let resource = resource_metadata(http, &server, challenge).await?;
    let (issuer, resource, scopes_supported, legacy) = match resource {
        Some((url, metadata)) => {
            if !resource_matches(&metadata.resource, &server) {
                return Err(Error::unauthorized(format!(
                    "OAuth: the protected resource metadata at {url} is for {:?}, not for {server_url}: refusing to authorize",
                    metadata.resource
                )));
            }
            let issuer = metadata.authorization_servers.first().cloned().ok_or_else(|| {
                Error::unauthorized(format!(
                    "OAuth: the protected resource metadata at {url} names no authorization server"
                ))
            })?;
            (issuer, metadata.resource, metadata.scopes_supported, false)
        }
        // 2025-03-26: the MCP server's origin is its authorization server.
        None => (origin.clone(), canonical(&server), None, true),
    };
    let server = match server_metadata(http, &issuer).await? {
        Some(mut metadata) => {
            if !legacy && !same_issuer(&metadata.issuer, &issuer) {
                return Err(Error::unauthorized(format!(
                    "OAuth: the metadata of the authorization server {issuer} names the issuer {:?}: refusing to authorize",
                    metadata.issuer
                )));
            }
            if metadata.issuer.is_empty() {
                metadata.issuer = issuer;
            }
            if metadata.token_endpoint.is_empty() {
                return Err(Error::unauthorized(format!(
                    "OAuth: the metadata of the authorization server {} has no token_endpoint",
                    metadata.issuer
                )));
            }
            metadata
        }
        None if legacy => ServerMetadata {
            issuer: origin.clone(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            ..ServerMetadata::default()
        },
        None => {
            return Err(Error::unauthorized(format!(
                "OAuth: found no metadata for the authorization server {issuer} (RFC 8414 or OpenID Connect discovery)"
            )));
        }
    };
    Ok(Discovered {
        resource,
        scopes_supported,
        server,
        legacy,
    })
}

/// The resource metadata: at the challenge's `resource_metadata`, else at
/// the path-aware well-known URI, else at the root one. `None` when the
/// server has none.
async fn resource_metadata(
    http: &reqwest::Client,
    server: &Url,
    challenge: &Challenge,
) -> Result<Option<(String, ResourceMetadata)>, Error> {
    let origin = server.origin().ascii_serialization();
    let path = server.path().trim_end_matches('/');
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        candidates.push(url.clone());
    }
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    for url in candidates {
        if let Some(value) = fetch_json(http, &url).await? {
            match serde_json::from_value::<ResourceMetadata>(value) {
                Ok(metadata) => return Ok(Some((url, metadata))),
                Err(e) => {
                    tracing::debug!(%url, error = %e, "OAuth: not protected resource metadata")
                }
            }
        }
    }
    Ok(None)
}

/// The authorization server's metadata, from the well-known URIs of RFC
/// 8414 §3.1 and OpenID Connect discovery, in the order the MCP
/// specification gives.
async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<Option<ServerMetadata>, Error> {
    let url = Url::parse(issuer).map_err(|e| {
        Error::unauthorized(format!(
            "OAuth: the authorization server {issuer:?} is not a URL"
        ))
        .with_source(e)
    })?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    for url in candidates {
        if let Some(value) = fetch_json(http, &url).await? {
            match serde_json::from_value::<ServerMetadata>(value) {
                Ok(metadata) => return Ok(Some(metadata)),
                Err(e) => {
                    tracing::debug!(%url, error = %e, "OAuth: not authorization server metadata")
                }
            }
        }
    }
    Ok(None)
}

/// GETs a JSON document: `None` on an error status or a body that is no
/// JSON object; an error when the server cannot be reached.
async fn fetch_json(http: &reqwest::Client, url: &str) -> Result<Option<Value>, Error> {
    let mut response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| Error::unauthorized(format!("OAuth: GET {url} failed")).with_source(e))?;
    if !response.status().is_success() {
        tracing::debug!(%url, status = %response.status(), "OAuth: no metadata here");
        return Ok(None);
    }
    let body = read_capped(&mut response, MAX_DOCUMENT_BYTES)
        .await
        .map_err(|e| body_error(&format!("GET {url}"), e))?;
    Ok(serde_json::from_slice::<Value>(&body)
        .ok()
        .filter(Value::is_object))
}

/// An answer that could not be read.
pub(crate) fn body_error(what: &str, e: BodyError) -> Error {
    let message = format!("OAuth: {what}: {e}");
    match e {
        BodyError::Read(cause) => Error::unauthorized(message).with_source(cause),
        BodyError::TooLarge { .. } => Error::unauthorized(message),
    }
}

/// Whether the metadata's `resource` is `server` or a parent of it: the
/// same origin, and a path that is the server's or one of its prefixes at
/// a `/`.
pub(crate) fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() || resource.fragment().is_some() {
        return false;
    }
    let want = resource.path().trim_end_matches('/');
    let have = server.path().trim_end_matches('/');
    have == want || have.starts_with(&format!("{want}/"))
}

/// The server's URL as a resource indicator: without its fragment.
fn canonical(server: &Url) -> String {
    let mut url = server.clone();
    url.set_fragment(None);
    url.to_string()
}

/// Whether two issuer identifiers are the same, up to a trailing `/`.
pub(crate) fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_matches_its_server_and_the_parents_of_its_path() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        for ok in [
            "http://localhost:3000/mcp",
            "http://localhost:3000/mcp/",
            "http://localhost:3000",
            "http://localhost:3000/",
        ] {
            assert!(resource_matches(ok, &server), "{ok}");
        }
        for bad in [
            "https://evil.example.com/mcp",
            "http://localhost:3001/mcp",
            "https://localhost:3000/mcp",
            "http://localhost:3000/mc",
            "http://localhost:3000/mcp/deeper",
            "http://localhost:3000/mcp#frag",
            "not a url",
        ] {
            assert!(!resource_matches(bad, &server), "{bad}");
        }
    }

    #[test]
    fn issuers_compare_up_to_a_trailing_slash() {
        assert!(same_issuer("http://a/t", "http://a/t/"));
        assert!(!same_issuer("http://a/t", "http://a/u"));
    }
}
