//! Egress on the allow path, per call: find every destination in the arguments and match it
//! against configured entries and the defaults. Run: `cargo bench -p portcullis-rules --bench egress`.

use criterion::{criterion_group, criterion_main, Criterion};
use portcullis_rules::egress::{Egress, EgressRule, Sink, Target};
use portcullis_rules::kinds::{KindSpec, ToolKinds};
use portcullis_rules::{Effect, Engine, EngineParts, Scope};
use serde_json::{json, Value};

fn engine(configured: bool) -> Engine {
    let kinds = ToolKinds::new([
        ("mcp__web__fetch".to_owned(), KindSpec::Fetch { url: "/url".into() }),
        ("mcp__sh__run".to_owned(), KindSpec::bash("/command")),
    ]);
    let mut egress = Egress { sinks: vec![Sink::new("mcp__mail__*", None)], ..Egress::default() };
    if configured {
        for (effect, t) in [
            (Effect::Allow, "localhost"),
            (Effect::Ask, "email:partner.example"),
            (Effect::Ask, "iban"),
            (Effect::Deny, "evil.example"),
            (Effect::Deny, "203.0.113.0/24"),
        ] {
            let target = Target::parse(t).expect("entry");
            let source = format!("egress.{}: {t}", effect.as_str());
            egress.rules.push(EgressRule { effect, target, scope: Scope::Config, upstream: None, source });
        }
    }
    Engine::new(EngineParts { kinds, ..EngineParts::default() }).with_egress(egress)
}

fn cases() -> Vec<(&'static str, &'static str, Value)> {
    let prose = "Quarterly numbers are attached; see https://docs.example.com/q3/report?id=42 and \
                 the summary at wiki.example.org/finance. Questions to finance@example.com. "
        .repeat(16);
    vec![
        ("no destination", "mcp__notes__add", json!({"title": "groceries", "items": ["milk", "eggs", 3]})),
        ("fetch one URL", "mcp__web__fetch", json!({"url": "https://docs.rs/serde/latest/serde/"})),
        (
            "mail, short",
            "mcp__mail__send",
            json!({"to": ["bob@example.com"], "subject": "hi", "body": "see https://example.com/x"}),
        ),
        ("mail, 2.6 KB prose", "mcp__mail__send", json!({"to": ["bob@example.com"], "body": prose})),
        // A shell tool: egress alone analyses the line (in `decide` it reuses the rules' analysis).
        ("shell git status", "mcp__sh__run", json!({"command": "git status"})),
        ("shell curl", "mcp__sh__run", json!({"command": "curl -sSL https://docs.rs/serde"})),
    ]
}

fn bench(c: &mut Criterion) {
    for configured in [false, true] {
        let e = engine(configured);
        let label = if configured { "configured" } else { "defaults" };
        for (name, tool, args) in cases() {
            assert!(e.egress_decision("web", tool, &args).is_none(), "{name}: the allow path");
            c.bench_function(&format!("egress {label}: {name}"), |b| {
                b.iter(|| e.egress_decision("web", tool, std::hint::black_box(&args)))
            });
        }
        // The whole of Layer 1 for the same calls, egress included.
        for (name, tool, args) in cases() {
            c.bench_function(&format!("decide {label}: {name}"), |b| {
                b.iter(|| e.decide("web", tool, std::hint::black_box(&args)))
            });
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
