//! `agents:`, `auth:` and `delegation:`: who may call, how each proves it, and the policy each
//! decides under (the config's, with the agent's own layered on).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::Uri;
use serde::Deserialize;

use super::permissions::{self, RawPermissions};
use super::raw::Scalar;
use super::Problems;
use crate::rules::{Engine, Layered, Posture, Profile, Scope};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    pub token_env: Option<String>,
    pub profile: Option<String>,
    pub posture: Option<String>,
    #[serde(default)]
    pub permissions: RawPermissions,
    /// Egress entries and sinks layered on the config's for this agent (see `config::egress`).
    pub egress: Option<super::egress::Raw>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAuth {
    pub require: Option<bool>,
    pub jwt: Option<RawJwt>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJwt {
    pub issuer: String,
    pub audience: String,
    pub jwks: String,
    pub agent_claim: Option<String>,
    pub refresh: Option<Scalar>,
    pub algorithms: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDelegation {
    pub max_depth: Option<u64>,
    pub max_ttl: Option<Scalar>,
}

/// Who may call and as whom. The default (no `agents:`, no `auth:`) is anonymous: every caller
/// decides under the config's policy.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    pub agents: BTreeMap<Arc<str>, AgentSpec>,
    /// Refuse agent traffic that does not authenticate (401). Defaults to on when any agent or a
    /// JWT issuer is configured: an anonymous caller would otherwise decide under the config's
    /// policy, wider than a `readonly` agent's.
    pub require: bool,
    pub jwt: Option<JwtSettings>,
    pub delegation: DelegationSettings,
}

impl Identity {
    /// Whether the proxy authenticates callers at all.
    pub fn enabled(&self) -> bool {
        !self.agents.is_empty() || self.jwt.is_some()
    }
}

/// One configured agent.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    pub name: Arc<str>,
    /// The env var holding its bearer token; `None` for an agent named by a JWT claim only.
    pub token_env: Option<String>,
    pub profile: Option<Profile>,
    pub posture: Option<Posture>,
    /// The config's engine with this agent's layer on it.
    pub engine: Engine,
}

/// Where the JWT signing keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSource {
    File(PathBuf),
    /// Fetched at start and every `refresh`; never on a call's path.
    Url(Uri),
}

#[derive(Debug, Clone)]
pub struct JwtSettings {
    pub issuer: String,
    pub audience: String,
    pub jwks: JwksSource,
    /// The claim that names the agent (a key of `agents:`).
    pub agent_claim: String,
    pub refresh: Duration,
    pub algorithms: Vec<jsonwebtoken::Algorithm>,
}

impl PartialEq for JwtSettings {
    fn eq(&self, o: &Self) -> bool {
        (&self.issuer, &self.audience, &self.jwks, &self.agent_claim, self.refresh, &self.algorithms)
            == (&o.issuer, &o.audience, &o.jwks, &o.agent_claim, o.refresh, &o.algorithms)
    }
}

#[derive(Debug, Clone, Copy)]
pub struct DelegationSettings {
    /// How many delegations deep a chain may go (a configured agent's child is depth 1).
    pub max_depth: u32,
    /// The longest a delegated credential lives (and never beyond its parent's).
    pub max_ttl: Duration,
}

impl Default for DelegationSettings {
    fn default() -> Self {
        DelegationSettings { max_depth: 2, max_ttl: Duration::from_secs(3600) }
    }
}

/// The algorithms accepted when `auth.jwt.algorithms` is not given: asymmetric only (a shared
/// HMAC secret would let anyone holding the JWKS mint tokens), and never `none`.
const DEFAULT_ALGORITHMS: &[&str] = &["RS256", "ES256", "EdDSA"];

fn env_name_ok(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Agent names are metric label values and appear in delegated names (`dev>child`).
fn agent_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

pub(crate) fn compile(
    agents: BTreeMap<String, serde_json::Value>,
    auth: RawAuth,
    delegation: RawDelegation,
    base: &Engine,
    p: &mut Problems,
) -> Identity {
    let mut out = BTreeMap::new();
    let root = base.jail_root().map(|r| r.display().to_string());
    for (name, v) in agents {
        let path = format!("agents.{name}");
        if !agent_name_ok(&name) {
            p.add(&path, "agent names use letters, digits, '-', '_' and '.' (at most 64)");
        }
        let raw: RawAgent = match serde_json::from_value(v) {
            Ok(r) => r,
            Err(e) => {
                p.add(&path, e.to_string());
                continue;
            }
        };
        if let Some(env) = &raw.token_env {
            if !env_name_ok(env) {
                p.add(format!("{path}.token_env"), format!("{env:?} is not an environment variable name"));
            }
        } else if auth.jwt.is_none() {
            p.add(
                &path,
                "no way to authenticate: give token_env, or configure auth.jwt to name it by a claim",
            );
        }
        let profile = raw.profile.as_deref().and_then(|s| {
            Profile::parse(s).or_else(|| {
                p.add(
                    format!("{path}.profile"),
                    format!("{s:?} is not a profile (readonly, standard, privileged)"),
                );
                None
            })
        });
        let posture = raw.posture.as_deref().and_then(|s| {
            Posture::parse(s).or_else(|| {
                p.add(
                    format!("{path}.posture"),
                    format!("{s:?} is not a posture (strict, trusted, auto, yolo)"),
                );
                None
            })
        });
        let (rules, examples) = permissions::rules(
            vec![(Scope::Agent, format!("{path}."), raw.permissions)],
            base.kinds(),
            root.as_deref(),
            p,
        );
        let mut engine = base.for_agent(&Layered { rules, posture, profile });
        if let Some(e) = raw.egress {
            engine = engine.with_egress(super::egress::compile(
                e,
                &format!("{path}.egress"),
                Scope::Agent,
                None,
                p,
            ));
        }
        permissions::verify_examples(&engine, examples, p);
        let name: Arc<str> = name.into();
        out.insert(name.clone(), AgentSpec { name, token_env: raw.token_env, profile, posture, engine });
    }
    let jwt = auth.jwt.and_then(|j| jwt(j, p));
    let require = auth.require.unwrap_or(!out.is_empty() || jwt.is_some());
    if require && out.is_empty() {
        p.add("auth.require", "no agent is configured, so nobody could call: add agents: (each with token_env, or named by auth.jwt's claim)");
    }
    let d = DelegationSettings::default();
    let max_depth = match delegation.max_depth {
        None => d.max_depth,
        Some(n) if n <= 8 => n as u32,
        Some(n) => {
            p.add(
                "delegation.max_depth",
                format!("{n} is deeper than 8; chains that long cannot be audited"),
            );
            d.max_depth
        }
    };
    let max_ttl = p.duration("delegation.max_ttl", delegation.max_ttl, d.max_ttl);
    if max_ttl.is_zero() {
        p.add("delegation.max_ttl", "must be longer than zero");
    }
    Identity { agents: out, require, jwt, delegation: DelegationSettings { max_depth, max_ttl } }
}

fn jwt(j: RawJwt, p: &mut Problems) -> Option<JwtSettings> {
    let before = p.problems.len();
    for (key, v) in [("issuer", &j.issuer), ("audience", &j.audience), ("jwks", &j.jwks)] {
        if v.trim().is_empty() {
            p.add(format!("auth.jwt.{key}"), "must not be empty");
        }
    }
    let jwks = if j.jwks.starts_with("http://") || j.jwks.starts_with("https://") {
        match j.jwks.parse::<Uri>() {
            Ok(u) if u.authority().is_some() => Some(JwksSource::Url(u)),
            _ => {
                p.add("auth.jwt.jwks", format!("{:?} is not a URL", j.jwks));
                None
            }
        }
    } else {
        Some(JwksSource::File(PathBuf::from(&j.jwks)))
    };
    let refresh = p.duration("auth.jwt.refresh", j.refresh, Duration::from_secs(600));
    if refresh < Duration::from_secs(1) {
        p.add("auth.jwt.refresh", "must be at least 1s");
    }
    let mut algorithms = Vec::new();
    let names = j.algorithms.unwrap_or_else(|| DEFAULT_ALGORITHMS.iter().map(|s| s.to_string()).collect());
    for a in names {
        match a.parse::<jsonwebtoken::Algorithm>() {
            Ok(
                jsonwebtoken::Algorithm::HS256
                | jsonwebtoken::Algorithm::HS384
                | jsonwebtoken::Algorithm::HS512,
            ) => p.add(
                "auth.jwt.algorithms",
                format!("{a}: shared-secret algorithms are not accepted (anyone able to verify could mint)"),
            ),
            Ok(alg) => algorithms.push(alg),
            Err(_) => {
                p.add("auth.jwt.algorithms", format!("{a:?} is not a JWS algorithm (RS256, ES256, EdDSA, …)"))
            }
        }
    }
    if algorithms.is_empty() && p.problems.len() == before {
        p.add("auth.jwt.algorithms", "at least one algorithm");
    }
    Some(JwtSettings {
        issuer: j.issuer,
        audience: j.audience,
        jwks: jwks?,
        agent_claim: j.agent_claim.unwrap_or_else(|| "sub".into()),
        refresh,
        algorithms,
    })
}
