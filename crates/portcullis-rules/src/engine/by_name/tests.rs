//! A name-level deny is a promise about every call: the table says which tools are withheld under
//! which policy, and the property holds `decide` to it for any arguments.

use std::collections::HashMap;

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::kinds::{Access, KindSpec, ToolKinds};
use crate::spec::RuleSpec;
use crate::{Effect, Engine, EngineParts, Posture, Profile, Rule, Scope};

const TOOLS: &[&str] = &["mcp__up__echo", "mcp__up__sh", "mcp__up__read", "mcp__up__write", "mcp__up__get"];

fn kinds() -> ToolKinds {
    let file = |path: &str, access| KindSpec::File { path: path.into(), access };
    ToolKinds::new([
        ("mcp__up__sh".to_owned(), KindSpec::bash("/command")),
        ("mcp__up__read".to_owned(), file("/path", Access::Read)),
        ("mcp__up__write".to_owned(), file("/path", Access::Write)),
        ("mcp__up__get".to_owned(), KindSpec::Fetch { url: "/url".into() }),
    ])
}

/// An engine from `deny` and `ask` rule specs, an upstream profile for `up` and an agent profile.
fn engine(deny: &[&str], ask: &[&str], upstream: Option<Profile>, agent: Option<Profile>) -> Engine {
    let rule =
        |effect| move |s: &&str| Rule { spec: RuleSpec::parse(s).expect(s), effect, scope: Scope::Config };
    let mut rules: Vec<Rule> = deny.iter().map(rule(Effect::Deny)).collect();
    rules.extend(ask.iter().map(rule(Effect::Ask)));
    let profiles: HashMap<String, Profile> = upstream.map(|p| ("up".to_owned(), p)).into_iter().collect();
    Engine::new(EngineParts {
        rules,
        kinds: kinds(),
        profiles,
        agent_profile: agent,
        ..EngineParts::default()
    })
}

/// The tools of [`TOOLS`] (short names) the engine denies by name.
fn withheld(e: &Engine) -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|t| e.denies_by_name("up", t).is_some())
        .map(|t| t.trim_start_matches("mcp__up__"))
        .collect()
}

/// Deny specs, ask specs, the upstream's profile, the agent's profile, and the tools withheld.
type Row = (
    &'static [&'static str],
    &'static [&'static str],
    Option<Profile>,
    Option<Profile>,
    &'static [&'static str],
);

#[test]
fn only_a_deny_that_covers_every_call_withholds_a_tool() {
    use Profile::Readonly;
    let rows: &[Row] = &[
        (&["mcp__up__echo"], &[], None, None, &["echo"]),
        (&["mcp__up__*"], &[], None, None, &["echo", "sh", "read", "write", "get"]),
        (&["mcp__other__*"], &[], None, None, &[]),
        (&["mcp__up__echo(secret)"], &[], None, None, &[]),
        (&["Shell(git push:*)"], &[], None, None, &[]),
        (&[], &["mcp__up__echo"], None, None, &[]),
        (&["Shell"], &[], None, None, &["sh"]),
        (&["Read"], &[], None, None, &["read"]),
        (&["Write"], &[], None, None, &["write"]),
        (&["File"], &[], None, None, &["read", "write"]),
        (&["Fetch"], &[], None, None, &["get"]),
        (&["Fetch(domain:example.com)"], &[], None, None, &[]),
        (&["File(/etc/**)"], &[], None, None, &[]),
        (&[], &[], Some(Readonly), None, &["echo", "write", "get"]),
        (&[], &[], None, Some(Readonly), &["echo", "write", "get"]),
        (&[], &[], Some(Profile::Privileged), Some(Profile::Standard), &[]),
    ];
    for (deny, ask, upstream, agent, want) in rows {
        let e = engine(deny, ask, *upstream, *agent);
        assert_eq!(withheld(&e), *want, "deny {deny:?} ask {ask:?} profiles {upstream:?}/{agent:?}");
        assert_eq!(
            e.can_deny_by_name(),
            !want.is_empty() || deny.iter().any(|d| !d.contains('(')),
            "{deny:?}"
        );
    }
}

#[test]
fn another_upstream_is_not_withheld_by_this_ones_profile() {
    let e = engine(&[], &[], Some(Profile::Readonly), None);
    assert!(e.denies_by_name("up", "mcp__up__echo").is_some());
    assert!(e.denies_by_name("other", "mcp__other__echo").is_none());
}

#[test]
fn the_reason_names_the_tool_and_the_rule() {
    let d = engine(&["mcp__up__e*"], &[], None, None).denies_by_name("up", "mcp__up__echo").unwrap();
    assert_eq!(d.rule, "mcp__up__e*");
    assert!(d.reason.contains("mcp__up__echo") && d.reason.contains("mcp__up__e*"), "{}", d.reason);
    let d = engine(&[], &[], None, Some(Profile::Readonly)).denies_by_name("up", "mcp__up__get").unwrap();
    assert_eq!(d.rule, "profile: readonly");
}

/// Arguments that reach every path of `decide`: missing or non-string arguments, empty and
/// unparseable shell lines, reads and writes of secrets, fetches, whatever else.
fn args() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        Just(Value::String(String::new())),
        Just(json!("ls")),
        Just(json!("(")),
        Just(json!("rm -rf /")),
        Just(json!("cat ~/.ssh/id_rsa")),
        Just(json!("git push origin")),
        Just(json!("/etc/passwd")),
        Just(json!("notes/today.md")),
        Just(json!("https://example.com/x")),
        Just(json!("secret")),
        Just(json!(1)),
        Just(Value::Null),
        "[ -~]{0,12}".prop_map(Value::String),
    ];
    proptest::collection::btree_map(prop_oneof!["command", "path", "url", "x"], text, 0..3)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn policies() -> impl Strategy<Value = Engine> {
    let deny = prop_oneof![
        Just(vec![]),
        Just(vec!["mcp__up__*"]),
        Just(vec!["mcp__up__sh", "mcp__up__get"]),
        Just(vec!["Shell", "Write"]),
        Just(vec!["Read", "Fetch"]),
        Just(vec!["File", "Shell(git push:*)"]),
    ];
    let profile = prop_oneof![Just(None), Just(Some(Profile::Readonly)), Just(Some(Profile::Privileged))];
    let posture = prop_oneof![Just(Posture::Strict), Just(Posture::Trusted), Just(Posture::Yolo)];
    (deny, profile.clone(), profile, posture).prop_map(|(deny, up, agent, posture)| {
        let e = engine(&deny, &["mcp__up__echo", "Shell(ls:*)"], up, agent);
        let mut parts = EngineParts { posture, ..EngineParts::default() };
        parts.rules = e.rules().to_vec();
        parts.kinds = kinds();
        parts.profiles = up.map(|p| ("up".to_owned(), p)).into_iter().collect();
        parts.agent_profile = agent;
        Engine::new(parts)
    })
}

proptest! {
    /// Whatever the arguments, a tool withheld by name is denied when called.
    #[test]
    fn a_tool_denied_by_name_is_denied_whatever_its_arguments(
        e in policies(),
        tool in proptest::sample::select(TOOLS),
        args in args(),
    ) {
        if let Some(by_name) = e.denies_by_name("up", tool) {
            let d = e.decide("up", tool, &args);
            prop_assert_eq!(d.effect, Effect::Deny, "{} withheld ({}) but {:?}: {}", tool, by_name.reason, d.effect, d.reason);
        }
    }
}
