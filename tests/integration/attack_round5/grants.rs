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

/// Claude Code's `Bash` from `cwd` through the standalone hook at the auto posture under
/// `permissions` (YAML flow list): only a deny refuses.
async fn bash_at_auto(cwd: &Path, permissions: &str, command: &str) -> String {
    let policy = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(policy.path(), format!("posture: auto\npermissions:\n  allow: {permissions}\n")).unwrap();
    let stdin = json!({"hook_event_name": "PreToolUse", "session_id": "g-2", "cwd": cwd,
        "tool_name": "Bash", "tool_input": {"command": command}})
    .to_string();
    let args = ["pre", "--config", policy.path().to_str().unwrap()];
    let env = [("PORTCULLIS_SANDBOX", "1"), ("SHELL", "/bin/bash")];
    decision(&crate::hook::hook(&args, stdin.as_bytes(), &env).await.0)
}

fn bash(cwd: &Path, line: &str) -> std::process::Output {
    std::process::Command::new("bash").args(["-c", line]).current_dir(cwd).output().unwrap()
}

#[tokio::test]
async fn a_denied_program_run_by_a_program_that_runs_its_arguments_is_never_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let rules = r#"["shell:execute:!rm"]"#;
    assert_eq!(bash_at_auto(dir.path(), rules, "rm victim").await, "deny", "the control");
    // Each line is a program the analyzer cannot prove treats its words as data.
    let lines = [
        ("fakeroot rm victim-1", "victim-1"),
        ("gdb -q -batch -ex run --args rm victim-2", "victim-2"),
        ("gdb -q -batch -ex 'shell rm victim-3'", "victim-3"),
        ("script -qc 'rm victim-4' /dev/null", "victim-4"),
        ("flock /tmp/portcullis-r5-11.lock rm victim-5", "victim-5"),
        ("setsid -w rm victim-6", "victim-6"),
        ("taskset -c 0 /bin/rm victim-7", "victim-7"),
        ("P=rm; fakeroot $P victim-8", "victim-8"),
        ("fakeroot /bin/r? victim-9", "victim-9"),
    ];
    for (line, victim) in lines {
        std::fs::write(dir.path().join(victim), "x").unwrap();
        let out = bash(dir.path(), line);
        assert!(!dir.path().join(victim).exists(), "the premise: `{line}` removes the file ({out:?})");
    }
    // A word naming the denied program possibly runs it: the deny is asked, never allowed.
    for (line, _) in lines {
        let decided = bash_at_auto(dir.path(), rules, line).await;
        assert!(decided == "ask" || decided == "deny", "{line}: {decided}");
    }
    // A program whose words the analyzer reads as data is not judged as running them.
    assert_eq!(bash_at_auto(dir.path(), rules, "grep -r rm .").await, "allow", "the precision control");
}

#[tokio::test]
async fn an_excluded_git_push_holds_for_the_plumbing_that_pushes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let setup = "git init -q --bare remote.git && git init -q work && cd work \
                 && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one";
    assert!(bash(d, setup).status.success());
    let work = d.join("work");
    let rules = r#"["shell:execute:!git push"]"#;
    assert_eq!(bash_at_auto(&work, rules, "git push ../remote.git HEAD:refs/heads/a").await, "deny");
    let line = "git send-pack ../remote.git HEAD:refs/heads/pushed";
    let out = bash(&work, line);
    let refs = bash(d, "git --git-dir=remote.git show-ref");
    assert!(
        String::from_utf8_lossy(&refs.stdout).contains("refs/heads/pushed"),
        "the premise: `{line}` pushes ({out:?})"
    );
    assert_eq!(bash_at_auto(&work, rules, line).await, "deny", "{line}");
}

#[tokio::test]
async fn an_excluded_git_fetch_holds_for_every_command_that_fetches() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let setup = "git init -q -b main src && git -C src -c user.name=t -c user.email=t@t commit -q \
                 --allow-empty -m one && git clone -q --bare src remote.git && git init -q -b main work \
                 && git -C work remote add origin ../remote.git";
    assert!(bash(d, setup).status.success());
    let work = d.join("work");
    let tip = String::from_utf8(bash(d, "git -C src rev-parse HEAD").stdout).unwrap().trim().to_owned();
    let rules = r#"["shell:execute:!git fetch"]"#;
    let has_tip = || bash(&work, &format!("git cat-file -e {tip}")).status.success();
    for line in
        ["git fetch-pack ../remote.git refs/heads/main", "git remote update", "git pull -q origin main"]
    {
        assert!(!has_tip(), "{line}: the premise starts without the remote's commit");
        let out = bash(&work, line);
        assert!(has_tip(), "the premise: `{line}` fetches ({out:?})");
        assert_eq!(bash_at_auto(&work, rules, line).await, "deny", "{line}");
        let reset = "rm -rf .git && git init -q -b main && git remote add origin ../remote.git";
        assert!(bash(&work, reset).status.success());
    }
    assert_eq!(bash_at_auto(&work, rules, "git push -q origin HEAD").await, "allow", "the control");
}
