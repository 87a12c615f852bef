//! The authorization state of one HTTP transport: the token to send, and
//! what to do when the server answers 401 or 403. One flow at a time:
//! messages that meet a 401 together share one authorization.

use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderValue;

use super::challenge::Challenge;
use super::discovery::{self, Discovered};
use super::dpop::{DPOP, Dpop};
use super::grant::Http;
use super::{ClientAuth, ClientRegistration, Credentials, Grant, OAuth, Tokens, grant};
use crate::client::Error;

/// Refresh this long before the access token expires.
const EXPIRY_MARGIN_SECS: u64 = 30;

pub(crate) struct Auth {
    oauth: OAuth,
    server_url: String,
    http: reqwest::Client,
    /// This transport's DPoP key.
    dpop: Dpop,
    /// The token of the moment (read for every request).
    current: Mutex<Option<Tokens>>,
    flow: tokio::sync::Mutex<Flow>,
}

#[derive(Default)]
struct Flow {
    loaded: bool,
    discovered: Option<Discovered>,
    client: Option<ClientRegistration>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Auth {
    pub(crate) fn new(oauth: OAuth, server_url: &str) -> Result<Self, Error> {
        Ok(Self {
            oauth,
            server_url: server_url.to_owned(),
            http: grant::http_client()?,
            dpop: Dpop::new()?,
            current: Mutex::new(None),
            flow: tokio::sync::Mutex::new(Flow::default()),
        })
    }

    /// The HTTP client of token requests to `d`'s authorization server.
    fn to_server(&self, d: &Discovered) -> Http<'_> {
        Http {
            client: &self.http,
            dpop: d.server.takes_dpop().then_some(&self.dpop),
        }
    }

    fn current(&self) -> Option<Tokens> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_current(&self, tokens: Tokens) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(tokens);
    }

    /// The access token to send (refreshed first when it is about to
    /// expire), if there is one yet.
    pub(crate) async fn token(&self) -> Result<Option<String>, Error> {
        let mut tokens = self.current();
        if tokens.is_none() {
            let mut flow = self.flow.lock().await;
            self.load(&mut flow).await?;
            tokens = self.current();
        }
        let Some(t) = tokens else { return Ok(None) };
        let expiring = t
            .expires_at
            .is_some_and(|at| at <= now() + EXPIRY_MARGIN_SECS);
        if expiring && t.refresh_token.is_some() {
            let mut flow = self.flow.lock().await;
            if self.current().map(|c| c.access_token) == Some(t.access_token.clone())
                && let Err(e) = self.refresh(&mut flow, &t).await
            {
                tracing::info!(error = %e, "OAuth: refreshing the access token failed; the server will say what it needs");
            }
            return Ok(self.current().map(|c| c.access_token));
        }
        Ok(Some(t.access_token))
    }

    pub(crate) fn max_step_ups(&self) -> u32 {
        self.oauth.max_step_ups
    }

    /// Puts the access token of the moment in `headers` of a `method`
    /// request to the MCP server (as `Bearer`, or as `DPoP` with a proof
    /// when it is DPoP-bound); returns the token sent.
    pub(crate) async fn authorize_request(
        &self,
        method: &str,
        headers: &mut reqwest::header::HeaderMap,
    ) -> Result<Option<String>, Error> {
        let Some(token) = self.token().await? else {
            return Ok(None);
        };
        let dpop = self
            .current()
            .is_some_and(|t| t.dpop && t.access_token == token);
        let scheme = if dpop { "DPoP" } else { "Bearer" };
        let mut value = HeaderValue::from_str(&format!("{scheme} {token}")).map_err(|_| {
            Error::unauthorized("OAuth: the access token cannot be sent in a header")
        })?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
        if dpop {
            let proof = self.dpop.proof(method, &self.server_url, Some(&token))?;
            let proof = HeaderValue::from_str(&proof).map_err(|_| {
                Error::unauthorized("OAuth: a DPoP proof cannot be sent in a header")
            })?;
            headers.insert(DPOP, proof);
        }
        Ok(Some(token))
    }

    /// Keeps a nonce the MCP server gave (RFC 9449 §9); whether it is new.
    pub(crate) fn keep_nonce(&self, nonce: &str) -> bool {
        self.dpop.keep_nonce(&self.server_url, nonce)
    }

    /// The server answered 401 to a message sent with `sent` (or without a
    /// token): refresh, or authorize anew, unless another message already
    /// got a new token.
    pub(crate) async fn unauthorized(
        &self,
        challenge: &str,
        sent: Option<&str>,
    ) -> Result<(), Error> {
        let mut flow = self.flow.lock().await;
        self.load(&mut flow).await?;
        let current = self.current();
        if current.as_ref().map(|t| t.access_token.as_str()) != sent && current.is_some() {
            return Ok(()); // renewed meanwhile
        }
        let challenge = Challenge::parse(challenge);
        let before = flow.discovered.as_ref().map(|d| d.server.issuer.clone());
        let d = self.rediscover(&mut flow, &challenge).await?;
        if before.is_some_and(|b| b != d.server.issuer) {
            // The resource moved to another authorization server: nothing
            // the old one issued (tokens, registration) is of use there.
            tracing::info!(issuer = %d.server.issuer, "OAuth: the server's authorization server changed");
            *self.current.lock().unwrap_or_else(PoisonError::into_inner) = None;
            return self.authorize_for(&mut flow, &challenge).await;
        }
        if let Some(t) = current.filter(|t| t.refresh_token.is_some()) {
            match self.refresh(&mut flow, &t).await {
                Ok(()) => return Ok(()),
                Err(e) => tracing::info!(error = %e, "OAuth: the refresh failed; authorizing anew"),
            }
        }
        self.authorize_for(&mut flow, &challenge).await
    }

    async fn authorize_for(&self, flow: &mut Flow, challenge: &Challenge) -> Result<(), Error> {
        let scopes = self.scopes(flow, challenge, &[]).await?;
        self.authorize(flow, challenge, scopes).await
    }

    /// A new token without asking anyone, after a 401 to `sent`: one got
    /// meanwhile, or a refresh. Whether there is one.
    pub(crate) async fn renew_quietly(&self, sent: Option<&str>) -> bool {
        let mut flow = self.flow.lock().await;
        let current = self.current();
        if current
            .as_ref()
            .is_some_and(|t| Some(t.access_token.as_str()) != sent)
        {
            return true;
        }
        match current.filter(|t| t.refresh_token.is_some()) {
            Some(t) => match self.refresh(&mut flow, &t).await {
                Ok(()) => true,
                Err(e) => {
                    tracing::info!(error = %e, "OAuth: refreshing the access token failed");
                    false
                }
            },
            None => false,
        }
    }

    /// The server answered 403 to a message sent with `sent`: when the
    /// challenge is `insufficient_scope`, authorize again for the scopes
    /// held and those it names.
    pub(crate) async fn forbidden(&self, challenge: &str, sent: Option<&str>) -> Result<(), Error> {
        let parsed = Challenge::parse(challenge);
        if parsed.error.as_deref() != Some("insufficient_scope") {
            return Err(Error::unauthorized(format!(
                "HTTP 403 from {}: forbidden (WWW-Authenticate: {challenge})",
                self.server_url
            ))
            .with_status(403));
        }
        let mut flow = self.flow.lock().await;
        let current = self.current();
        if current.as_ref().map(|t| t.access_token.as_str()) != sent && current.is_some() {
            return Ok(()); // a new token meanwhile
        }
        let held = current.map(|t| t.scopes).unwrap_or_default();
        let scopes = self.scopes(&mut flow, &parsed, &held).await?;
        tracing::info!(url = %self.server_url, scopes = %scopes.join(" "), "OAuth: the server asks for more scopes");
        self.authorize(&mut flow, &parsed, scopes).await
    }

    /// The error of a message still refused after authorizing.
    pub(crate) fn refused(&self, status: u16, challenge: &str, after: &str) -> Error {
        Error::unauthorized(format!(
            "HTTP {status} from {} {after} (WWW-Authenticate: {challenge})",
            self.server_url
        ))
        .with_status(status)
    }

    async fn load(&self, flow: &mut Flow) -> Result<(), Error> {
        if flow.loaded {
            return Ok(());
        }
        flow.loaded = true;
        if let Some(stored) = self.oauth.store.load(&self.server_url).await? {
            flow.client = stored.client;
            if let Some(tokens) = stored.tokens {
                self.set_current(tokens);
            }
        }
        Ok(())
    }

    async fn save(&self, flow: &Flow) -> Result<(), Error> {
        let credentials = Credentials {
            tokens: self.current(),
            client: flow.client.clone(),
        };
        self.oauth.store.save(&self.server_url, credentials).await
    }

    /// What discovery found last, or finds now.
    async fn discovered(
        &self,
        flow: &mut Flow,
        challenge: &Challenge,
    ) -> Result<Discovered, Error> {
        match &flow.discovered {
            Some(d) => Ok(d.clone()),
            None => self.rediscover(flow, challenge).await,
        }
    }

    /// Discovers anew (a 401: the resource may have moved).
    async fn rediscover(
        &self,
        flow: &mut Flow,
        challenge: &Challenge,
    ) -> Result<Discovered, Error> {
        let d = discovery::discover(&self.http, &self.server_url, challenge).await?;
        flow.discovered = Some(d.clone());
        Ok(d)
    }

    /// The scopes to ask for: those `held` and the challenge's, else the
    /// configured ones, else the resource's; and `offline_access` for a
    /// grant with a person when the authorization server offers it.
    async fn scopes(
        &self,
        flow: &mut Flow,
        challenge: &Challenge,
        held: &[String],
    ) -> Result<Vec<String>, Error> {
        let d = self.discovered(flow, challenge).await?;
        let mut scopes: Vec<String> = held.to_vec();
        let named = challenge.scopes();
        let base = if !named.is_empty() {
            named
        } else if let Some(configured) = &self.oauth.scopes {
            configured.clone()
        } else {
            d.scopes_supported.clone().unwrap_or_default()
        };
        for s in base {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
        let offered = |list: &Option<Vec<String>>, v: &str| {
            list.as_ref().is_some_and(|l| l.iter().any(|x| x == v))
        };
        let refreshes = d
            .server
            .grant_types_supported
            .as_ref()
            .is_none_or(|g| g.iter().any(|x| x == "refresh_token"));
        if matches!(self.oauth.grant, Grant::AuthorizationCode { .. })
            && offered(&d.server.scopes_supported, "offline_access")
            && refreshes
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".to_owned());
        }
        Ok(scopes)
    }

    async fn refresh(&self, flow: &mut Flow, tokens: &Tokens) -> Result<(), Error> {
        let Some(refresh_token) = &tokens.refresh_token else {
            return Err(Error::unauthorized("OAuth: no refresh token"));
        };
        let d = self.discovered(flow, &Challenge::default()).await?;
        let client = self.client(flow, &d).await?;
        let fresh = grant::refresh(self.to_server(&d), &d, &client, tokens, refresh_token).await?;
        tracing::debug!(url = %self.server_url, "OAuth: the access token was refreshed");
        self.set_current(fresh);
        self.save(flow).await
    }

    /// The client as this authorization server knows it: pre-registered,
    /// registered before, a metadata document URL, or registered now.
    async fn client(&self, flow: &mut Flow, d: &Discovered) -> Result<ClientRegistration, Error> {
        if let Some(client_id) = &self.oauth.client_id {
            return Ok(ClientRegistration {
                issuer: d.server.issuer.clone(),
                client_id: client_id.clone(),
                client_secret: self.oauth.client_secret.clone(),
                token_endpoint_auth_method: match &self.oauth.grant {
                    Grant::ClientCredentials(ClientAuth::PrivateKeyJwt(_)) => {
                        Some("private_key_jwt".to_owned())
                    }
                    _ if self.oauth.client_secret.is_none() => Some("none".to_owned()),
                    _ => None,
                },
            });
        }
        if let Some(client) = flow
            .client
            .as_ref()
            .filter(|c| discovery::same_issuer(&c.issuer, &d.server.issuer))
        {
            return Ok(client.clone());
        }
        let client = match (&self.oauth.client_metadata_url, &self.oauth.grant) {
            (Some(url), _) if d.server.client_id_metadata_document_supported => {
                ClientRegistration {
                    issuer: d.server.issuer.clone(),
                    client_id: url.clone(),
                    client_secret: None,
                    token_endpoint_auth_method: Some("none".to_owned()),
                }
            }
            (_, Grant::AuthorizationCode { redirect_uri, .. }) => {
                let Some(endpoint) = &d.server.registration_endpoint else {
                    return Err(Error::unauthorized(format!(
                        "OAuth: the authorization server {} offers no dynamic client registration{}: give a pre-registered client with OAuth::client_id",
                        d.server.issuer,
                        if self.oauth.client_metadata_url.is_some() {
                            " nor client ID metadata documents"
                        } else {
                            ""
                        }
                    )));
                };
                tracing::info!(registration_endpoint = %endpoint, "OAuth: registering the client");
                grant::register(
                    &self.http,
                    d,
                    endpoint,
                    &self.oauth.client_name,
                    redirect_uri,
                )
                .await?
            }
            _ => {
                return Err(Error::unauthorized(
                    "OAuth: this grant needs a pre-registered client (OAuth::client_id)",
                ));
            }
        };
        flow.client = Some(client.clone());
        Ok(client)
    }

    async fn authorize(
        &self,
        flow: &mut Flow,
        challenge: &Challenge,
        scopes: Vec<String>,
    ) -> Result<(), Error> {
        let d = self.discovered(flow, challenge).await?;
        let client = self.client(flow, &d).await?;
        let http = self.to_server(&d);
        let tokens = match &self.oauth.grant {
            Grant::AuthorizationCode {
                redirect_uri,
                authorizer,
            } => {
                grant::authorization_code(
                    http,
                    &d,
                    &client,
                    redirect_uri,
                    authorizer.as_ref(),
                    &scopes,
                )
                .await?
            }
            Grant::ClientCredentials(auth) => {
                let key = match auth {
                    ClientAuth::PrivateKeyJwt(key) => Some(key.as_ref()),
                    ClientAuth::Secret => None,
                };
                grant::client_credentials(http, &d, &client, key, &scopes).await?
            }
            Grant::IdentityAssertion(assertion) => {
                grant::identity_assertion(http, &d, &client, assertion, &scopes).await?
            }
            Grant::JwtBearer(assertion) => {
                grant::jwt_bearer(http, &d, &client, &assertion()?, &scopes).await?
            }
        };
        tracing::info!(url = %self.server_url, scopes = %tokens.scopes.join(" "), "OAuth: authorized");
        self.set_current(tokens);
        self.save(flow).await
    }
}
