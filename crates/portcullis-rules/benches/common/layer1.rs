//! What the layer1 bench measures, shared with the `layer1_count` example (which runs the same
//! calls a fixed number of times, for instruction counts).

use portcullis_rules::spec::RuleSpec;
use portcullis_rules::{Effect, Engine, EngineParts, Rule, Scope};

/// The engine every case is decided by.
pub fn engine() -> Engine {
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

/// (name, shell line), in the order the example's LINE_INDEX counts.
pub const CASES: [(&str, &str); 4] = [
    ("simple: git status", "git status"),
    ("simple: cat README.md", "cat README.md"),
    ("simple: grep -rn TODO src", "grep -rn TODO src"),
    (
        "8 commands",
        "cd src && git -C .. status && ls -la | head -5; cat README.md | grep -n x > /dev/null; rg -n foo lib; wc -l Cargo.toml",
    ),
];
