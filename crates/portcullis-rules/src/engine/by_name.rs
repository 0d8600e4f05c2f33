//! The question a tool list asks of Layer 1: is every call of this tool denied, whatever its
//! arguments? A tool list shows each caller only what it may call, so the answer must be a proof,
//! never a guess from rule text: `Some` only where [`Engine::decide`] denies every call.
//!
//! Two things deny a tool by name. (1) A configured deny with no specifier whose subject covers
//! every call the tool's kind makes: `mcp__up__tool` (any kind), `Shell` (a shell tool),
//! `Fetch` (a fetch tool), `File`, `Read` or `Write` (a file tool of that access). (2) A readonly
//! profile over a kind no call of which is ever read-only: a generic tool, a fetch, a file write.
//! A rule with a specifier (`Shell(git push:*)`) depends on the arguments, an `ask` may be allowed
//! by a human, a shell or file-read tool may be read-only: all of those stay listed.
//!
//! `decide` keeps the promise on the paths that never reach a rule (arguments missing or not a
//! string, a shell line that does not parse or holds no command): they asked, and a name-level
//! deny dominates an ask ([`Engine::decide`] consults [`Engine::denies_by_name`] there).

use super::super::kinds::KindSpec;
use super::super::spec::Subject as RuleSubject;
use super::super::{Decision, Effect, Origin, Profile, Rule, Scope};
use super::{decision, Engine};

impl Engine {
    /// `Some(decision)` when every call to `qualified` on `upstream` is denied whatever its
    /// arguments, with the reason a refusal gives; `None` when some call may be allowed or asked.
    pub fn denies_by_name(&self, upstream: &str, qualified: &str) -> Option<Decision> {
        self.by_name(qualified, self.profile(upstream))
    }

    /// True when some tool may be denied by name under this engine (a cheap test of the rules
    /// and profiles, for callers that skip the per-tool question when nothing can say yes).
    pub fn can_deny_by_name(&self) -> bool {
        let readonly = self.parts.agent_profile == Some(Profile::Readonly)
            || self.parts.profiles.values().any(|p| *p == Profile::Readonly);
        readonly || self.parts.rules.iter().any(|r| r.effect == Effect::Deny && r.spec.specifier.is_none())
    }

    pub(super) fn by_name(&self, qualified: &str, profile: Profile) -> Option<Decision> {
        let kind = self.parts.kinds.kind_of(qualified);
        let named = self
            .parts
            .rules
            .iter()
            .filter(|r| r.effect == Effect::Deny && covers_every_call(r, qualified, kind))
            .max_by_key(|r| r.scope);
        if let Some(rule) = named {
            return Some(decision(
                Effect::Deny,
                rule,
                format!("every call of {qualified} is denied by {}", rule.spec.source),
            ));
        }
        let never_read_only = match kind {
            KindSpec::Generic | KindSpec::Fetch { .. } => true,
            KindSpec::File { access, .. } => !access.reads(),
            KindSpec::Shell { .. } | KindSpec::Resource { .. } => false,
        };
        (profile == Profile::Readonly && never_read_only).then(|| Decision {
            effect: Effect::Deny,
            rule: "profile: readonly".into(),
            scope: Scope::Config,
            origin: Origin::Configured,
            reason: format!(
                "no call of {qualified} (a {} tool) can be proven read-only and the profile in force \
                 (the upstream's or the agent's) is readonly",
                kind.name()
            ),
            prefilter: None,
        })
    }
}

/// Whether `rule` (its specifier aside) matches every call to `qualified`, a tool of `kind`.
fn covers_every_call(rule: &Rule, qualified: &str, kind: &KindSpec) -> bool {
    if rule.spec.specifier.is_some() {
        return false;
    }
    match (&rule.spec.subject, kind) {
        // A resource request is judged by its readings, one of which may be none: not by name.
        (_, KindSpec::Resource { .. }) => false,
        (RuleSubject::Tool(g), _) => g.matches(qualified),
        (RuleSubject::Shell, KindSpec::Shell { .. }) => true,
        (RuleSubject::Fetch, KindSpec::Fetch { .. }) => true,
        (RuleSubject::File, KindSpec::File { .. }) => true,
        (RuleSubject::Read, KindSpec::File { access, .. }) => access.reads(),
        (RuleSubject::Write, KindSpec::File { access, .. }) => !access.reads(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
