//! Who is calling: agents authenticate to the proxy with a static bearer token or a JWT, and
//! every decision, audit line, approval and waiver carries the [`Agent`].
//!
//! The credential the proxy checks is the proxy's, never an upstream's: it is taken out of the
//! request once checked (see [`crate::proxy::authenticate`]), so it never reaches a tool server
//! or the checker. Without `agents:` or `auth.jwt` nobody authenticates and every caller decides
//! under the config's policy (the embedded default).

pub mod credential;
pub mod delegation;
pub mod jwt;
mod seen;
pub mod tokens;

#[cfg(test)]
mod cost_tests;

use std::collections::HashMap;
use std::sync::Arc;

use crate::config::Identity;
pub use credential::{Credential, Provenance};

/// An authenticated caller. Two agents are the same agent when their names and chains are: the
/// credential each presented is not part of who it is (a renewed JWT is the same agent).
#[derive(Debug, Clone)]
pub struct Agent {
    /// The configured agent whose policy applies: for a delegated agent, the root of its chain.
    /// From config, so bounded: metrics may use it as a label.
    pub name: Arc<str>,
    /// How logs, approvals and sessions name it: the configured name, or `dev>reviewer` for one
    /// that `dev` delegated to.
    pub id: Arc<str>,
    /// Who delegated to it, nearest first (empty for a configured agent).
    pub delegated_by: Vec<Arc<str>>,
    /// The credential it presented: its expiry and provenance bound what it may delegate.
    pub credential: Credential,
}

impl PartialEq for Agent {
    fn eq(&self, o: &Agent) -> bool {
        self.name == o.name && self.id == o.id && self.delegated_by == o.delegated_by
    }
}

impl Eq for Agent {}

impl std::hash::Hash for Agent {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (&self.name, &self.id, &self.delegated_by).hash(h);
    }
}

impl Agent {
    /// A configured agent, acting on its own behalf, chosen rather than proved (no credential).
    pub fn configured(name: Arc<str>) -> Agent {
        Agent::authenticated(name, Credential::chosen())
    }

    /// A configured agent that proved who it is with `credential`.
    pub fn authenticated(name: Arc<str>, credential: Credential) -> Agent {
        Agent { id: name.clone(), name, delegated_by: Vec::new(), credential }
    }

    /// The configured agent called `name`, for the commands that act as one without a
    /// credential (`check --agent`, `wrap --agent`): they choose a policy to decide under, as
    /// whoever runs them may.
    pub fn named(identity: &Identity, name: &str) -> Result<Agent, UnknownAgent> {
        match identity.agents.get_key_value(name) {
            Some((name, _)) => Ok(Agent::configured(name.clone())),
            None => Err(UnknownAgent {
                name: name.to_owned(),
                known: identity.agents.keys().map(|k| k.to_string()).collect(),
            }),
        }
    }
}

/// `--agent` named no configured agent.
#[derive(Debug, thiserror::Error)]
#[error("no agent {name:?} in the config (agents: {})", if known.is_empty() { "none".to_owned() } else { known.join(", ") })]
pub struct UnknownAgent {
    pub name: String,
    pub known: Vec<String>,
}

/// Why a request's credential was not accepted. The texts are fixed: nothing the caller sent is
/// echoed back or logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// No credential, where one is required.
    Missing,
    /// A credential that does not prove who it claims to be.
    Invalid(&'static str),
    /// The JWT signing keys cannot be had (the identity provider is down): refused, never waved
    /// through.
    KeysUnavailable(String),
}

impl AuthError {
    pub fn describe(&self) -> String {
        match self {
            AuthError::Missing => "this proxy requires an agent credential (Authorization: Bearer …)".into(),
            AuthError::Invalid(why) => format!("the agent credential was not accepted: {why}"),
            AuthError::KeysUnavailable(why) => {
                format!("agent tokens cannot be checked now: the identity provider's keys are unavailable ({why})")
            }
        }
    }
}

/// A configured identity that cannot be put to use.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("agent {agent}: the environment variable {var} (its token_env) is unset or empty")]
    TokenUnset { agent: String, var: String },
    #[error("agent {agent}: the token in {var} is shorter than 16 characters; use a random one (e.g. openssl rand -hex 32)")]
    TokenWeak { agent: String, var: String },
    #[error("agent {agent}: the token in {var} starts with pcd_, which marks delegated credentials; choose another")]
    TokenReserved { agent: String, var: String },
    #[error("agents {a} and {b} have the same token, so a call could not say which one it is")]
    TokenShared { a: String, b: String },
    #[error("auth.jwt.jwks: {0}")]
    Jwks(String),
}

/// The credentials the proxy accepts, built from config (and rebuilt on reload).
#[derive(Debug, Default)]
pub struct Identities {
    tokens: tokens::Tokens,
    jwt: Option<Arc<jwt::Verifier>>,
    /// Configured agent names, to name a JWT's agent with the config's own `Arc`.
    names: HashMap<Arc<str>, ()>,
    require: bool,
}

impl Identities {
    /// Nobody authenticates.
    pub fn anonymous() -> Identities {
        Identities::default()
    }

    /// Reads every agent's token from the environment and sets up JWT checking, keeping
    /// `previous`'s key set (and its refresher) when the JWT settings are unchanged. Must run on
    /// a tokio runtime when a JWKS is configured (its refresher is a task).
    pub fn build(identity: &Identity, previous: Option<&Identities>) -> Result<Identities, IdentityError> {
        let tokens = tokens::Tokens::read(identity.agents.values(), |v| std::env::var(v).ok())?;
        let jwt = match &identity.jwt {
            None => None,
            Some(settings) => {
                match previous.and_then(|p| p.jwt.as_ref()).filter(|v| v.settings() == settings) {
                    Some(same) => Some(same.clone()),
                    None => {
                        let v = jwt::Verifier::new(settings.clone()).map_err(IdentityError::Jwks)?;
                        v.spawn_refresher();
                        Some(v)
                    }
                }
            }
        };
        Ok(Identities {
            tokens,
            jwt,
            names: identity.agents.keys().map(|k| (k.clone(), ())).collect(),
            require: identity.require,
        })
    }

    /// Whether callers authenticate at all.
    pub fn enabled(&self) -> bool {
        !self.names.is_empty() || self.jwt.is_some()
    }

    /// Whether a caller without a credential is refused.
    pub fn required(&self) -> bool {
        self.require
    }

    /// The JWT issuer, which the proxy's protected-resource metadata names as its authorization
    /// server.
    pub fn issuer(&self) -> Option<&str> {
        self.jwt.as_ref().map(|j| j.settings().issuer.as_str())
    }

    /// Whether the JWT keys are loaded (always true without JWTs): `/readyz` waits for them.
    pub fn ready(&self) -> bool {
        self.jwt.as_ref().is_none_or(|j| j.ready())
    }

    /// What `/status` shows: the configured agents, and whether the JWT keys are loaded (and
    /// why not). No credential, digest or key material.
    pub fn status(&self) -> serde_json::Value {
        let mut names: Vec<&str> = self.names.keys().map(|k| &**k).collect();
        names.sort_unstable();
        let mut v = serde_json::json!({ "agents": names, "require": self.require });
        if let Some(j) = &self.jwt {
            v["jwt"] = serde_json::json!({
                "issuer": j.settings().issuer,
                "keys_loaded": j.ready(),
                "last_error": j.last_error(),
            });
        }
        v
    }

    /// The agent a bearer token stands for: a delegated token (`pcd_…`) is looked up in
    /// `delegations` and accepted only while the configured agent at the root of its chain still
    /// is, and while the credential that root minted it under still vouches for it; any other
    /// goes to [`Identities::authenticate`].
    pub fn authenticate_with(
        &self,
        token: &str,
        delegations: &delegation::Delegations,
    ) -> Result<Agent, AuthError> {
        if !token.starts_with(delegation::TOKEN_PREFIX) {
            return self.authenticate(token);
        }
        let agent = delegations.authenticate(token, std::time::SystemTime::now())?;
        if !self.names.contains_key(&agent.name) {
            return Err(AuthError::Invalid(
                "the agent that delegated this credential is no longer configured",
            ));
        }
        match self.vouches(&agent.credential.provenance, &agent.name) {
            Vouch::Yes => Ok(agent),
            Vouch::No => {
                // Dead for good, even if the key or token came back: drop the grants now.
                delegations.withdraw(&agent.credential.provenance);
                Err(AuthError::Invalid(
                    "the credential this one was delegated under has been withdrawn (a rotated token or signing key)",
                ))
            }
            // A verifier a reload just made has not loaded its keys: refused, not withdrawn.
            Vouch::Unknown => Err(AuthError::KeysUnavailable(
                self.jwt.as_ref().and_then(|j| j.last_error()).unwrap_or_default(),
            )),
        }
    }

    /// Whether a credential of `root` with this provenance would still be accepted: its static
    /// token is still `root`'s, or its JWT signing key is still in the current key set of the
    /// same issuer. In memory: a comparison per configured token or published key.
    pub fn vouches(&self, provenance: &Provenance, root: &str) -> Vouch {
        let yes = |b: bool| if b { Vouch::Yes } else { Vouch::No };
        match provenance {
            Provenance::Chosen => Vouch::No,
            Provenance::Token(print) => yes(self.tokens.holds(print, root)),
            Provenance::Jwt { issuer, key } => match &self.jwt {
                Some(j) if *j.settings().issuer == **issuer && !j.ready() => Vouch::Unknown,
                Some(j) => yes(*j.settings().issuer == **issuer && j.holds(key)),
                None => Vouch::No,
            },
        }
    }

    /// The configured agent a bearer token belongs to. A static token is tried first (cheap, no
    /// parsing); a JWT-shaped token then goes to the verifier.
    pub fn authenticate(&self, token: &str) -> Result<Agent, AuthError> {
        if token.len() > jwt::MAX_TOKEN {
            return Err(AuthError::Invalid("the token is too large"));
        }
        if let Some((name, print)) = self.tokens.find(token) {
            let credential = Credential { expires: None, provenance: Provenance::Token(print) };
            return Ok(Agent::authenticated(name, credential));
        }
        let Some(verifier) = &self.jwt else {
            return Err(AuthError::Invalid("no agent has this token"));
        };
        let v = verifier.verify(token)?;
        match self.names.get_key_value(v.agent.as_str()) {
            Some((name, ())) => {
                let credential = Credential {
                    // An `exp` past what the clock can hold is no expiry (never a panic).
                    expires: std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(v.exp)),
                    provenance: Provenance::Jwt { issuer: verifier.issuer(), key: v.key },
                };
                Ok(Agent::authenticated(name.clone(), credential))
            }
            None => Err(AuthError::Invalid("the token names an agent that is not configured")),
        }
    }
}

/// Whether the credential a delegation was minted under still stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vouch {
    Yes,
    /// Rotated, removed, or its key dropped: what was minted under it dies.
    No,
    /// The signing keys are not loaded yet: it cannot be told now.
    Unknown,
}

/// The bearer token in an `Authorization` or `Proxy-Authorization` value (`Bearer` in any case).
pub fn bearer(value: &http::HeaderValue) -> Option<&str> {
    let v = value.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}
