//! Every configured rule a call meets, unit by unit, with what in the call it met: what
//! `portcullis explain` lists beside the one rule that decided. Computed on demand (the proxy
//! asks only for refusals and asks), never by [`Engine::decide`], so the allow path pays nothing.

use serde_json::Value;

use super::super::effect_match::Hit;
use super::super::jail::Placed;
use super::super::kinds::Subject;
use super::super::{Effect, Rule, Scope};
use super::unit::{matches, Unit};
use super::Engine;
use portcullis_shell as shell;

/// One configured rule that met one unit of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    /// The rule's own effect (a rule that only possibly meets a command's effect asks instead:
    /// see `possibly`).
    pub effect: Effect,
    /// The rule as written.
    pub rule: String,
    pub scope: Scope,
    /// The unit it met: "`git push`", "read /etc/passwd", "fetch https://…", "the call".
    pub unit: String,
    /// How it met it, when it met what the command does rather than its words: "reads
    /// /etc/shadow", "is `git push` once its global options are read", "reaches https://…".
    pub effect_seen: Option<String>,
    /// The rule may match (a place or host the analysis could not pin down).
    pub possibly: bool,
}

impl Engine {
    /// Every configured rule (of every scope) that meets some unit of a call to `qualified` with
    /// `args`, strongest first. The rules are this engine's: the policy in force when asked.
    pub fn matched(&self, qualified: &str, args: &Value) -> Vec<Matched> {
        let mut out = Vec::new();
        self.matched_in(qualified, self.parts.kinds.classify(qualified, args), &mut out);
        out.sort_by_key(|m| std::cmp::Reverse((m.effect, m.scope)));
        // A rule met twice the same way (two readings of one URI) is listed once.
        let mut listed: Vec<Matched> = Vec::with_capacity(out.len());
        for m in out {
            if !listed.contains(&m) {
                listed.push(m);
            }
        }
        listed
    }

    fn matched_in(&self, qualified: &str, subject: Subject, out: &mut Vec<Matched>) {
        match subject {
            Subject::Shell { command, shell: dialect, cwd, .. } => {
                let analysis = shell::analyze_in(&command, dialect);
                let effects = shell::effects::effects(&analysis, &self.start(cwd.as_deref()), None);
                for (cmd, fx) in analysis.commands.iter().zip(&effects) {
                    let unit = Unit::Command { cmd, read_only: false };
                    self.matching(qualified, &unit, out);
                    for rule in self.parts.rules.iter().filter(|r| r.effect != Effect::Allow) {
                        if let Some((hit, why)) = self.effect_rule(rule, qualified, fx) {
                            out.push(met(rule, &unit, Some(why), hit == Hit::Possibly));
                        }
                    }
                }
            }
            Subject::File { path, access } => match self.jail.place(&path) {
                Placed::Inside(resolved) | Placed::Outside { resolved, .. } => {
                    self.matching(qualified, &Unit::Path { path: &resolved, access, written: &path }, out)
                }
                Placed::Refused(_) => {}
            },
            Subject::Fetch { url } => {
                let reading = super::super::destination::read_url(&url);
                self.matching(qualified, &Unit::Fetch { url: &url, reading }, out)
            }
            Subject::Generic { args } => self.matching(qualified, &Unit::Generic { args: &args }, out),
            Subject::Readings(all) => {
                for s in all {
                    self.matched_in(qualified, s, out);
                }
            }
            Subject::Unplaced { .. } | Subject::Malformed { .. } => {}
        }
    }

    fn matching(&self, qualified: &str, unit: &Unit<'_>, out: &mut Vec<Matched>) {
        for rule in self.parts.rules.iter().filter(|r| matches(r, qualified, unit)) {
            out.push(met(rule, unit, None, false));
        }
    }
}

fn met(rule: &Rule, unit: &Unit<'_>, effect_seen: Option<String>, possibly: bool) -> Matched {
    Matched {
        effect: rule.effect,
        rule: rule.spec.source.clone(),
        scope: rule.scope,
        unit: unit.to_string(),
        effect_seen,
        possibly,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::spec::RuleSpec;
    use crate::{Effect, Engine, EngineParts, Rule, Scope};

    fn engine(rules: &[(&str, Effect, Scope)]) -> Engine {
        let rules = rules
            .iter()
            .map(|&(s, effect, scope)| Rule { spec: RuleSpec::parse(s).unwrap(), effect, scope })
            .collect();
        Engine::new(EngineParts { rules, ..EngineParts::default() })
    }

    #[test]
    fn every_rule_a_call_meets_is_listed_with_its_scope_strongest_first_and_no_other() {
        let e = engine(&[
            ("Bash(git:*)", Effect::Allow, Scope::Config),
            ("Bash(git push:*)", Effect::Deny, Scope::Managed),
            ("Bash(rm:*)", Effect::Deny, Scope::Config),
            ("Read(/etc/**)", Effect::Ask, Scope::User),
        ]);
        let m = e.matched("Bash", &json!({"command": "git status && git -C . push origin"}));
        let named: Vec<(&str, Effect, Scope)> =
            m.iter().map(|m| (m.rule.as_str(), m.effect, m.scope)).collect();
        assert_eq!(named[0], ("Bash(git push:*)", Effect::Deny, Scope::Managed), "{m:?}");
        assert!(named.contains(&("Bash(git:*)", Effect::Allow, Scope::Config)), "{m:?}");
        assert!(!named.iter().any(|(r, ..)| *r == "Bash(rm:*)" || r.starts_with("Read")), "{m:?}");
        // The push was met through what the command does, and says so.
        let push = m.iter().find(|m| m.rule == "Bash(git push:*)").unwrap();
        assert!(push.effect_seen.as_deref().is_some_and(|w| w.contains("git push")), "{push:?}");
    }

    #[test]
    fn a_file_call_meets_path_rules_and_a_call_no_rule_names_meets_none() {
        let e = engine(&[
            ("Read(/etc/**)", Effect::Ask, Scope::User),
            ("Bash(rm:*)", Effect::Deny, Scope::Config),
        ]);
        let m = e.matched("Read", &json!({"file_path": "/etc/hosts"}));
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(
            (m[0].rule.as_str(), m[0].scope, m[0].unit.as_str()),
            ("Read(/etc/**)", Scope::User, "read /etc/hosts")
        );
        assert!(e.matched("Read", &json!({"file_path": "/srv/x"})).is_empty());
        assert!(e.matched("mcp__a__b", &json!({})).is_empty());
    }
}
