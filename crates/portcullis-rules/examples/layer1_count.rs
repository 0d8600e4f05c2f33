//! The layer1 bench's calls, a fixed number of times each, for an instruction count that load on
//! the machine does not change: `valgrind --tool=callgrind target/release/examples/layer1_count
//! LINE_INDEX N` (0 `git status`, 1 `cat README.md`, 2 `grep -rn TODO src`, 3 eight commands).

use portcullis_rules::spec::RuleSpec;
use portcullis_rules::{Effect, Engine, EngineParts, Rule, Scope};
use serde_json::json;

fn main() {
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
    let e = Engine::new(EngineParts { rules, ..EngineParts::default() });
    let lines = [
        "git status",
        "cat README.md",
        "grep -rn TODO src",
        "cd src && git -C .. status && ls -la | head -5; cat README.md | grep -n x > /dev/null; rg -n foo lib; wc -l Cargo.toml",
    ];
    let mut args = std::env::args().skip(1);
    let which: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let call = json!({ "command": lines[which.min(3)] });
    let mut last = None;
    for _ in 0..n {
        last = Some(e.decide("claude", "Bash", std::hint::black_box(&call)));
    }
    println!("{:?}", last.map(|d| d.effect));
}
