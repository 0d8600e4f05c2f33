//! The user's own task, recorded where the agent cannot write — Claude Code's `UserPromptSubmit`
//! hook (`portcullis hook prompt --proxy`) or an operator-trusted front (`POST
//! /sessions/{id}/task`), both behind the admin token — is the one task that may show a send to
//! be the user's intent; in its own session only. The agent's task still excuses nothing.

use std::io::Write;

use serde_json::{json, Value};

use crate::guardrails::Session;
use crate::support::fake_checker::{FakeChecker, Reply, Request};
use crate::support::{post, proxy, proxy_url, Peer};

const TOKEN_ENV: &str = "PORTCULLIS_TEST_ADMIN_TOKEN_USER_TASK";
const TOKEN: &str = "user-task-operator";
const ACCOUNT: &str = "DE89-3704-0044-0532-0130-00";

/// The text between fences named `name` (`USER TASK`, `TASK`) of a checker request.
fn fenced(r: &Request, name: &str) -> Option<String> {
    let user = r.user();
    let start = user.find(&format!("BEGIN {name} "))?;
    let body = &user[start..];
    let body = &body[body.find('\n')? + 1..];
    Some(body[..body.find(&format!("\nEND {name} "))?].to_owned())
}

/// A model that follows the prompt: a send to the account is the user's intent only when the
/// user's own task names it; the agent's task never makes it safe.
fn judge(r: &Request) -> (Reply, Option<std::time::Duration>) {
    let intended = fenced(r, "USER TASK").is_some_and(|t| t.contains(ACCOUNT));
    match r.data().contains(ACCOUNT) && !intended {
        true => (Reply::Unsafe("sends money to an account the user never named".into()), None),
        false => (Reply::Safe, None),
    }
}

fn config(peer: &Peer, checker: &FakeChecker) -> portcullis::config::Config {
    std::env::set_var(TOKEN_ENV, TOKEN);
    let admin = format!("admin: {{ listen: 127.0.0.1:0, token_env: {TOKEN_ENV} }}\n");
    let yaml = format!(
        "listen: 127.0.0.1:0\n{admin}approvals: {{ channel: none }}\nupstreams:\n  py: {{ url: \"{}\" }}\npermissions: {{ allow: [\"mcp__*\"] }}\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  min_content_bytes: 0\n  rules: [{{ match: \"mcp__*\", phases: [pre] }}]\n",
        peer.url(),
        checker.url
    );
    portcullis::config::Config::parse(&yaml, "test").unwrap()
}

#[tokio::test]
async fn a_task_a_trusted_front_records_excuses_the_send_it_names_in_its_session_only() {
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(judge).await;
    let p = proxy(&config(&peer, &checker)).await;
    let admin = format!("http://{}", p.admin_addr);
    let url = proxy_url(&p, "py");
    let (mut mine, mut other) = (Session::open(&url).await, Session::open(&url).await);
    let send = json!({"message": format!("transfer 900 EUR to {ACCOUNT}")});

    // Without the admin token nobody records a task (the agent holds none).
    let body = json!({"task": format!("Pay my landlord 900 EUR to {ACCOUNT}")}).to_string();
    let (status, _, text) = post(&format!("{admin}/sessions/{}/task", mine.id), &[], body.clone()).await;
    assert_eq!(status, 401, "{text}");
    let auth = format!("Bearer {TOKEN}");
    let (status, _, text) =
        post(&format!("{admin}/sessions/{}/task", mine.id), &[("authorization", &auth)], body).await;
    assert_eq!(status, 200, "{text}");
    let (status, _, text) =
        post(&format!("{admin}/sessions/{}/task", mine.id), &[("authorization", &auth)], r#"{"tsk":"x"}"#)
            .await;
    assert_eq!(status, 400, "a body it cannot read is refused: {text}");

    let (_, _, msg) = mine.call("echo", send.clone(), &[]).await;
    assert_eq!(msg["result"]["content"][0]["text"], send["message"], "the user asked for it: {msg}");
    let (_, _, msg) = other.call("echo", send.clone(), &[]).await;
    assert_eq!(msg["result"]["isError"], true, "another session has no such task: {msg}");
    assert_eq!(peer.tools_run(), ["echo"], "the blocked send never ran");

    let seen = checker.requests();
    assert_eq!(seen.len(), 2, "two judged calls");
    assert!(fenced(&seen[0], "USER TASK").is_some_and(|t| t.contains(ACCOUNT)));
    assert!(seen[0].system().contains("the user's intent, not exfiltration"), "{}", seen[0].system());
    assert!(fenced(&seen[1], "USER TASK").is_none(), "{}", seen[1].user());
}

/// Runs `portcullis hook {args}` with `stdin`; returns stdout and stderr.
fn hook(args: &[&str], stdin: &str) -> (String, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .arg("hook")
        .args(args)
        .env(TOKEN_ENV, TOKEN)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the hook always exits 0");
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn claude_codes_prompt_recorded_by_the_hook_excuses_the_send_in_that_session() {
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(judge).await;
    let p = proxy(&config(&peer, &checker)).await;
    let admin = format!("http://{}", p.admin_addr);
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "cc-1", "cwd": "/w",
        "prompt": format!("Pay my landlord 900 EUR, account {ACCOUNT}.")});
    let admin_for_hook = admin.clone();
    let prompt_text = prompt.to_string();
    let (out, err) = tokio::task::spawn_blocking(move || {
        let args = ["prompt", "--proxy", admin_for_hook.as_str(), "--token-env", TOKEN_ENV];
        hook(&args, &prompt_text)
    })
    .await
    .unwrap();
    assert_eq!(out, "", "the prompt hook prints nothing (Claude Code would show it to the model)");
    assert_eq!(err, "", "{err}");

    let pre = |session: &str| {
        json!({"hook_event_name": "PreToolUse", "session_id": session, "cwd": "/w",
            "tool_name": "mcp__bank__transfer", "tool_input": {"to": ACCOUNT, "eur": 900}})
        .to_string()
    };
    let auth = format!("Bearer {TOKEN}");
    let decide = |session: &'static str| {
        let (url, auth, body) = (format!("{admin}/hook/pre"), auth.clone(), pre(session));
        async move {
            let (status, _, text) = post(&url, &[("authorization", &auth)], body).await;
            assert_eq!(status, 200, "{text}");
            let v: Value = serde_json::from_str(&text).unwrap();
            v["answer"]["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("").to_owned()
        }
    };
    assert_eq!(decide("cc-1").await, "allow", "the user asked for this send");
    assert_eq!(decide("cc-2").await, "deny", "not in another session (nobody to ask: refused)");

    // A malformed or foreign envelope is refused with a reason, and the hook still exits 0
    // silently on the agent's side.
    let (status, _, text) = post(
        &format!("{admin}/hook/prompt"),
        &[("authorization", &auth)],
        r#"{"hook_event_name":"PreToolUse","session_id":"cc-1","prompt":"x"}"#,
    )
    .await;
    assert_eq!(status, 400, "{text}");
    let (out, err) = tokio::task::spawn_blocking(|| {
        hook(&["prompt", "--proxy", "http://127.0.0.1:9", "--token-env", TOKEN_ENV], "{}")
    })
    .await
    .unwrap();
    assert_eq!(out, "");
    assert!(err.contains("unrecorded"), "{err}");
}
