//! The tool lists of the [`Guard`]: what a `tools/list` answer shows each caller. The engine says
//! which tools are denied to the caller by name; [`crate::tooldefs::visible`] cuts the list and
//! keeps the answers for as long as this policy lives.

use std::collections::HashSet;
use std::sync::Arc;

use super::Guard;
use crate::config::Policy;
use crate::identity::Agent;
use crate::tooldefs::visible;

/// Whose lists may differ from the upstream's under one policy, worked out when it is loaded:
/// asked on every request's way back, so it must cost no scan of the rules.
#[derive(Debug, Default)]
pub(super) struct Filtering {
    /// An anonymous caller's (the config's engine).
    anonymous: bool,
    /// The configured agents whose may.
    agents: HashSet<Arc<str>>,
}

impl Filtering {
    pub(super) fn of(policy: &Policy) -> Filtering {
        let described = |agent: Option<&str>| policy.descriptions.apply_to(agent);
        Filtering {
            anonymous: policy.engine.can_deny_by_name() || described(None),
            agents: (policy.identity.agents.iter())
                .filter(|(name, spec)| spec.engine.can_deny_by_name() || described(Some(name)))
                .map(|(name, _)| name.clone())
                .collect(),
        }
    }
}

pub use crate::gate::post::Lister;

impl Guard {
    /// True when a `tools/list` answer may show `agent` other than the upstream listed: some tool
    /// may be denied to it by name, or described in the operator's words (`tool_descriptions:`).
    /// A delegated agent's grant may narrow anything, so its lists are always looked at. When
    /// false, lists go as the upstream sent them.
    pub fn lists_filtered(&self, agent: Option<&Agent>) -> bool {
        match agent {
            None => self.listed.anonymous,
            Some(a) if !a.delegated_by.is_empty() => true,
            // An agent the policy no longer knows is shown nothing.
            Some(a) => !self.agents.contains_key(&a.name) || self.listed.agents.contains(&a.name),
        }
    }

    /// What `result` (a `tools/list` result of `lister.upstream`) shows `lister`: `Some` when
    /// tools are withheld from it (every call of them is denied to it, whatever the arguments)
    /// or described in the operator's words, `None` when it goes as it is. A caller nothing is allowed to (its agent no longer
    /// configured, its delegation revoked) is shown no tool.
    pub fn shown(&self, lister: &Lister, result: &serde_json::Value) -> Option<serde_json::Value> {
        let agent = lister.agent.as_deref();
        let (key, engine) = match self.engine_keyed(agent, &lister.upstream, crate::call::Spawn::Main) {
            Ok(found) => found,
            Err(refused) => {
                tracing::info!(upstream = %lister.upstream, reason = %refused.reason, "withheld a whole tool list");
                return visible::withhold_all(result);
            }
        };
        let shown = visible::filter(&self.visible, &key, &lister.upstream, result, |qualified| {
            let d = engine.denies_by_name(&lister.upstream, qualified)?;
            Some(Self::attributed_to(agent, d).reason)
        });
        let name = agent.map(|a| &*a.name);
        if !self.descriptions.apply_to(name) {
            return shown;
        }
        let described = visible::describe(&lister.upstream, shown.as_ref().unwrap_or(result), |qualified| {
            self.descriptions.of(name, qualified).map(|d| &**d)
        });
        described.or(shown)
    }

    /// The answers kept under this policy (a reload starts afresh).
    pub fn lists_judged(&self) -> &visible::Judged {
        &self.visible
    }
}

#[cfg(test)]
mod tests;
