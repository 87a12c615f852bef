//! Requests to the authorization server: registration (RFC 7591), the
//! authorization code grant with PKCE, refresh and client credentials
//! (`oauth2`, over our reqwest client), and the two grants `oauth2` does
//! not have, token exchange (RFC 8693) and the JWT bearer grant (RFC 7523),
//! as plain form posts.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::basic::{BasicClient, BasicErrorResponse, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, HttpClientError, PkceCodeChallenge, RedirectUrl, RefreshToken, RequestTokenError,
    Scope, TokenResponse, TokenUrl,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::assertion::{JWT_BEARER_ASSERTION, SigningKey};
use super::discovery::{Discovered, MAX_DOCUMENT_BYTES, body_error};
use super::dpop::{DPOP, DPOP_NONCE, Dpop};
use super::{AuthorizationRequest, Authorizer, ClientRegistration, IdentityAssertion, Tokens};
use crate::client::Error;
use crate::client::body::read_capped;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// How long one request to the authorization server may take.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The reqwest client of the flow: no redirects (a token request is never
/// sent on to another address), a timeout on every request.
pub(crate) fn http_client() -> Result<reqwest::Client, Error> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| Error::transport("could not build the OAuth HTTP client").with_source(e))
}

/// `oauth2`'s HTTP client: our reqwest client, with a DPoP proof on every
/// request when the server takes them. A type of its own, not a closure,
/// so that the futures that use it stay `Send` for every lifetime.
#[derive(Clone, Copy)]
pub(crate) struct Http<'a> {
    pub(crate) client: &'a reqwest::Client,
    pub(crate) dpop: Option<&'a Dpop>,
}

impl<'c> oauth2::AsyncHttpClient<'c> for Http<'_> {
    type Error = HttpClientError<reqwest::Error>;
    type Future = futures::future::BoxFuture<'c, Result<oauth2::HttpResponse, Self::Error>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(send(*self, request))
    }
}

/// `oauth2`'s requests, sent with reqwest; sent once more with the
/// server's nonce when it answers `use_dpop_nonce` (RFC 9449 §8).
async fn send(
    http: Http<'_>,
    request: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, HttpClientError<reqwest::Error>> {
    let (parts, body) = request.into_parts();
    let url = parts.uri.to_string();
    let mut nonce_retried = false;
    loop {
        let mut headers = parts.headers.clone();
        if let Some(dpop) = http.dpop {
            let proof = dpop
                .proof(parts.method.as_str(), &url, None)
                .map_err(|e| HttpClientError::Other(e.to_string()))?;
            let value = reqwest::header::HeaderValue::from_str(&proof)
                .map_err(|e| HttpClientError::Other(e.to_string()))?;
            headers.insert(DPOP, value);
        }
        let mut response = http
            .client
            .request(parts.method.clone(), &url)
            .headers(headers)
            .body(body.clone())
            .send()
            .await
            .map_err(|e| HttpClientError::Reqwest(Box::new(e)))?;
        let new_nonce = match (
            http.dpop,
            response
                .headers()
                .get(DPOP_NONCE)
                .and_then(|v| v.to_str().ok()),
        ) {
            (Some(dpop), Some(nonce)) => dpop.keep_nonce(&url, nonce),
            _ => false,
        };
        let status = response.status();
        let mut answer = oauth2::http::Response::builder().status(status);
        if let Some(headers) = answer.headers_mut() {
            *headers = std::mem::take(response.headers_mut());
        }
        let body_read = read_capped(&mut response, MAX_DOCUMENT_BYTES)
            .await
            .map_err(|e| HttpClientError::Other(e.to_string()))?;
        let asks_nonce = status == reqwest::StatusCode::BAD_REQUEST
            && serde_json::from_slice::<Value>(&body_read)
                .is_ok_and(|v| v.get("error").and_then(Value::as_str) == Some("use_dpop_nonce"));
        if asks_nonce && new_nonce && !nonce_retried {
            nonce_retried = true;
            continue;
        }
        return answer.body(body_read).map_err(HttpClientError::Http);
    }
}

type TokenError = RequestTokenError<HttpClientError<reqwest::Error>, BasicErrorResponse>;

/// A token request's failure, saying what was asked where; never the
/// answer's body (it may hold a token).
fn token_error(what: &str, endpoint: &str, e: TokenError) -> Error {
    match e {
        RequestTokenError::ServerResponse(r) => {
            let why = r
                .error_description()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            Error::unauthorized(format!(
                "OAuth: {endpoint} refused {what} with {}{why}",
                r.error()
            ))
        }
        RequestTokenError::Request(cause) => {
            Error::unauthorized(format!("OAuth: {what} at {endpoint} failed")).with_source(cause)
        }
        RequestTokenError::Parse(..) => Error::unauthorized(format!(
            "OAuth: the answer of {endpoint} to {what} is no token response"
        )),
        RequestTokenError::Other(why) => {
            Error::unauthorized(format!("OAuth: {what} at {endpoint} failed: {why}"))
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn tokens(response: &BasicTokenResponse, asked: &[String]) -> Tokens {
    Tokens {
        dpop: response.token_type().as_ref().eq_ignore_ascii_case("dpop"),
        access_token: response.access_token().secret().clone(),
        refresh_token: response.refresh_token().map(|t| t.secret().clone()),
        expires_at: response.expires_in().map(|d| now() + d.as_secs()),
        scopes: match response.scopes() {
            Some(granted) => granted.iter().map(|s| s.to_string()).collect(),
            None => asked.to_vec(),
        },
    }
}

fn config_error(
    what: &str,
    value: &str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> Error {
    Error::unauthorized(format!("OAuth: the {what} {value:?} is not a URL")).with_source(e)
}

/// How the client authenticates at the token endpoint: the registration's
/// method, else the best the server offers for what the client has.
fn auth_type(client: &ClientRegistration, d: &Discovered) -> AuthType {
    let offered = d.server.token_endpoint_auth_methods_supported.as_deref();
    let method = client
        .token_endpoint_auth_method
        .as_deref()
        .unwrap_or_else(|| {
            let offers = |m: &str| offered.is_some_and(|o| o.iter().any(|x| x == m));
            if offers("client_secret_post") && !offers("client_secret_basic") {
                "client_secret_post"
            } else {
                "client_secret_basic"
            }
        });
    match method {
        "client_secret_post" | "none" => AuthType::RequestBody,
        _ => AuthType::BasicAuth,
    }
}

/// An `oauth2` client of `d`'s token endpoint, as `client` authenticates
/// there (with its secret when `with_secret`).
fn token_client(
    d: &Discovered,
    client: &ClientRegistration,
    with_secret: bool,
) -> Result<
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>,
    Error,
> {
    let endpoint = &d.server.token_endpoint;
    let mut oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_token_uri(
            TokenUrl::new(endpoint.clone())
                .map_err(|e| config_error("token endpoint", endpoint, e))?,
        )
        .set_auth_type(auth_type(client, d));
    if let (Some(secret), true) = (&client.client_secret, with_secret) {
        oauth = oauth.set_client_secret(ClientSecret::new(secret.clone()));
    }
    Ok(oauth)
}

/// Registers with the authorization server (RFC 7591), asking for the
/// authentication method it offers that fits a native client.
pub(crate) async fn register(
    http: &reqwest::Client,
    d: &Discovered,
    endpoint: &str,
    client_name: &str,
    redirect_uri: &str,
) -> Result<ClientRegistration, Error> {
    let offered = d
        .server
        .token_endpoint_auth_methods_supported
        .clone()
        .unwrap_or_default();
    let method = ["none", "client_secret_basic", "client_secret_post"]
        .into_iter()
        .find(|m| offered.iter().any(|o| o == m))
        .unwrap_or("none");
    let body = json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    let mut response = http.post(endpoint).json(&body).send().await.map_err(|e| {
        Error::unauthorized(format!("OAuth: registering at {endpoint} failed")).with_source(e)
    })?;
    let status = response.status();
    let bytes = read_capped(&mut response, MAX_DOCUMENT_BYTES)
        .await
        .map_err(|e| body_error(&format!("registering at {endpoint}"), e))?;
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
        client_secret: Option<String>,
        token_endpoint_auth_method: Option<String>,
    }
    if !status.is_success() {
        return Err(Error::unauthorized(format!(
            "OAuth: {endpoint} refused the registration with HTTP {status}{}",
            oauth_error(&bytes)
        ))
        .with_status(status.as_u16()));
    }
    let registered: Registered = serde_json::from_slice(&bytes).map_err(|e| {
        Error::unauthorized(format!(
            "OAuth: the answer of {endpoint} to the registration has no client_id"
        ))
        .with_source(e)
    })?;
    let secret = registered.client_secret.filter(|s| !s.is_empty());
    Ok(ClientRegistration {
        issuer: d.server.issuer.clone(),
        client_id: registered.client_id,
        token_endpoint_auth_method: registered.token_endpoint_auth_method.or_else(|| {
            Some(
                if secret.is_some() {
                    "client_secret_basic"
                } else {
                    "none"
                }
                .to_owned(),
            )
        }),
        client_secret: secret,
    })
}

/// `: error (description)` of an OAuth error body, if it is one.
fn oauth_error(body: &[u8]) -> String {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return String::new();
    };
    match (
        value.get("error").and_then(Value::as_str),
        value.get("error_description").and_then(Value::as_str),
    ) {
        (Some(e), Some(d)) => format!(": {e} ({d})"),
        (Some(e), None) => format!(": {e}"),
        _ => String::new(),
    }
}

/// The authorization code grant: the person authorizes through
/// `authorizer`, the code is exchanged with its PKCE verifier.
pub(crate) async fn authorization_code(
    http: Http<'_>,
    d: &Discovered,
    client: &ClientRegistration,
    redirect_uri: &str,
    authorizer: &dyn Authorizer,
    scopes: &[String],
) -> Result<Tokens, Error> {
    if let Some(methods) = &d.server.code_challenge_methods_supported {
        if !methods.iter().any(|m| m == "S256") {
            return Err(Error::unauthorized(format!(
                "OAuth: the authorization server {} does not support PKCE with S256 (code_challenge_methods_supported: {methods:?})",
                d.server.issuer
            )));
        }
    } else if !d.legacy {
        return Err(Error::unauthorized(format!(
            "OAuth: the authorization server {} does not say it supports PKCE (no code_challenge_methods_supported): refusing to authorize",
            d.server.issuer
        )));
    }
    let auth_endpoint = d.server.authorization_endpoint.as_deref().ok_or_else(|| {
        Error::unauthorized(format!(
            "OAuth: the authorization server {} has no authorization_endpoint",
            d.server.issuer
        ))
    })?;
    let token_endpoint = &d.server.token_endpoint;
    let oauth = token_client(d, client, true)?
        .set_auth_uri(
            AuthUrl::new(auth_endpoint.to_owned())
                .map_err(|e| config_error("authorization endpoint", auth_endpoint, e))?,
        )
        .set_redirect_uri(
            RedirectUrl::new(redirect_uri.to_owned())
                .map_err(|e| config_error("redirect URI", redirect_uri, e))?,
        );
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = oauth
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", d.resource.clone())
        .url();
    let request = AuthorizationRequest {
        url: url.to_string(),
        redirect_uri: redirect_uri.to_owned(),
        state: state.secret().clone(),
    };
    tracing::info!(authorization_endpoint = %auth_endpoint, "OAuth: asking the person to authorize");
    let answer = authorizer.authorize(request).await?;
    if answer.state.as_deref() != Some(state.secret().as_str()) {
        return Err(Error::unauthorized(
            "OAuth: the authorization answer's state is not the one sent: refusing it (a forged or stale redirect)",
        ));
    }
    match &answer.iss {
        // Compared as strings, with no URL normalization (RFC 9207 §2.4).
        Some(iss) if *iss != d.server.issuer => {
            return Err(Error::unauthorized(format!(
                "OAuth: the authorization answer comes from the issuer {iss:?}, not {:?} (RFC 9207): refusing it",
                d.server.issuer
            )));
        }
        None if d.server.authorization_response_iss_parameter_supported => {
            return Err(Error::unauthorized(format!(
                "OAuth: the authorization server {} says it names itself in its answers (RFC 9207), and this answer has no iss: refusing it",
                d.server.issuer
            )));
        }
        _ => {}
    }
    let response = oauth
        .exchange_code(AuthorizationCode::new(answer.code))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", d.resource.clone())
        .request_async(&http)
        .await
        .map_err(|e| token_error("the authorization code", token_endpoint, e))?;
    Ok(tokens(&response, scopes))
}

/// A new access token for a refresh token; the refresh token is kept when
/// the answer brings no new one.
pub(crate) async fn refresh(
    http: Http<'_>,
    d: &Discovered,
    client: &ClientRegistration,
    old: &Tokens,
    refresh_token: &str,
) -> Result<Tokens, Error> {
    let token_endpoint = &d.server.token_endpoint;
    let oauth = token_client(d, client, true)?;
    let response = oauth
        .exchange_refresh_token(&RefreshToken::new(refresh_token.to_owned()))
        .add_extra_param("resource", d.resource.clone())
        .request_async(&http)
        .await
        .map_err(|e| token_error("the refresh token", token_endpoint, e))?;
    let mut fresh = tokens(&response, &old.scopes);
    if fresh.refresh_token.is_none() {
        fresh.refresh_token = Some(refresh_token.to_owned());
    }
    Ok(fresh)
}

/// The client credentials grant, with a secret or a signed assertion.
pub(crate) async fn client_credentials(
    http: Http<'_>,
    d: &Discovered,
    client: &ClientRegistration,
    key: Option<&SigningKey>,
    scopes: &[String],
) -> Result<Tokens, Error> {
    let token_endpoint = &d.server.token_endpoint;
    let oauth = token_client(d, client, key.is_none())?;
    let mut request = oauth
        .exchange_client_credentials()
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", d.resource.clone());
    if let Some(key) = key {
        request = request
            .add_extra_param("client_assertion_type", JWT_BEARER_ASSERTION)
            .add_extra_param(
                "client_assertion",
                key.assertion(&client.client_id, &d.server.issuer)?,
            );
    }
    let response = request
        .request_async(&http)
        .await
        .map_err(|e| token_error("the client credentials", token_endpoint, e))?;
    Ok(tokens(&response, scopes))
}

/// Enterprise-managed authorization: the ID token exchanged at the
/// identity provider for an identity assertion grant (RFC 8693), then that
/// grant presented to the authorization server (RFC 7523).
pub(crate) async fn identity_assertion(
    http: Http<'_>,
    d: &Discovered,
    client: &ClientRegistration,
    assertion: &IdentityAssertion,
    scopes: &[String],
) -> Result<Tokens, Error> {
    let mut exchange = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG.to_owned()),
        ("subject_token", assertion.id_token.clone()),
        ("subject_token_type", ID_TOKEN.to_owned()),
        ("audience", d.server.issuer.clone()),
        ("resource", d.resource.clone()),
    ];
    if !scopes.is_empty() {
        exchange.push(("scope", scopes.join(" ")));
    }
    if let Some(id) = &assertion.client_id {
        exchange.push(("client_id", id.clone()));
    }
    if let Some(secret) = &assertion.client_secret {
        exchange.push(("client_secret", secret.clone()));
    }
    let idp = &assertion.token_endpoint;
    let at_idp = Http { dpop: None, ..http };
    let grant = form_post(at_idp, idp, "the token exchange", &exchange, None).await?;
    let grant = grant
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Error::unauthorized(format!(
                "OAuth: the answer of {idp} to the token exchange has no access_token"
            ))
        })?;
    jwt_bearer(http, d, client, grant, scopes).await
}

/// The JWT bearer grant (RFC 7523 §2.1): `assertion` for an access token,
/// the client authenticated with its secret (`client_secret_basic`) or,
/// without one, named by its id.
pub(crate) async fn jwt_bearer(
    http: Http<'_>,
    d: &Discovered,
    client: &ClientRegistration,
    assertion: &str,
    scopes: &[String],
) -> Result<Tokens, Error> {
    let mut form = vec![
        ("grant_type", JWT_BEARER_GRANT.to_owned()),
        ("assertion", assertion.to_owned()),
        ("resource", d.resource.clone()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let basic = match &client.client_secret {
        Some(secret) => Some((client.client_id.as_str(), Some(secret.as_str()))),
        None => {
            form.push(("client_id", client.client_id.clone()));
            None
        }
    };
    let endpoint = &d.server.token_endpoint;
    let answer = form_post(http, endpoint, "the JWT bearer grant", &form, basic).await?;
    let access_token = answer
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Error::unauthorized(format!(
                "OAuth: the answer of {endpoint} to the JWT bearer grant has no access_token"
            ))
        })?;
    Ok(Tokens {
        dpop: answer
            .get("token_type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop")),
        access_token: access_token.to_owned(),
        refresh_token: answer
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_owned),
        expires_at: answer
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(|s| now() + s),
        scopes: match answer.get("scope").and_then(Value::as_str) {
            Some(s) => s.split_whitespace().map(str::to_owned).collect(),
            None => scopes.to_vec(),
        },
    })
}

/// A form POST to a token endpoint, with `client_secret_basic` when
/// `basic` is given; the JSON answer.
async fn form_post(
    http: Http<'_>,
    endpoint: &str,
    what: &str,
    form: &[(&str, String)],
    basic: Option<(&str, Option<&str>)>,
) -> Result<Value, Error> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let mut request = http
        .client
        .post(endpoint)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body);
    if let Some(dpop) = http.dpop {
        request = request.header(DPOP, dpop.proof("POST", endpoint, None)?);
    }
    if let Some((id, secret)) = basic {
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        request = request.basic_auth(encode(id), secret.map(encode));
    }
    let mut response = request.send().await.map_err(|e| {
        Error::unauthorized(format!("OAuth: {what} at {endpoint} failed")).with_source(e)
    })?;
    let status = response.status();
    let bytes = read_capped(&mut response, MAX_DOCUMENT_BYTES)
        .await
        .map_err(|e| body_error(&format!("{what} at {endpoint}"), e))?;
    if !status.is_success() {
        return Err(Error::unauthorized(format!(
            "OAuth: {endpoint} refused {what} with HTTP {status}{}",
            oauth_error(&bytes)
        ))
        .with_status(status.as_u16()));
    }
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| {
            Error::unauthorized(format!(
                "OAuth: the answer of {endpoint} to {what} is no JSON object"
            ))
        })
}
