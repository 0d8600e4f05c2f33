//! Which engine decides a call: the config's, an agent's, a delegation's (its root's narrowed by
//! each grant of its chain) or a subagent's (its parent's narrowed as a child's), each derived
//! once per guard.

use std::sync::Arc;
use std::time::SystemTime;

use super::Guard;
use crate::call::{Spawn, ToolCall};
use crate::rules::{Decision, Effect, Engine, Layered, Origin, Scope};

/// Delegated engines kept per guard (as many as the store holds grants).
const MAX_DELEGATED_ENGINES: usize = 4096;

impl Guard {
    /// Exports every configured rule of this guard (the config's and each agent's) at zero in
    /// `rule_hits_total`, dropping the series of rules no longer configured: at start and after
    /// each reload is swapped in.
    pub fn export_rules(&self) {
        let agents = self.agents.values().flat_map(|e| e.rules());
        self.metrics.rules.in_force(self.engine.rules().iter().chain(agents));
    }

    /// The engine `call` is decided with: its agent's, or the config's for an anonymous caller.
    /// A caller whose agent is no longer configured (a reload removed it while the call was on
    /// its way) is refused. A delegated agent decides with its root's current engine narrowed by
    /// each grant of its chain (compiled once per guard), and only on the upstreams it was given.
    pub(super) fn engine_for(&self, call: &ToolCall) -> Result<Arc<Engine>, Decision> {
        self.engine_keyed(call.agent.as_deref(), &call.upstream, call.spawn).map(|(_, e)| e)
    }

    /// [`Self::engine_for`] for `agent` on `upstream`, with a key naming the engine for as long as
    /// this guard lives: `""` for the config's, the agent's name, `grant:{id}` for a delegation;
    /// a subagent's (`spawn`) is its parent's narrowed as a child's, keyed `{parent}>subagent`.
    pub(crate) fn engine_keyed(
        &self,
        agent: Option<&crate::identity::Agent>,
        upstream: &str,
        spawn: Spawn,
    ) -> Result<(Arc<str>, Arc<Engine>), Decision> {
        let (key, engine) = self.parent_engine(agent, upstream)?;
        if spawn == Spawn::Main {
            return Ok((key, engine));
        }
        let key: Arc<str> = format!("{key}>subagent").into();
        Ok((key.clone(), self.cached(key, || engine.narrowed(&Layered::default()))))
    }

    /// An engine derived once per guard (a delegation's, a subagent's), kept under `key`.
    fn cached(&self, key: Arc<str>, derive: impl FnOnce() -> Engine) -> Arc<Engine> {
        let mut cache = self.delegated.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = cache.get(&key) {
            return e.clone();
        }
        let engine = Arc::new(derive());
        if cache.len() >= MAX_DELEGATED_ENGINES {
            cache.clear();
        }
        cache.insert(key, engine.clone());
        engine
    }

    /// The engine of `agent` itself on `upstream` (see [`Self::engine_keyed`]).
    fn parent_engine(
        &self,
        agent: Option<&crate::identity::Agent>,
        upstream: &str,
    ) -> Result<(Arc<str>, Arc<Engine>), Decision> {
        let refuse = |rule: &str, reason: String| Decision {
            effect: Effect::Deny,
            rule: rule.into(),
            scope: Scope::Builtin,
            origin: Origin::Floor,
            reason,
            prefilter: None,
        };
        let Some(agent) = agent else { return Ok((Arc::from(""), self.engine.clone())) };
        let Some(root) = self.agents.get(&agent.name) else {
            return Err(refuse(
                "agents",
                format!("agent {} is no longer configured, so nothing it asks is allowed", agent.name),
            ));
        };
        if agent.delegated_by.is_empty() {
            return Ok((agent.name.clone(), root.clone()));
        }
        let Some(grant) = self.delegations.as_ref().and_then(|d| d.grant_of(&agent.id, SystemTime::now()))
        else {
            return Err(refuse("delegation", "its delegation was revoked or has expired".into()));
        };
        if !grant.reaches(upstream) {
            let allowed = grant.upstreams.as_deref().unwrap_or_default().join(", ");
            return Err(refuse(
                "delegation",
                format!("upstream {upstream} is outside the upstreams it was delegated ({allowed})"),
            ));
        }
        let key: Arc<str> = format!("grant:{}", grant.id).into();
        let engine = self
            .cached(key.clone(), || grant.chain.iter().fold((**root).clone(), |e, layer| e.narrowed(layer)));
        Ok((key, engine))
    }
}
