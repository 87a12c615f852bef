//! DPoP (RFC 9449): a key of this transport's own, generated when it is
//! made and never stored, proves possession with every token request and,
//! once a token is DPoP-bound (`token_type: DPoP`), with every request to
//! the MCP server. Used when the authorization server lists `ES256` in its
//! `dpop_signing_alg_values_supported`. Server nonces (`use_dpop_nonce`)
//! are kept per origin and sent with the next proofs.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;

use super::assertion::random_id;
use crate::client::Error;

/// The header that carries a proof, and a server's nonce.
pub(crate) const DPOP: &str = "dpop";
pub(crate) const DPOP_NONCE: &str = "dpop-nonce";

pub(crate) struct Dpop {
    key: EncodingKey,
    jwk: Jwk,
    /// The last nonce each origin gave.
    nonces: Mutex<HashMap<String, String>>,
}

#[derive(Serialize)]
struct Claims<'a> {
    jti: String,
    htm: &'a str,
    htu: String,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<String>,
}

impl Dpop {
    /// A new P-256 key.
    pub(crate) fn new() -> Result<Self, Error> {
        let failed = |what: &str| Error::unauthorized(format!("OAuth: {what} the DPoP key failed"));
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .map_err(|_| failed("generating"))?;
        let pkcs8 = pair.to_pkcs8v1().map_err(|_| failed("encoding"))?;
        let key = EncodingKey::from_ec_der(pkcs8.as_ref());
        crate::jose::ensure_provider();
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|e| failed("describing").with_source(e))?;
        Ok(Self {
            key,
            jwk,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// A proof for a `method` request to `url`; `access_token` when it
    /// carries one (its hash is the proof's `ath`).
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<String, Error> {
        let (htu, origin) = target(url);
        let nonce = self
            .nonces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&origin)
            .cloned();
        let claims = Claims {
            jti: random_id(),
            htm: method,
            htu,
            iat: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            ath: access_token.map(|t| {
                URL_SAFE_NO_PAD.encode(aws_lc_rs::digest::digest(
                    &aws_lc_rs::digest::SHA256,
                    t.as_bytes(),
                ))
            }),
            nonce,
        };
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| Error::unauthorized("OAuth: signing a DPoP proof failed").with_source(e))
    }

    /// Keeps the nonce a server at `url` gave; whether it is new.
    pub(crate) fn keep_nonce(&self, url: &str, nonce: &str) -> bool {
        let (_, origin) = target(url);
        let mut nonces = self.nonces.lock().unwrap_or_else(PoisonError::into_inner);
        nonces.insert(origin, nonce.to_owned()).as_deref() != Some(nonce)
    }
}

/// A proof's `htu` (the URL without query and fragment) and the origin
/// nonces are kept for.
fn target(url: &str) -> (String, String) {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            let origin = u.origin().ascii_serialization();
            (u.to_string(), origin)
        }
        Err(_) => (url.to_owned(), url.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_names_the_request_and_carries_the_public_key_only() {
        let dpop = Dpop::new().unwrap();
        assert!(dpop.keep_nonce("http://a:1/token", "n1"));
        assert!(!dpop.keep_nonce("http://a:1/other", "n1"));
        let proof = dpop
            .proof("POST", "http://a:1/mcp?x=1#f", Some("tok"))
            .unwrap();
        let mut parts = proof.split('.');
        let decode = |p: &str| -> serde_json::Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap()
        };
        let header = decode(parts.next().unwrap());
        let claims = decode(parts.next().unwrap());
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["kty"], "EC");
        assert!(header["jwk"].get("d").is_none(), "{header}");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "http://a:1/mcp");
        assert_eq!(claims["nonce"], "n1");
        // base64url(sha256("tok"))
        assert_eq!(claims["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        assert_ne!(dpop.proof("POST", "http://a:1/mcp", None).unwrap(), proof);
    }
}
