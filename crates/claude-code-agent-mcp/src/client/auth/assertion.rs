//! The client assertion of `private_key_jwt` (RFC 7523 §2.2), signed by
//! `jsonwebtoken`.

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;

use crate::client::Error;

/// The `client_assertion_type` of a JWT client assertion.
pub(crate) const JWT_BEARER_ASSERTION: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// A private key and the algorithm it signs with.
pub(crate) struct SigningKey {
    key: EncodingKey,
    algorithm: Algorithm,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

impl SigningKey {
    pub(crate) fn from_pem(pem: &str, algorithm: &str) -> Result<Self, Error> {
        let unknown = || {
            Error::refused(format!(
                "OAuth: {algorithm:?} is no signing algorithm for private_key_jwt (ES256, ES384, RS256, RS384, RS512, PS256, PS384, PS512, EdDSA)"
            ))
        };
        let algorithm: Algorithm = algorithm.parse().map_err(|_| unknown())?;
        let key = match algorithm {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem.as_bytes()),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
            _ => return Err(unknown()),
        }
        .map_err(|e| {
            Error::refused(format!(
                "OAuth: the private key for {algorithm:?} does not parse as PEM"
            ))
            .with_source(e)
        })?;
        Ok(Self { key, algorithm })
    }

    /// An assertion of `client_id` for the authorization server `audience`.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, Error> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let claims = Claims {
            iss: client_id,
            sub: client_id,
            aud: audience,
            iat: now,
            exp: now + LIFETIME_SECS,
            jti: random_id(),
        };
        crate::jose::ensure_provider();
        jsonwebtoken::encode(&Header::new(self.algorithm), &claims, &self.key).map_err(|e| {
            Error::unauthorized("OAuth: signing the client assertion failed").with_source(e)
        })
    }
}

/// 128 random bits, hex.
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
