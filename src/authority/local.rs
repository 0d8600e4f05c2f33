//! The evaluators with no policy of their own: `local` keeps the carried set's decision, `noop`
//! refuses a delegated call (it carries a set that nothing would hold it to).

use crate::identity::Agent;
use crate::rules::{Decision, Effect, Origin, Scope};

/// `noop`'s decision: `d` for a configured agent or an anonymous caller; a denial for a
/// delegated agent (fail closed: there is no evaluator for what it carries).
pub fn noop(d: Decision, agent: Option<&Agent>) -> Decision {
    match agent {
        Some(a) if !a.delegated_by.is_empty() => Decision {
            effect: Effect::Deny,
            rule: "authority".into(),
            scope: Scope::Config,
            origin: Origin::Configured,
            reason: "it is a delegated call and the authority evaluator is noop, so nothing can hold it \
                     to what it was delegated"
                .into(),
            prefilter: None,
        },
        _ => d,
    }
}
