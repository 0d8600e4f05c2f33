//! The engine's side of egress ([`crate::egress`]): its entries, and its decisions on a call's
//! destinations and on a redirect.

use serde_json::Value;

use super::super::egress::{Egress, Reach};
use super::super::Decision;
use super::Engine;

impl Engine {
    /// The same engine with `egress:` entries and sinks added to its own (the config's, then
    /// an agent's: deny dominates across all of them, as for permission rules).
    pub fn with_egress(mut self, more: Egress) -> Engine {
        self.egress.rules.extend(more.rules);
        self.egress.sinks.extend(more.sinks);
        self.egress.upstreams.extend(more.upstreams);
        self
    }

    pub fn egress(&self) -> &Egress {
        &self.egress
    }

    /// Egress's refusal of a call, if it makes one (see [`crate::egress`]).
    pub fn egress_decision(&self, upstream: &str, qualified: &str, args: &Value) -> Option<Decision> {
        self.egress_with(upstream, qualified, args, None)
    }

    pub(super) fn egress_with(
        &self,
        upstream: &str,
        qualified: &str,
        args: &Value,
        connections: Option<&[String]>,
    ) -> Option<Decision> {
        let egress = &self.egress;
        if !egress.active(self.parts.posture) {
            return None;
        }
        let reach = Reach::of(&self.parts.kinds, egress, upstream, qualified, args, connections);
        egress.decide(upstream, args, &reach, self.parts.posture)
    }

    /// Egress's refusal of a redirect a tool's answer points to (`Location`): judged as a URL
    /// a fetch tool was given, with the upstream's and the agent's entries.
    pub fn egress_redirect(&self, upstream: &str, location: &str) -> Option<Decision> {
        let egress = &self.egress;
        if !egress.active(self.parts.posture) {
            return None;
        }
        egress.decide_redirect(upstream, location, self.parts.posture)
    }
}
