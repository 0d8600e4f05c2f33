//! Plan mode: edits, writes and shell not proven read-only are refused before the rules.

use serde_json::Value;

use super::super::kinds::Subject;
use super::super::{Decision, Effect, Profile};
use super::{Connections, Engine};

impl Engine {
    /// Decides a call the agent makes in plan mode: before any allow, every edit, write and
    /// shell command not proven read-only is denied (configured denies still deny first);
    /// everything else — reads, fetches, other tools — falls through to the rules as usual.
    pub fn decide_planning(&self, upstream: &str, qualified: &str, args: &Value) -> Decision {
        let subject = self.parts.kinds.classify(qualified, args);
        if plan_covers(&subject) {
            let planned = self.subject(qualified, subject, Profile::Plan, &mut Connections::default());
            if planned.effect == Effect::Deny {
                return planned;
            }
        }
        self.decide(upstream, qualified, args)
    }
}

/// Whether plan mode judges `subject` before the rules: file and shell calls (a write or an
/// edit is never read-only; a shell command only when proven so).
fn plan_covers(subject: &Subject) -> bool {
    match subject {
        Subject::Shell { .. } | Subject::File { .. } => true,
        Subject::Readings(all) => all.iter().any(plan_covers),
        _ => false,
    }
}
