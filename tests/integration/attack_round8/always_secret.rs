//! "Allow always" for a call whose arguments carry a secret, on the real `portcullis serve`: the
//! audit line, the tap and the notifications mask what the detectors find, but the exact rule is
//! the call's raw arguments — so the secret goes into the operator's rule file (often versioned)
//! and into the proxy's log line "allow always: rule written".

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use super::harness::{call, Admin};
use crate::support::{eventually, open_legacy_session, Peer};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test]
async fn allow_always_never_writes_a_detected_secret_to_the_rule_file_or_the_log() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_SECRET", "r8-secret-operator-token-a");
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let (listen, admin_port) = (free_port(), free_port());
    let config = dir.path().join("portcullis.yaml");
    std::fs::write(
        &config,
        format!(
            "listen: 127.0.0.1:{listen}\nadmin: {{ listen: 127.0.0.1:{admin_port}, token_env: {token_env} }}\n\
             upstreams:\n  py: {{ url: \"{}\" }}\napprovals: {{ channel: api, timeout: 60s }}\n",
            peer.url()
        ),
    )
    .unwrap();
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, "permissions:\n  allow: []\n").unwrap();
    let log = dir.path().join("serve.log");
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["serve", "--config"])
        .arg(&config)
        .arg("--permission-config")
        .arg(&rules)
        .env(token_env, token)
        .stdout(Stdio::from(std::fs::File::create(dir.path().join("serve.out")).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let admin = Admin { base: format!("http://127.0.0.1:{admin_port}"), auth: format!("Bearer {token}") };
    eventually("serve listening", || async {
        tokio::net::TcpStream::connect(("127.0.0.1", listen)).await.ok()?;
        tokio::net::TcpStream::connect(("127.0.0.1", admin_port)).await.ok().map(|_| ())
    })
    .await;
    let url = format!("http://127.0.0.1:{listen}/mcp/py");
    let session = open_legacy_session(&url).await;
    let key = "ghp_".to_owned() + "R8alwaysKeyR8alwaysKeyR8alwaysKey012";
    let pending = call(&url, &session, "write_note", json!({"path": "deploy", "text": format!("key {key}")}));
    let id = admin.parked_one().await;
    // The preview offers no rule, and a write (with any base) is refused for the same reason,
    // before the file is touched: the refusal names the class, never the value.
    let (preview_status, preview) = admin.get(&format!("/approvals/{id}/always")).await;
    assert_eq!(preview_status, 409, "{preview}");
    let (status, v) = admin
        .post(&format!("/approvals/{id}"), json!({"decision": "allow_always", "base": "0".repeat(64)}))
        .await;
    assert_eq!(status, 409, "{v}");
    for said in [&preview, &v] {
        let why = said["error"].as_str().unwrap_or_default();
        assert!(why.contains("secret") && !why.contains(&key), "{said}");
    }
    admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
    let _ = pending.await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    serve.kill().await.unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    let file = std::fs::read_to_string(&rules).unwrap();
    assert!(!logged.contains(&key), "HTTP {status} {v}\nthe log holds the secret:\n{logged}");
    assert!(!file.contains(&key), "the rule file holds the secret:\n{file}");
}
