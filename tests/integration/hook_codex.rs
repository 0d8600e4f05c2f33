//! `portcullis hook --codex` as Codex CLI runs it: the real binary, a Codex envelope on stdin,
//! an answer Codex's output parser accepts on stdout. Golden envelopes (tests/hook/codex/) for
//! shell, `apply_patch` and MCP calls in both phases, and `hook install --codex`, whose written
//! command is run through `/bin/sh` as Codex runs it — answering, and blocking when the binary
//! is gone.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::hook::hook;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hook")
}

/// What Codex's `output_parser` accepts without calling the hook failed (a failed hook lets the
/// call through): openai/codex `codex-rs/hooks/src/engine/output_parser.rs`.
fn codex_accepts(phase: &str, answer: &Value) -> Result<(), String> {
    let object = answer.as_object().ok_or("not a JSON object")?;
    if object.is_empty() {
        return Ok(());
    }
    let specific = &answer["hookSpecificOutput"];
    let nonempty = |v: &Value| v.as_str().is_some_and(|s| !s.trim().is_empty());
    if phase == "pre" {
        if answer.get("decision").is_some() || answer.get("continue").is_some() {
            return Err("the legacy fields are not used".into());
        }
        match specific["permissionDecision"].as_str() {
            Some("deny") if nonempty(&specific["permissionDecisionReason"]) => Ok(()),
            Some("allow") if !specific["updatedInput"].is_null() => Ok(()),
            other => Err(format!("Codex rejects permissionDecision {other:?} in this form")),
        }
    } else {
        if specific.get("updatedMCPToolOutput").is_some() {
            return Err("Codex ignores updatedMCPToolOutput".into());
        }
        match answer["decision"].as_str() {
            Some("block") if nonempty(&answer["reason"]) => Ok(()),
            None if answer.get("reason").is_none() => Ok(()),
            other => Err(format!("decision {other:?} without a reason")),
        }
    }
}

fn decision(answer: &Value) -> &str {
    match answer["hookSpecificOutput"]["permissionDecision"].as_str() {
        Some(d) => d,
        None => answer["decision"].as_str().unwrap_or("pass"),
    }
}

#[tokio::test]
async fn every_codex_golden_envelope_gets_its_decision_in_a_shape_codex_accepts() {
    let dir = fixtures();
    let policy = dir.join("policy.yaml");
    let codex = dir.join("codex");
    let expected: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(codex.join("expected.json")).unwrap()).unwrap();
    assert!(expected.len() >= 20, "shell, apply_patch and MCP calls in both phases, and bad input");
    for (file, want) in &expected {
        let phase = match (file.split('/').next(), want["phase"].as_str()) {
            (_, Some(p)) => p,
            (Some("post"), _) => "post",
            _ => "pre",
        };
        let bytes = std::fs::read(codex.join(file)).unwrap();
        let args = [phase, "--codex", "--config", policy.to_str().unwrap()];
        let (answer, stderr) = hook(&args, &bytes, &[]).await;
        assert_eq!(decision(&answer), want["decision"], "{file}: {answer} ({stderr})");
        codex_accepts(phase, &answer).unwrap_or_else(|e| panic!("{file}: {e}: {answer}"));
        let text = answer.to_string();
        for key in ["rule", "contains"] {
            if let Some(needle) = want[key].as_str() {
                assert!(text.contains(needle), "{file}: {text} should hold {needle}");
            }
        }
        assert!(!text.contains("HUNTER2"), "{file}: the secret is not repeated: {text}");
        if want["updated"] == true {
            let sent: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(answer["hookSpecificOutput"]["updatedInput"], sent["tool_input"], "{file}");
        }
        if let Some(needle) = want["stderr"].as_str() {
            assert!(stderr.contains(needle), "{file}: stderr {stderr:?} should hold {needle}");
        }
    }
}

/// Runs `command` as Codex runs a hook (`$SHELL -lc`, here `/bin/sh`) with `stdin`.
fn run_as_codex(command: &str, stdin: &[u8]) -> std::process::Output {
    use std::io::Write as _;
    let mut child = std::process::Command::new("/bin/sh")
        .args(["-lc", command])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn the_installed_codex_hook_answers_and_blocks_with_exit_2_when_the_binary_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join(".codex/hooks.json");
    std::fs::create_dir_all(hooks.parent().unwrap()).unwrap();
    let mine = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}"#;
    std::fs::write(&hooks, mine).unwrap();
    let policy = fixtures().join("policy.yaml");
    let install = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(["hook", "install", "--codex", "--project", "--write", "--config"])
            .arg(&policy)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let out = install();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let once = std::fs::read_to_string(&hooks).unwrap();
    assert!(install().status.success());
    assert_eq!(std::fs::read_to_string(&hooks).unwrap(), once, "installing twice changes nothing");
    let v: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
    let pre = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str().unwrap();
    assert!(pre.contains(" hook pre ") && pre.contains("--codex"), "{pre}");
    assert!(v["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str().unwrap().contains(" hook post "));

    let denied = std::fs::read(fixtures().join("codex/pre/bash_denied.json")).unwrap();
    let out = run_as_codex(pre, &denied);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");

    // Codex lets a call through when its hook fails, except on exit 2 with a reason on stderr.
    let exe = env!("CARGO_BIN_EXE_portcullis");
    assert!(pre.contains(exe), "{pre}");
    let gone = pre.replace(exe, "/nonexistent/portcullis");
    let out = run_as_codex(&gone, &denied);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gave no answer: the call is refused"));
}

#[tokio::test]
async fn through_a_running_proxy_each_path_of_a_patch_is_one_decision_there() {
    use crate::support::{get, proxy};
    let token_env = "PORTCULLIS_TEST_CODEX_HOOK_ADMIN_TOKEN";
    let token = "codex-hook-operator-token-0123456789";
    std::env::set_var(token_env, token);
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\n\
         permissions: {{ allow: [\"Edit(/work/repo/src/**)\"], deny: [\"File(**/secrets/**)\"] }}\n\
         audit: {{ to: \"{}\" }}\n",
        dir.path().join("audit.jsonl").display()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let admin = format!("http://{}", p.admin_addr);
    let args = ["pre", "--codex", "--proxy", admin.as_str(), "--token-env", token_env];
    let patch = |body: &str| format!("*** Begin Patch\n{body}*** End Patch\n");
    let envelope = |patch: String| {
        serde_json::to_vec(&serde_json::json!({
            "session_id": "codex-s", "turn_id": "1", "cwd": "/work/repo", "model": "gpt-5-codex",
            "hook_event_name": "PreToolUse", "permission_mode": "default",
            "tool_name": "apply_patch", "tool_input": { "command": patch }, "tool_use_id": "call_1",
        }))
        .unwrap()
    };

    let allowed = envelope(patch("*** Update File: src/a.rs\n@@\n-a\n+b\n"));
    let (a, stderr) = hook(&args, &allowed, &[]).await;
    assert_eq!(decision(&a), "allow", "{a} ({stderr})");
    codex_accepts("pre", &a).unwrap();

    let denied =
        envelope(patch("*** Update File: src/b.rs\n@@\n-a\n+b\n*** Add File: config/secrets/k\n+x\n"));
    let (d, stderr) = hook(&args, &denied, &[]).await;
    assert_eq!(decision(&d), "deny", "{d} ({stderr})");
    assert!(d.to_string().contains("File(**/secrets/**)"), "{d}");

    let auth = format!("Bearer {token}");
    let (status, _, decisions) = get(&format!("{admin}/decisions"), &[("authorization", &auth)]).await;
    assert_eq!(status, 200, "{decisions}");
    let decisions: Value = serde_json::from_str(&decisions).unwrap();
    let tools: Vec<&str> =
        decisions["decisions"].as_array().unwrap().iter().filter_map(|d| d["tool"].as_str()).collect();
    assert_eq!(tools.iter().filter(|t| **t == "Edit").count(), 2, "{decisions}");
    assert_eq!(tools.iter().filter(|t| **t == "Write").count(), 1, "{decisions}");
}
