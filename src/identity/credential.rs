//! What an agent's authority rests on: the credential it presented, how long that credential
//! lives, and where it came from — so that what the agent delegates never outlives it.
//!
//! A delegated credential carries its root's [`Provenance`] down the chain; the door checks it
//! against the current [`Identities`](super::Identities) on every lookup (a comparison in
//! memory, no network): a static token that a reload changed or removed, or a JWT key that left
//! the identity provider's key set, takes every delegation minted under it with it.

use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// The credential behind an [`Agent`](super::Agent).
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// When it stops being accepted: a JWT's `exp`, a delegated credential's expiry. `None`: a
    /// static token (it lives until a reload changes it), or no credential at all.
    pub expires: Option<SystemTime>,
    pub provenance: Provenance,
}

/// Where a credential came from. Only fingerprints: no token, digest or key material.
#[derive(Clone, PartialEq, Eq)]
pub enum Provenance {
    /// No credential was presented: a command chose the agent's policy (`check --agent`,
    /// `wrap --agent`, the hook). Nothing vouches for what it would delegate.
    Chosen,
    /// A configured agent's static token, by a fingerprint keyed with a per-process secret (so
    /// it says nothing about the token outside this process, not even to a dictionary).
    Token([u8; 16]),
    /// A JWT: its issuer and the print of the key that verified it (see [`key_print`]).
    Jwt { issuer: Arc<str>, key: [u8; 32] },
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("expires", &self.expires)
            .field("provenance", &self.provenance)
            .finish()
    }
}

impl std::fmt::Debug for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Provenance::Chosen => f.write_str("Chosen"),
            Provenance::Token(_) => f.write_str("Token(…)"),
            Provenance::Jwt { issuer, .. } => write!(f, "Jwt({issuer})"),
        }
    }
}

impl Credential {
    /// No credential: the agent was chosen, not proved.
    pub fn chosen() -> Credential {
        Credential { expires: None, provenance: Provenance::Chosen }
    }
}

/// The per-process secret static-token fingerprints are keyed with.
fn secret() -> &'static [u8; 32] {
    static SECRET: OnceLock<[u8; 32]> = OnceLock::new();
    SECRET.get_or_init(|| {
        let mut b = [0u8; 32];
        // Without randomness the fingerprint is still a digest of a digest: never the token.
        let _ = getrandom::fill(&mut b);
        b
    })
}

/// The fingerprint of a static token's SHA-256 digest (computed once, when tokens are read).
pub fn token_print(digest: &[u8; 32]) -> [u8; 16] {
    let mut h = Sha256::new();
    h.update(secret());
    h.update(digest);
    let d: [u8; 32] = h.finalize().into();
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

/// The print of a JWK: its `kid` and its public parameters. The same key published again at a
/// refresh has the same print; a key the provider replaced under the same `kid` does not.
pub fn key_print(kid: Option<&str>, public: &impl serde::Serialize) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(kid.unwrap_or("").as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(public).unwrap_or_default());
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_print_is_stable_in_a_process_and_is_not_the_digest() {
        let d = [7u8; 32];
        assert_eq!(token_print(&d), token_print(&d));
        assert_ne!(&token_print(&d)[..], &d[..16]);
        assert_ne!(token_print(&d), token_print(&[8u8; 32]));
    }

    #[test]
    fn debug_shows_no_fingerprint() {
        let c = Credential { expires: None, provenance: Provenance::Token([0xab; 16]) };
        assert!(!format!("{c:?}").contains("171"), "{c:?}");
    }

    #[test]
    fn a_key_print_changes_with_the_kid_or_the_key() {
        let a = key_print(Some("k1"), &serde_json::json!({"n": "1"}));
        assert_eq!(a, key_print(Some("k1"), &serde_json::json!({"n": "1"})));
        assert_ne!(a, key_print(Some("k2"), &serde_json::json!({"n": "1"})));
        assert_ne!(a, key_print(Some("k1"), &serde_json::json!({"n": "2"})));
    }
}
