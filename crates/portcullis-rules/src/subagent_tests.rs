//! `permissions.subagent` through the engine: a delegated child meets the subagent denies and
//! asks beyond the main rules, and a subagent allow clears only a substitution whose hidden
//! commands are all proven read-only — never for the root, never past a configured deny or ask.

use serde_json::json;

use crate::spec::RuleSpec;
use crate::subagent::SubagentRules;
use crate::{Decision, Effect, Engine, EngineParts, Layered, Rule, Scope};

fn rules(list: &[(&str, Effect)]) -> Vec<Rule> {
    list.iter()
        .map(|&(s, effect)| Rule { spec: RuleSpec::parse(s).expect(s), effect, scope: Scope::Config })
        .collect()
}

/// The root engine (main rules `main`), with `subagent` laid over its children.
fn root(main: &[(&str, Effect)], subagent: &[(&str, Effect)]) -> Engine {
    let all = rules(subagent);
    let (allow, tighten) = all.into_iter().partition(|r| r.effect == Effect::Allow);
    Engine::new(EngineParts { rules: rules(main), ..Default::default() })
        .with_subagent(SubagentRules { tighten, allow })
}

fn child(e: &Engine) -> Engine {
    e.narrowed(&Layered::default())
}

fn bash(e: &Engine, line: &str) -> Decision {
    e.decide("up", "Bash", &json!({ "command": line }))
}

#[test]
fn subagent_denies_and_asks_bind_every_child_and_grandchild_but_never_the_root() {
    use Effect::{Allow, Ask, Deny};
    let e = root(&[("Shell(git:*)", Allow)], &[("Shell(git push:*)", Deny), ("Shell(git commit:*)", Ask)]);
    let grandchild = child(&child(&e));
    for (line, at_root, at_child) in
        [("git push origin", Allow, Deny), ("git commit -m x", Allow, Ask), ("git status", Allow, Allow)]
    {
        assert_eq!(bash(&e, line).effect, at_root, "root: {line}");
        assert_eq!(bash(&child(&e), line).effect, at_child, "child: {line}");
        assert_eq!(bash(&grandchild, line).effect, at_child, "grandchild: {line}");
    }
    let d = bash(&child(&e), "git push origin");
    assert_eq!((d.rule.as_str(), d.scope), ("Shell(git push:*)", Scope::Config), "{d:?}");
}

#[test]
fn a_subagent_allow_clears_a_childs_substitution_only_when_every_hidden_command_is_read_only() {
    use Effect::{Allow, Ask, Deny};
    let e = root(&[("Shell(curl:*)", Ask), ("Read(/etc/shadow)", Deny)], &[("Shell(echo:*)", Allow)]);
    let c = child(&e);
    let table = [
        ("echo $(cat notes.txt)", Allow),
        ("echo \"$(ls -la)\" <(cat a)", Allow),
        // The hidden command is not read-only, or something else on the line is not.
        ("echo $(rm -rf x)", Ask),
        ("echo $(cat a); touch b", Ask),
        ("echo $(cat a) > out.txt", Ask),
        // Opacity other than substitution is never lifted.
        ("echo $(cat a) $X", Ask),
        ("eval \"$(cat a)\"", Ask),
        ("(echo $(cat a))", Ask),
        // Configured rules still decide what the hidden commands do.
        ("echo $(curl https://example.com)", Ask),
        ("echo $(cat /etc/shadow)", Deny),
        // No subagent allow matches the outer command.
        ("printf $(cat a)", Ask),
    ];
    for (line, want) in table {
        let d = bash(&c, line);
        assert_eq!(d.effect, want, "child: {line}: {d:?}");
        if want == Allow {
            assert!(d.reason.contains("permissions.subagent.allow"), "{d:?}");
        }
        assert_ne!(bash(&e, line).effect, Allow, "the root is never lifted: {line}");
    }
}

#[test]
fn a_subagent_allow_never_loosens_what_a_configured_deny_or_ask_decides() {
    let e = root(&[("Shell(echo:*)", Effect::Ask)], &[("Shell(echo:*)", Effect::Allow)]);
    let d = bash(&child(&e), "echo $(cat a)");
    assert_eq!((d.effect, d.scope), (Effect::Ask, Scope::Config), "{d:?}");
    let d = bash(&child(&e), "echo hi");
    assert_eq!(d.effect, Effect::Ask, "an allow without a substitution lifts nothing: {d:?}");
}
