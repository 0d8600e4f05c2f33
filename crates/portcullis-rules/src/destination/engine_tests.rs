//! `Fetch(domain:…)` rules in the engine: every spelling meets the deny, no trick meets the allow.

use serde_json::json;

use crate::spec::RuleSpec;
use crate::{Effect, Engine, EngineParts, Posture, Rule, Scope};

fn engine(rules: &[(&str, Effect)], posture: Posture) -> Engine {
    let rules = rules
        .iter()
        .map(|&(s, effect)| Rule { spec: RuleSpec::parse(s).unwrap(), effect, scope: Scope::Config })
        .collect();
    Engine::new(EngineParts { rules, posture, ..EngineParts::default() })
}

fn fetch(e: &Engine, url: &str) -> crate::Decision {
    e.decide("", "WebFetch", &json!({ "url": url }))
}

#[test]
fn a_deny_on_an_address_denies_every_spelling_of_it() {
    // The auto posture allows every fetch no rule names, so only the deny can refuse these.
    let e = engine(&[("Fetch(domain:127.0.0.1)", Effect::Deny)], Posture::Auto);
    let spellings = [
        "http://127.0.0.1/",
        "http://2130706433:8080/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://127.0.0.1./",
        "http://%31%32%37.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]:9000/admin",
        "http://user@127.1@evil.example@0x7f.1/",
        "127.1:8080",
        "http://localhost:8080/",
        "not a url at all",
        "http://docs.r\ts/",
    ];
    for url in spellings {
        let d = fetch(&e, url);
        assert_eq!(d.effect, Effect::Deny, "{url:?}: {}", d.reason);
    }
    // (Another loopback address would meet egress's loopback default: a public one next to it.)
    for url in ["http://128.0.0.1/", "https://docs.rs/x"] {
        assert_eq!(fetch(&e, url).effect, Effect::Allow, "{url:?}");
    }
}

#[test]
fn an_allow_on_a_domain_allows_it_and_never_a_url_read_two_ways() {
    let e = engine(&[("Fetch(domain:docs.rs)", Effect::Allow)], Posture::Strict);
    for url in ["https://docs.rs/x", "https://api.DOCS.rs./y", r"https://a.docs.rs\@docs.rs/"] {
        assert_eq!(fetch(&e, url).effect, Effect::Allow, "{url:?}");
    }
    for url in [
        r"https://evil.example\@docs.rs/",
        "https://docs.rs.evil.example/",
        "https://docs.rs@evil.example/",
        "docs.rs:443@evil.example",
    ] {
        let d = fetch(&e, url);
        assert_eq!(d.effect, Effect::Ask, "{url:?}: {}", d.reason);
    }
    // No reader reads it: a fetch tool is never sent there, whatever an allow names.
    let d = fetch(&e, "http://docs.rs../");
    assert_eq!(d.effect, Effect::Deny, "{}", d.reason);
    assert!(d.reason.contains("cannot be read"), "{}", d.reason);
    let rule = &e.rules()[0];
    assert!(e.rule_matches_example(rule, "https://docs.rs/"));
    assert!(!e.rule_matches_example(rule, r"https://evil.example\@docs.rs/"));
}

#[test]
fn a_url_read_two_ways_meets_an_ask_and_the_reason_says_so() {
    let e = engine(&[("Fetch(domain:docs.rs)", Effect::Ask)], Posture::Auto);
    let d = fetch(&e, r"https://evil.example\@docs.rs/");
    assert_eq!(d.effect, Effect::Ask);
    assert!(d.reason.contains("reads differently to different fetchers"), "{}", d.reason);
    assert!(d.reason.contains("https://evil.example:443") && d.reason.contains("https://docs.rs:443"));
    let clear = fetch(&e, "https://docs.rs/");
    assert_eq!(clear.effect, Effect::Ask);
    assert!(!clear.reason.contains("differently"), "{}", clear.reason);
    assert_eq!(fetch(&e, "https://crates.io/").effect, Effect::Allow);
}

#[test]
fn a_fetch_rule_with_a_host_that_is_no_host_is_refused() {
    for bad in [
        "Fetch(domain:docs.rs/x)",
        "Fetch(domain:docs.rs:443)",
        "Fetch(domain:*.1.2.3.4)",
        "Fetch(domain:a b)",
    ] {
        assert!(RuleSpec::parse(bad).is_err(), "{bad}");
    }
    // A tool rule's `domain:` text that is no host stays a plain glob, as before.
    assert!(RuleSpec::parse("mcp__x__y(domain:a b)").is_ok());
}
