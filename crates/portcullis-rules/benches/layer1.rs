//! Layer 1 alone, per call: parse, effects, rules, floor — the issue-23 targets (a simple
//! command under 10 µs, one line of eight commands under 30 µs). Run:
//! `cargo bench -p portcullis-rules --bench layer1`. The same file runs on an older commit for a
//! before/after (it uses only the engine's public API of both).

use criterion::{criterion_group, criterion_main, Criterion};
use portcullis_rules::spec::RuleSpec;
use portcullis_rules::{Effect, Engine, EngineParts, Rule, Scope};
use serde_json::json;

fn engine() -> Engine {
    let rule = |s: &str, effect| Rule { spec: RuleSpec::parse(s).unwrap(), effect, scope: Scope::Config };
    let rules = vec![
        rule("Shell(git status:*)", Effect::Allow),
        rule("Shell(cargo test:*)", Effect::Allow),
        rule("Shell(npm run:*)", Effect::Allow),
        rule("Shell(git push:*)", Effect::Ask),
        rule("Shell(rm:*)", Effect::Deny),
        rule("Shell(curl:*)", Effect::Deny),
        rule("File(/etc/**)", Effect::Deny),
        rule("Fetch(domain:127.0.0.1)", Effect::Deny),
    ];
    Engine::new(EngineParts { rules, ..EngineParts::default() })
}

fn bench(c: &mut Criterion) {
    let e = engine();
    let call = |line: &str| json!({ "command": line });
    for (name, line) in [
        ("simple: git status", "git status"),
        ("simple: cat README.md", "cat README.md"),
        ("simple: grep -rn TODO src", "grep -rn TODO src"),
        (
            "8 commands",
            "cd src && git -C .. status && ls -la | head -5; cat README.md | grep -n x > /dev/null; rg -n foo lib; wc -l Cargo.toml",
        ),
    ] {
        let args = call(line);
        c.bench_function(name, |b| b.iter(|| e.decide("claude", "Bash", std::hint::black_box(&args))));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
