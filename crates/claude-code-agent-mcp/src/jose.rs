//! `jsonwebtoken`'s crypto provider, for the OAuth client's assertions and
//! DPoP proofs and the server's JWT verifier. The crate picks its provider
//! from its features, and finds none when a program has both of its
//! backends on (`aws_lc_rs`, ours, and `rust_crypto`, someone else's):
//! it would panic at the first JWT. Then aws-lc-rs, the one this crate
//! chose, is installed as the process's default.

pub(crate) fn ensure_provider() {
    use jsonwebtoken::crypto::{CryptoProvider, aws_lc};
    if CryptoProvider::try_get_default().is_none() {
        // Another thread may have installed one meanwhile: either will do.
        let _ = aws_lc::DEFAULT_PROVIDER.install_default();
    }
}
