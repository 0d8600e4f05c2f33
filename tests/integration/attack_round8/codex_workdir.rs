//! The Codex hook and the directory a command runs in. Codex's `exec_command` takes a `workdir`
//! the model chooses, but the `PreToolUse` payload Codex builds for it is `{"command": cmd}`
//! alone (openai/codex `core/src/tools/handlers/unified_exec/exec_command.rs`,
//! `pre_tool_use_payload`), while the envelope's `cwd` is the session's. So
//! the hook resolves a relative path against a directory the command may never run in: `cat key`
//! is judged as `<repo>/key` and run, by Codex, as `<workdir>/key`. Where the envelope does carry
//! a `workdir` (the write_stdin shape in tests/hook/codex/), the hook ignores it all the same
//! (src/hook/map.rs: "where the command runs is the session's"). A patch sent through the shell
//! (`apply_patch <<'EOF'`, which Codex intercepts and applies in the workdir) is asked, so denied.
//!
//! Fixed (src/hook/workdir.rs): a `workdir` the envelope carries is resolved and canonicalised,
//! and the command judged there; with none, the command runs nowhere the hook can know, so its
//! relative words are anywhere unless the line's own `cd /abs` places them.

use std::path::Path;

use serde_json::json;

use crate::hook::hook;

/// Runs `command` as Codex's exec_command does with `workdir` (a login-less `bash -c` there).
fn run_in(workdir: &Path, command: &str) -> String {
    let out =
        std::process::Command::new("bash").arg("-c").arg(command).current_dir(workdir).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repo the session runs in, a secret directory beside it, and a policy allowing reads in the
/// repo and denying them in the secret directory.
struct Tree {
    _dir: tempfile::TempDir,
    repo: std::path::PathBuf,
    secret: std::path::PathBuf,
    policy: String,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (repo, secret) = (root.join("repo"), root.join("secret"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("key"), "r8-secret-key-material\n").unwrap();
    let policy = root.join("policy.yaml");
    let rules = format!(
        "permissions:\n  allow: [\"Read({0}/repo/**)\"]\n  deny: [\"Read({0}/secret/**)\"]\n",
        root.display()
    );
    std::fs::write(&policy, rules).unwrap();
    Tree { _dir: dir, repo, secret, policy: policy.to_str().unwrap().to_owned() }
}

/// The hook's decision for a Codex `Bash` call with `tool_input`, the session in `cwd`.
async fn decide(t: &Tree, tool_input: serde_json::Value) -> String {
    let env = json!({
        "session_id": "019a3c1e-7f2b-7d40-9a51-r8workdir", "turn_id": "1",
        "transcript_path": "/tmp/rollout.jsonl", "cwd": t.repo, "hook_event_name": "PreToolUse",
        "model": "gpt-5-codex", "permission_mode": "default", "tool_name": "Bash",
        "tool_input": tool_input, "tool_use_id": "call_r8",
    })
    .to_string();
    let (answer, _) = hook(&["pre", "--codex", "--config", &t.policy], env.as_bytes(), &[]).await;
    answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("pass").to_owned()
}

#[tokio::test]
async fn a_codex_bash_envelope_that_names_its_workdir_is_judged_in_that_directory() {
    let t = tree();
    // The absolute spelling and the `cd` spelling are denied: the rule works when it can see.
    assert_eq!(decide(&t, json!({ "command": format!("cat {}/key", t.secret.display()) })).await, "deny");
    assert_eq!(
        decide(&t, json!({ "command": format!("cd {} && cat key", t.secret.display()) })).await,
        "deny"
    );
    // The envelope says where it runs (as tests/hook/codex/pre/write_stdin_denied.json does).
    let answer = decide(&t, json!({ "command": "cat key", "workdir": t.secret })).await;
    let read = run_in(&t.secret, "cat key");
    assert_eq!(read, "r8-secret-key-material\n", "what runs in that workdir");
    assert_ne!(answer, "allow", "`cat key` in workdir {} was allowed: it reads {read:?}", t.secret.display());
}

#[tokio::test]
async fn a_codex_shell_call_naming_a_relative_path_is_not_allowed_by_rules_that_hold_only_under_the_session_cwd(
) {
    let t = tree();
    // Exactly what Codex writes for exec_command {"cmd": "cat key", "workdir": "<secret>"}.
    let answer = decide(&t, json!({ "command": "cat key" })).await;
    let read = run_in(&t.secret, "cat key");
    assert_eq!(read, "r8-secret-key-material\n", "what Codex runs with workdir = secret/");
    assert_ne!(
        answer,
        "allow",
        "`cat key` was allowed, and Codex may run it in {}: {read:?}",
        t.secret.display()
    );
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

#[tokio::test]
async fn a_patch_sent_through_the_shell_as_codex_intercepts_it_is_refused_wherever_it_writes() {
    let t = tree();
    for command in [
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: /etc/cron.d/r8\n+* * * * * root id\n*** End Patch\nEOF\n",
        "cd /etc && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: cron.d/r8\n+x\n*** End Patch\nEOF\n",
        "applypatch <<'EOF'\n*** Begin Patch\n*** Add File: README\n+x\n*** End Patch\nEOF\n",
    ] {
        assert_eq!(decide(&t, json!({ "command": command })).await, "deny", "{command}");
    }
}

/// The hook's whole answer for a Codex `Bash` call with `tool_input`, the session in the repo.
async fn answer(t: &Tree, tool_input: serde_json::Value) -> serde_json::Value {
    let env = json!({
        "session_id": "s-r8fix", "turn_id": "1", "transcript_path": "/tmp/t.jsonl", "cwd": t.repo,
        "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
        "tool_name": "Bash", "tool_input": tool_input, "tool_use_id": "c",
    })
    .to_string();
    hook(&["pre", "--codex", "--config", &t.policy], env.as_bytes(), &[]).await.0
}

#[tokio::test]
async fn with_no_workdir_every_relative_word_is_unproven_and_the_refusal_says_how_to_name_the_place() {
    let t = tree();
    std::fs::write(t.repo.join("README"), "hello\n").unwrap();
    let repo = t.repo.display();
    // What Codex runs in an unknown workdir: nothing relative is proven, whatever spelling.
    for command in [
        "cat key".to_owned(),
        "cat ./key".into(),
        "head -c 5 key".into(),
        "ls".into(),
        "wc -l key README".into(),
        "./run.sh".into(),
        "cd secret && cat key".into(),
        "cd .. && cat secret/key".into(),
        format!("cd {repo} && cd ../secret && cat key"),
        format!("cat {repo}/README; cat key"),
    ] {
        let a = answer(&t, json!({ "command": command })).await;
        let specific = &a["hookSpecificOutput"];
        assert_eq!(specific["permissionDecision"], "deny", "{command}: {a}");
        let why = specific["permissionDecisionReason"].as_str().unwrap_or("");
        assert!(why.contains("absolute paths") && why.contains("cd /absolute/dir"), "{command}: {why}");
    }
    // A line that places itself (read by the analyzer, not by text), or names no relative word.
    for command in [format!("cd {repo} && cat README"), format!("cat {repo}/README"), "echo hello".into()] {
        let a = answer(&t, json!({ "command": command })).await;
        assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "allow", "{command}: {a}");
        assert_eq!(
            a["hookSpecificOutput"]["updatedInput"],
            json!({ "command": command }),
            "exactly what was judged"
        );
    }
    // The deny of the secret directory still holds through a placing `cd`.
    let secret = t.secret.display();
    assert_eq!(decide(&t, json!({ "command": format!("cd {secret} && cat key") })).await, "deny");
}

#[tokio::test]
async fn a_workdir_is_judged_where_the_kernel_lands_and_one_that_cannot_be_placed_is_refused() {
    let t = tree();
    std::fs::write(t.repo.join("README"), "hello\n").unwrap();
    std::os::unix::fs::symlink(&t.secret, t.repo.join("docs")).unwrap();
    // Every spelling of the secret directory, resolved against cwd as Codex does, then as the kernel does.
    for workdir in [json!("../secret"), json!("docs"), json!("docs/."), json!(t.secret)] {
        assert_ne!(
            run_in(&t.repo.join(workdir.as_str().unwrap_or(".")), "cat key"),
            "",
            "{workdir} reaches the key"
        );
        let said = decide(&t, json!({ "command": "cat key", "workdir": workdir })).await;
        assert_eq!(said, "deny", "`cat key` in workdir {workdir}");
    }
    // The repo itself, however spelled, is where the allow holds.
    for workdir in [json!("."), json!(""), json!(t.repo), json!("docs/../repo")] {
        let said = decide(&t, json!({ "command": "cat README", "workdir": workdir })).await;
        assert_eq!(said, "allow", "`cat README` in workdir {workdir}");
    }
    // A workdir nobody can place: through /proc (the hook's own cwd there), a link loop, not a string.
    std::os::unix::fs::symlink("/proc/self/cwd", t.repo.join("here")).unwrap();
    std::os::unix::fs::symlink(t.repo.join("loop"), t.repo.join("loop")).unwrap();
    for workdir in [json!("here"), json!("/proc/self/root/tmp"), json!("loop"), json!(7), json!(["/"])] {
        let a = answer(&t, json!({ "command": "echo hello", "workdir": workdir })).await;
        assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny", "{workdir}: {a}");
    }
}

#[tokio::test]
async fn through_a_running_proxy_the_command_is_judged_where_the_codex_hook_placed_it() {
    let t = tree();
    std::fs::write(t.repo.join("README"), "hello\n").unwrap();
    let (token_env, token) = ("PORTCULLIS_TEST_R8FIX_CODEX_PROXY", "r8fix-codex-proxy-operator-token");
    std::env::set_var(token_env, token);
    let root = t.repo.parent().unwrap().display().to_string();
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\n\
         permissions: {{ allow: [\"Read({root}/repo/**)\"], deny: [\"Read({root}/secret/**)\"] }}\n"
    );
    let p = crate::support::proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let admin = format!("http://{}", p.admin_addr);
    let args = ["pre", "--codex", "--proxy", admin.as_str(), "--token-env", token_env];
    let repo = t.repo.display();
    let cases = [
        (json!({ "command": "cat key", "workdir": t.secret }), "deny"),
        (json!({ "command": "cat key", "workdir": "../secret" }), "deny"),
        (json!({ "command": "cat key" }), "deny"),
        (json!({ "command": format!("cd {repo} && cat README") }), "allow"),
        (json!({ "command": "cat README", "workdir": "." }), "allow"),
    ];
    for (input, want) in cases {
        let env = json!({
            "session_id": "s-r8fix-proxy", "turn_id": "1", "cwd": t.repo, "hook_event_name": "PreToolUse",
            "model": "gpt-5-codex", "permission_mode": "default", "tool_name": "Bash",
            "tool_input": input, "tool_use_id": "c",
        });
        let (a, stderr) = hook(&args, env.to_string().as_bytes(), &[]).await;
        assert_eq!(a["hookSpecificOutput"]["permissionDecision"], want, "{input}: {a} ({stderr})");
    }
}
