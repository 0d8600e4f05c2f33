//! One secret policy for every file reader: a file-kind tool's read of a secret store is asked
//! as `cat` of it is (issue 23, class 10), and Claude Code's Glob and Grep are judged by what
//! their globs could expand to (class 11).

use std::collections::HashMap;

use serde_json::json;

use crate::kinds::{Access, KindSpec, ToolKinds};
use crate::{Decision, Effect, Engine, EngineParts, Posture, Profile};

fn engine(posture: Posture) -> Engine {
    let fs = KindSpec::File { path: "/path".into(), access: Access::Read };
    let kinds = ToolKinds::new([("mcp__fs__read_file".to_owned(), fs)]);
    Engine::new(EngineParts { kinds, posture, ..Default::default() })
}

fn decide(posture: Posture, tool: &str, args: serde_json::Value) -> Decision {
    engine(posture).decide("up", tool, &args)
}

#[test]
fn a_file_tools_read_of_a_secret_store_asks_at_strict_and_trusted() {
    let calls = [
        ("mcp__fs__read_file", json!({"path": "/home/u/.aws/credentials"})),
        ("mcp__fs__read_file", json!({"path": "/home/u/../u/.aws/credentials"})),
        ("mcp__fs__read_file", json!({"path": "/work/repo/.git/config"})),
        ("mcp__fs__read_file", json!({"path": "/home/u/.kaggle/kaggle.json"})),
        ("Read", json!({"file_path": "/root/.ssh/id_rsa"})),
        ("Read", json!({"file_path": "//root/./.claude.json"})),
        ("NotebookRead", json!({"notebook_path": "/root/.jupyter/secret.ipynb"})),
        ("LS", json!({"path": "/root/.ssh"})),
    ];
    for posture in [Posture::Strict, Posture::Trusted] {
        for (tool, args) in &calls {
            let d = decide(posture, tool, args.clone());
            assert_eq!(
                (d.effect, d.rule.as_str()),
                (Effect::Ask, "floor: secret"),
                "{tool} {args} at {posture:?}: {d:?}"
            );
            assert!(d.reason.contains("may reveal a secret"), "{}", d.reason);
        }
    }
}

#[test]
fn a_posture_that_allows_a_secret_read_says_so() {
    let d = decide(Posture::Auto, "Read", json!({"file_path": "/root/.ssh/id_rsa"}));
    assert_eq!(d.effect, Effect::Allow);
    assert!(
        d.reason.contains("may reveal a secret") && d.reason.contains("allowed by the posture"),
        "{}",
        d.reason
    );
}

#[test]
fn a_secret_read_is_not_read_only_under_a_readonly_profile() {
    let parts = EngineParts {
        profiles: HashMap::from([("claude-code".to_owned(), Profile::Readonly)]),
        ..Default::default()
    };
    let d = Engine::new(parts).decide("claude-code", "Read", &json!({"file_path": "/root/.ssh/id_rsa"}));
    assert_eq!(d.effect, Effect::Deny, "{d:?}");
}

#[test]
fn ordinary_reads_stay_read_only() {
    for (tool, args) in [
        ("mcp__fs__read_file", json!({"path": "/work/repo/src/main.rs"})),
        ("Read", json!({"file_path": "/home/u/proj/.github/workflows/ci.yml"})),
        ("Glob", json!({"path": "/work/repo/**/*.rs"})),
        ("Glob", json!({"path": "/home/u/proj/src/**/*.{ts,tsx}"})),
        ("Grep", json!({"path": "/work/repo/**/*.rs"})),
        ("Grep", json!({"path": "/usr/share/doc/**"})),
    ] {
        let d = decide(Posture::Strict, tool, args.clone());
        assert_eq!((d.effect, d.rule.as_str()), (Effect::Allow, "floor: read-only"), "{tool} {args}: {d:?}");
    }
}

#[test]
fn claude_codes_searches_ask_where_their_globs_could_reach_a_secret() {
    for path in [
        "/etc/**",
        "/etc/*",
        "/work/repo/**",
        "/work/repo/**/*",
        "/work/repo/**/*.pem",
        "/work/repo/**/config",
        "/root/**/*.rs",
        "/home/u/*",
        "/**/*.rs",
        "/work/repo/**/*.{rs,env}",
    ] {
        for tool in ["Glob", "Grep"] {
            let d = decide(Posture::Trusted, tool, json!({ "path": path }));
            assert_eq!(d.effect, Effect::Ask, "{tool} {path}: {d:?}");
        }
    }
}

#[test]
fn writes_are_not_judged_by_the_secret_policy() {
    let d =
        decide(Posture::Trusted, "Write", json!({"file_path": "/work/repo/.github/x.yml", "content": ""}));
    assert_eq!((d.effect, d.rule.as_str()), (Effect::Allow, "floor: posture"), "{d:?}");
}

#[test]
fn a_jail_root_is_the_working_directory_whose_named_subdirectories_can_be_searched() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    let jail = crate::jail::Jail::new(Some(&root), &[], crate::jail::Resolve::Filesystem).unwrap();
    let e = Engine::new(EngineParts { jail: Some(jail), posture: Posture::Trusted, ..Default::default() });
    let grep = |p: String| e.decide("claude-code", "Grep", &json!({ "path": p }));
    let below = grep(format!("{}/src/**", root.display()));
    assert_eq!((below.effect, below.rule.as_str()), (Effect::Allow, "floor: read-only"), "{below:?}");
    let whole = grep(format!("{}/**", root.display()));
    assert_eq!((whole.effect, whole.rule.as_str()), (Effect::Ask, "floor: secret"), "{whole:?}");
    assert!(whole.reason.contains("working directory"), "{}", whole.reason);
}
