//! Where the HTTP transport meets [`auth`](crate::client::auth) (feature
//! `oauth-client`): the token each request carries, and a 401 or 403 with
//! a `WWW-Authenticate` challenge handed to the OAuth flow. Without the
//! feature, or without [`HttpOptions::oauth`](super::HttpOptions::oauth),
//! requests carry no token of ours and such answers fail as they come.

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

use super::Shared;
use crate::client::Error;

/// What the server said when it refused a request's authorization (never
/// made without the feature).
#[cfg_attr(not(feature = "oauth-client"), allow(dead_code))]
pub(crate) struct Refusal {
    /// 401 or 403.
    pub(crate) status: u16,
    /// Its `WWW-Authenticate` headers, joined.
    pub(crate) challenge: String,
    /// The access token the request carried.
    pub(crate) sent: Option<String>,
    /// A DPoP nonce challenge (`use_dpop_nonce`) with a new nonce: send
    /// again, with it in the proof.
    pub(crate) nonce: bool,
}

/// Puts the access token of the moment in `headers` of a `method` request
/// (refreshed first when it is about to expire; with a DPoP proof when it
/// is DPoP-bound); returns it.
#[cfg(feature = "oauth-client")]
pub(crate) async fn add_token(
    shared: &Shared,
    method: &str,
    headers: &mut HeaderMap,
) -> Result<Option<String>, Error> {
    match &shared.auth {
        Some(auth) => auth.authorize_request(method, headers).await,
        None => Ok(None),
    }
}

#[cfg(not(feature = "oauth-client"))]
pub(crate) async fn add_token(
    _: &Shared,
    _: &str,
    _: &mut HeaderMap,
) -> Result<Option<String>, Error> {
    Ok(None)
}

/// The refusal in an answer with `status` and `headers`, when the OAuth
/// flow is there to act on it: a 401, or a 403 with a challenge.
pub(crate) fn refusal(
    shared: &Shared,
    status: u16,
    headers: &HeaderMap,
    sent: Option<String>,
) -> Option<Refusal> {
    if !enabled(shared) {
        return None;
    }
    let new_nonce = new_nonce(shared, headers);
    let challenge = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(", ");
    let nonce = new_nonce && challenge.contains("use_dpop_nonce");
    match status {
        401 => Some(Refusal {
            status,
            challenge,
            sent,
            nonce,
        }),
        403 if !challenge.is_empty() => Some(Refusal {
            status,
            challenge,
            sent,
            nonce,
        }),
        _ => None,
    }
}

/// Keeps the DPoP nonce of an answer; whether it is new.
fn new_nonce(shared: &Shared, headers: &HeaderMap) -> bool {
    #[cfg(feature = "oauth-client")]
    if let (Some(auth), Some(nonce)) = (
        &shared.auth,
        headers.get("dpop-nonce").and_then(|v| v.to_str().ok()),
    ) {
        return auth.keep_nonce(nonce);
    }
    let _ = (shared, headers);
    false
}

fn enabled(shared: &Shared) -> bool {
    #[cfg(feature = "oauth-client")]
    return shared.auth.is_some();
    #[cfg(not(feature = "oauth-client"))]
    {
        let _ = shared;
        false
    }
}

/// How many refusals one message may meet: one 401 (answered by a refresh
/// or an authorization), and the step-ups of [`OAuth::max_step_ups`](crate::client::auth::OAuth::max_step_ups).
#[derive(Default)]
#[cfg_attr(not(feature = "oauth-client"), allow(dead_code))]
pub(crate) struct Retries {
    authorized: bool,
    step_ups: u32,
    nonces: u32,
}

impl Retries {
    /// Whether to send again for a DPoP nonce challenge (at most twice).
    #[cfg(feature = "oauth-client")]
    fn take_nonce(&mut self, refusal: &Refusal) -> bool {
        if !refusal.nonce {
            return false;
        }
        self.nonces += 1;
        self.nonces <= 2
    }
}

/// Acts on `refusal`: refreshes or authorizes (401), asks for more scopes
/// (403 `insufficient_scope`). `Ok` when the message should be sent again.
///
/// `quiet` (a GET stream) asks no one: a 401 is answered only by a token
/// got meanwhile or a refresh, never by a new authorization (a server that
/// refuses the stream a token its POSTs take would otherwise have the
/// person asked at every reconnect), and a 403 is not stepped up; the
/// stream then fails, and is tried again as any broken stream is.
#[cfg(feature = "oauth-client")]
pub(crate) async fn act(
    shared: &Shared,
    refusal: &Refusal,
    retries: &mut Retries,
    quiet: bool,
) -> Result<(), Error> {
    let Some(auth) = &shared.auth else {
        unreachable!("a refusal is only made with an OAuth flow")
    };
    let sent = refusal.sent.as_deref();
    if retries.take_nonce(refusal) {
        return Ok(()); // the next proof carries the new nonce
    }
    if quiet {
        if refusal.status == 401 && !retries.authorized {
            retries.authorized = true;
            if auth.renew_quietly(sent).await {
                return Ok(());
            }
        }
        return Err(auth.refused(
            refusal.status,
            &refusal.challenge,
            "refused the GET stream's token",
        ));
    }
    if refusal.status == 401 {
        if retries.authorized {
            return Err(auth.refused(401, &refusal.challenge, "refused the new access token"));
        }
        retries.authorized = true;
        return auth.unauthorized(&refusal.challenge, sent).await;
    }
    retries.step_ups += 1;
    if retries.step_ups > auth.max_step_ups() {
        let after = format!(
            "still asks for more scopes after {} step-ups",
            retries.step_ups - 1
        );
        return Err(auth.refused(403, &refusal.challenge, &after));
    }
    auth.forbidden(&refusal.challenge, sent).await
}

#[cfg(not(feature = "oauth-client"))]
pub(crate) async fn act(_: &Shared, _: &Refusal, _: &mut Retries, _: bool) -> Result<(), Error> {
    unreachable!("a refusal is only made with an OAuth flow")
}
