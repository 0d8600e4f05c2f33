//! Child-scoped rules end to end (issue 26.8): `permissions.subagent.deny` binds a delegated
//! child's calls beyond the main rules, while its parent's identical call goes through. Real
//! peers: `server-everything` (its journal says what reached it) and the Python SDK client.

use serde_json::{json, Value};

use crate::support::{config, post, proxy, proxy_url, py_client_with, text_of, Peer};

const DEV: (&str, &str) = ("PORTCULLIS_TEST_SUBAGENT_DEV", "dev-token-5a6b7c8d9e0f1a2b3c4d");

fn auth(token: &str) -> String {
    format!("Bearer {token}")
}

async fn calls(url: &str, token: &str, steps: &[&str]) -> Vec<Value> {
    py_client_with(url, "legacy", &["--header", &format!("Authorization: {}", auth(token))], steps).await
}

#[tokio::test]
async fn a_subagent_deny_refuses_the_childs_call_that_its_parent_may_make_and_it_never_reaches_the_upstream()
{
    std::env::set_var(DEV.0, DEV.1);
    let peer = Peer::everything();
    let yaml = format!(
        "permissions:\n  allow: [\"mcp__*\"]\n  subagent: {{ deny: [\"mcp__e__echo\"] }}\nagents:\n  dev: {{ token_env: {} }}\n",
        DEV.0
    );
    let p = proxy(&config(&[("e", &peer.url())], &yaml)).await;
    let url = proxy_url(&p, "e");
    // The child's own grant narrows nothing: only permissions.subagent stands between.
    let body = json!({ "name": "helper", "ttl": "15m" });
    let (status, _, text) = post(
        &format!("http://{}/delegations", p.addr),
        &[("authorization", &auth(DEV.1))],
        &body.to_string(),
    )
    .await;
    assert_eq!(status, 201, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let token = doc["token"].as_str().unwrap();

    let echo = r#"{"message":"hi"}"#;
    let kid = calls(&url, token, &["call", "get-sum", r#"{"a":1,"b":2}"#, "call", "echo", echo]).await;
    assert_ne!(kid[0]["result"]["isError"], true, "{kid:?}");
    assert_eq!(kid[1]["result"]["isError"], true, "{kid:?}");
    let why = text_of(&kid[1]);
    assert!(why.contains("mcp__e__echo") && why.contains("delegated by dev"), "{why}");
    let dev = calls(&url, DEV.1, &["call", "echo", echo]).await;
    assert_eq!(text_of(&dev[0]), "Echo: hi", "the parent is not a subagent: {dev:?}");
    assert_eq!(peer.calls_received(), ["get-sum", "echo"], "the child's echo never left");
    p.shutdown().await;
}

/// Claude Code's PreToolUse for `Bash`, from a subagent (`agent_id` set) or the main agent.
fn bash_from(agent_id: Option<&str>, cwd: &std::path::Path, command: &str) -> String {
    let mut envelope = json!({"hook_event_name": "PreToolUse", "session_id": "sub-1", "cwd": cwd,
        "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": command}});
    if let Some(id) = agent_id {
        envelope["agent_id"] = json!(id);
        envelope["agent_type"] = json!("general-purpose");
    }
    envelope.to_string()
}

#[tokio::test]
async fn in_hook_mode_a_claude_code_subagents_call_meets_the_subagent_rules_and_the_main_agents_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("portcullis.yaml");
    std::fs::write(
        &policy,
        "permissions:\n  allow: [\"Bash(git status:*)\", \"Bash(ls:*)\"]\n  subagent: { deny: [\"Bash(git status:*)\"], ask: [\"Bash(ls:*)\"] }\n",
    )
    .unwrap();
    let decide = |agent_id: Option<&'static str>, command: &'static str| {
        let stdin = bash_from(agent_id, dir.path(), command);
        let policy = policy.to_str().unwrap().to_owned();
        async move {
            let args = ["pre", "--config", policy.as_str()];
            let (answer, _) = crate::hook::hook(&args, stdin.as_bytes(), &[("SHELL", "/bin/bash")]).await;
            let d = answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("?").to_owned();
            (d, answer["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap_or("").to_owned())
        }
    };
    assert_eq!(decide(None, "git status").await.0, "allow", "the main agent's rules allow it");
    assert_eq!(decide(None, "ls").await.0, "allow");
    let (denied, why) = decide(Some("a1b2c3"), "git status").await;
    assert_eq!(denied, "deny", "{why}");
    assert!(why.contains("git status"), "{why}");
    assert_eq!(decide(Some("a1b2c3"), "ls").await.0, "ask", "subagent.ask joins the subagent's rules");
    // `agent_id: null` is not a subagent (the field's presence with a value is what marks one).
    let mut null_id: Value = serde_json::from_str(&bash_from(None, dir.path(), "git status")).unwrap();
    null_id["agent_id"] = Value::Null;
    let stdin = null_id.to_string();
    let args = ["pre", "--config", policy.to_str().unwrap()];
    let (answer, _) = crate::hook::hook(&args, stdin.as_bytes(), &[("SHELL", "/bin/bash")]).await;
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow", "{answer}");

    // No relaxed escape row for a subagent: under `auto` a read outside the jail is allowed to the
    // main agent and denied to its subagent.
    let jailed = dir.path().join("auto.yaml");
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(&jailed, format!("posture: auto\njail: {{ root: {:?} }}\n", root.display().to_string()))
        .unwrap();
    let read = |agent_id: Option<&str>| {
        let mut envelope = json!({"hook_event_name": "PreToolUse", "session_id": "sub-2", "cwd": root,
            "permission_mode": "default", "tool_name": "Read", "tool_input": {"file_path": "/etc/hostname"}});
        if let Some(id) = agent_id {
            envelope["agent_id"] = json!(id);
        }
        envelope.to_string()
    };
    let args = ["pre", "--config", jailed.to_str().unwrap()];
    let env = [("SHELL", "/bin/bash"), ("PORTCULLIS_SANDBOX", "1")];
    let (main, _) = crate::hook::hook(&args, read(None).as_bytes(), &env).await;
    assert_eq!(main["hookSpecificOutput"]["permissionDecision"], "allow", "{main}");
    let (sub, _) = crate::hook::hook(&args, read(Some("a1b2c3")).as_bytes(), &env).await;
    assert_eq!(sub["hookSpecificOutput"]["permissionDecision"], "deny", "{sub}");
}
