//! `permissions.subagent: { deny, ask, allow }`: the rules every delegated child meets beyond the
//! main rules (what each does: [`crate::rules::subagent`]), read from the main config only.

use super::permissions::{self, RawPermissions};
use super::problems::Problems;
use crate::rules::kinds::ToolKinds;
use crate::rules::subagent::SubagentRules;
use crate::rules::{Effect, Scope};

pub mod raw;
pub use raw::RawSubagent;

/// Compiles the section, with every problem under `permissions.subagent.…`.
pub(crate) fn compile(
    raw: RawSubagent,
    kinds: &ToolKinds,
    root: Option<&str>,
    p: &mut Problems,
) -> SubagentRules {
    let perms = RawPermissions { allow: raw.allow, ask: raw.ask, deny: raw.deny, subagent: None };
    let mut found = Problems::default();
    let (rules, examples) =
        permissions::rules(vec![(Scope::Config, String::new(), perms)], kinds, root, &mut found);
    let under = |path: String| path.replacen("permissions.", "permissions.subagent.", 1);
    for x in found.problems {
        p.add(under(x.path), x.message);
    }
    for x in found.warnings {
        p.warn(under(x.path), x.message);
    }
    if !examples.is_empty() {
        p.add(
            "permissions.subagent",
            "examples ({rule, match, not_match}) are not checked here: write each rule as a string",
        );
    }
    let (allow, tighten) = rules.into_iter().partition(|r| r.effect == Effect::Allow);
    SubagentRules { tighten, allow }
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use crate::rules::Effect;

    #[test]
    fn the_section_compiles_into_tightening_and_allow_rules() {
        let c = Config::parse(
            "permissions:\n  subagent:\n    deny: [\"Shell(git push:*)\"]\n    ask: [\"Shell(git commit:*)\"]\n    allow: [\"Shell(echo:*)\"]\n",
            "t",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let child = c.policy.engine.narrowed(&Default::default());
        let d = child.decide("up", "Bash", &serde_json::json!({"command": "git push"}));
        assert_eq!(d.effect, Effect::Deny, "{d:?}");
        let d = c.policy.engine.decide("up", "Bash", &serde_json::json!({"command": "git push"}));
        assert_eq!(d.effect, Effect::Ask, "the root only meets the floor: {d:?}");
    }

    fn problems(yaml: &str) -> String {
        Config::parse(yaml, "t").map(|_| ()).expect_err("refused").to_string()
    }

    #[test]
    fn every_problem_is_reported_under_permissions_subagent_and_other_layers_may_not_hold_it() {
        let err = problems(
            "permissions:\n  subagent:\n    deny: [\"Shell(\"]\n    allow: [{ rule: \"Shell(echo:*)\", match: [\"echo\"] }]\nagents:\n  a:\n    token_env: T\n    permissions: { subagent: { deny: [\"Bash\"] } }\n",
        );
        for want in [
            "  - permissions.subagent.deny[0]: ",
            "  - permissions.subagent: examples",
            "  - agents.a.permissions.subagent: only the main config",
        ] {
            assert!(err.contains(want), "{want}: {err}");
        }
        let err = problems("permissions:\n  subagent: { bogus: [] }\n");
        assert!(err.contains("unknown field `bogus`, expected one of `allow`, `ask`, `deny`"), "{err}");
    }
}
