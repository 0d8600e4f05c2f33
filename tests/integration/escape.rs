//! Out-of-workspace escapes through the real `portcullis hook`: a read behind a symlink out of
//! `jail.root` is asked, and an operator may allow it once only (never for the session), while
//! an ordinary floor ask in the same setup is waivable; at `yolo` the read is allowed and
//! `/proc/self/environ` is still denied.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{get, post, proxy};

async fn hook(args: &[&str], stdin: &[u8]) -> Value {
    // A tempdir workspace in a test run is a sandbox: `posture: yolo` as root needs the marker
    // (src/sandbox.rs), which this says.
    crate::hook::hook(args, stdin, &[("PORTCULLIS_SANDBOX", "1")]).await.0
}

fn decision(answer: &Value) -> &str {
    answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("")
}

fn reason(answer: &Value) -> &str {
    answer["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap_or("")
}

fn envelope(cwd: &Path, session: &str, tool: &str, input: Value) -> Vec<u8> {
    json!({
        "session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
        "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1",
    })
    .to_string()
    .into_bytes()
}

/// `<tmp>/repo` (the jail) with `link-out -> <tmp>/outside`, which holds `notes.txt`.
fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("repo")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/notes.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(base.join("outside"), base.join("repo/link-out")).unwrap();
    (dir, base.join("repo"))
}

#[tokio::test]
async fn an_escape_out_of_the_jail_is_asked_and_allowed_once_only_never_for_the_session() {
    let token_env = "PORTCULLIS_TEST_ESCAPE_ADMIN_TOKEN";
    let token = "escape-operator-token-0123456789";
    std::env::set_var(token_env, token);
    let (_dir, repo) = workspace();
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\n\
         posture: strict\njail: {{ root: {:?} }}\napprovals: {{ channel: api, timeout: 30s }}\n",
        repo.display().to_string()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let admin = format!("http://{}", p.admin_addr);
    let pre = ["pre", "--proxy", admin.as_str(), "--token-env", token_env];
    let auth = format!("Bearer {token}");
    let pending = || async {
        let (_, _, body) = get(&format!("{admin}/approvals"), &[("authorization", &auth)]).await;
        let v: Value = serde_json::from_str(&body).unwrap();
        v["pending"].as_array().cloned().unwrap_or_default()
    };
    let decide = |id: u64, choice: &'static str| {
        let (url, auth) = (format!("{admin}/approvals/{id}"), auth.clone());
        async move { post(&url, &[("authorization", &auth)], &format!(r#"{{"decision":"{choice}"}}"#)).await.0 }
    };

    // The escape: asked, as a configured ask, which refuses "allow for the session".
    let read = envelope(&repo, "s-1", "Read", json!({"file_path": repo.join("link-out/notes.txt")}));
    let asked = hook(&pre, &read).await;
    assert_eq!(decision(&asked), "ask", "{asked}");
    assert!(reason(&asked).contains("outside the jail") && reason(&asked).contains("once only"), "{asked}");
    let parked = pending().await;
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert_eq!(parked[0]["source"], "configured", "{parked:?}");
    let id = parked[0]["id"].as_u64().unwrap();
    assert_eq!(decide(id, "allow_session").await, 409, "a session waiver is refused");
    assert_eq!(decide(id, "allow_once").await, 200);
    let again = hook(&pre, &read).await;
    assert_eq!(decision(&again), "ask", "allowed once is not learned: {again}");
    let id = pending().await[0]["id"].as_u64().unwrap();
    assert_eq!(decide(id, "deny").await, 200);

    // The same setup does waive an ordinary floor ask: the refusal above is the escape's.
    let write = envelope(&repo, "s-1", "Write", json!({"file_path": repo.join("new.txt"), "content": "x"}));
    assert_eq!(decision(&hook(&pre, &write).await), "ask");
    let parked = pending().await;
    assert_eq!(parked[0]["source"], "floor", "{parked:?}");
    assert_eq!(decide(parked[0]["id"].as_u64().unwrap(), "allow_session").await, 200);
    let waived = hook(&pre, &write).await;
    assert_eq!(decision(&waived), "allow", "{waived}");
}

#[tokio::test]
async fn at_yolo_an_escaping_read_is_allowed_and_proc_self_environ_is_still_denied() {
    let (dir, repo) = workspace();
    let config = dir.path().join("yolo.yaml");
    let yaml = format!("posture: yolo\njail: {{ root: {:?} }}\n", repo.display().to_string());
    std::fs::write(&config, yaml).unwrap();
    let pre = ["pre", "--config", config.to_str().unwrap()];
    let read = |p: &str| envelope(&repo, "s", "Read", json!({ "file_path": p }));
    let out = hook(&pre, &read(&repo.join("link-out/notes.txt").display().to_string())).await;
    assert_eq!(decision(&out), "allow", "{out}");
    for p in ["/proc/self/environ", "../../../../../../proc/self/environ", "/sys/kernel/notes"] {
        let out = hook(&pre, &read(p)).await;
        assert_eq!(decision(&out), "deny", "{p}: {out}");
        assert!(reason(&out).contains("refused everywhere"), "{p}: {out}");
    }
}
