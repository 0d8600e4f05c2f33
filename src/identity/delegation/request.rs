//! A minting request (`POST /delegations`) as sent, read strictly, and its rules compiled as an
//! agent layer; why a credential was not minted.

use serde::Deserialize;
use serde_json::Value;

use super::MAX_RULES;
use crate::config::permissions::{self, RawPermissions};
use crate::config::Problems;
use crate::rules::kinds::ToolKinds;
use crate::rules::Scope;

/// The fields a minting request may carry.
const FIELDS: [&str; 6] = ["name", "profile", "deny", "ask", "upstreams", "ttl"];

/// A minting request, as sent (`POST /delegations`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MintRequest {
    /// The child's label: it is known as `{parent}>{name}`.
    pub name: Option<String>,
    pub profile: Option<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    /// The upstreams the child may call (within the parent's); absent: the parent's.
    pub upstreams: Option<Vec<String>>,
    /// How long the credential lives (`15m`); absent: as long as allowed.
    pub ttl: Option<String>,
}

impl MintRequest {
    /// Parses a body strictly: unknown fields are refused by name, and `allow` with a reason.
    pub fn parse(body: &[u8]) -> Result<MintRequest, MintError> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| MintError::BadRequest(format!("the body is not JSON: {e}")))?;
        let Some(obj) = v.as_object() else {
            return Err(MintError::BadRequest("the body must be a JSON object".into()));
        };
        if obj.contains_key("allow") {
            return Err(MintError::Forbidden(
                "a delegation can only narrow its parent's authority: `allow` is not accepted \
                 (narrow with deny, ask, profile, upstreams)"
                    .into(),
            ));
        }
        let unknown: Vec<&str> = obj.keys().map(String::as_str).filter(|k| !FIELDS.contains(k)).collect();
        if !unknown.is_empty() {
            return Err(MintError::BadRequest(format!(
                "unknown field(s): {}; a delegation takes {}",
                unknown.join(", "),
                FIELDS.join(", ")
            )));
        }
        serde_json::from_value(v).map_err(|e| MintError::BadRequest(e.to_string()))
    }
}

/// Why a credential was not minted, or a grant not revoked. Each says whose fault it is, which
/// picks the HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MintError {
    /// The request is malformed (400).
    #[error("{0}")]
    BadRequest(String),
    /// The request asks for more than the parent holds, or more than the limits allow (403).
    #[error("{0}")]
    Forbidden(String),
    /// Another live delegation is already known by this name (409).
    #[error("{0}")]
    Conflict(String),
    /// The store is full (429): revoke some, or wait for them to expire.
    #[error("{0}")]
    Full(String),
    /// The delegating credential itself was revoked or expired meanwhile (401).
    #[error("the delegating credential was revoked or has expired")]
    ParentGone,
    /// No such grant among those the caller delegated, directly or not (404).
    #[error("no delegation {0} granted by you or by an agent you delegated to")]
    NotFound(String),
    /// The system's random source failed (500).
    #[error("no randomness available to mint a token")]
    Random,
}

/// Compiles the deny and ask rules of a request as an agent layer; every rule that does not
/// parse is named.
pub(super) fn compile_rules(
    deny: Vec<String>,
    ask: Vec<String>,
    kinds: &ToolKinds,
) -> Result<Vec<crate::rules::Rule>, MintError> {
    if deny.len() + ask.len() > MAX_RULES {
        return Err(MintError::BadRequest(format!("at most {MAX_RULES} rules")));
    }
    let raw = RawPermissions {
        allow: Vec::new(),
        ask: ask.into_iter().map(Value::String).collect(),
        deny: deny.into_iter().map(Value::String).collect(),
        subagent: None,
    };
    let mut p = Problems::default();
    let (rules, _) = permissions::rules(vec![(Scope::Agent, String::new(), raw)], kinds, None, &mut p);
    if p.problems.is_empty() {
        return Ok(rules);
    }
    let each: Vec<String> = p
        .problems
        .iter()
        .map(|x| format!("{}: {}", x.path.trim_start_matches("permissions."), x.message))
        .collect();
    Err(MintError::BadRequest(each.join("; ")))
}
