//! Plan mode ([`Engine::decide_planning`]): edits, writes and shell commands not proven read-only
//! are denied before any allow, at every posture; reads, fetches and other tools fall through to
//! the rules as they would outside plan mode.

use serde_json::{json, Value};

use crate::spec::RuleSpec;
use crate::{Effect, Engine, EngineParts, Posture, Rule, Scope};

fn engine(posture: Posture) -> Engine {
    let rules = [
        ("Shell(*)", Effect::Allow),
        ("Write(/**)", Effect::Allow),
        ("Edit(/**)", Effect::Allow),
        ("WebFetch", Effect::Allow),
        ("mcp__mail__send", Effect::Ask),
        ("Read(/srv/secret.txt)", Effect::Deny),
    ]
    .iter()
    .map(|&(s, effect)| Rule { spec: RuleSpec::parse(s).unwrap(), effect, scope: Scope::Config })
    .collect();
    Engine::new(EngineParts { rules, posture, ..EngineParts::default() })
}

#[test]
fn plan_mode_denies_edits_writes_and_unproven_shell_and_lets_the_rest_fall_through() {
    let cases: &[(&str, Value, Option<&str>)] = &[
        // Denied before the allows, at every posture.
        ("Write", json!({"file_path": "/work/a.rs", "content": "x"}), Some("plan mode")),
        ("Edit", json!({"file_path": "/work/a.rs", "old_string": "a", "new_string": "b"}), Some("plan mode")),
        ("Bash", json!({"command": "rm -rf build"}), Some("plan mode")),
        ("Bash", json!({"command": "git status && touch x"}), Some("plan mode")),
        ("Bash", json!({"command": "echo $(whoami) > out"}), Some("plan mode")),
        // Proven read-only: the rules decide as usual.
        ("Bash", json!({"command": "git status"}), None),
        ("Bash", json!({"command": "ls -la src | grep rs"}), None),
        ("Read", json!({"file_path": "/work/a.rs"}), None),
        // Not an edit, a write or shell: the rules decide as usual.
        ("WebFetch", json!({"url": "https://docs.rs/"}), None),
        ("mcp__mail__send", json!({"to": "a@example.com"}), None),
        // A configured deny still denies (as itself).
        ("Read", json!({"file_path": "/srv/secret.txt"}), None),
    ];
    for posture in [Posture::Strict, Posture::Trusted, Posture::Auto, Posture::Yolo] {
        let e = engine(posture);
        for (tool, args, planned) in cases {
            let d = e.decide_planning("up", tool, args);
            match planned {
                Some(rule) => {
                    assert_eq!(
                        (d.effect, d.rule.as_str()),
                        (Effect::Deny, *rule),
                        "{tool} {args} at {posture:?}"
                    );
                    assert!(d.reason.contains("present the plan"), "{}", d.reason);
                }
                None => assert_eq!(
                    d,
                    e.decide("up", tool, args),
                    "{tool} {args} at {posture:?}: as outside plan mode"
                ),
            }
        }
    }
}
