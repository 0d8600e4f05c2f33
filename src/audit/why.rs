//! What an audit line keeps of why a call was refused or asked about, so `portcullis explain`
//! can show the whole decision after the fact, under the policy that made it: Layer 1's rule
//! and every configured rule the call met, each with its scope and what in the call it met; the
//! checker's judgement when it ran; the session waiver consulted. Kept for refusals and asks
//! only: an allowed call's line carries its id and the policy version, nothing more.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::decision::DecisionId;

/// The whole explanation of one decision (before masking: see [`super::Audit::call_explained`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Why {
    /// Layer 1's decision for the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer1: Option<Layer1>,
    /// Every configured rule the call met (of every scope), strongest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched: Vec<Met>,
    /// The checker's judgement of the arguments, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checker: Option<Checked>,
    /// The session waiver looked up before a human was asked, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiver: Option<Waiver>,
}

/// Layer 1's decision: its effect, the rule that decided and that rule's scope, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Layer1 {
    pub effect: &'static str,
    pub rule: String,
    pub scope: &'static str,
    pub reason: String,
}

/// One configured rule the call met.
#[derive(Debug, Clone, Serialize)]
pub struct Met {
    pub effect: &'static str,
    pub rule: String,
    pub scope: &'static str,
    /// What it met: "`git push`", "read /etc/passwd", "fetch https://…", "the call".
    pub unit: String,
    /// What the command does that the rule met (a path, its canonical form, a host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect_seen: Option<String>,
    /// The rule only may match: asked rather than applied.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub possibly: bool,
}

/// The checker's judgement of a call's arguments.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// The guardrail rule's `match`.
    pub rule: String,
    /// `name@version`, the version being a digest of the rubric's text.
    pub rubric: String,
    /// `safe`, `unsafe`, `failed` or `skipped`.
    pub verdict: &'static str,
    /// `block`, `sanitize` or `advisory`.
    pub mode: &'static str,
    /// Who answered: `local` (the detectors), `model`, `cache` or `failed`.
    pub tier: &'static str,
    pub cache_hit: bool,
    /// The model stage's wall time, when the model was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
}

/// A session waiver lookup: whether one was found for this exact call.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Waiver {
    pub consulted: bool,
    pub found: bool,
}

/// What the gate learnt about a call on its way to a decision, before the decision is recorded.
#[derive(Debug, Clone)]
pub enum Note {
    /// Layer 1's decision, when it refused or asked.
    Layer1(Layer1),
    Checked(Checked),
    Waiver(Waiver),
}

/// Notes waiting for their decision's audit line (a refusal's checker verdict, a waiver
/// lookup). Bounded: a note whose line never comes is forgotten once newer ones push it out.
#[derive(Debug, Default)]
pub(super) struct Notes(Mutex<VecDeque<(DecisionId, Note)>>);

const NOTES: usize = 1024;

impl Notes {
    pub(super) fn add(&self, id: DecisionId, note: Note) {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() >= NOTES {
            q.pop_front();
        }
        q.push_back((id, note));
    }

    /// Lays the notes kept for `id` into `why`, forgetting them.
    pub(crate) fn take_into(&self, id: DecisionId, why: &mut Why) {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        q.retain(|(of, note)| {
            if *of != id {
                return true;
            }
            match note {
                Note::Layer1(d) => why.layer1 = Some(d.clone()),
                Note::Checked(c) => why.checker = Some(c.clone()),
                Note::Waiver(w) => why.waiver = Some(*w),
            }
            false
        });
    }
}

/// The version of a policy an audit line names: the first 12 hex digits of a SHA-256 over the
/// permission rules in force (the config's and every configured agent's, each with its effect
/// and scope), the posture and the redact list. The same files give the same version across
/// restarts and reloads; any change of a rule gives another.
pub fn policy_version(policy: &crate::config::Policy) -> String {
    let mut h = Sha256::new();
    let mut engine = |name: &str, e: &crate::rules::Engine| {
        h.update(format!("engine {name:?} {}\n", e.posture().as_str()));
        for r in e.rules() {
            h.update(format!("{} {} {:?}\n", r.effect.as_str(), r.scope.as_str(), r.spec.source));
        }
    };
    engine("", &policy.engine);
    // A sorted map: the same agents hash in the same order.
    for (name, spec) in &policy.identity.agents {
        engine(name, &spec.engine);
    }
    for r in &policy.redact {
        h.update(format!("redact {r:?}\n"));
    }
    h.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// The version of a policy `base` names with a workspace's tier `rules` added beside it:
/// `base+` the first 8 hex digits of a SHA-256 over those rules.
pub fn version_with(base: &str, rules: &[crate::rules::Rule]) -> String {
    let mut h = Sha256::new();
    for r in rules {
        h.update(format!("{} {} {:?}\n", r.effect.as_str(), r.scope.as_str(), r.spec.source));
    }
    let tiers: String = h.finalize().iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{base}+{tiers}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(yaml: &str) -> crate::config::Policy {
        crate::config::Config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e}")).policy
    }

    #[test]
    fn the_policy_version_changes_with_a_rule_and_only_then() {
        let a = "permissions: { deny: [\"mcp__up__rm\"] }\n";
        let b = "permissions: { deny: [\"mcp__up__rmdir\"] }\n";
        assert_eq!(policy_version(&policy(a)), policy_version(&policy(a)));
        assert_ne!(policy_version(&policy(a)), policy_version(&policy(b)));
        assert_eq!(policy_version(&policy(a)).len(), 12);
    }

    #[test]
    fn notes_reach_only_their_own_decision_and_are_taken_once() {
        let notes = Notes::default();
        let (a, b) = (DecisionId::next(), DecisionId::next());
        notes.add(a, Note::Waiver(Waiver { consulted: true, found: false }));
        let mut why = Why::default();
        notes.take_into(b, &mut why);
        assert!(why.waiver.is_none());
        notes.take_into(a, &mut why);
        assert!(why.waiver.is_some_and(|w| w.consulted && !w.found));
        let mut again = Why::default();
        notes.take_into(a, &mut again);
        assert!(again.waiver.is_none());
    }
}
