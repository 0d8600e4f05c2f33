//! `portcullis hook` as Claude Code runs it: the real binary, an envelope on stdin, the answer
//! on stdout. Golden envelopes for every built-in tool in both phases (tests/hook/), bad input,
//! and `--proxy` against a proxy started here, whose metrics, audit log, approvals and waivers
//! the hook shares.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::guardrails::unsafe_if;
use crate::support::fake_checker::FakeChecker;
use crate::support::{get, post, proxy};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hook")
}

/// Runs `portcullis hook {args}` with `stdin`; returns the parsed answer and stderr. Async, so
/// a proxy on this test's runtime can answer it.
pub(crate) async fn hook(args: &[&str], stdin: &[u8], envs: &[(&str, &str)]) -> (Value, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .arg("hook")
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    drop(input);
    let out = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the hook always exits 0 with an answer; stderr: {stderr}");
    let answer = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout:?} ({stderr})"));
    (answer, stderr)
}

/// allow / ask / deny before a call; pass / block after it.
fn decision(answer: &Value) -> &str {
    match answer["hookSpecificOutput"]["permissionDecision"].as_str() {
        Some(d) => d,
        None => answer["decision"].as_str().unwrap_or("pass"),
    }
}

fn reason(answer: &Value) -> String {
    let pre = answer["hookSpecificOutput"]["permissionDecisionReason"].as_str();
    pre.or(answer["reason"].as_str()).unwrap_or("").to_owned()
}

#[tokio::test]
async fn every_golden_envelope_gets_its_decision_and_names_its_rule() {
    let dir = fixtures();
    let policy = dir.join("policy.yaml");
    let expected: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    assert!(expected.len() >= 35, "every built-in tool in both phases, and bad input");
    for (file, want) in &expected {
        let phase = match (file.split('/').next(), want["phase"].as_str()) {
            (_, Some(p)) => p,
            (Some("post"), _) => "post",
            _ => "pre",
        };
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let (answer, stderr) = hook(&[phase, "--config", policy.to_str().unwrap()], &bytes, &[]).await;
        assert_eq!(decision(&answer), want["decision"], "{file}: {answer}");
        let why = reason(&answer);
        if let Some(rule) = want["rule"].as_str() {
            assert!(why.contains(rule), "{file}: {why:?} should name {rule}");
        }
        if let Some(text) = want["contains"].as_str() {
            assert!(answer.to_string().contains(text), "{file}: {answer} should hold {text}");
            assert!(!answer.to_string().contains("HUNTER2"), "{file}: the secret is not repeated: {answer}");
        }
        match want["stderr"].as_str() {
            Some(text) => assert!(stderr.contains(text), "{file}: stderr {stderr:?} should hold {text}"),
            None => assert!(stderr.trim().is_empty(), "{file}: no message expected, got {stderr}"),
        }
    }
}

#[tokio::test]
async fn a_config_that_does_not_load_denies_and_says_why() {
    let bytes = std::fs::read(fixtures().join("pre/bash_allowed.json")).unwrap();
    let (answer, stderr) = hook(&["pre", "--config", "/nonexistent/portcullis.yaml"], &bytes, &[]).await;
    assert_eq!(decision(&answer), "deny");
    assert!(stderr.contains("/nonexistent/portcullis.yaml"), "{stderr}");
}

/// An envelope for a call in `session`.
fn envelope(event: &str, session: &str, tool: &str, input: Value, response: Option<Value>) -> Vec<u8> {
    let mut e = json!({
        "session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": "/work/repo",
        "hook_event_name": event, "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1",
    });
    if let Some(r) = response {
        e["tool_response"] = r;
    }
    e.to_string().into_bytes()
}

/// The injected page: a prompt-injection sample from the corpus, as WebFetch returns it.
fn injected_fetch() -> Value {
    let line = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/injection.dev.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str::<Value>(l).unwrap())
    .find(|v| v["label"] != "benign")
    .expect("the corpus holds an injection");
    let text = format!("{} ATTACKER-INSTRUCTIONS", line["text"].as_str().unwrap());
    json!({"bytes": text.len(), "code": 200, "codeText": "OK", "result": text, "durationMs": 9, "url": "https://blog.example/post"})
}

#[tokio::test]
async fn an_injected_webfetch_result_is_blocked_after_the_call_in_process() {
    let checker = FakeChecker::start(unsafe_if("ATTACKER-INSTRUCTIONS")).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("p.yaml");
    std::fs::write(
        &config,
        format!(
            "permissions: {{ allow: [WebFetch] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 5s }}\n  min_content_bytes: 0\n  rules: [{{ match: Fetch, phases: [post], mode: block }}]\n",
            checker.url
        ),
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    let input = json!({"url": "https://blog.example/post", "prompt": "Summarise"});
    let (answer, _) =
        hook(&["pre", "--config", cfg], &envelope("PreToolUse", "s", "WebFetch", input.clone(), None), &[])
            .await;
    assert_eq!(decision(&answer), "allow", "Layer 1 allows; no pre rule, so no checker call");
    assert_eq!(checker.calls(), 0);
    let post_env = envelope("PostToolUse", "s", "WebFetch", input, Some(injected_fetch()));
    let (answer, _) = hook(&["post", "--config", cfg], &post_env, &[]).await;
    assert_eq!(decision(&answer), "block", "{answer}");
    let why = reason(&answer);
    assert!(why.contains("judged it unsafe") && why.contains("do not use it"), "{answer}");
    assert!(!why.contains("was not shown"), "a built-in tool's output was produced: {why}");
}

#[tokio::test]
async fn through_a_running_proxy_decisions_are_counted_audited_waived_and_judged() {
    let token_env = "PORTCULLIS_TEST_HOOK_ADMIN_TOKEN";
    let token = "hook-operator-token-0123456789";
    std::env::set_var(token_env, token);
    let checker = FakeChecker::start(unsafe_if("ATTACKER-INSTRUCTIONS")).await;
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\n\
         permissions: {{ allow: [\"Bash(git status)\", WebFetch], deny: [\"Bash(rm:*)\"] }}\n\
         approvals: {{ channel: api, timeout: 30s }}\naudit: {{ to: \"{}\" }}\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 5s }}\n  min_content_bytes: 0\n  rules: [{{ match: Fetch, phases: [post], mode: block }}]\n",
        audit.display(),
        checker.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let admin = format!("http://{}", p.admin_addr);
    let proxied = |phase: &'static str| vec![phase, "--proxy", admin.as_str(), "--token-env", token_env];
    let auth = format!("Bearer {token}");

    // Allowed and denied, and both show in /metrics and the audit log.
    let (a, _) = hook(
        &proxied("pre"),
        &envelope("PreToolUse", "s-1", "Bash", json!({"command": "git status"}), None),
        &[],
    )
    .await;
    assert_eq!(decision(&a), "allow", "{a}");
    let (d, _) = hook(
        &proxied("pre"),
        &envelope("PreToolUse", "s-1", "Bash", json!({"command": "rm -rf /"}), None),
        &[],
    )
    .await;
    assert_eq!(decision(&d), "deny", "{d}");
    assert!(reason(&d).contains("Bash(rm:*)"), "{d}");
    let (_, _, metrics) = get(&format!("{admin}/metrics"), &[]).await;
    let counted = |outcome: &str| {
        metrics.lines().any(|l| {
            l.starts_with("portcullis_tool_calls_total")
                && l.contains("upstream=\"claude-code\"")
                && l.contains(outcome)
        })
    };
    assert!(counted("forwarded") && counted("denied"), "{metrics}");
    let (status, _, decisions) = get(&format!("{admin}/decisions"), &[("authorization", &auth)]).await;
    assert_eq!(status, 200, "{decisions}");
    let decisions: Value = serde_json::from_str(&decisions).unwrap();
    let tools: Vec<&str> =
        decisions["decisions"].as_array().unwrap().iter().filter_map(|d| d["tool"].as_str()).collect();
    assert!(tools.contains(&"Bash"), "{decisions}");

    // An ask is Claude Code's ask, and parked for an operator; allowed for the session there, the
    // next identical call in that session is allowed, and only in that session.
    let write = |s: &str| {
        envelope(
            "PreToolUse",
            s,
            "Write",
            json!({"file_path": "/tmp/hook-e2e/notes.md", "content": "hi"}),
            None,
        )
    };
    let (asked, _) = hook(&proxied("pre"), &write("s-1"), &[]).await;
    assert_eq!(decision(&asked), "ask", "{asked}");
    let (_, _, pending) = get(&format!("{admin}/approvals"), &[("authorization", &auth)]).await;
    let pending: Value = serde_json::from_str(&pending).unwrap();
    let id = pending["pending"][0]["id"].as_u64().unwrap_or_else(|| panic!("{pending}"));
    assert!(reason(&asked).contains(&format!("approval {id}")), "{asked}");
    let (status, _, body) = post(
        &format!("{admin}/approvals/{id}"),
        &[("authorization", &auth)],
        r#"{"decision":"allow_session"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (again, _) = hook(&proxied("pre"), &write("s-1"), &[]).await;
    assert_eq!(decision(&again), "allow", "the waiver answers: {again}");
    let (other, _) = hook(&proxied("pre"), &write("s-2"), &[]).await;
    assert_eq!(decision(&other), "ask", "another session is asked: {other}");

    // An injected WebFetch result is blocked after the call.
    let input = json!({"url": "https://blog.example/post", "prompt": "Summarise"});
    let (blocked, _) = hook(
        &proxied("post"),
        &envelope("PostToolUse", "s-1", "WebFetch", input.clone(), Some(injected_fetch())),
        &[],
    )
    .await;
    assert_eq!(decision(&blocked), "block", "{blocked}");
    let clean = json!({"bytes": 40, "code": 200, "codeText": "OK", "result": "A plain page about Rust.", "durationMs": 3, "url": "https://x"});
    let (passed, _) =
        hook(&proxied("post"), &envelope("PostToolUse", "s-1", "WebFetch", input, Some(clean)), &[]).await;
    assert_eq!(decision(&passed), "pass", "{passed}");

    // Bad input through the proxy: the conservative answer, and the proxy's message on stderr.
    let (bad, stderr) = hook(&proxied("pre"), b"{\"hook_event_name\":\"PreToolUse\"}", &[]).await;
    assert_eq!(decision(&bad), "deny");
    assert!(stderr.contains("not a JSON object"), "{stderr}");

    // A wrong token, and no proxy at all: the configured failure answer, never an allow.
    let env = envelope("PreToolUse", "s-1", "Bash", json!({"command": "git status"}), None);
    let (refused, stderr) = hook(&proxied("pre"), &env, &[(token_env, "not-the-token-at-all")]).await;
    assert_eq!(decision(&refused), "ask");
    assert!(stderr.contains("401"), "{stderr}");
    let gone = ["pre", "--proxy", "http://127.0.0.1:9", "--token-env", token_env];
    let (down, stderr) = hook(&gone, &env, &[]).await;
    assert_eq!(decision(&down), "ask", "{down}");
    assert!(stderr.contains("cannot be reached"), "{stderr}");
    let (denied, _) = hook(&[&gone[..], &["--on-proxy-down", "deny"]].concat(), &env, &[]).await;
    assert_eq!(decision(&denied), "deny");
    let post_env =
        envelope("PostToolUse", "s-1", "Bash", json!({"command": "ls"}), Some(json!({"stdout": "x"})));
    let (noted, _) =
        hook(&["post", "--proxy", "http://127.0.0.1:9", "--token-env", token_env], &post_env, &[]).await;
    assert!(noted["systemMessage"].as_str().is_some_and(|m| m.contains("could not inspect")), "{noted}");
}

#[tokio::test]
async fn install_merges_into_settings_and_twice_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}, "model": "opus"});
    std::fs::write(&settings, mine.to_string()).unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(["hook", "install", "--project", "--write", "--proxy", "http://127.0.0.1:8687"])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    assert!(run().status.success());
    let once = std::fs::read_to_string(&settings).unwrap();
    assert!(run().status.success());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), once, "installing twice changes nothing");
    let v: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v["model"], "opus");
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre[0]["hooks"][0]["command"], "./lint.sh");
    let ours = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(ours.contains(" hook pre --proxy http://127.0.0.1:8687"), "{ours}");
    assert!(v["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str().unwrap().contains(" hook post "));
    let prompt = v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        prompt.contains(" hook prompt --proxy http://127.0.0.1:8687"),
        "with a proxy, the prompt is recorded: {prompt}"
    );
}

/// Claude Code's settings write path rules relative to the project (`Read(./secrets.txt)`):
/// with `jail.root` set to the repository they mean what they say there.
#[tokio::test]
async fn a_relative_rule_is_relative_to_the_jail_root() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    let policy = repo.join("policy.yaml");
    std::fs::write(
        &policy,
        format!(
            "jail: {{ root: {:?} }}\npermissions:\n  allow: [\"Read(./**)\"]\n  deny: [\"Read(./secrets.txt)\"]\n",
            repo.display().to_string()
        ),
    )
    .unwrap();
    let envelope = |path: &str| {
        serde_json::json!({
            "session_id": "rel-1", "transcript_path": "/tmp/t.jsonl", "cwd": repo.display().to_string(),
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_input": { "file_path": path }, "tool_use_id": "toolu_rel"
        })
        .to_string()
    };
    let (answer, _) =
        hook(&["pre", "--config", policy.to_str().unwrap()], envelope("secrets.txt").as_bytes(), &[]).await;
    assert_eq!(decision(&answer), "deny", "{answer}");
    assert!(reason(&answer).contains("Read(./secrets.txt)"), "{answer}");
    let (answer, _) =
        hook(&["pre", "--config", policy.to_str().unwrap()], envelope("src/main.rs").as_bytes(), &[]).await;
    assert_eq!(decision(&answer), "allow", "{answer}");
}

/// `--import-claude-permissions`: the project's and the user's `.claude/settings.json` are read
/// beside the policy — a deny holds, an allow only narrows, and what was lost is said on stderr.
#[tokio::test]
async fn claude_codes_own_rules_are_imported_never_wider() {
    let dir = tempfile::tempdir().unwrap();
    let (project, home) = (dir.path().join("repo"), dir.path().join("home"));
    for d in [&project, &home] {
        std::fs::create_dir_all(d.join(".claude")).unwrap();
    }
    let project_rules =
        json!({"permissions": {"deny": ["Bash(make *)"], "allow": ["WebFetch(domain:docs.rs)"]}});
    std::fs::write(project.join(".claude/settings.json"), project_rules.to_string()).unwrap();
    let user_rules = json!({"permissions": {"deny": ["Read(~/.netrc)"]}});
    std::fs::write(home.join(".claude/settings.json"), user_rules.to_string()).unwrap();
    let call = |tool: &str, input: Value| {
        let mut e = json!({"session_id": "s", "cwd": project.display().to_string(), "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "permission_mode": "default"});
        e["transcript_path"] = json!("/tmp/t.jsonl");
        e.to_string().into_bytes()
    };
    let home_env = [("HOME", home.to_str().unwrap())];
    // A command the operator's config does not deny: the project's deny is what refuses it.
    let rm = call("Bash", json!({"command": "make build"}));
    let (answer, stderr) = hook(&["pre", "--import-claude-permissions"], &rm, &home_env).await;
    assert_eq!(decision(&answer), "deny", "{answer}");
    // The project's file is the project's tier (its deny holds untrusted; its allows would not).
    assert!(reason(&answer).contains("Bash(make") && reason(&answer).contains("scope project"), "{answer}");
    assert!(stderr.contains("demoted to ask"), "the lossy import is said: {stderr}");
    let netrc = call("Read", json!({"file_path": home.join(".netrc").display().to_string()}));
    let (answer, _) = hook(&["pre", "--import-claude-permissions"], &netrc, &home_env).await;
    assert_eq!(decision(&answer), "deny", "the user's deny, '~' as the home directory: {answer}");
    let fetch = call("WebFetch", json!({"url": "https://docs.rs/", "prompt": "read"}));
    let (answer, _) = hook(&["pre", "--import-claude-permissions"], &fetch, &home_env).await;
    assert_eq!(decision(&answer), "ask", "an allow by host is only an ask: {answer}");
    // Without the flag nothing of Claude Code's is read.
    let (answer, _) = hook(&["pre"], &rm, &home_env).await;
    assert!(!reason(&answer).contains("scope project"), "{answer}");
}
