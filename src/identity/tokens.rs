//! Static bearer tokens, one per agent, read from the environment at start (and reload).
//!
//! Only SHA-256 digests are kept. A presented token is digested and compared against every
//! agent's digest in constant time, with no early exit, so neither the comparison nor the loop
//! says how close a guess came.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::IdentityError;
use crate::config::agents::AgentSpec;

/// The agents that authenticate with a static token.
#[derive(Default)]
pub struct Tokens {
    digests: Vec<([u8; 32], Arc<str>)>,
    /// Each token's fingerprint ([`super::credential::token_print`]), in the same order: what a
    /// delegation minted under the token remembers it by.
    prints: Vec<[u8; 16]>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.digests.iter().map(|(_, n)| &**n).collect();
        f.debug_struct("Tokens").field("agents", &names).finish_non_exhaustive()
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Tokens {
    /// Reads each agent's `token_env` through `env`. A missing or empty variable, or two agents
    /// sharing a token, is an error: either would make an agent unreachable or ambiguous.
    pub fn read<'a>(
        agents: impl IntoIterator<Item = &'a AgentSpec>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Tokens, IdentityError> {
        let mut digests: Vec<([u8; 32], Arc<str>)> = Vec::new();
        for a in agents {
            let Some(var) = &a.token_env else { continue };
            let token = env(var)
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(|| IdentityError::TokenUnset { agent: a.name.to_string(), var: var.clone() })?;
            if token.starts_with(super::delegation::TOKEN_PREFIX) {
                return Err(IdentityError::TokenReserved { agent: a.name.to_string(), var: var.clone() });
            }
            if token.len() < 16 {
                return Err(IdentityError::TokenWeak { agent: a.name.to_string(), var: var.clone() });
            }
            let d = digest(&token);
            if let Some((_, other)) = digests.iter().find(|(o, _)| bool::from(o.ct_eq(&d))) {
                return Err(IdentityError::TokenShared { a: other.to_string(), b: a.name.to_string() });
            }
            digests.push((d, a.name.clone()));
        }
        let prints = digests.iter().map(|(d, _)| super::credential::token_print(d)).collect();
        Ok(Tokens { digests, prints })
    }

    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// The agent whose token this is, and the token's fingerprint.
    /// The token's digest is remembered per worker thread once accepted (`identity::seen`);
    /// every configured digest is compared on every call.
    pub fn find(&self, token: &str) -> Option<(Arc<str>, [u8; 16])> {
        let (d, remembered) = super::seen::digest(token);
        let mut found = None;
        for ((candidate, name), print) in self.digests.iter().zip(&self.prints) {
            if super::seen::same(candidate, &d) {
                found = Some((name.clone(), *print));
            }
        }
        if found.is_some() && !remembered {
            super::seen::keep(token, &d);
        }
        found
    }

    /// Whether `agent`'s token is still the one with this fingerprint (a reload that changed or
    /// removed it says no).
    pub fn holds(&self, print: &[u8; 16], agent: &str) -> bool {
        self.prints.iter().zip(&self.digests).any(|(p, (_, name))| p == print && &**name == agent)
    }
}
