//! Where an ask came from: a decision whose effect is ask names [`Scope::Builtin`] only when no
//! configured rule asked for, or may have matched, any part of the call — the scope is what the
//! headless ask reviewer reads before it answers an ask on the proxy's behalf, so an operator's
//! `ask` hidden behind an earlier floor ask in the same line must still be named.

use serde_json::json;

use crate::kinds::{KindSpec, ToolKinds};
use crate::spec::RuleSpec;
use crate::{Decision, Effect, Engine, EngineParts, Origin, Rule, Scope};

fn engine(rules: &[(&str, Effect)]) -> Engine {
    let kinds = ToolKinds::new([("mcp__sh__run".to_owned(), KindSpec::bash("/cmd"))]);
    let rules = rules
        .iter()
        .map(|&(s, effect)| Rule { spec: RuleSpec::parse(s).expect(s), effect, scope: Scope::Config })
        .collect();
    Engine::new(EngineParts { rules, kinds, ..Default::default() })
}

fn shell(e: &Engine, line: &str) -> Decision {
    e.decide("sh", "mcp__sh__run", &json!({ "cmd": line }))
}

#[test]
fn a_configured_ask_anywhere_in_a_line_is_named_over_a_floor_ask_before_it() {
    let e = engine(&[("Shell(git push:*)", Effect::Ask)]);
    for line in [
        "touch a; git push origin main",
        "git push origin main; touch a",
        "echo $(date) && git push",
        "touch a | git push",
        "mkdir d; (git push)",
    ] {
        let d = shell(&e, line);
        assert_eq!((d.effect, d.scope), (Effect::Ask, Scope::Config), "{line}: {d:?}");
        assert_eq!(d.rule, "Shell(git push:*)", "{line}: {d:?}");
    }
}

#[test]
fn a_deny_rule_that_may_match_a_later_command_is_named_over_the_floor() {
    // `git -c x=y push` may be any subcommand to the analyzer: the deny possibly matches, which
    // asks in the deny rule's scope, never as the floor.
    let e = engine(&[("Shell(git push:*)", Effect::Deny)]);
    let d = shell(&e, "touch a; git --weird-option push");
    assert_eq!(d.effect, Effect::Ask, "{d:?}");
    assert_ne!(d.scope, Scope::Builtin, "{d:?}");
}

#[test]
fn a_line_that_asks_only_by_the_floor_names_the_builtin_scope() {
    let e = engine(&[("Shell(git push:*)", Effect::Ask), ("Shell(echo:*)", Effect::Allow)]);
    for line in ["touch a", "echo $(rm -rf x)", "touch a; echo hi", "eval \"$X\""] {
        let d = shell(&e, line);
        assert_eq!((d.effect, d.scope), (Effect::Ask, Scope::Builtin), "{line}: {d:?}");
    }
}

#[test]
fn at_equal_effect_the_higher_scope_outranks_and_the_worse_effect_always_does() {
    let d = |effect, scope| Decision {
        effect,
        rule: String::new(),
        scope,
        origin: Origin::of(scope),
        reason: String::new(),
        prefilter: None,
    };
    use crate::origin::outranks;
    assert!(outranks(&d(Effect::Ask, Scope::Config), &d(Effect::Ask, Scope::Builtin)));
    assert!(!outranks(&d(Effect::Ask, Scope::Builtin), &d(Effect::Ask, Scope::Config)));
    assert!(
        !outranks(&d(Effect::Ask, Scope::Builtin), &d(Effect::Ask, Scope::Builtin)),
        "the first of equals"
    );
    assert!(outranks(&d(Effect::Deny, Scope::Builtin), &d(Effect::Ask, Scope::Managed)));
    assert!(!outranks(&d(Effect::Allow, Scope::Managed), &d(Effect::Ask, Scope::Builtin)));
}

#[test]
fn an_escape_over_a_configured_ask_names_the_configured_rule_and_a_bare_escape_names_the_jail() {
    use crate::jail::{Jail, Resolve, DEFAULT_DENY_NAMES};
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("root")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let names: Vec<String> = DEFAULT_DENY_NAMES.iter().map(|s| s.to_string()).collect();
    let jail = Jail::new(Some(&base.join("root")), &names, Resolve::Filesystem).unwrap();
    let asked = format!("Write({}/outside/asked/**)", base.display());
    let rules = vec![Rule { spec: RuleSpec::parse(&asked).unwrap(), effect: Effect::Ask, scope: Scope::Cli }];
    let e = Engine::new(EngineParts { jail: Some(jail), rules, ..Default::default() });
    let write = |p: &str| e.decide("up", "Write", &json!({ "file_path": format!("{}/{p}", base.display()) }));
    let bare = write("outside/free.txt");
    assert_eq!((bare.effect, bare.rule.as_str()), (Effect::Ask, crate::escape::RULE), "{bare:?}");
    let configured = write("outside/asked/x.txt");
    assert_eq!((configured.effect, configured.scope), (Effect::Ask, Scope::Cli), "{configured:?}");
    assert_eq!(configured.rule, asked, "{configured:?}");
    assert!(configured.reason.contains("outside the jail"), "{configured:?}");
}

#[test]
fn no_configured_rule_can_be_named_as_the_jail_escape() {
    for text in [crate::escape::RULE, "jail:outside", "jail"] {
        if let Ok(spec) = RuleSpec::parse(text) {
            assert_ne!(spec.source, crate::escape::RULE, "{text} parses as a rule named like the escape");
        }
    }
}

/// A jail of `<tmp>/root` beside `<tmp>/outside` and `<tmp>/secret`, with `rules` in the config's
/// scope (an ask of each `asked` pattern under that base), and `egress: ask` on partner.example
/// when `asks_egress`.
fn jailed(asked: &[&str], asks_egress: bool) -> (tempfile::TempDir, std::path::PathBuf, Engine) {
    use crate::egress::{Egress, EgressRule, Target};
    use crate::jail::{Jail, Resolve, DEFAULT_DENY_NAMES};
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    for sub in ["root", "outside", "secret"] {
        std::fs::create_dir_all(base.join(sub)).unwrap();
    }
    let names: Vec<String> = DEFAULT_DENY_NAMES.iter().map(|s| s.to_string()).collect();
    let jail = Jail::new(Some(&base.join("root")), &names, Resolve::Filesystem).unwrap();
    let rules = asked
        .iter()
        .map(|p| format!("Read({}/{p})", base.display()))
        .map(|s| Rule { spec: RuleSpec::parse(&s).expect(&s), effect: Effect::Ask, scope: Scope::Config })
        .collect();
    let egress = Egress {
        rules: vec![EgressRule {
            effect: Effect::Ask,
            target: Target::parse("partner.example").unwrap(),
            scope: Scope::Config,
            upstream: None,
            source: "egress.ask: partner.example".into(),
        }]
        .into_iter()
        .filter(|_| asks_egress)
        .collect(),
        ..Default::default()
    };
    let e = Engine::new(EngineParts { jail: Some(jail), rules, ..Default::default() }).with_egress(egress);
    (dir, base, e)
}

#[test]
fn an_egress_ask_tied_with_a_jail_escape_is_configured_whichever_is_named() {
    let (_dir, base, e) = jailed(&[], true);
    let write = |p: &str, content: &str| {
        e.decide("up", "Write", &json!({ "file_path": base.join(p), "content": content }))
    };
    let bare = write("outside/a.txt", "plain words");
    assert_eq!((bare.effect, bare.origin), (Effect::Ask, Origin::Escape), "{bare:?}");
    let both = write("outside/a.txt", "upload to https://partner.example/drop");
    assert_eq!((both.effect, both.origin), (Effect::Ask, Origin::Configured), "{both:?}");
    let inside = write("root/a.txt", "upload to https://partner.example/drop");
    assert_eq!((inside.effect, inside.origin), (Effect::Ask, Origin::Configured), "{inside:?}");
}

#[test]
fn a_configured_ask_on_any_reading_of_a_resource_uri_makes_the_ask_configured() {
    let (_dir, base, e) = jailed(&[], false);
    let (_dir2, base2, e2) = jailed(&["secret/**"], false);
    let read = |e: &Engine, uri: String| e.decide("up", "mcp__up__resources/read", &json!({ "uri": uri }));
    // Cut at the query, the path escapes to `outside`; kept, it climbs to `secret`.
    let uri = |b: &std::path::Path| format!("file://{}/outside/x?/../../secret/key", b.display());
    let floor_only = read(&e, uri(&base));
    assert_eq!(floor_only.effect, Effect::Ask, "{floor_only:?}");
    assert_ne!(floor_only.origin, Origin::Configured, "{floor_only:?}");
    let hidden = read(&e2, uri(&base2));
    assert_eq!((hidden.effect, hidden.origin), (Effect::Ask, Origin::Configured), "{hidden:?}");
}

#[test]
fn a_line_is_a_floor_ask_only_when_every_ask_in_it_is_the_floors() {
    let e = engine(&[("Shell(git push:*)", Effect::Ask), ("Shell(echo:*)", Effect::Allow)]);
    for (line, want) in [
        ("touch a", Origin::Floor),
        ("echo $(rm -rf x)", Origin::Floor),
        ("touch a; git push origin main", Origin::Configured),
        ("git push origin main; touch a", Origin::Configured),
        ("echo $(date) && git push", Origin::Configured),
    ] {
        let d = shell(&e, line);
        assert_eq!((d.effect, d.origin), (Effect::Ask, want), "{line}: {d:?}");
    }
}
