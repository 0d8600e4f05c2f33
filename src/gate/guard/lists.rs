//! The tool lists of the [`Guard`]: what a `tools/list` answer shows each caller. The engine says
//! which tools are denied to the caller by name; [`crate::tooldefs::visible`] cuts the list and
//! keeps the answers for as long as this policy lives.

use super::Guard;
use crate::identity::Agent;
use crate::tooldefs::visible;

pub use crate::gate::post::Lister;

impl Guard {
    /// True when a `tools/list` answer may show `agent` other than the upstream listed: some tool
    /// may be denied to it by name, or described in the operator's words (`tool_descriptions:`).
    /// A delegated agent's grant may narrow anything, so its lists are always looked at. When
    /// false, lists go as the upstream sent them.
    pub fn lists_filtered(&self, agent: Option<&Agent>) -> bool {
        (match agent {
            None => self.engine.can_deny_by_name(),
            Some(a) if !a.delegated_by.is_empty() => true,
            Some(a) => self.agents.get(&a.name).is_none_or(|e| e.can_deny_by_name()),
        }) || self.descriptions.apply_to(agent.map(|a| &*a.name))
    }

    /// What `result` (a `tools/list` result of `lister.upstream`) shows `lister`: `Some` when
    /// tools are withheld from it (every call of them is denied to it, whatever the arguments)
    /// or described in the operator's words, `None` when it goes as it is. A caller nothing is allowed to (its agent no longer
    /// configured, its delegation revoked) is shown no tool.
    pub fn shown(&self, lister: &Lister, result: &serde_json::Value) -> Option<serde_json::Value> {
        let agent = lister.agent.as_deref();
        let (key, engine) = match self.engine_keyed(agent, &lister.upstream) {
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
