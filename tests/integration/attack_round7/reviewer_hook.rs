//! The ask reviewer behind the proxy's hook endpoint (`POST /hook/pre`): a Claude Code user is
//! a human who can be asked — the hook answers `ask` and Claude Code puts the call to them — so
//! the reviewer, which stands in only where nobody can be asked, has no business answering it.

use serde_json::{json, Value};

use crate::support::fake_checker::{FakeChecker, Reply};
use crate::support::{post, proxy};

const TOKEN_ENV: &str = "PORTCULLIS_TEST_ADMIN_TOKEN_RT7_HOOK";
const TOKEN: &str = "rt7-hook-admin-token-5c81e2d09a";

async fn decide(admin: &str, command: &str) -> (String, Value) {
    let body = json!({
        "hook_event_name": "PreToolUse", "session_id": "rt7-hook", "cwd": "/",
        "tool_name": "Bash", "tool_input": { "command": command },
    });
    let auth = format!("Bearer {TOKEN}");
    let (status, _, text) =
        post(&format!("{admin}/hook/pre"), &[("authorization", &auth)], body.to_string()).await;
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let d = v["answer"]["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("").to_owned();
    (d, v)
}

#[tokio::test]
async fn a_hook_call_whose_user_can_be_asked_is_never_answered_by_the_reviewer() {
    std::env::set_var(TOKEN_ENV, TOKEN);
    let checker = FakeChecker::replying(Reply::Safe).await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {TOKEN_ENV} }}\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: reviewer, timeout: 2s }}\n  rules: [{{ match: mcp__x__never_called, phases: [post] }}]\n",
        checker.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let admin = format!("http://{}", p.admin_addr);
    let (before, v) = decide(&admin, "make build").await;
    assert_eq!(before, "ask", "the control: without the reviewer Claude Code asks its user: {v}");
    p.shared.approvals.enable_reviewer();
    let (after, v) = decide(&admin, "make build").await;
    assert_eq!(checker.calls(), 0, "the model was asked in the user's place: {v}");
    assert_eq!(after, "ask", "{v}");
}
