//! Egress, table-driven: what is found in arguments, what the defaults refuse for each reach,
//! how configured entries combine, and that no input makes the scan panic.

use std::ops::ControlFlow;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::scan::{walk, What};
use super::*;
use crate::kinds::{KindSpec, ToolKinds};
use crate::{Engine, EngineParts};

fn found(args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let _ = walk::<()>(args, |f| {
        out.push(match f.what {
            What::Url { reading, .. } => {
                reading.destinations().iter().map(|d| d.host.to_string()).collect::<Vec<_>>().join("|")
            }
            What::Host(h) => h.to_string(),
            What::Email(h) => format!("email:{h}"),
            What::Iban(a) => format!("iban:{a}"),
        });
        ControlFlow::Continue(())
    });
    out
}

#[test]
fn every_spelling_of_a_destination_is_found_where_a_program_would_read_it() {
    let cases: &[(Value, &[&str])] = &[
        (json!({"url": "http://169.254.169.254/latest/meta-data/"}), &["169.254.169.254"]),
        (json!({"url": "http://2852039166/"}), &["169.254.169.254"]),
        (json!({"url": "http://0xa9.0xfe.0xa9.0xfe/"}), &["169.254.169.254"]),
        (json!({"url": "http://[::ffff:a9fe:a9fe]/"}), &["[::ffff:169.254.169.254]"]),
        (json!({"host": "[fd00:ec2::254]"}), &["[fd00:ec2::254]"]),
        (json!({"host": "fd00:ec2::254"}), &["[fd00:ec2::254]"]),
        (json!({"host": "metadata.google.internal."}), &["metadata.google.internal"]),
        (json!({"host": "METADATA.Google.Internal"}), &["metadata.google.internal"]),
        (json!({"host": "0x7f000001"}), &["127.0.0.1"]),
        (json!({"host": "127.1:8080"}), &["127.0.0.1"]),
        (json!({"host": "localhost"}), &["localhost"]),
        (json!({"body": "see 10.0.0.5:8080/admin for the panel"}), &["10.0.0.5"]),
        (json!({"body": "go to (https://docs.rs/serde), then docs.rs/x."}), &["docs.rs", "docs.rs"]),
        (json!({"to": ["Alice <alice@Example.COM>"]}), &["email:example.com"]),
        (json!({"iban": "DE89 3704 0044 0532 0130 00"}), &["iban:DE89370400440532013000"]),
        (json!({"remote": "git@10.0.0.5:org/repo.git"}), &["email:10.0.0.5"]),
        (json!({"to": "ops@[::1]"}), &["email:[::1]"]),
        (json!({"http://evil.example/x": 1}), &["evil.example"]),
        (
            json!({"u": "https://ok.example/?next=http://169.254.169.254/"}),
            &["ok.example", "169.254.169.254"],
        ),
        (json!({"u": r"https://evil.example\@docs.rs/"}), &["evil.example|docs.rs"]),
        // Words, versions, numbers and file names are not destinations.
        (
            json!({"body": "macOS 10.15.7 on port 8080, id 2130706433, main.rs, localhost mentioned"}),
            &["main.rs"],
        ),
        (json!({"id": "2130706433", "n": 2130706433, "t": "12:30"}), &[]),
        (json!({"iban": "DE00 3704 0044 0532 0130 00"}), &[]),
    ];
    for (args, want) in cases {
        assert_eq!(found(args), *want, "{args}");
    }
}

fn engine(kinds: ToolKinds, egress: Egress, posture: Posture) -> Engine {
    Engine::new(EngineParts { kinds, posture, ..EngineParts::default() }).with_egress(egress)
}

fn kinds() -> ToolKinds {
    ToolKinds::new([
        ("mcp__web__fetch".to_owned(), KindSpec::Fetch { url: "/url".into() }),
        ("mcp__sh__run".to_owned(), KindSpec::bash("/command")),
        (
            "mcp__fs__write".to_owned(),
            KindSpec::File { path: "/path".into(), access: crate::kinds::Access::Write },
        ),
    ])
}

fn rule(effect: Effect, text: &str, upstream: Option<&str>) -> EgressRule {
    EgressRule {
        effect,
        target: Target::parse(text).unwrap(),
        scope: Scope::Config,
        upstream: upstream.map(str::to_owned),
        source: format!("egress.{}: {text}", effect.as_str()),
    }
}

fn effect(e: &Engine, qualified: &str, args: Value) -> (Effect, String) {
    let d = e.egress_decision("web", qualified, &args);
    d.map_or((Effect::Allow, String::new()), |d| (d.effect, d.rule))
}

#[test]
fn defaults_refuse_special_destinations_by_reach() {
    let sinks = Egress { sinks: vec![Sink::new("mcp__mail__*", None)], ..Egress::default() };
    let e = engine(kinds(), sinks, Posture::Strict);
    let cases: &[(&str, Value, Effect, &str)] = &[
        ("mcp__web__fetch", json!({"url": "http://127.1/"}), Effect::Deny, "egress: loopback"),
        ("mcp__web__fetch", json!({"url": "http://192.168.1.1/"}), Effect::Deny, "egress: private"),
        ("mcp__web__fetch", json!({"url": "http://[fe80::1]/"}), Effect::Deny, "egress: link-local"),
        ("mcp__web__fetch", json!({"url": "http://db/"}), Effect::Deny, "egress: private"),
        ("mcp__web__fetch", json!({"url": "https://docs.rs/"}), Effect::Allow, ""),
        ("mcp__mail__send", json!({"body": "ping http://localhost:3000"}), Effect::Deny, "egress: loopback"),
        (
            "mcp__sh__run",
            json!({"command": "curl -s http://0251.0376.0251.0376/"}),
            Effect::Deny,
            "egress: metadata",
        ),
        ("mcp__sh__run", json!({"command": "cat < /dev/tcp/10.1.2.3/80"}), Effect::Deny, "egress: private"),
        ("mcp__sh__run", json!({"command": "echo http://localhost/"}), Effect::Allow, ""),
        // Unmarked tools: only metadata, and not a whole value that is just the word.
        (
            "mcp__notes__add",
            json!({"text": "fetch http://169.254.169.254/ now"}),
            Effect::Deny,
            "egress: metadata",
        ),
        ("mcp__notes__add", json!({"text": "http://localhost:3000"}), Effect::Allow, ""),
        ("mcp__notes__add", json!({"kind": "metadata"}), Effect::Allow, ""),
        ("mcp__mail__send", json!({"host": "metadata"}), Effect::Deny, "egress: metadata"),
        // File tools: nothing by default.
        ("mcp__fs__write", json!({"path": "/x", "content": "http://169.254.169.254/"}), Effect::Allow, ""),
    ];
    for (tool, args, want, rule) in cases {
        assert_eq!(effect(&e, tool, args.clone()), (*want, rule.to_string()), "{tool} {args}");
    }
    let yolo = engine(kinds(), Egress::default(), Posture::Yolo);
    assert_eq!(effect(&yolo, "mcp__web__fetch", json!({"url": "http://169.254.169.254/"})).0, Effect::Allow);
}

#[test]
fn configured_entries_are_deny_dominant_and_an_allow_only_lifts_a_default() {
    let rules = vec![
        rule(Effect::Allow, "localhost", Some("web")),
        rule(Effect::Ask, "email:example.com", None),
        rule(Effect::Deny, "evil.example", None),
        rule(Effect::Allow, "evil.example", None),
        rule(Effect::Ask, "iban", None),
        rule(Effect::Deny, "203.0.113.0/24", None),
    ];
    let e = engine(kinds(), Egress { rules, ..Egress::default() }, Posture::Strict);
    let cases: &[(Value, Effect)] = &[
        (json!({"url": "http://localhost:3000/"}), Effect::Allow),
        (json!({"url": "http://127.0.0.1:3000/"}), Effect::Deny),
        (json!({"url": "https://api.evil.example/"}), Effect::Deny),
        (json!({"url": "https://docs.rs/", "note": "mail bob@example.com"}), Effect::Ask),
        (json!({"url": "https://docs.rs/", "to": "GB82 WEST 1234 5698 7654 32"}), Effect::Ask),
        (json!({"url": "http://[::ffff:203.0.113.9]/"}), Effect::Deny),
        (json!({"url": r"https://evil.example\@docs.rs/"}), Effect::Deny),
    ];
    for (args, want) in cases {
        assert_eq!(effect(&e, "mcp__web__fetch", args.clone()).0, *want, "{args}");
    }
    // The upstream's allow holds only on that upstream.
    let d = e.egress_decision("other", "mcp__web__fetch", &json!({"url": "http://localhost/"}));
    assert_eq!(d.map(|d| d.effect), Some(Effect::Deny));
}

#[test]
fn a_refusal_names_the_destination_the_argument_and_the_line_that_allows_it() {
    let configured = Egress { upstreams: vec!["web".into()], ..Egress::default() };
    let e = engine(kinds(), configured, Posture::Strict);
    let d =
        e.egress_decision("web", "mcp__web__fetch", &json!({"url": "http://localhost:5173/app"})).unwrap();
    assert!(d.reason.contains("argument /url"), "{}", d.reason);
    assert!(d.reason.contains(r#"`egress: {allow: ["localhost"]}`"#), "{}", d.reason);
    assert!(d.reason.contains("upstreams.web"), "{}", d.reason);
    // A call with no configured upstream (Claude Code's built-in tools) gets the top-level line.
    let d = e.egress_decision("claude-code", "mcp__web__fetch", &json!({"url": "http://[::1]/"})).unwrap();
    assert!(d.reason.ends_with(r#"`egress: {allow: ["::1"]}`"#), "{}", d.reason);
}

#[test]
fn egress_decides_with_the_other_rules_and_the_worse_wins() {
    let e = engine(kinds(), Egress::default(), Posture::Auto);
    let d = e.decide("web", "mcp__web__fetch", &json!({"url": "http://169.254.169.254/"}));
    assert_eq!((d.effect, d.rule.as_str()), (Effect::Deny, "egress: metadata"));
    let d = e.decide("web", "mcp__web__fetch", &json!({"url": "https://docs.rs/"}));
    assert_eq!(d.effect, Effect::Allow);
    assert!(e.needs_args("mcp__anything__at_all"));
}

#[test]
fn entries_that_name_nothing_are_refused_at_compile() {
    for bad in ["http://x/", "a@b.example", "10.0.0.0/33", "iban:DE00370400440532013000", "*.127.0.0.1"] {
        assert!(Target::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn huge_and_deep_arguments_are_scanned_without_recursion() {
    // As deep as serde_json parses (its recursion limit is 128), at the bottom of the last key.
    let mut text = r#""http://169.254.169.254/""#.to_owned();
    for i in 0..62 {
        text = format!(r#"{{"k{i}": [1, "x", {text}]}}"#);
    }
    let v: Value = serde_json::from_str(&text).unwrap();
    let e = engine(kinds(), Egress::default(), Posture::Strict);
    assert_eq!(effect(&e, "mcp__notes__add", v).0, Effect::Deny);
    let big = "word https://docs.rs/x a.b.example,c:d ".repeat(50_000);
    assert_eq!(effect(&e, "mcp__web__fetch", json!({ "x": big })).0, Effect::Allow);
    // One token of schemes: each read once, from its scheme to the next (the host `http` is a
    // single label, which resolves inside the site).
    let schemes = "http://".repeat(150_000);
    assert_eq!(effect(&e, "mcp__web__fetch", json!({ "x": schemes })).0, Effect::Deny);
}

proptest! {
    #[test]
    fn no_string_makes_the_scan_panic(s in "\\PC{0,64}", t in "[a-z0-9:/.@\\[\\]%\\\\ ]{0,64}") {
        let e = engine(kinds(), Egress::default(), Posture::Strict);
        let _ = e.egress_decision("web", "mcp__web__fetch", &json!({ "a": s, "b": t }));
    }
}

#[test]
fn a_destination_is_reported_at_its_json_pointer() {
    let args = json!({"a": [1, {"b~/c": "see http://x.example/", "http://k.example/": 0}]});
    let mut at = Vec::new();
    let _ = walk::<()>(&args, |f| {
        at.push(f.pointer);
        ControlFlow::Continue(())
    });
    at.sort();
    assert_eq!(at, ["/a/1/b~0~1c", "/a/1/http:~1~1k.example~1"]);
}
