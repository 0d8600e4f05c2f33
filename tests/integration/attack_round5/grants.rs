//! Grants (issue 26.9) and escapes (26.6) through Claude Code's file tools and the real hook: an
//! exclusion reached through symlinks, `..`, `//` and `/proc/self/root`; a grant with a trailing
//! slash.

use std::path::Path;

use serde_json::{json, Value};

/// Runs the standalone hook on a `tool` call with `input`, deciding with `policy`.
async fn decide(policy: &Path, tool: &str, input: Value) -> Value {
    let stdin = json!({"hook_event_name": "PreToolUse", "session_id": "g-1", "cwd": "/",
        "tool_name": tool, "tool_input": input})
    .to_string();
    let args = ["pre", "--config", policy.to_str().unwrap()];
    crate::hook::hook(&args, stdin.as_bytes(), &[]).await.0
}

fn decision(answer: &Value) -> String {
    answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("?").to_owned()
}

#[tokio::test]
async fn an_exclusion_holds_through_every_path_that_resolves_into_it() {
    let root = tempfile::tempdir().unwrap();
    let srv = root.path().canonicalize().unwrap().join("srv");
    std::fs::create_dir_all(srv.join("secret")).unwrap();
    std::fs::create_dir_all(srv.join("pub")).unwrap();
    std::fs::write(srv.join("secret/key"), "k").unwrap();
    std::fs::write(srv.join("pub/readme"), "r").unwrap();
    std::os::unix::fs::symlink("secret", srv.join("link")).unwrap();
    std::os::unix::fs::symlink("../secret/key", srv.join("pub/k")).unwrap();
    std::os::unix::fs::symlink(
        format!("/proc/self/root{}", srv.join("secret").display()),
        srv.join("viaproc"),
    )
    .unwrap();
    let s = srv.display();
    let policy = root.path().join("policy.yaml");
    std::fs::write(
        &policy,
        format!("posture: strict\npermissions:\n  allow: [\"fs:read:{s}/**\", \"fs:read:!{s}/secret/**\"]\n"),
    )
    .unwrap();
    let refused = [
        format!("{s}/secret/key"),
        format!("{s}/link/key"),
        format!("{s}/pub/k"),
        format!("{s}/viaproc/key"),
        format!("/proc/self/root{s}/secret/key"),
        format!("{s}//secret/key"),
        format!("{s}/pub/../secret/key"),
        format!("{s}/link/../secret/key"),
        format!("{s}/./secret/./key"),
    ];
    for path in &refused {
        // The premise: each path opens the secret.
        assert_eq!(std::fs::read_to_string(path).unwrap(), "k", "{path}");
        let answer = decide(&policy, "Read", json!({"file_path": path})).await;
        assert_eq!(decision(&answer), "deny", "{path}: {answer}");
    }
    let answer = decide(&policy, "Read", json!({"file_path": format!("{s}/pub/readme")})).await;
    assert_eq!(decision(&answer), "allow", "the grant still grants: {answer}");
}

#[tokio::test]
#[ignore = "open finding R5-8 (low): a grant written with a trailing slash (fs:write:/dir/) is \
            accepted but matches nothing below the directory; the grammar should refuse it or \
            read it as the tree"]
async fn a_grant_with_a_trailing_slash_is_refused_or_means_the_tree() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().canonicalize().unwrap().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let policy = root.path().join("policy.yaml");
    std::fs::write(
        &policy,
        format!("posture: strict\npermissions:\n  allow: [\"fs:write:{}/\"]\n", out.display()),
    )
    .unwrap();
    let answer = decide(&policy, "Write", json!({"file_path": out.join("report.md"), "content": "x"})).await;
    let said = answer.to_string();
    assert!(
        decision(&answer) == "allow" || said.contains("fs:write:"),
        "the grant was accepted and did nothing: {answer}"
    );
}
