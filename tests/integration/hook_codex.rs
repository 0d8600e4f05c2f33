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
