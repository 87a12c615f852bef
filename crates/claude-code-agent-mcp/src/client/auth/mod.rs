//! MCP authorization for the HTTP client (feature `oauth-client`): an
//! [`OAuth`] given to [`HttpOptions::oauth`](super::HttpOptions::oauth)
//! answers a server's `401` as the MCP Authorization specification
//! (2025-06-18, 2025-11-25) describes, and the request is sent again with
//! the access token it got.
//!
//! 1. **Discovery.** The protected resource metadata (RFC 9728) from the
//!    `resource_metadata` of the `WWW-Authenticate` challenge, or else the
//!    well-known URIs (path-aware first, then the root); its `resource` must
//!    be this server (or a parent of its path), or nothing is authorized.
//!    Then the authorization server's metadata (RFC 8414, with the OpenID
//!    Connect discovery fallbacks, path-aware for an issuer with a path).
//!    A server without protected resource metadata (the 2025-03-26
//!    revision) is its own authorization server; one without metadata at
//!    all has `/authorize`, `/token` and `/register` at its root.
//! 2. **Registration.** A pre-registered client
//!    ([`client_id`](OAuth::client_id)), else a Client ID Metadata Document
//!    ([`client_metadata_url`](OAuth::client_metadata_url)) when the
//!    authorization server supports them, else dynamic client registration
//!    (RFC 7591). A registration is kept in the [`TokenStore`].
//! 3. **Authorization.** The authorization code grant with PKCE (S256) and
//!    the resource indicator (RFC 8707); the person is asked through your
//!    [`Authorizer`], which gets the authorization URL and returns the code
//!    (the `state` and, RFC 9207, the `iss` of the answer are checked). Or
//!    the client credentials grant, with a client secret or a signed JWT
//!    (`private_key_jwt`, RFC 7523).
//! 4. **Scopes.** The `scope` of the challenge, else the configured
//!    [`scopes`](OAuth::scopes), else the resource's `scopes_supported`;
//!    `offline_access` is added when the authorization server offers it.
//!    A `403` with `error="insufficient_scope"` asks again for the scopes
//!    held plus those the challenge names, at most
//!    [`max_step_ups`](OAuth::max_step_ups) times for one message.
//! 5. **Tokens.** Kept in the [`TokenStore`] (in memory by default),
//!    refreshed before they expire when there is a refresh token, and on a
//!    `401` to a token once more before a new authorization.
//!
//! Nothing here logs a token, a secret or a code, and no error message
//! contains one. A failure is an [`ErrorKind::Unauthorized`](super::ErrorKind::Unauthorized)
//! error saying which step failed and where, with the cause as its
//! [`source`](std::error::Error::source).
//!
//! ```no_run
//! use claude_code_agent_mcp::client::auth::{AuthorizationRequest, AuthorizationResponse, OAuth};
//! use claude_code_agent_mcp::client::{ClientOptions, Error, HttpOptions, HttpTransport, McpClient};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let authorize = |request: AuthorizationRequest| async move {
//!     println!("Open {} and paste the address you were sent back to:", request.url());
//!     let mut line = String::new();
//!     std::io::stdin()
//!         .read_line(&mut line)
//!         .map_err(|e| Error::transport("reading stdin failed").with_source(e))?;
//!     AuthorizationResponse::from_redirect(line.trim())
//! };
//! let oauth = OAuth::authorization_code("http://127.0.0.1:8976/callback", authorize)
//! .client_name("my-agent")
//! .client_metadata_url("https://my-agent.example/oauth/client.json");
//! let transport = HttpTransport::new(HttpOptions::new("https://mcp.example.com/mcp").oauth(oauth))?;
//! let client = McpClient::connect(transport, ClientOptions::new("my-agent", "1.0")).await?;
//! println!("{:?}", client.list_tools().await?);
//! # Ok(()) }
//! ```

mod assertion;
mod challenge;
mod discovery;
mod dpop;
mod flow;
mod grant;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::Error;
pub(crate) use flow::Auth;

/// How the MCP client gets access tokens for a protected server (feature
/// `oauth-client`): a grant, how the client is registered, and where
/// tokens live. Given to [`HttpOptions::oauth`](super::HttpOptions::oauth);
/// see the [module docs](self) for the flow.
#[derive(Clone)]
pub struct OAuth {
    pub(crate) grant: Grant,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) max_step_ups: u32,
}

#[derive(Clone)]
pub(crate) enum Grant {
    AuthorizationCode {
        redirect_uri: String,
        authorizer: Arc<dyn Authorizer>,
    },
    ClientCredentials(ClientAuth),
    /// SEP-990, enterprise-managed authorization: an identity provider's ID
    /// token exchanged for an identity assertion grant (RFC 8693), which
    /// the authorization server takes as a JWT bearer grant (RFC 7523).
    IdentityAssertion(IdentityAssertion),
    /// RFC 7523 §2.1 with an assertion the program has (workload identity
    /// federation, SEP-1933).
    JwtBearer(Arc<dyn Fn() -> Result<String, Error> + Send + Sync>),
}

/// How a confidential client authenticates with the client credentials grant.
#[derive(Clone)]
pub(crate) enum ClientAuth {
    /// `client_secret_basic`, or `client_secret_post` where only that is offered.
    Secret,
    /// `private_key_jwt`: a JWT signed with this key.
    PrivateKeyJwt(Arc<assertion::SigningKey>),
}

impl OAuth {
    fn new(grant: Grant) -> Self {
        Self {
            grant,
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: "claude-code-agent-mcp".to_owned(),
            scopes: None,
            store: Arc::new(MemoryTokenStore::default()),
            max_step_ups: 2,
        }
    }

    /// The authorization code grant with PKCE: `authorizer` is asked to
    /// have the person authorize at the URL it gets (open a browser, print
    /// it), and returns the code the authorization server sent to
    /// `redirect_uri` (for a native program, a loopback address it listens
    /// on: `http://127.0.0.1:PORT/callback`; the crate's `oauth_client`
    /// example does this).
    pub fn authorization_code(
        redirect_uri: impl Into<String>,
        authorizer: impl Authorizer,
    ) -> Self {
        Self::new(Grant::AuthorizationCode {
            redirect_uri: redirect_uri.into(),
            authorizer: Arc::new(authorizer),
        })
    }

    /// The client credentials grant for a pre-registered confidential
    /// client (no person involved), authenticated with its secret:
    /// `client_secret_basic`, or `client_secret_post` where the
    /// authorization server offers only that.
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        let mut oauth = Self::new(Grant::ClientCredentials(ClientAuth::Secret));
        oauth.client_id = Some(client_id.into());
        oauth.client_secret = Some(client_secret.into());
        oauth
    }

    /// The client credentials grant authenticated with a JWT signed by
    /// `private_key_pem` (`private_key_jwt`, RFC 7523): `algorithm` is one
    /// of `ES256`, `ES384`, `RS256`, `RS384`, `RS512`, `PS256`, `PS384`,
    /// `PS512`, `EdDSA`, and the key a PEM of that kind (PKCS#8, or PKCS#1
    /// for RSA). The assertion's `iss` and `sub` are `client_id`, its `aud`
    /// the authorization server's issuer; it is valid for 5 minutes.
    ///
    /// Fails when the algorithm is unknown or the key does not parse.
    pub fn client_credentials_jwt(
        client_id: impl Into<String>,
        private_key_pem: &str,
        algorithm: &str,
    ) -> Result<Self, Error> {
        let key = assertion::SigningKey::from_pem(private_key_pem, algorithm)?;
        let mut oauth = Self::new(Grant::ClientCredentials(ClientAuth::PrivateKeyJwt(
            Arc::new(key),
        )));
        oauth.client_id = Some(client_id.into());
        Ok(oauth)
    }

    /// Enterprise-managed authorization (SEP-990, "cross-app access"): the
    /// ID token a person got from their organisation's identity provider is
    /// exchanged there (RFC 8693) for an identity assertion grant for this
    /// server's authorization server, which takes it as a JWT bearer grant
    /// (RFC 7523). The client authenticates at the authorization server
    /// with `client_id` and `client_secret` (`client_secret_basic`).
    pub fn identity_assertion(
        assertion: IdentityAssertion,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        let mut oauth = Self::new(Grant::IdentityAssertion(assertion));
        oauth.client_id = Some(client_id.into());
        oauth.client_secret = Some(client_secret.into());
        oauth
    }

    /// The JWT bearer grant (RFC 7523 §2.1) for workload identity
    /// federation (SEP-1933): the workload presents a JWT its platform
    /// issued it (a Kubernetes service account token, a cloud identity
    /// token), which `assertion` returns — called for every token request,
    /// so it can read a token file that the platform rotates. The client
    /// is named by `client_id` (and authenticated with
    /// [`client_secret`](Self::client_secret), if it has one).
    pub fn jwt_bearer(
        client_id: impl Into<String>,
        assertion: impl Fn() -> Result<String, Error> + Send + Sync + 'static,
    ) -> Self {
        let mut oauth = Self::new(Grant::JwtBearer(Arc::new(assertion)));
        oauth.client_id = Some(client_id.into());
        oauth
    }

    /// A client registered beforehand with the authorization server: no
    /// registration is attempted.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The secret of the pre-registered client: `client_secret_basic`, or
    /// `client_secret_post` where the authorization server offers only that.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document: used as
    /// the client id by authorization servers that say
    /// `client_id_metadata_document_supported`, instead of registering.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The `client_name` of a dynamic registration (default
    /// `claude-code-agent-mcp`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for when the server's challenge names none
    /// (default: the resource's `scopes_supported`, or none).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Where tokens and the client's registration are kept (default: a
    /// [`MemoryTokenStore`] of this `OAuth` and its clones).
    pub fn token_store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How many times one message asks for more scopes after a `403`
    /// `insufficient_scope` before it fails (default 2).
    pub fn max_step_ups(mut self, n: u32) -> Self {
        self.max_step_ups = n;
        self
    }
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match &self.grant {
            Grant::AuthorizationCode { .. } => "authorization_code",
            Grant::ClientCredentials(ClientAuth::Secret) => "client_credentials (secret)",
            Grant::ClientCredentials(ClientAuth::PrivateKeyJwt(_)) => {
                "client_credentials (private_key_jwt)"
            }
            Grant::IdentityAssertion(_) => "identity assertion (jwt-bearer)",
            Grant::JwtBearer(_) => "jwt-bearer",
        };
        f.debug_struct("OAuth")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// What enterprise-managed authorization starts from
/// ([`OAuth::identity_assertion`]): the person's ID token and the identity
/// provider that issued it.
#[derive(Clone)]
pub struct IdentityAssertion {
    pub(crate) id_token: String,
    pub(crate) token_endpoint: String,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
}

impl IdentityAssertion {
    /// The ID token and the identity provider's token endpoint, where it is
    /// exchanged.
    pub fn new(id_token: impl Into<String>, token_endpoint: impl Into<String>) -> Self {
        Self {
            id_token: id_token.into(),
            token_endpoint: token_endpoint.into(),
            client_id: None,
            client_secret: None,
        }
    }

    /// This client's id at the identity provider, sent with the exchange.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// This client's secret at the identity provider (`client_secret_post`).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

/// Has a person authorize this client ([`OAuth::authorization_code`]):
/// given where to send them, returns what the authorization server sent
/// back to the redirect URI. Implemented for async closures
/// `Fn(AuthorizationRequest) -> impl Future<Output = Result<AuthorizationResponse, Error>>`.
pub trait Authorizer: Send + Sync + 'static {
    /// Sends the person to `request.url()` and waits for the redirect.
    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'static, Result<AuthorizationResponse, Error>>;
}

impl<F, Fut> Authorizer for F
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AuthorizationResponse, Error>> + Send + 'static,
{
    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'static, Result<AuthorizationResponse, Error>> {
        Box::pin(self(request))
    }
}

/// Where an [`Authorizer`] sends the person.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest {
    url: String,
    redirect_uri: String,
    state: String,
}

impl AuthorizationRequest {
    /// The authorization URL, with the client id, PKCE challenge, scopes,
    /// resource and `state`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the authorization server sends the answer.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The `state` the answer must carry back.
    pub fn state(&self) -> &str {
        &self.state
    }
}

/// What the authorization server sent to the redirect URI.
#[derive(Clone)]
pub struct AuthorizationResponse {
    pub(crate) code: String,
    pub(crate) state: Option<String>,
    pub(crate) iss: Option<String>,
}

impl AuthorizationResponse {
    /// The authorization code and the `state` that came with it.
    pub fn new(code: impl Into<String>, state: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            state: Some(state.into()),
            iss: None,
        }
    }

    /// The `iss` parameter of the answer (RFC 9207), checked against the
    /// authorization server's issuer.
    pub fn issuer(mut self, iss: impl Into<String>) -> Self {
        self.iss = Some(iss.into());
        self
    }

    /// Reads the redirect the person's browser was sent to (the whole URL,
    /// or only its query): `code`, `state` and `iss`; an `error` there
    /// fails with its `error_description`.
    pub fn from_redirect(redirect: &str) -> Result<Self, Error> {
        let query = match redirect.split_once('?') {
            Some((_, q)) => q,
            None => redirect,
        };
        let query = query.split('#').next().unwrap_or_default();
        let mut code = None;
        let mut state = None;
        let mut iss = None;
        let mut error = None;
        let mut description = None;
        for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
            match &*k {
                "code" => code = Some(v.into_owned()),
                "state" => state = Some(v.into_owned()),
                "iss" => iss = Some(v.into_owned()),
                "error" => error = Some(v.into_owned()),
                "error_description" => description = Some(v.into_owned()),
                _ => {}
            }
        }
        if let Some(error) = error {
            let why = description.map(|d| format!(": {d}")).unwrap_or_default();
            return Err(Error::unauthorized(format!(
                "OAuth: the authorization server answered the authorization request with {error}{why}"
            )));
        }
        let code = code.ok_or_else(|| {
            Error::unauthorized("OAuth: the redirect carries neither a code nor an error")
        })?;
        Ok(Self { code, state, iss })
    }
}

impl fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationResponse")
            .field("code", &"<redacted>")
            .field("state", &self.state)
            .field("iss", &self.iss)
            .finish()
    }
}

/// Where tokens and client registrations live, keyed by the MCP server's
/// URL. The default is a [`MemoryTokenStore`]; a program that should not
/// ask again after a restart keeps them somewhere lasting ([`Credentials`]
/// is serde-serializable; keep it as secret as a password).
pub trait TokenStore: Send + Sync + 'static {
    /// What is kept for `server`, if anything.
    fn load(&self, server: &str) -> BoxFuture<'_, Result<Option<Credentials>, Error>>;
    /// Keeps `credentials` for `server`, replacing what was there.
    fn save(&self, server: &str, credentials: Credentials) -> BoxFuture<'_, Result<(), Error>>;
}

/// A [`TokenStore`] in memory: what it holds is gone when it is dropped.
/// Clones share it.
#[derive(Debug, Clone, Default)]
pub struct MemoryTokenStore {
    entries: Arc<Mutex<HashMap<String, Credentials>>>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> BoxFuture<'_, Result<Option<Credentials>, Error>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let found = entries.get(server).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn save(&self, server: &str, credentials: Credentials) -> BoxFuture<'_, Result<(), Error>> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(server.to_owned(), credentials);
        Box::pin(async { Ok(()) })
    }
}

/// What a [`TokenStore`] keeps for one server: the tokens and the client
/// registration they were issued to. Its `Debug` shows no secret.
#[derive(Clone, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Credentials {
    /// The tokens, once authorized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// The client registration, once registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("tokens", &self.tokens)
            .field("client", &self.client)
            .finish()
    }
}

/// An access token and what came with it.
#[derive(Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token, sent as `Authorization: Bearer …`.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (or, when the answer did not say, asked for).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Bound to this transport's DPoP key (`token_type: DPoP`): sent as
    /// `Authorization: DPoP …` with a proof; of no use to another process.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dpop: bool,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("dpop", &self.dpop)
            .finish()
    }
}

/// A client as the authorization server knows it.
#[derive(Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientRegistration {
    /// The authorization server's issuer this registration is for.
    pub issuer: String,
    /// The client id.
    pub client_id: String,
    /// The client secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint
    /// (`client_secret_basic`, `client_secret_post`, `none`), when the
    /// registration said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
}

impl fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .finish()
    }
}
