//! A guard for calls made in one workspace: the same checker, audit, counters and live state,
//! with the workspace's tier rules ([`crate::config::tiers`]) added to every engine it decides
//! with. The hook endpoint builds one per workspace and keeps it while the files are unchanged.

use std::sync::{Arc, Mutex};

use super::{lists, Guard};
use crate::rules::{Engine, Rule};

impl Guard {
    /// The jail root relative path rules are compiled against.
    pub fn jail_root(&self) -> Option<&std::path::Path> {
        self.engine.jail_root()
    }

    /// This guard with `rules` beside each engine's own (the config's and every configured
    /// agent's; a delegated agent's is narrowed from its root's, so it gets them too).
    pub fn with_rules(&self, rules: &[Rule]) -> Guard {
        let add = |e: &Arc<Engine>| Arc::new(e.with_rules(rules));
        Guard {
            engine: add(&self.engine),
            agents: Arc::new(self.agents.iter().map(|(name, e)| (name.clone(), add(e))).collect()),
            redact: self.redact.clone(),
            metrics: self.metrics.clone(),
            guardrails: self.guardrails.clone(),
            audit: self.audit.clone(),
            delegation: self.delegation,
            delegations: self.delegations.clone(),
            delegated: Mutex::default(),
            pins: self.pins.clone(),
            tool_defs: self.tool_defs.clone(),
            visible: Default::default(),
            descriptions: self.descriptions.clone(),
            // Tool lists are never answered through a workspace's guard (the hook decides calls).
            listed: lists::Filtering::default(),
            limits: self.limits.clone(),
            flows: self.flows.clone(),
            secrets: self.secrets.clone(),
            authority: self.authority.clone(),
            version: crate::audit::why::version_with(&self.version, rules).into(),
        }
    }
}
