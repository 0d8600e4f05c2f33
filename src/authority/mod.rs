//! The authority evaluator: what vets a call after the rule engine (the carried set: the
//! config's rules, the agent's, and each delegation's narrowing) has allowed it.
//!
//! Selected once at start (`authority:` in the operator's config, [`crate::config::authority`]):
//! - `local` (the default): the carried set alone decides; nothing is done per call.
//! - `noop`: the rule engine decides a configured agent's or an anonymous call; a delegated call,
//!   which carries a set for an evaluator to hold it to, is refused — `noop` is never a fallback.
//! - `cedar`: the carried set first, then the operator's Cedar policy, which can only add a
//!   denial: it is asked only about calls the set allows (or asks), and a policy that cannot be
//!   evaluated for a call denies it.
//!
//! It sits at the one door ([`crate::gate::Guard`]'s Layer 1 decision), so every transport —
//! HTTP, stdio, the hook, `portcullis check` — is vetted alike, and a denial is an ordinary
//! typed deny decision: audited, rendered by the transport, never forwarded.

pub mod cedar;
pub mod context;
mod local;
pub mod readings;

use serde_json::Value;

use crate::call::ToolCall;
use crate::config::authority::Evaluator;
use crate::rules::kinds::ToolKinds;
use crate::rules::{Decision, Effect, Origin, Scope};
use cedar::{Asked, Cedar, Refusal};

/// The evaluator in force, built from config.
#[derive(Debug, Default)]
pub enum Authority {
    #[default]
    Local,
    Noop,
    Cedar(Box<Cedar>),
}

impl Authority {
    pub fn new(evaluator: &Evaluator) -> Authority {
        match evaluator {
            Evaluator::Local => Authority::Local,
            Evaluator::Noop => Authority::Noop,
            Evaluator::Cedar(p) => Authority::Cedar(Box::new(Cedar::new(p.clone()))),
        }
    }

    /// Whether a call's arguments must be parsed for it (only Cedar reads them).
    pub fn reads_args(&self) -> bool {
        matches!(self, Authority::Cedar(_))
    }

    /// The decision after the evaluator: `d` itself, or a denial. A denial stands untouched.
    pub fn vet(&self, d: Decision, kinds: &ToolKinds, call: &ToolCall, args: &Value) -> Decision {
        if d.effect == Effect::Deny {
            return d;
        }
        match self {
            Authority::Local => d,
            Authority::Noop => local::noop(d, call.agent.as_deref()),
            Authority::Cedar(c) => {
                let asked = Asked {
                    agent: call.agent.as_deref(),
                    upstream: &call.upstream,
                    qualified: &call.qualified,
                    args,
                };
                match c.vet(kinds, &asked) {
                    Ok(()) => d,
                    Err(refusal) => denial(refusal),
                }
            }
        }
    }
}

/// The deny decision for a Cedar refusal: its rule names the policy (`authority: no-prod`). The
/// file's path is the operator's business, not the agent's: it is not in the reason.
fn denial(refusal: Refusal) -> Decision {
    let names = |ids: Vec<String>| ids.join(", ");
    let (rule, reason) = match refusal {
        Refusal::Forbidden(ids) => {
            let ids = names(ids.iter().map(|i| i.to_string()).collect());
            (format!("authority: {ids}"), format!("the authority policy {ids} forbids it"))
        }
        Refusal::Failed(failed) => {
            let ids = names(failed.iter().map(|(i, _)| i.to_string()).collect());
            let why: Vec<String> = failed.into_iter().map(|(_, e)| e).collect();
            (
                format!("authority: {ids}"),
                format!(
                    "the authority policy {ids} cannot be evaluated for this call ({}), so it \
                     is refused",
                    why.join("; ")
                ),
            )
        }
        Refusal::Unjudged(u) => ("authority".to_owned(), u.to_string()),
        Refusal::Unverified => (
            "authority".to_owned(),
            "the authority policy decides on who is calling, and this caller did not authenticate".to_owned(),
        ),
    };
    Decision {
        effect: Effect::Deny,
        rule,
        scope: Scope::Config,
        origin: Origin::Configured,
        reason,
        prefilter: None,
    }
}

#[cfg(test)]
mod tests;
