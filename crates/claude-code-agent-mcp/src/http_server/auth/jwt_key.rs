//! What a [`JwtVerifier`](super::JwtVerifier) verifies with, in this
//! crate's own types: [`JwtAlgorithm`], [`VerificationKey`] and
//! [`KeyError`] (feature `oauth-server`). `jsonwebtoken` does the work
//! behind them and appears in no public signature, so that a major release
//! of it is not one of ours.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;

/// A JWS signature algorithm (RFC 7518 §3, RFC 8037) of access tokens: what
/// [`JwtVerifier::algorithms`](super::JwtVerifier::algorithms) allows and
/// what a [`VerificationKey`] is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JwtAlgorithm {
    /// `HS256`: HMAC with SHA-256 (a shared secret).
    Hs256,
    /// `HS384`: HMAC with SHA-384 (a shared secret).
    Hs384,
    /// `HS512`: HMAC with SHA-512 (a shared secret).
    Hs512,
    /// `RS256`: RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// `RS384`: RSASSA-PKCS1-v1_5 with SHA-384.
    Rs384,
    /// `RS512`: RSASSA-PKCS1-v1_5 with SHA-512.
    Rs512,
    /// `PS256`: RSASSA-PSS with SHA-256.
    Ps256,
    /// `PS384`: RSASSA-PSS with SHA-384.
    Ps384,
    /// `PS512`: RSASSA-PSS with SHA-512.
    Ps512,
    /// `ES256`: ECDSA on P-256 with SHA-256.
    Es256,
    /// `ES384`: ECDSA on P-384 with SHA-384.
    Es384,
    /// `EdDSA`: Ed25519.
    EdDsa,
}

impl JwtAlgorithm {
    /// Every algorithm, in the order of the enum.
    const ALL: [Self; 12] = [
        Self::Hs256,
        Self::Hs384,
        Self::Hs512,
        Self::Rs256,
        Self::Rs384,
        Self::Rs512,
        Self::Ps256,
        Self::Ps384,
        Self::Ps512,
        Self::Es256,
        Self::Es384,
        Self::EdDsa,
    ];

    /// Its name in a JWT header's `alg` and a JWK's `alg` (`"ES256"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hs256 => "HS256",
            Self::Hs384 => "HS384",
            Self::Hs512 => "HS512",
            Self::Rs256 => "RS256",
            Self::Rs384 => "RS384",
            Self::Rs512 => "RS512",
            Self::Ps256 => "PS256",
            Self::Ps384 => "PS384",
            Self::Ps512 => "PS512",
            Self::Es256 => "ES256",
            Self::Es384 => "ES384",
            Self::EdDsa => "EdDSA",
        }
    }

    /// The algorithm named `name` (as in a header's `alg`), if it is one.
    fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// `jsonwebtoken`'s name for it.
    pub(super) fn to_jwt(self) -> Algorithm {
        match self {
            Self::Hs256 => Algorithm::HS256,
            Self::Hs384 => Algorithm::HS384,
            Self::Hs512 => Algorithm::HS512,
            Self::Rs256 => Algorithm::RS256,
            Self::Rs384 => Algorithm::RS384,
            Self::Rs512 => Algorithm::RS512,
            Self::Ps256 => Algorithm::PS256,
            Self::Ps384 => Algorithm::PS384,
            Self::Ps512 => Algorithm::PS512,
            Self::Es256 => Algorithm::ES256,
            Self::Es384 => Algorithm::ES384,
            Self::EdDsa => Algorithm::EdDSA,
        }
    }
}

impl fmt::Display for JwtAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A public key that verifies access tokens' signatures, for
/// [`JwtVerifier::key`](super::JwtVerifier::key): an RSA, EC (P-256,
/// P-384) or Ed25519 key, read from PEM, DER, a JWK or a JWK set. (A shared
/// HMAC secret is given with
/// [`JwtVerifier::hmac_secret`](super::JwtVerifier::hmac_secret).)
///
/// A key serves the tokens of its [algorithm](Self::algorithm) (without
/// one, of every algorithm of its kind of key). A token whose header names
/// a `kid` is checked only with the keys of that [`kid`](Self::with_kid);
/// one naming none, with every key that serves its algorithm.
///
/// ```
/// use claude_code_agent_mcp::http_server::{JwtAlgorithm, JwtVerifier, VerificationKey};
///
/// let jwks = r#"{"keys":[{"kty":"EC","crv":"P-256","kid":"2024-1","use":"sig",
///     "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
///     "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}"#;
/// let pem = "-----BEGIN PUBLIC KEY-----
/// MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEf83OJ3D2xF1Bg8vub9tLe1gHMzV7
/// 6e8Tus9uPHvRVEXH8UTNG72bfocs3+257rn0s2ldbqkLJK2KRiMohYjlrQ==
/// -----END PUBLIC KEY-----";
/// let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")
///     .keys(VerificationKey::from_jwks(jwks)?)
///     .key(VerificationKey::from_pem(JwtAlgorithm::Es256, pem)?.with_kid("2025-1"));
/// # drop(verifier);
/// # Ok::<(), claude_code_agent_mcp::http_server::KeyError>(())
/// ```
#[derive(Clone)]
pub struct VerificationKey {
    pub(super) kid: Option<String>,
    pub(super) alg: Option<JwtAlgorithm>,
    pub(super) key: Arc<DecodingKey>,
}

impl VerificationKey {
    /// A public key in PEM for tokens of `alg`: for `RS*` and `PS*` an RSA
    /// key (`PUBLIC KEY` or `RSA PUBLIC KEY`), for `ES*` an EC key, for
    /// `EdDSA` an Ed25519 key (`PUBLIC KEY`); a `CERTIFICATE` holding such
    /// a key will do.
    pub fn from_pem(alg: JwtAlgorithm, pem: impl AsRef<[u8]>) -> Result<Self, KeyError> {
        let key = pem_key(public_family(alg)?, pem.as_ref())
            .map_err(|e| KeyError::caused(format!("not a PEM public key for {alg}"), e))?;
        Ok(Self::new(Some(alg), key))
    }

    /// A public key in DER for tokens of `alg`: a SubjectPublicKeyInfo (as
    /// `openssl pkey -pubin -outform DER` writes it, the body of a PEM
    /// `PUBLIC KEY`), or for RSA also a PKCS #1 `RSAPublicKey`.
    pub fn from_der(alg: JwtAlgorithm, der: impl AsRef<[u8]>) -> Result<Self, KeyError> {
        let (family, der) = (public_family(alg)?, der.as_ref());
        let mut key = pem_key(family, armor("PUBLIC KEY", der).as_bytes());
        if key.is_err() && family == AlgorithmFamily::Rsa && is_pkcs1(der) {
            key = pem_key(family, armor("RSA PUBLIC KEY", der).as_bytes());
        }
        let key =
            key.map_err(|e| KeyError::caused(format!("not a DER public key for {alg}"), e))?;
        Ok(Self::new(Some(alg), key))
    }

    /// One JWK (RFC 7517) as JSON: an RSA, EC or OKP (Ed25519) public key,
    /// with its `kid` and `alg` if it has them. A symmetric (`oct`) key, an
    /// encryption key (`"use": "enc"`) or one whose `alg` is no signature
    /// algorithm is refused.
    pub fn from_jwk(json: impl AsRef<[u8]>) -> Result<Self, KeyError> {
        let jwk: Jwk =
            serde_json::from_slice(json.as_ref()).map_err(|e| KeyError::caused("not a JWK", e))?;
        Self::of_jwk(&jwk)
    }

    /// The signature keys of a JWK set (RFC 7517 §5) as JSON, the document
    /// an authorization server serves at its `jwks_uri`. The keys
    /// [`from_jwk`](Self::from_jwk) would refuse (symmetric, encryption,
    /// unknown kinds) are left out; a document that is no JWK set is an
    /// error.
    pub fn from_jwks(json: impl AsRef<[u8]>) -> Result<Vec<Self>, KeyError> {
        #[derive(serde::Deserialize)]
        struct Set {
            keys: Vec<Value>,
        }
        let set: Set = serde_json::from_slice(json.as_ref())
            .map_err(|e| KeyError::caused("not a JWK set", e))?;
        Ok(set
            .keys
            .into_iter()
            .filter_map(|k| serde_json::from_value::<Jwk>(k).ok())
            .filter_map(|k| Self::of_jwk(&k).ok())
            .collect())
    }

    /// Serves only the tokens whose header names `kid` (and those naming
    /// none). Replaces the JWK's `kid`.
    #[must_use]
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// The `kid` of the tokens it serves, if it is limited to one.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The algorithm of the tokens it serves, if it is limited to one (a
    /// PEM or DER key always is; a JWK when it has an `alg`).
    pub fn algorithm(&self) -> Option<JwtAlgorithm> {
        self.alg
    }

    fn new(alg: Option<JwtAlgorithm>, key: DecodingKey) -> Self {
        Self {
            kid: None,
            alg,
            key: Arc::new(key),
        }
    }

    /// The signature key of a JWK.
    fn of_jwk(jwk: &Jwk) -> Result<Self, KeyError> {
        if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
            return Err(KeyError::new("not a signature key (its \"use\")"));
        }
        let alg = match jwk.common.key_algorithm {
            Some(alg) => {
                let name = alg.to_string();
                Some(JwtAlgorithm::named(&name).ok_or_else(|| {
                    KeyError::new(format!("its alg {name} is no signature algorithm"))
                })?)
            }
            None => None,
        };
        let key =
            DecodingKey::from_jwk(jwk).map_err(|e| KeyError::caused("not a public JWK", e))?;
        if key.family() == AlgorithmFamily::Hmac {
            return Err(KeyError::new(
                "a symmetric key: give an HMAC secret with JwtVerifier::hmac_secret",
            ));
        }
        if alg.is_some_and(|a| a.to_jwt().family() != key.family()) {
            return Err(KeyError::new("its alg is not for its kind of key"));
        }
        let mut key = Self::new(alg, key);
        key.kid = jwk.common.key_id.clone();
        Ok(key)
    }

    /// Whether it may have signed a token of `alg`.
    pub(super) fn fits(&self, alg: Algorithm) -> bool {
        self.key.family() == alg.family() && self.alg.is_none_or(|a| a.to_jwt() == alg)
    }
}

impl fmt::Debug for VerificationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerificationKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.alg)
            .field("family", &self.key.family())
            .finish()
    }
}

/// The family of `alg`, which must be one of public keys.
fn public_family(alg: JwtAlgorithm) -> Result<AlgorithmFamily, KeyError> {
    match alg.to_jwt().family() {
        AlgorithmFamily::Hmac => Err(KeyError::new(format!(
            "{alg} takes a shared secret, not a public key: give it with JwtVerifier::hmac_secret"
        ))),
        family => Ok(family),
    }
}

/// A public key of `family` from PEM.
fn pem_key(family: AlgorithmFamily, pem: &[u8]) -> jsonwebtoken::errors::Result<DecodingKey> {
    match family {
        AlgorithmFamily::Rsa => DecodingKey::from_rsa_pem(pem),
        AlgorithmFamily::Ec => DecodingKey::from_ec_pem(pem),
        AlgorithmFamily::Ed => DecodingKey::from_ed_pem(pem),
        // No PEM for a shared secret (`public_family` refuses it).
        AlgorithmFamily::Hmac => Err(jsonwebtoken::errors::ErrorKind::InvalidKeyFormat.into()),
    }
}

/// Whether `der` is shaped as a PKCS #1 `RSAPublicKey`: a SEQUENCE whose
/// first element is an INTEGER (a SubjectPublicKeyInfo's is a SEQUENCE).
/// `jsonwebtoken` takes any DER as such a key.
fn is_pkcs1(der: &[u8]) -> bool {
    let [0x30, length, rest @ ..] = der else {
        return false;
    };
    // A long form length: its number of bytes, then those bytes.
    let length_bytes = if length & 0x80 == 0 {
        0
    } else {
        usize::from(length & 0x7f)
    };
    rest.get(length_bytes) == Some(&0x02)
}

/// `der` as a PEM block labelled `label`.
fn armor(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        // Base64 is ASCII.
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}

type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Why a [`VerificationKey`] could not be made; what it could not read is
/// its [`source`](StdError::source), if any.
#[derive(Debug, thiserror::Error)]
#[error("unusable JWT verification key: {reason}")]
pub struct KeyError {
    reason: String,
    #[source]
    source: Option<BoxError>,
}

impl KeyError {
    fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            source: None,
        }
    }

    fn caused(reason: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self {
            reason: reason.into(),
            source: Some(source.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::time::{SystemTime, UNIX_EPOCH};

    use aws_lc_rs::encoding::{AsDer, PublicKeyX509Der};
    use aws_lc_rs::rsa::KeySize;
    use aws_lc_rs::signature::{
        ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair,
    };
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    use super::*;
    use crate::http_server::{JwtVerifier, TokenVerifier, VerifyError};

    const ISSUER: &str = "https://auth.example.com";
    const AUDIENCE: &str = "https://mcp.example.com/mcp";

    /// A key pair made now: what signs, and the public key in DER (both
    /// forms for RSA: SubjectPublicKeyInfo, then PKCS #1).
    struct Pair {
        alg: JwtAlgorithm,
        signing: EncodingKey,
        public_der: Vec<Vec<u8>>,
    }

    fn pairs() -> Vec<Pair> {
        let ec = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let ed = Ed25519KeyPair::generate().unwrap();
        let rsa = aws_lc_rs::rsa::KeyPair::generate(KeySize::Rsa2048).unwrap();
        let spki = |der: PublicKeyX509Der<'_>| der.as_ref().to_vec();
        vec![
            Pair {
                alg: JwtAlgorithm::Es256,
                signing: EncodingKey::from_ec_der(ec.to_pkcs8v1().unwrap().as_ref()),
                public_der: vec![spki(ec.public_key().as_der().unwrap())],
            },
            Pair {
                alg: JwtAlgorithm::EdDsa,
                signing: EncodingKey::from_ed_der(ed.to_pkcs8v1().unwrap().as_ref()),
                public_der: vec![spki(ed.public_key().as_der().unwrap())],
            },
            Pair {
                alg: JwtAlgorithm::Ps256,
                signing: EncodingKey::from_rsa_pem(
                    armor("PRIVATE KEY", rsa.as_der().unwrap().as_ref()).as_bytes(),
                )
                .unwrap(),
                public_der: vec![
                    spki(rsa.public_key().as_der().unwrap()),
                    rsa.public_key().as_ref().to_vec(),
                ],
            },
        ]
    }

    fn token(pair: &Pair, kid: Option<&str>) -> String {
        crate::jose::ensure_provider();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "u", "exp": now + 60});
        let mut header = Header::new(pair.alg.to_jwt());
        header.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(&header, &claims, &pair.signing).unwrap()
    }

    async fn verify(verifier: JwtVerifier, token: &str) -> Result<(), VerifyError> {
        verifier.verify(token).await.map(drop)
    }

    fn verifier() -> JwtVerifier {
        JwtVerifier::new(ISSUER, AUDIENCE)
    }

    #[test]
    fn every_algorithm_is_named_as_jsonwebtoken_names_it() {
        for alg in JwtAlgorithm::ALL {
            assert_eq!(alg.as_str().parse::<Algorithm>().unwrap(), alg.to_jwt());
            assert_eq!(JwtAlgorithm::named(alg.as_str()), Some(alg));
            assert_eq!(alg.to_string(), alg.as_str());
        }
    }

    /// Each kind of key, from DER (each form), PEM and JWK, verifies its
    /// tokens.
    #[tokio::test]
    async fn keys_verify_from_der_pem_and_jwk() {
        for pair in pairs() {
            let alg = pair.alg;
            for der in &pair.public_der {
                let key = VerificationKey::from_der(alg, der).unwrap();
                assert_eq!(key.algorithm(), Some(alg));
                verify(verifier().key(key), &token(&pair, None))
                    .await
                    .unwrap_or_else(|e| panic!("{alg} from DER: {e}"));
            }
            let pem = armor("PUBLIC KEY", &pair.public_der[0]);
            let key = VerificationKey::from_pem(alg, &pem).unwrap();
            verify(verifier().key(key), &token(&pair, None))
                .await
                .unwrap_or_else(|e| panic!("{alg} from PEM: {e}"));
            let mut jwk = Jwk::from_encoding_key(&pair.signing, alg.to_jwt()).unwrap();
            jwk.common.key_id = Some("k".into());
            let key = VerificationKey::from_jwk(serde_json::to_string(&jwk).unwrap()).unwrap();
            assert_eq!(key.kid(), Some("k"));
            verify(verifier().key(key), &token(&pair, Some("k")))
                .await
                .unwrap_or_else(|e| panic!("{alg} from a JWK: {e}"));
        }
    }

    /// A key serves only its algorithm, and only the tokens naming its kid
    /// (or none); the verifier's allow-list is kept.
    #[tokio::test]
    async fn a_key_serves_its_algorithm_and_kid() {
        let pairs = pairs();
        let ec = &pairs[0];
        let key = || VerificationKey::from_der(JwtAlgorithm::Es256, &ec.public_der[0]).unwrap();
        let es384 = VerificationKey::from_der(JwtAlgorithm::Es384, &ec.public_der[0]).unwrap();
        let cases = [
            (verifier().key(key()), None, true),
            (verifier().key(key().with_kid("a")), Some("a"), true),
            (verifier().key(key().with_kid("a")), None, true),
            (verifier().key(key().with_kid("a")), Some("b"), false),
            (verifier().key(key()), Some("a"), false),
            (verifier().key(es384), None, false),
            (
                verifier().key(key()).algorithms([JwtAlgorithm::Es384]),
                None,
                false,
            ),
            (
                verifier().key(key()).algorithms([JwtAlgorithm::Es256]),
                None,
                true,
            ),
        ];
        for (i, (verifier, kid, accepted)) in cases.into_iter().enumerate() {
            let result = verify(verifier, &token(ec, kid)).await;
            assert_eq!(result.is_ok(), accepted, "case {i}: {result:?}");
        }
    }

    #[test]
    fn unusable_keys_are_refused_with_their_cause() {
        let ec = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let der = ec.public_key().as_der().unwrap().as_ref().to_vec();
        let x = json!({"kty":"EC","crv":"P-256",
            "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
        let with = |extra: serde_json::Value| {
            let mut jwk = x.clone();
            jwk.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            jwk.to_string()
        };
        let refused = [
            (
                VerificationKey::from_pem(JwtAlgorithm::Hs256, "x").unwrap_err(),
                "hmac_secret",
                false,
            ),
            (
                VerificationKey::from_der(JwtAlgorithm::Hs256, &der).unwrap_err(),
                "hmac_secret",
                false,
            ),
            (
                VerificationKey::from_pem(JwtAlgorithm::Es256, "not PEM").unwrap_err(),
                "not a PEM public key for ES256",
                true,
            ),
            (
                VerificationKey::from_der(JwtAlgorithm::Rs256, &der).unwrap_err(),
                "not a DER public key for RS256",
                true,
            ),
            (
                VerificationKey::from_jwk("not JSON").unwrap_err(),
                "not a JWK",
                true,
            ),
            (
                VerificationKey::from_jwk(r#"{"kty":"unknown"}"#).unwrap_err(),
                "not a public JWK",
                true,
            ),
            (
                VerificationKey::from_jwk(r#"{"kty":"oct","k":"c2VjcmV0"}"#).unwrap_err(),
                "a symmetric key",
                false,
            ),
            (
                VerificationKey::from_jwk(with(json!({"use": "enc"}))).unwrap_err(),
                "not a signature key",
                false,
            ),
            (
                VerificationKey::from_jwk(with(json!({"alg": "RSA-OAEP"}))).unwrap_err(),
                "no signature algorithm",
                false,
            ),
            (
                VerificationKey::from_jwk(with(json!({"alg": "RS256"}))).unwrap_err(),
                "not for its kind of key",
                false,
            ),
            (
                VerificationKey::from_jwks(r#"{"key": []}"#).unwrap_err(),
                "not a JWK set",
                true,
            ),
        ];
        for (error, reason, caused) in refused {
            let text = error.to_string();
            assert!(text.contains(reason), "{text} (wanted {reason:?})");
            assert_eq!(error.source().is_some(), caused, "{text}");
        }
        let ok = VerificationKey::from_jwk(with(json!({"alg": "ES256", "kid": "k"}))).unwrap();
        assert_eq!(ok.algorithm(), Some(JwtAlgorithm::Es256));
        assert_eq!(
            format!("{ok:?}"),
            r#"VerificationKey { kid: Some("k"), algorithm: Some(Es256), family: Ec }"#
        );
    }

    /// A JWK set keeps the keys it can use and leaves out the others.
    #[test]
    fn a_jwk_set_keeps_its_signature_keys() {
        let ec = json!({"kty":"EC","crv":"P-256","kid":"ec",
            "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
        let mut enc = ec.clone();
        enc["use"] = json!("enc");
        let set = json!({"keys": [
            ec,
            enc,
            {"kty":"oct","k":"c2VjcmV0"},
            {"kty":"unknown"},
            "not even an object",
        ]});
        let keys = VerificationKey::from_jwks(set.to_string()).unwrap();
        let kids: Vec<_> = keys.iter().map(VerificationKey::kid).collect();
        assert_eq!(kids, [Some("ec")]);
        assert!(
            VerificationKey::from_jwks(r#"{"keys": []}"#)
                .unwrap()
                .is_empty()
        );
    }
}
