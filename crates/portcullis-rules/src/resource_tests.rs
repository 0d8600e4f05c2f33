//! Layer 1 over resource requests: file, fetch and name rules hold for every spelling of a URI.

use serde_json::json;

use super::spec::RuleSpec;
use super::{Effect, Engine, EngineParts, Posture, Rule, Scope};

fn engine(posture: Posture, rules: &[(&str, Effect)]) -> Engine {
    let rules = rules
        .iter()
        .map(|(r, effect)| Rule { spec: RuleSpec::parse(r).unwrap(), effect: *effect, scope: Scope::Config })
        .collect();
    Engine::new(EngineParts { rules, posture, ..Default::default() })
}

fn read(e: &Engine, uri: &str) -> Effect {
    e.decide("fs", "mcp__fs__resources/read", &json!({ "uri": uri })).effect
}

#[test]
fn a_file_rule_holds_for_every_spelling_of_a_file_uri() {
    let e = engine(Posture::Auto, &[("File(/etc/**)", Effect::Deny)]);
    for uri in [
        "file:///etc/shadow",
        "file:///etc/../etc/shadow",
        "file://localhost/etc/shadow",
        "file:////etc/shadow",
        "file:/etc/shadow",
        "FILE:///etc/shadow",
        "file:///tmp/%2e%2e/etc/shadow",
        "file:///tmp/%2E%2E/%65tc/shadow",
        "file:///tmp/x%2F..%2F..%2Fetc/shadow",
        "file:///etc/shadow?download=1",
        "file:///etc/shadow#top",
        "file:\\\\\\etc\\shadow",
        "file://evil.example/etc/shadow",
        "/etc/shadow",
        " file:///etc/shadow",
        "file:///proc/self/environ",
        "file:///home/u/.env",
    ] {
        assert_eq!(read(&e, uri), Effect::Deny, "{uri}");
    }
    assert_eq!(read(&e, "file:///tmp/notes.txt"), Effect::Allow);
    assert_eq!(read(&e, "file:///tmp/etc/shadow"), Effect::Allow, "not under /etc");
}

#[test]
fn read_rules_and_the_read_only_floor_apply_to_file_uris() {
    let e = engine(Posture::Strict, &[("Read(/srv/**)", Effect::Ask)]);
    assert_eq!(read(&e, "file:///tmp/a"), Effect::Allow, "a read is read-only");
    assert_eq!(read(&e, "file:///srv/a"), Effect::Ask);
    let e = engine(Posture::Strict, &[("Write(/tmp/**)", Effect::Deny)]);
    assert_eq!(read(&e, "file:///tmp/a"), Effect::Allow, "a read is not a write");
}

#[test]
fn web_uris_meet_the_fetch_rules_and_other_schemes_the_methods_name() {
    let e = engine(
        Posture::Strict,
        &[
            ("Fetch(domain:attacker.example)", Effect::Deny),
            ("Fetch(domain:example.com)", Effect::Allow),
            ("mcp__fs__resources/read(memo://*)", Effect::Allow),
            ("mcp__fs__resources/read(secret://*)", Effect::Deny),
        ],
    );
    for (uri, want) in [
        ("https://attacker.example/?d=x", Effect::Deny),
        ("HTTPS://ATTACKER.EXAMPLE/", Effect::Deny),
        ("https://example.com/a", Effect::Allow),
        ("https://other.example/a", Effect::Ask),
        ("memo://insights", Effect::Allow),
        ("secret://keys", Effect::Deny),
        ("test://static/1", Effect::Ask),
    ] {
        assert_eq!(read(&e, uri), want, "{uri}");
    }
    let subscribe =
        |e: &Engine| e.decide("fs", "mcp__fs__resources/subscribe", &json!({ "uri": "secret://keys" }));
    assert_eq!(subscribe(&e).effect, Effect::Ask, "a rule naming resources/read names only that method");
    let e = engine(Posture::Strict, &[("mcp__fs__resources/*(secret://*)", Effect::Deny)]);
    assert_eq!(subscribe(&e).effect, Effect::Deny, "subscribing names the resource too");
    assert_eq!(read(&e, "secret://keys"), Effect::Deny);
    let e = engine(Posture::Strict, &[("File(/etc/**)", Effect::Deny)]);
    let d = e.decide("fs", "mcp__fs__resources/subscribe", &json!({ "uri": "file:///etc/shadow" }));
    assert_eq!(d.effect, Effect::Deny);
}

#[test]
fn a_request_without_a_string_uri_is_asked_and_a_tool_rule_can_name_the_method() {
    let e = engine(Posture::Auto, &[]);
    let d = e.decide("fs", "mcp__fs__resources/read", &json!({ "uri": ["file:///etc/shadow"] }));
    assert_eq!(d.effect, Effect::Ask);
    let e = engine(Posture::Auto, &[("mcp__fs__resources/read", Effect::Deny)]);
    assert_eq!(read(&e, "memo://x"), Effect::Deny);
    assert_eq!(read(&e, "file:///tmp/x"), Effect::Deny);
}

#[test]
fn examples_of_method_rules_are_read_as_uris() {
    let e = engine(Posture::Strict, &[]);
    let rule =
        |r: &str| Rule { spec: RuleSpec::parse(r).unwrap(), effect: Effect::Deny, scope: Scope::Config };
    let files = rule("mcp__fs__resources/read(/etc/**)");
    assert!(e.rule_matches_example(&files, "mcp__fs__resources/read(file:///etc/shadow)"));
    assert!(e.rule_matches_example(&files, "mcp__fs__resources/read(file://localhost/tmp/%2e%2e/etc/x)"));
    assert!(!e.rule_matches_example(&files, "mcp__fs__resources/read(file:///tmp/x)"));
    let memo = rule("mcp__fs__resources/read(memo://*)");
    assert!(e.rule_matches_example(&memo, "mcp__fs__resources/read(memo://a)"));
}
