//! [`JwtVerifier`]: JWT access tokens (RFC 9068 and the like) checked
//! against keys given directly or fetched from a JWKS URL (feature
//! `oauth-server`).

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::{JwtAlgorithm, TokenVerifier, VerificationKey, VerifyError};
use crate::server::AccessToken;

/// The most a JWKS document may weigh.
const MAX_JWKS_BYTES: usize = 512 * 1024;

/// The asymmetric algorithms accepted by default.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// A [`TokenVerifier`] for JWT access tokens (feature `oauth-server`).
///
/// A token is accepted when
///
/// * its header's `alg` is allowed ([`algorithms`](Self::algorithms);
///   by default RS256/384/512, PS256/384/512, ES256/384 and EdDSA; never
///   `none`; HS256/384/512 only with an explicit
///   [`hmac_secret`](Self::hmac_secret)),
/// * a key signed it: a [`VerificationKey`] given directly
///   ([`key`](Self::key), [`keys`](Self::keys)), or one of the
///   key set at [`jwks_url`](Self::jwks_url), chosen by the token's
///   `kid` (fetched on first use, cached, fetched again when a token names
///   a `kid` it does not hold — at most once per
///   [`refresh_interval`](Self::refresh_interval) — and when it is older
///   than [`max_key_age`](Self::max_key_age); each fetch bounded by
///   [`fetch_timeout`](Self::fetch_timeout), an unreachable key set is
///   [`VerifyError::Unavailable`]),
/// * its `iss` is one of the [issuers](Self::issuer),
/// * its `aud` (a string, or an array) names one of the
///   [audiences](Self::audience) (the resource's URL),
/// * its `exp` is present and not past, its `nbf` (if any) not ahead,
///   give or take the [leeway](Self::leeway).
///
/// Its claims become the [`AccessToken`]: scopes from `scope` or `scp`.
///
/// A whole server (the example of docs/mcp-servers.md, "Protecting a server
/// with OAuth"):
///
/// ```no_run
/// use std::time::Duration;
///
/// use claude_code_agent_mcp::http_server::{
///     JwtVerifier, ProtectedResource, StreamableHttpConfig, StreamableHttpService,
/// };
/// use claude_code_agent_mcp::{Server, Tool, ToolContext};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct NoArgs {}
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct FilePath {
///     path: String,
/// }
///
/// async fn run() -> std::io::Result<()> {
///     let server = Server::builder("files", "1.0.0")
///         .tool(Tool::new("whoami", "Who is calling", |_: NoArgs, ctx: ToolContext| async move {
///             // Set by the HTTP server once the token verified.
///             let token = ctx.access_token().expect("a verified token");
///             format!("{} ({:?})", token.subject().unwrap_or("?"), token.scopes())
///         }))
///         .tool(Tool::new("delete_file", "Delete a file", |f: FilePath| async move {
///             format!("deleted {}", f.path)
///         }))
///         .build();
///
///     // The endpoint's URL as clients know it: the tokens' audience.
///     let resource = "https://mcp.example.com/mcp";
///     let verifier = JwtVerifier::new("https://auth.example.com", resource)
///         .jwks_url("https://auth.example.com/.well-known/jwks.json")
///         .leeway(Duration::from_secs(30));
///     let protected = ProtectedResource::new(resource, verifier)
///         .authorization_server("https://auth.example.com")
///         .scopes_supported(["files:read", "files:write"])
///         .resource_name("Example files")
///         .required_scopes(["files:read"])
///         .tool_scopes("delete_file", ["files:write"]);
///     let config = StreamableHttpConfig::default()
///         .allow_host("mcp.example.com")
///         .protected_resource(protected);
///     let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
///     StreamableHttpService::new(server, config).serve(listener).await
/// }
/// # drop(run());
/// ```
#[derive(Clone)]
pub struct JwtVerifier {
    issuers: Vec<String>,
    audiences: Vec<String>,
    algorithms: Option<Vec<JwtAlgorithm>>,
    leeway: Duration,
    keys: Vec<VerificationKey>,
    secret: Option<Arc<DecodingKey>>,
    remote: Option<Arc<Remote>>,
    fetch_timeout: Duration,
    refresh_interval: Duration,
    max_key_age: Duration,
}

/// A key set fetched from a URL, and when.
struct Remote {
    url: String,
    state: Mutex<RemoteState>,
    /// One fetch at a time; the others wait for it (bounded by its timeout).
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct RemoteState {
    keys: Arc<Vec<VerificationKey>>,
    /// When the keys were fetched (none yet: `None`).
    fetched: Option<Instant>,
    /// When a fetch was last tried, and whether it failed.
    tried: Option<(Instant, bool)>,
    client: Option<reqwest::Client>,
}

impl JwtVerifier {
    /// Accepts tokens issued by `issuer` (an authorization server's issuer
    /// URL, compared exactly) for `audience` (this resource's URL, the
    /// MCP endpoint as clients know it). Give it keys next.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            issuers: vec![issuer.into()],
            audiences: vec![audience.into()],
            algorithms: None,
            leeway: Duration::from_secs(30),
            keys: Vec::new(),
            secret: None,
            remote: None,
            fetch_timeout: Duration::from_secs(5),
            refresh_interval: Duration::from_secs(30),
            max_key_age: Duration::from_secs(3600),
        }
    }

    /// Also accepts tokens of this issuer.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Also accepts tokens for this audience.
    #[must_use]
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Fetches the keys from this JWKS URL (the authorization server's
    /// `jwks_uri`). Use `https` outside tests.
    #[must_use]
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.remote = Some(Arc::new(Remote {
            url: url.into(),
            state: Mutex::new(RemoteState::default()),
            fetching: tokio::sync::Mutex::new(()),
        }));
        self
    }

    /// Adds a key, for the tokens it [serves](VerificationKey).
    #[must_use]
    pub fn key(mut self, key: VerificationKey) -> Self {
        self.keys.push(key);
        self
    }

    /// Adds keys, such as those of a JWK set
    /// ([`VerificationKey::from_jwks`]).
    #[must_use]
    pub fn keys(mut self, keys: impl IntoIterator<Item = VerificationKey>) -> Self {
        self.keys.extend(keys);
        self
    }

    /// Accepts HS256, HS384 and HS512 tokens signed with this shared
    /// secret (besides the default algorithms, unless
    /// [`algorithms`](Self::algorithms) says otherwise).
    #[must_use]
    pub fn hmac_secret(mut self, secret: &[u8]) -> Self {
        self.secret = DecodingKey::from_secret(secret).ok().map(Arc::new);
        self
    }

    /// The algorithms accepted (replacing the default list). HMAC ones
    /// still need an [`hmac_secret`](Self::hmac_secret).
    #[must_use]
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = JwtAlgorithm>) -> Self {
        self.algorithms = Some(algorithms.into_iter().collect());
        self
    }

    /// How far `exp` and `nbf` may be off (clock skew; default 30 s).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How long one fetch of the JWKS may take, connection included
    /// (default 5 s).
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The least time between two fetches of the JWKS (default 30 s): a
    /// token naming an unknown `kid` sooner than that after the last fetch
    /// is refused without one, so such tokens cannot make us hammer the
    /// authorization server.
    #[must_use]
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// How long fetched keys are used before they are fetched again
    /// (default 1 hour). If that fetch fails, the old keys stay in use.
    #[must_use]
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    fn allowed(&self, alg: Algorithm) -> bool {
        let hmac = alg.family() == AlgorithmFamily::Hmac;
        if hmac && self.secret.is_none() {
            return false;
        }
        match &self.algorithms {
            Some(list) => list.iter().any(|a| a.to_jwt() == alg),
            None => hmac || DEFAULT_ALGORITHMS.contains(&alg),
        }
    }

    /// The keys that may have signed a token with this header.
    async fn candidates(
        &self,
        alg: Algorithm,
        kid: Option<&str>,
    ) -> Result<Vec<Arc<DecodingKey>>, VerifyError> {
        if alg.family() == AlgorithmFamily::Hmac {
            return Ok(self.secret.iter().cloned().collect());
        }
        let pick = |keys: &[VerificationKey]| -> Vec<Arc<DecodingKey>> {
            keys.iter()
                .filter(|k| k.fits(alg))
                .filter(|k| match kid {
                    Some(kid) => k.kid.as_deref() == Some(kid),
                    None => true,
                })
                .map(|k| Arc::clone(&k.key))
                .collect()
        };
        let mut found = pick(&self.keys);
        if !found.is_empty() {
            return Ok(found);
        }
        let Some(remote) = &self.remote else {
            return Err(VerifyError::UnknownKey);
        };
        let keys = self.remote_keys(remote, false).await?;
        found = pick(&keys);
        if found.is_empty() && kid.is_some() {
            // A key the authorization server may have rotated in.
            let keys = self.remote_keys(remote, true).await?;
            found = pick(&keys);
        }
        if found.is_empty() {
            return Err(VerifyError::UnknownKey);
        }
        Ok(found)
    }

    /// The remote key set: cached, or fetched (when there is none yet, when
    /// it is old, or when `refresh` asks and the last fetch is not too
    /// recent).
    async fn remote_keys(
        &self,
        remote: &Remote,
        refresh: bool,
    ) -> Result<Arc<Vec<VerificationKey>>, VerifyError> {
        let due = |state: &RemoteState| -> Option<bool> {
            // Some(true): fetch; Some(false): use the cache; None: too soon
            // after a failed fetch with nothing cached.
            let recently_tried = state
                .tried
                .is_some_and(|(at, _)| at.elapsed() < self.refresh_interval);
            match state.fetched {
                None if recently_tried => None,
                None => Some(true),
                Some(_) if recently_tried => Some(false),
                Some(at) => Some(refresh || at.elapsed() >= self.max_key_age),
            }
        };
        {
            let state = remote.state.lock().unwrap_or_else(PoisonError::into_inner);
            match due(&state) {
                Some(false) => return Ok(Arc::clone(&state.keys)),
                None => return Err(last_failure(&remote.url)),
                Some(true) => {}
            }
        }
        let _one_at_a_time = remote.fetching.lock().await;
        let client = {
            let state = remote.state.lock().unwrap_or_else(PoisonError::into_inner);
            // Another request may have fetched while this one waited.
            match due(&state) {
                Some(false) => return Ok(Arc::clone(&state.keys)),
                None => return Err(last_failure(&remote.url)),
                Some(true) => {}
            }
            state.client.clone()
        };
        let fetched = self.fetch(remote, client).await;
        let mut state = remote.state.lock().unwrap_or_else(PoisonError::into_inner);
        match fetched {
            Ok((keys, client)) => {
                state.keys = Arc::new(keys);
                state.fetched = Some(Instant::now());
                state.tried = Some((Instant::now(), false));
                state.client = Some(client);
                Ok(Arc::clone(&state.keys))
            }
            Err(e) => {
                state.tried = Some((Instant::now(), true));
                if state.fetched.is_some() {
                    tracing::warn!(url = %remote.url, error = %super::chain(&e), "fetching the JWKS failed; the keys fetched before stay in use");
                    Ok(Arc::clone(&state.keys))
                } else {
                    Err(e)
                }
            }
        }
    }

    async fn fetch(
        &self,
        remote: &Remote,
        client: Option<reqwest::Client>,
    ) -> Result<(Vec<VerificationKey>, reqwest::Client), VerifyError> {
        let client = match client {
            Some(client) => client,
            None => reqwest::Client::builder()
                .connect_timeout(self.fetch_timeout)
                .timeout(self.fetch_timeout)
                .redirect(reqwest::redirect::Policy::limited(3))
                .build()
                .map_err(|e| VerifyError::unavailable("no HTTP client for the JWKS", e))?,
        };
        let unavailable = |e: reqwest::Error| {
            VerifyError::unavailable(format!("fetching the JWKS from {} failed", remote.url), e)
        };
        let body = async {
            let mut response = client
                .get(&remote.url)
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(unavailable)?;
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(unavailable)? {
                body.extend_from_slice(&chunk);
                if body.len() > MAX_JWKS_BYTES {
                    return Err(VerifyError::Unavailable {
                        reason: format!(
                            "the JWKS at {} is larger than {MAX_JWKS_BYTES} bytes",
                            remote.url
                        ),
                        source: None,
                    });
                }
            }
            Ok(body)
        };
        let body = tokio::time::timeout(self.fetch_timeout, body)
            .await
            .map_err(|_| VerifyError::Unavailable {
                reason: format!(
                    "the JWKS at {} did not arrive within {}",
                    remote.url,
                    crate::server::limits::human(self.fetch_timeout)
                ),
                source: None,
            })??;
        let keys = VerificationKey::from_jwks(&body).map_err(|e| {
            VerifyError::unavailable(format!("the JWKS at {} is not a JWK set", remote.url), e)
        })?;
        Ok((keys, client))
    }

    async fn check(&self, token: &str) -> Result<AccessToken, VerifyError> {
        crate::jose::ensure_provider();
        let header = jsonwebtoken::decode_header(token).map_err(|e| VerifyError::Invalid {
            reason: "not a JWT".into(),
            source: Some(Box::new(e)),
        })?;
        if !self.allowed(header.alg) {
            return Err(VerifyError::invalid(format!(
                "the algorithm {:?} is not allowed",
                header.alg
            )));
        }
        let keys = self.candidates(header.alg, header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.validate_exp = true;
        validation.validate_aud = true;
        validation.set_audience(&self.audiences);
        validation.set_issuer(&self.issuers);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let mut last = VerifyError::BadSignature;
        for key in keys {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation) {
                Ok(data) => return Ok(AccessToken::from_claims(data.claims)),
                Err(e) => {
                    last = map_error(e);
                    if !matches!(last, VerifyError::BadSignature) {
                        // The signature verified (or the token is broken):
                        // no other key would change that.
                        return Err(last);
                    }
                }
            }
        }
        Err(last)
    }
}

fn last_failure(url: &str) -> VerifyError {
    VerifyError::Unavailable {
        reason: format!("the JWKS at {url} could not be fetched recently; not trying again yet"),
        source: None,
    }
}

fn map_error(e: jsonwebtoken::errors::Error) -> VerifyError {
    match e.kind() {
        ErrorKind::ExpiredSignature => VerifyError::Expired,
        ErrorKind::ImmatureSignature => VerifyError::NotYetValid,
        ErrorKind::InvalidAudience => VerifyError::WrongAudience,
        ErrorKind::InvalidIssuer => VerifyError::WrongIssuer,
        ErrorKind::InvalidSignature => VerifyError::BadSignature,
        ErrorKind::MissingRequiredClaim(claim) => {
            VerifyError::invalid(format!("the claim {claim:?} is required"))
        }
        _ => VerifyError::Invalid {
            reason: "the JWT does not verify".into(),
            source: Some(Box::new(e)),
        },
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessToken, VerifyError>> {
        Box::pin(self.check(token))
    }
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuers", &self.issuers)
            .field("audiences", &self.audiences)
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
            .field("keys", &self.keys.len())
            .field("hmac", &self.secret.is_some())
            .field("jwks_url", &self.remote.as_ref().map(|r| &r.url))
            .finish_non_exhaustive()
    }
}
