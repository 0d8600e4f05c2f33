//! A [`Flow`] as Layer 1 speaks: the worse of the rules' decision and the flow's, and whether
//! the read-only pre-filter may still skip the model (not for a session that overflowed).

use serde_json::Value;

use super::{Flow, Flows};
use crate::call::ToolCall;
use crate::config::flows::FlowMode;
use crate::rules::{Decision, Effect, Engine, Origin, Prefilter, Scope};

impl Flows {
    /// Whether `call`'s session has anything recorded (or forgot something): only then are its
    /// arguments read for the flow check.
    pub fn watches(&self, call: &ToolCall) -> bool {
        !matches!(self.store.lookup(self.key(call)), super::store::Lookup::Nothing)
    }

    /// The rules' decision `d` on `call`, with the flow check on top; `checked` says whether a
    /// guardrail rule covers the call (the model an overflowed session falls back to).
    pub fn judge(
        &self,
        call: &ToolCall,
        args: &Value,
        engine: &Engine,
        d: Decision,
        checked: bool,
    ) -> (Decision, Option<Prefilter>) {
        let refusal = |rule: String, reason: String| Decision {
            effect: match self.settings.mode {
                FlowMode::Deny => Effect::Deny,
                FlowMode::Ask => Effect::Ask,
            },
            rule,
            scope: Scope::Config,
            origin: Origin::Configured,
            reason,
            prefilter: None,
        };
        match self.check(call, args, engine) {
            Flow::Clear => {
                let p = d.prefilter;
                (d, p)
            }
            // At equal effect the flow's refusal folds in: a `mode: ask` refusal tied with a
            // floor ask is still the operator's ([`Decision::worse`]).
            Flow::Refuse { rule, reason, .. } => (d.worse(refusal(rule, reason)), None),
            // The model judges what the index cannot: never skipped by the pre-filter.
            Flow::ToModel { .. } if checked => (d, None),
            Flow::ToModel { reason } => (d.worse(refusal("flows: overflowed".into(), reason)), None),
        }
    }
}
