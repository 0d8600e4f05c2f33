//! The Codex hook and the directory a command runs in. Codex's `exec_command` (and
//! `shell_command`) take a `workdir` the model chooses, but the `PreToolUse` payload Codex builds
//! for them is `{"command": cmd}` alone (openai/codex `core/src/tools/handlers/unified_exec/
//! exec_command.rs`, `pre_tool_use_payload`), while the envelope's `cwd` is the session's. So
//! the hook resolves a relative path against a directory the command may never run in: `cat key`
//! is judged as `<repo>/key` and run, by Codex, as `<workdir>/key`.

use std::path::Path;

use serde_json::json;

use crate::hook::hook;

/// Runs `command` as Codex's exec_command does with `workdir` (a login-less `bash -c` there).
fn run_in(workdir: &Path, command: &str) -> String {
    let out =
        std::process::Command::new("bash").arg("-c").arg(command).current_dir(workdir).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
#[ignore = "open finding R8-4 (high): the Codex hook resolves a relative path against the session cwd, but exec_command runs it in a workdir the payload omits: a denied directory is read by a relative name"]
async fn a_codex_shell_call_naming_a_relative_path_is_not_allowed_by_rules_that_hold_only_under_the_session_cwd(
) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (repo, secret) = (root.join("repo"), root.join("secret"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(repo.join("README"), "readme\n").unwrap();
    std::fs::write(secret.join("key"), "r8-secret-key-material\n").unwrap();
    let policy = root.join("policy.yaml");
    std::fs::write(
        &policy,
        format!(
            "permissions:\n  allow: [\"Read({0}/repo/**)\"]\n  deny: [\"Read({0}/secret/**)\"]\n",
            root.display()
        ),
    )
    .unwrap();
    let policy = policy.to_str().unwrap();
    let envelope = |command: &str| {
        // Exactly what Codex writes for exec_command {"cmd": command, "workdir": …}: no workdir.
        json!({
            "session_id": "019a3c1e-7f2b-7d40-9a51-r8workdir", "turn_id": "1",
            "transcript_path": "/tmp/rollout.jsonl", "cwd": repo, "hook_event_name": "PreToolUse",
            "model": "gpt-5-codex", "permission_mode": "default", "tool_name": "Bash",
            "tool_input": { "command": command }, "tool_use_id": "call_r8",
        })
        .to_string()
    };
    let decide = |command: &'static str| {
        let env = envelope(command);
        async move {
            let (answer, _) = hook(&["pre", "--codex", "--config", policy], env.as_bytes(), &[]).await;
            answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("pass").to_owned()
        }
    };

    // The absolute spelling and the `cd` spelling are denied: the rule works when it can see.
    let absolute: &'static str = Box::leak(format!("cat {}/key", secret.display()).into_boxed_str());
    assert_eq!(decide(absolute).await, "deny");
    let cd: &'static str = Box::leak(format!("cd {} && cat key", secret.display()).into_boxed_str());
    assert_eq!(decide(cd).await, "deny");

    // The same read, with the directory in exec_command's `workdir`, which the hook never sees.
    let answer = decide("cat key").await;
    let read = run_in(&secret, "cat key");
    assert_eq!(read, "r8-secret-key-material\n", "what Codex runs with workdir = secret/");
    assert_ne!(answer, "allow", "`cat key` was allowed, and Codex ran it in {}: {read:?}", secret.display());
}

#[tokio::test]
async fn a_codex_shell_call_with_an_absolute_or_cd_path_into_a_denied_directory_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let policy = root.join("policy.yaml");
    std::fs::write(&policy, format!("permissions:\n  deny: [\"Read({}/secret/**)\"]\n", root.display()))
        .unwrap();
    for command in [
        format!("cat {}/secret/key", root.display()),
        format!("cd {}/secret && cat key", root.display()),
        format!("cd {} && cat secret/./key", root.display()),
        "cat ../secret/key".to_owned(),
    ] {
        let env = json!({
            "session_id": "s", "turn_id": "1", "transcript_path": "/tmp/t.jsonl", "cwd": root.join("repo"),
            "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
            "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": "c",
        })
        .to_string();
        let (answer, _) =
            hook(&["pre", "--codex", "--config", policy.to_str().unwrap()], env.as_bytes(), &[]).await;
        assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{command}: {answer}");
    }
}
