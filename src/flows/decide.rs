//! A [`Flow`] as Layer 1 speaks: the worse of the rules' decision and the flow's, and whether
//! the read-only pre-filter may still skip the model (not for a session that overflowed). And
//! what a call pays before that: nothing recorded anywhere, one atomic load; else one lookup of
//! its session; a tool that cannot reach outward, nothing more (its arguments are not read).

use serde_json::Value;

use super::store::Lookup;
use super::{Flow, Flows};
use crate::call::ToolCall;
use crate::config::flows::FlowMode;
use crate::rules::kinds::KindSpec;
use crate::rules::{Decision, Effect, Engine, Origin, Prefilter, Scope};

/// Whether a tool can reach outward, from what config says it is (never its arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaches {
    /// Not a sink, a fetch tool or a shell: its calls are never scanned.
    Never,
    /// A configured sink or a fetch tool, whatever its arguments say.
    Always,
    /// A shell: its line, once analysed, says whether it connects.
    ByArguments,
}

impl Reaches {
    /// What `call`'s tool is under `engine`: a name lookup, no argument read.
    pub fn of(engine: &Engine, call: &ToolCall) -> Reaches {
        if engine.egress().sink(&call.upstream, &call.qualified).is_some() {
            return Reaches::Always;
        }
        match engine.kinds().kind_of(&call.qualified) {
            KindSpec::Fetch { .. } => Reaches::Always,
            KindSpec::Shell { .. } => Reaches::ByArguments,
            KindSpec::File { .. } | KindSpec::Resource { .. } | KindSpec::Generic => Reaches::Never,
        }
    }
}

/// A call whose session recorded something (or forgot something), to a tool that may reach
/// outward: its arguments are read and scanned ([`Flows::judge`]).
pub struct Watched(pub(super) Lookup);

impl Flows {
    /// The one lookup of `call`'s session, and only for a tool that may reach outward: `None`
    /// (nothing to scan, arguments not read) when nothing was recorded anywhere (one atomic
    /// load), when the session recorded nothing, or when the tool cannot reach outward.
    pub fn watch(&self, call: &ToolCall, engine: &Engine) -> Option<Watched> {
        if !self.store.watching() {
            return None;
        }
        match self.store.lookup(self.key(call)) {
            Lookup::Nothing => None,
            found => (Reaches::of(engine, call) != Reaches::Never).then_some(Watched(found)),
        }
    }

    /// The rules' decision `d` on `watched` `call`, with the flow check on top; `checked` says whether a
    /// guardrail rule covers the call (the model an overflowed session falls back to).
    pub fn judge(
        &self,
        watched: Watched,
        call: &ToolCall,
        args: &Value,
        engine: &Engine,
        d: Decision,
        checked: bool,
    ) -> (Decision, Option<Prefilter>) {
        let refusal = |rule: String, reason: String, ask: bool| Decision {
            effect: match (self.settings.mode, ask) {
                (FlowMode::Ask, _) | (_, true) => Effect::Ask,
                (FlowMode::Deny, false) => Effect::Deny,
            },
            rule,
            scope: Scope::Config,
            origin: Origin::Configured,
            reason,
            prefilter: None,
        };
        match self.check(watched, call, args, engine) {
            Flow::Clear => {
                let p = d.prefilter;
                (d, p)
            }
            // At equal effect the flow's refusal folds in: a `mode: ask` refusal tied with a
            // floor ask is still the operator's ([`Decision::worse`]).
            Flow::Refuse { rule, reason, ask, .. } => (d.worse(refusal(rule, reason, ask)), None),
            // The model judges what the index cannot: never skipped by the pre-filter.
            Flow::ToModel { .. } if checked => (d, None),
            Flow::ToModel { reason } => (d.worse(refusal("flows: overflowed".into(), reason, false)), None),
        }
    }
}
