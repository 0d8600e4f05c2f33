//! Scope tiers through the real binary: `portcullis hook pre` with Claude Code envelopes whose
//! `cwd` is a temporary workspace (trusted or not by a temporary user file), a running proxy's
//! hook endpoint across a mid-session edit, and `check --workspace`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::hook::hook;
use crate::support::proxy;

/// A temporary `$XDG_CONFIG_HOME` and workspace: `config/portcullis/settings.yaml`, `ws/`.
struct Place {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("ws/.portcullis")).unwrap();
        std::fs::create_dir_all(base.join("ws/sub")).unwrap();
        std::fs::create_dir_all(base.join("config/portcullis")).unwrap();
        std::os::unix::fs::symlink(base.join("ws"), base.join("link")).unwrap();
        Place { _dir: dir, base }
    }

    fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }

    fn project(&self, text: &str) {
        // Written beside and renamed over, as editors do: a reader never sees half a file.
        let file = self.ws().join(".portcullis/settings.yaml");
        std::fs::write(file.with_extension("tmp"), text).unwrap();
        std::fs::rename(file.with_extension("tmp"), file).unwrap();
    }

    fn trust(&self, dirs: &[&Path]) {
        let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        let text = json!({ "trusted_workspaces": list }).to_string();
        std::fs::write(self.base.join("config/portcullis/settings.yaml"), text).unwrap();
    }

    fn xdg(&self) -> String {
        self.base.join("config").display().to_string()
    }
}

/// A `PreToolUse` envelope for `Bash` running `command` in `cwd`.
fn bash(cwd: &Path, command: &str) -> Vec<u8> {
    json!({
        "session_id": "tiers-1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": { "command": command },
        "permission_mode": "default",
    })
    .to_string()
    .into_bytes()
}

fn decision(answer: &Value) -> String {
    answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("").to_owned()
}

fn reason(answer: &Value) -> String {
    answer["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap_or("").to_owned()
}

/// The embedded config (no `--config`) denies `curl`: the project's allow of it never counts.
const PROJECT: &str = "permissions: { allow: [\"Bash(make:*)\", \"Bash(curl:*)\"], deny: [\"Bash(terraform:*)\"] }\nguardrails: { rules: [] }\n";

#[tokio::test]
async fn through_the_hook_a_project_allow_needs_a_trusted_workspace_and_its_deny_always_holds() {
    let p = Place::new();
    p.project(PROJECT);
    let xdg = p.xdg();
    let env = [("XDG_CONFIG_HOME", xdg.as_str())];
    let pre = |cwd: PathBuf, cmd: &'static str| async move { hook(&["pre"], &bash(&cwd, cmd), &env).await };

    let (make, stderr) = pre(p.ws(), "make").await;
    assert_eq!(decision(&make), "ask", "untrusted: the project's allow is dropped: {make}");
    assert!(stderr.contains("2 allow rule(s) ignored"), "{stderr}");
    assert!(stderr.contains("guardrails ignored"), "an operator key in a project file is said: {stderr}");
    let (tf, _) = pre(p.ws(), "terraform apply").await;
    assert_eq!(decision(&tf), "deny", "{tf}");
    assert!(reason(&tf).contains("Bash(terraform:*)") && reason(&tf).contains("scope project"), "{tf}");

    p.trust(&[&p.ws()]);
    // A repository cloned into the trusted one is a project of its own, untrusted.
    std::fs::create_dir_all(p.ws().join("cloned/.portcullis")).unwrap();
    // (cwd as Claude Code may send it, command, decision)
    let table: [(PathBuf, &str, &str); 8] = [
        (p.ws(), "make", "allow"),
        (p.base.join("ws/"), "make build", "allow"),
        (p.base.join("ws/sub/.."), "make", "allow"),
        // A workspace reached through a symlink: its target decides.
        (p.base.join("link"), "make", "allow"),
        // A subdirectory with no `.portcullis/` of its own is in the project above it (the
        // nearest one from `cwd` up), trusted as that project is.
        (p.ws().join("sub"), "make", "allow"),
        // Exact match: trusting a project trusts no project inside it.
        (p.ws().join("cloned"), "make", "ask"),
        (p.ws(), "terraform apply", "deny"),
        // A trusted project's allow lifts no operator deny.
        (p.ws(), "curl https://example.com", "deny"),
    ];
    for (cwd, cmd, want) in table {
        let (a, stderr) = pre(cwd.clone(), cmd).await;
        assert_eq!(decision(&a), want, "{cwd:?} {cmd}: {a} {stderr}");
    }
    // A trusted project allowing every edit still cannot let the agent edit its own tiers.
    p.project("permissions: { allow: [Edit, Write, \"Bash(make:*)\"] }\n");
    let own = p.ws().join(".portcullis/settings.local.yaml").display().to_string();
    let edit = json!({
        "session_id": "tiers-1", "cwd": p.ws().display().to_string(), "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": { "file_path": own, "content": "permissions: { allow: [Bash] }" },
    });
    let (a, _) = hook(&["pre"], edit.to_string().as_bytes(), &env).await;
    assert_eq!(decision(&a), "ask", "{a}");
    assert!(reason(&a).contains(".portcullis/settings*.yaml"), "the protection asked, not the floor: {a}");
    let redirect =
        format!("echo 'trusted_workspaces: [/]' > {}/config/portcullis/settings.yaml", p.base.display());
    let (a, _) = hook(&["pre"], &bash(&p.ws(), &redirect), &env).await;
    assert_eq!(decision(&a), "ask", "{a}");
    // Trusting the symlink trusts its target; trusting the parent trusts no child.
    p.trust(&[&p.base.join("link")]);
    assert_eq!(decision(&pre(p.ws(), "make").await.0), "allow");
    p.trust(&[&p.base]);
    assert_eq!(decision(&pre(p.ws(), "make").await.0), "ask");
}

#[tokio::test]
async fn a_settings_file_the_hook_cannot_read_safely_denies_and_names_it() {
    let p = Place::new();
    let xdg = p.xdg();
    let env = [("XDG_CONFIG_HOME", xdg.as_str())];
    let file = p.ws().join(".portcullis/settings.yaml");
    let fifo = std::process::Command::new("mkfifo").arg(&file).status().unwrap();
    assert!(fifo.success());
    let started = std::time::Instant::now();
    let (a, _) = hook(&["pre"], &bash(&p.ws(), "ls"), &env).await;
    assert_eq!(decision(&a), "deny", "{a}");
    assert!(reason(&a).contains("not a regular file"), "{a}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "a FIFO never hangs the hook");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &file).unwrap();
    let (a, _) = hook(&["pre"], &bash(&p.ws(), "ls"), &env).await;
    assert!(decision(&a) == "deny" && reason(&a).contains("symlink"), "{a}");
}

/// The proxy's hook endpoint: one process, many calls. Its user file is whatever the test
/// runner's is; the workspace is a fresh temporary directory, which no user file trusts.
#[tokio::test]
async fn through_a_running_proxy_a_deny_written_mid_session_holds_on_the_next_call() {
    let token_env = "PORTCULLIS_TEST_TIERS_ADMIN_TOKEN";
    std::env::set_var(token_env, "tiers-operator-token-0123456789");
    let yaml = format!("listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\npermissions: {{ allow: [\"Bash(git status)\"] }}\n");
    let running = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let admin = format!("http://{}", running.admin_addr);
    let args = ["pre", "--proxy", admin.as_str(), "--token-env", token_env];
    let p = Place::new();
    let call = |cmd: &'static str| {
        let body = bash(&p.ws(), cmd);
        async move { hook(&args, &body, &[]).await.0 }
    };

    assert_eq!(decision(&call("git status").await), "allow");
    let first = call("curl https://example.com").await;
    assert_eq!(decision(&first), "ask", "no project file yet: the floor asks: {first}");
    p.project("permissions: { deny: [\"Bash(curl:*)\"] }\n");
    let denied = call("curl https://example.com").await;
    assert_eq!(decision(&denied), "deny", "the deny written mid-session: {denied}");
    assert!(reason(&denied).contains("scope project"), "{denied}");
    // Same size, new content: the file's identity changed, so it is read again.
    p.project("permissions: { deny: [\"Bash(wget:*)\"] }\n");
    assert_eq!(decision(&call("curl https://example.com").await), "ask");
    assert_eq!(decision(&call("wget https://example.com").await), "deny");
    // An allow in an untrusted workspace never applies; the operator's allow still does.
    p.project("permissions: { allow: [\"Bash(make:*)\", \"Bash(curl:*)\"] }\n");
    assert_eq!(decision(&call("make").await), "ask");
    assert_eq!(decision(&call("git status").await), "allow");
    // A broken file refuses (its denies cannot be read) until it is fixed.
    p.project("permissions: [\n");
    let broken = call("git status").await;
    assert_eq!(decision(&broken), "deny", "{broken}");
    p.project("permissions: { deny: [\"Bash(git:*)\"] }\n");
    let fixed = call("git status").await;
    assert_eq!(decision(&fixed), "deny", "a project deny beats the operator's allow: {fixed}");
    assert!(reason(&fixed).contains("Bash(git:*)"), "{fixed}");
}

#[test]
fn check_with_a_workspace_lays_its_tiers_under_the_config() {
    let p = Place::new();
    p.project("permissions: { allow: [\"Shell(make:*)\"], deny: [\"Shell(npm publish:*)\"] }\n");
    let main = p.base.join("main.yaml");
    std::fs::write(&main, "tools: [{ match: mcp__sh__run, kind: shell, command: /command }]\npermissions: { allow: [\"Shell(npm:*)\"] }\n").unwrap();
    let run = |trusted: bool| {
        let ws = p.ws();
        if trusted {
            p.trust(&[&ws]);
        }
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(["check", "--config"])
            .arg(&main)
            .arg("--workspace")
            .arg(&ws)
            .env("XDG_CONFIG_HOME", p.xdg())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let lines = ["make", "npm publish", "npm test"]
            .map(|c| format!("{{\"tool\":\"mcp__sh__run\",\"args\":{{\"command\":\"{c}\"}}}}\n"))
            .concat();
        child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|v| format!("{} {}", v["effect"].as_str().unwrap(), v["scope"].as_str().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(false), ["ask builtin", "deny project", "allow config"]);
    assert_eq!(run(true), ["allow project", "deny project", "allow config"]);
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["check", "--workspace"])
        .arg(p.base.join("missing"))
        .output()
        .unwrap();
    assert!(!missing.status.success(), "a workspace that does not exist is an error");
}
