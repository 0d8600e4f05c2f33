//! The escape table through the engine, on real files and symlinks: every posture, reads and
//! writes, a delegated child, and the places refused at every posture.

use std::path::Path;

use serde_json::json;

use crate::jail::{Jail, Resolve, DEFAULT_DENY_NAMES};
use crate::spec::RuleSpec;
use crate::{Decision, Effect, Engine, EngineParts, Layered, Posture, Rule, Scope};

/// `<tmp>/root` (the jail) holding `in.txt` and `link-out -> <tmp>/outside`, beside
/// `<tmp>/outside/notes.txt`.
struct Tree {
    _dir: tempfile::TempDir,
    root: String,
    outside: String,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("root/sub")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("root/in.txt"), "in").unwrap();
    std::fs::write(base.join("outside/notes.txt"), "out").unwrap();
    std::os::unix::fs::symlink(base.join("outside"), base.join("root/link-out")).unwrap();
    std::os::unix::fs::symlink(base.join("outside/notes.txt"), base.join("root/sub/notes-link")).unwrap();
    let s = |p: &Path| p.display().to_string();
    Tree { root: s(&base.join("root")), outside: s(&base.join("outside")), _dir: dir }
}

fn engine(t: &Tree, posture: Posture, deny: &[&str]) -> Engine {
    let names: Vec<String> = DEFAULT_DENY_NAMES.iter().map(|s| s.to_string()).collect();
    let jail = Jail::new(Some(Path::new(&t.root)), &names, Resolve::Filesystem).unwrap();
    let rules = deny
        .iter()
        .map(|r| Rule { spec: RuleSpec::parse(r).unwrap(), effect: Effect::Deny, scope: Scope::Config })
        .collect();
    Engine::new(EngineParts { jail: Some(jail), posture, rules, ..Default::default() })
}

/// Claude Code's `Read` and `Write`, which the default tool kinds know; a relative path is made
/// absolute against the session's directory, the jail's root here, as the hook does.
fn call(e: &Engine, tool: &str, path: &str) -> Decision {
    let path = match (path.starts_with('/'), e.jail_root()) {
        (false, Some(root)) => format!("{}/{path}", root.display()),
        _ => path.to_owned(),
    };
    e.decide("claude-code", tool, &json!({ "file_path": path, "content": "x" }))
}

const POSTURES: [Posture; 4] = [Posture::Strict, Posture::Trusted, Posture::Auto, Posture::Yolo];

#[test]
fn a_path_outside_the_jail_gets_its_postures_row_whatever_spelling_leads_there() {
    use Effect::{Allow, Ask};
    let t = tree();
    let spellings = [
        format!("{}/notes.txt", t.outside),
        format!("{}/../outside/notes.txt", t.root),
        format!("{}/link-out/notes.txt", t.root),
        format!("{}/sub/notes-link", t.root),
        "link-out/new-file".to_owned(),
        "sub/../../outside/notes.txt".to_owned(),
    ];
    //                 strict trusted auto  yolo
    let read = [Ask, Ask, Allow, Allow];
    let write = [Ask, Ask, Ask, Allow];
    for (posture, (read, write)) in POSTURES.iter().zip(read.iter().zip(&write)) {
        let e = engine(&t, *posture, &[]);
        for p in &spellings {
            for (tool, want) in [("Read", read), ("Write", write)] {
                let d = call(&e, tool, p);
                assert_eq!(d.effect, *want, "{tool} {p} at {posture:?}: {d:?}");
                if d.effect == Ask {
                    assert_eq!((d.rule.as_str(), d.scope), (crate::escape::RULE, Scope::Config), "{d:?}");
                    assert!(d.reason.contains("outside the jail") && d.reason.contains("once only"), "{d:?}");
                }
            }
        }
    }
}

#[test]
fn an_escape_ask_is_never_the_waivable_floor_ask_an_inside_path_gets() {
    let t = tree();
    let e = engine(&t, Posture::Strict, &[]);
    let inside = call(&e, "Write", "in.txt");
    assert_eq!((inside.effect, inside.scope), (Effect::Ask, Scope::Builtin), "{inside:?}");
    let outside = call(&e, "Write", "link-out/notes.txt");
    assert_eq!((outside.effect, outside.scope), (Effect::Ask, Scope::Config), "{outside:?}");
    assert_eq!(call(&e, "Read", "in.txt").effect, Effect::Allow);
}

#[test]
fn proc_sys_dev_and_denied_names_are_refused_at_every_posture() {
    let t = tree();
    std::fs::write(format!("{}/.env", t.outside), "K=v").unwrap();
    for posture in POSTURES {
        let e = engine(&t, posture, &[]);
        for p in ["/proc/self/environ", "/sys/kernel/notes", "/dev/null", "../../../../proc/1/mem"] {
            for tool in ["Read", "Write"] {
                let d = call(&e, tool, p);
                assert_eq!((d.effect, d.rule.as_str()), (Effect::Deny, "jail"), "{tool} {p} at {posture:?}");
            }
        }
        let env = call(&e, "Read", &format!("{}/.env", t.outside));
        assert_eq!((env.effect, env.rule.as_str()), (Effect::Deny, "jail"), "{posture:?}: {env:?}");
    }
}

#[test]
fn a_configured_deny_holds_on_an_escaped_path_at_yolo() {
    let t = tree();
    let rule = format!("Read({}/**)", t.outside);
    let e = engine(&t, Posture::Yolo, &[&rule]);
    let d = call(&e, "Read", "link-out/notes.txt");
    assert_eq!((d.effect, d.rule.as_str()), (Effect::Deny, rule.as_str()), "{d:?}");
    assert_eq!(
        call(&e, "Write", "link-out/notes.txt").effect,
        Effect::Allow,
        "a Read rule is not a write rule"
    );
}

#[test]
fn a_delegated_child_never_gets_a_relaxed_row() {
    let t = tree();
    for posture in POSTURES {
        let parent = engine(&t, posture, &[]);
        let child = parent.narrowed(&Layered::default());
        for tool in ["Read", "Write"] {
            let d = call(&child, tool, "link-out/notes.txt");
            assert_eq!(
                (d.effect, d.rule.as_str()),
                (Effect::Deny, crate::escape::RULE),
                "{tool} {posture:?}"
            );
            assert!(call(&parent, tool, "link-out/notes.txt").effect < Effect::Deny);
        }
        assert_eq!(call(&child, "Read", "in.txt").effect, Effect::Allow, "inside is unchanged");
        let grandchild = child.for_agent(&Layered::default()).narrowed(&Layered::default());
        assert_eq!(call(&grandchild, "Read", "link-out/notes.txt").effect, Effect::Deny);
    }
}

#[test]
fn a_lexical_jail_places_an_escape_by_dot_dot_alone() {
    let names: Vec<String> = Vec::new();
    let jail = Jail::new(Some(Path::new("/srv/data")), &names, Resolve::Lexical).unwrap();
    let e = Engine::new(EngineParts { jail: Some(jail), posture: Posture::Auto, ..Default::default() });
    assert_eq!(call(&e, "Read", "../etc/hosts").effect, Effect::Allow);
    assert_eq!(call(&e, "Write", "../etc/hosts").effect, Effect::Ask);
    assert_eq!(call(&e, "Read", "/srv/data/../../proc/self/environ").effect, Effect::Deny);
}
