//! Delegated agents end to end: an agent mints a narrower credential for a child at
//! `POST /delegations`, the child decides under the intersection of both, a reload that narrows
//! the parent narrows the child, and revoking or expiring a delegation shuts the door on it and
//! everything below it. Real peers: `server-everything` (its journal says what reached it) and the
//! Python SDK client.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{config, eventually, post, proxy, proxy_url, py_client_with, text_of, Peer};

const DEV: (&str, &str) = ("PORTCULLIS_TEST_DELEG_DEV", "dev-token-a1b2c3d4e5f60718293a");
const CI: (&str, &str) = ("PORTCULLIS_TEST_DELEG_CI", "ci-token-9f8e7d6c5b4a39281706");

fn agents_yaml(dev_extra: &str) -> String {
    for (var, value) in [DEV, CI] {
        std::env::set_var(var, value);
    }
    format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\n\
         agents:\n  \
           dev: {{ token_env: {}, profile: standard{dev_extra} }}\n  \
           ci: {{ token_env: {} }}\n",
        DEV.0, CI.0
    )
}

fn auth(token: &str) -> String {
    format!("Bearer {token}")
}

/// `POST /delegations` as `token` (none: no credential); the status and the JSON answer.
async fn mint(addr: std::net::SocketAddr, token: Option<&str>, body: &str) -> (u16, Value) {
    let header = token.map(auth);
    let headers: Vec<(&str, &str)> = header.iter().map(|h| ("authorization", h.as_str())).collect();
    let (status, _, text) = post(&format!("http://{addr}/delegations"), &headers, body).await;
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Mints, expecting success; returns (token, delegation id).
async fn child(addr: std::net::SocketAddr, token: &str, body: Value) -> (String, String) {
    let (status, doc) = mint(addr, Some(token), &body.to_string()).await;
    assert_eq!(status, 201, "{body}: {doc}");
    (doc["token"].as_str().unwrap().to_owned(), doc["id"].as_str().unwrap().to_owned())
}

/// `DELETE /delegations/{id}` as `token`.
async fn revoke(addr: std::net::SocketAddr, token: &str, id: &str) -> (u16, String) {
    use http_body_util::{BodyExt, Empty};
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Empty<bytes::Bytes>>();
    let req = http::Request::delete(format!("http://{addr}/delegations/{id}"))
        .header("authorization", auth(token))
        .body(Empty::new())
        .unwrap();
    let resp = client.request(req).await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// What the door says to `token` at an upstream route: the status, and `WWW-Authenticate`.
async fn door(url: &str, token: &str) -> (u16, String) {
    let (status, h, _) = post(url, &[("authorization", &auth(token))], INIT).await;
    let challenge = h.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (status, challenge)
}

async fn calls(url: &str, token: &str, steps: &[&str]) -> Vec<Value> {
    py_client_with(url, "legacy", &["--header", &format!("Authorization: {}", auth(token))], steps).await
}

const ECHO: &str = r#"{"message":"hi"}"#;
const SUM: &str = r#"{"a":1,"b":2}"#;

#[tokio::test]
async fn a_child_decides_under_the_intersection_and_what_it_may_not_do_never_reaches_the_upstream() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url()), ("other", &peer.url())], &agents_yaml(""))).await;
    let url = proxy_url(&p, "e");

    let body = json!({"name": "reviewer", "deny": ["mcp__e__echo"], "upstreams": ["e"], "ttl": "15m"});
    let (status, doc) = mint(p.addr, Some(DEV.1), &body.to_string()).await;
    assert_eq!(status, 201, "{doc}");
    assert_eq!(doc["agent"], "dev>reviewer");
    let token = doc["token"].as_str().unwrap();
    assert!(token.starts_with("pcd_") && token.len() >= 4 + 43, "{token}");
    assert!(doc["expires_at"].as_str().unwrap().ends_with('Z') && doc["expires_at_unix"].is_u64(), "{doc}");

    // Both allow get-sum; only the parent may echo.
    let kid = calls(&url, token, &["call", "get-sum", SUM, "call", "echo", ECHO]).await;
    assert_ne!(kid[0]["result"]["isError"], true, "{kid:?}");
    assert_eq!(kid[1]["result"]["isError"], true, "{kid:?}");
    let why = text_of(&kid[1]);
    assert!(why.contains("mcp__e__echo") && why.contains("as dev>reviewer, delegated by dev"), "{why}");
    let dev = calls(&url, DEV.1, &["call", "echo", ECHO]).await;
    assert_eq!(text_of(&dev[0]), "Echo: hi", "{dev:?}");
    assert_eq!(
        peer.calls_received(),
        vec!["get-sum".to_owned(), "echo".to_owned()],
        "the child's echo never left"
    );
    assert!(peer.journal_http().iter().all(|l| l["has_authorization"] == false), "no token is forwarded");

    // An upstream outside its allowlist is not the child's to reach at all; the parent still may.
    let before = peer.journal_http().len();
    let (status, _, text) = post(&proxy_url(&p, "other"), &[("authorization", &auth(token))], INIT).await;
    assert_eq!(status, 403, "{text}");
    assert!(
        text.contains("upstream other is outside the upstreams dev>reviewer was delegated (e)"),
        "{text}"
    );
    assert_eq!(peer.journal_http().len(), before, "nothing reached the upstream");
    assert_eq!(door(&proxy_url(&p, "other"), DEV.1).await.0, 200);
    p.shutdown().await;
}

#[tokio::test]
async fn a_child_that_tries_to_widen_is_refused_at_minting() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url()), ("other", &peer.url())], &agents_yaml(""))).await;
    // Wider than the configured parent (standard).
    let (status, doc) = mint(p.addr, Some(DEV.1), r#"{"profile":"privileged"}"#).await;
    assert_eq!(status, 403, "{doc}");
    assert!(doc["message"].as_str().unwrap().contains("wider than dev's (standard)"), "{doc}");

    let (narrow, _) = child(p.addr, DEV.1, json!({"name": "n", "upstreams": ["e"], "ttl": "1m"})).await;
    let cases = [
        (r#"{"upstreams":["other"]}"#, 403, "outside dev>n's upstreams (e)"),
        (r#"{"allow":["mcp__*"]}"#, 403, "can only narrow"),
        (r#"{"ttl":"5m"}"#, 403, "outlives dev>n's own credential"),
        (r#"{"ttl":"2h"}"#, 403, "longer than delegation.max_ttl"),
        (r#"{"upstreams":["nope"]}"#, 400, "\"nope\" is not configured"),
        (r#"{"deny":["Shell(rm:*"]}"#, 400, "deny[0]"),
    ];
    for (body, want, why) in cases {
        let (status, doc) = mint(p.addr, Some(&narrow), body).await;
        assert_eq!(status, want, "{body}: {doc}");
        assert!(doc["message"].as_str().unwrap_or("").contains(why), "{body}: {doc}");
    }
    assert!(peer.journal_http().is_empty());
    p.shutdown().await;
}

#[tokio::test]
async fn delegation_depth_is_limited_and_a_short_lived_credential_expires() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &agents_yaml(""))).await;
    let (one, _) = child(p.addr, DEV.1, json!({"name": "one"})).await;
    let (two, _) = child(p.addr, &one, json!({"name": "two"})).await;
    let (status, doc) = mint(p.addr, Some(&two), "{}").await;
    assert_eq!(status, 403, "{doc}");
    assert!(doc["message"].as_str().unwrap().contains("max_depth is 2"), "{doc}");

    let url = proxy_url(&p, "e");
    let (brief, _) = child(p.addr, DEV.1, json!({"ttl": "1s"})).await;
    assert_eq!(door(&url, &brief).await.0, 200);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (status, challenge) = door(&url, &brief).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_reload_that_narrows_the_parent_narrows_its_child_and_removing_it_shuts_the_child_out() {
    let peer = Peer::everything();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("portcullis.yaml");
    let write = |agents: &str| {
        let yaml = format!(
            "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams:\n  e: {{ url: \"{}\" }}\n{agents}",
            peer.url()
        );
        std::fs::write(&file, yaml).unwrap();
    };
    write(&agents_yaml(""));
    let p = crate::support::proxy_reloading(&file).await;
    let url = proxy_url(&p, "e");
    let (token, _) = child(p.addr, DEV.1, json!({"name": "reviewer"})).await;
    let kid = calls(&url, &token, &["call", "echo", ECHO]).await;
    assert_eq!(text_of(&kid[0]), "Echo: hi", "{kid:?}");

    // The operator narrows dev; the child never held more than dev, so it loses echo too.
    write(&agents_yaml(", permissions: { deny: [mcp__e__echo] }"));
    eventually("the reload to narrow dev", || async {
        let dev = calls(&url, DEV.1, &["call", "echo", ECHO]).await;
        (dev[0]["result"]["isError"] == true).then_some(())
    })
    .await;
    let before = peer.calls_received().len();
    let kid = calls(&url, &token, &["call", "echo", ECHO, "call", "get-sum", SUM]).await;
    assert_eq!(kid[0]["result"]["isError"], true, "{kid:?}");
    let why = text_of(&kid[0]);
    assert!(why.contains("as dev>reviewer, delegated by dev"), "the reason names the delegation: {why}");
    assert_ne!(kid[1]["result"]["isError"], true, "what dev may still do, the child may: {kid:?}");
    assert_eq!(peer.calls_received()[before..], ["get-sum".to_owned()], "the child's echo never left");

    // dev is removed: its child is refused at the door.
    std::env::set_var(CI.0, CI.1);
    write(&format!("permissions: {{ allow: [\"mcp__*\"] }}\nagents:\n  ci: {{ token_env: {} }}\n", CI.0));
    eventually("the reload to remove dev", || async { (door(&url, DEV.1).await.0 == 401).then_some(()) })
        .await;
    let (status, challenge) = door(&url, &token).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("invalid_token"), "{challenge}");
    p.shutdown().await;
}

#[tokio::test]
async fn revoking_a_delegation_revokes_everything_below_it_and_only_an_ancestor_may() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &agents_yaml(""))).await;
    let url = proxy_url(&p, "e");
    let (a, a_id) = child(p.addr, DEV.1, json!({"name": "a"})).await;
    let (b, b_id) = child(p.addr, &a, json!({"name": "b"})).await;
    let (sibling, sibling_id) = child(p.addr, DEV.1, json!({"name": "s"})).await;

    // A child cannot revoke its parent, itself, a sibling's grant, or another agent's.
    for (who, id) in [(&b, &a_id), (&a, &a_id), (&a, &sibling_id), (&CI.1.to_owned(), &a_id)] {
        let (status, body) = revoke(p.addr, who, id).await;
        assert_eq!(status, 404, "{body}");
    }
    assert_eq!(door(&url, &b).await.0, 200);

    let (status, body) = revoke(p.addr, DEV.1, &a_id).await;
    assert_eq!(
        (status, serde_json::from_str::<Value>(&body).unwrap()["revoked"].clone()),
        (200, json!(2)),
        "{body}"
    );
    for gone in [&a, &b] {
        let (status, challenge) = door(&url, gone).await;
        assert_eq!(status, 401);
        assert!(challenge.contains("invalid_token"), "{challenge}");
    }
    assert_eq!(door(&url, &sibling).await.0, 200, "a sibling stays");
    // The grandchild's id is gone with it.
    assert_eq!(revoke(p.addr, DEV.1, &b_id).await.0, 404);
    p.shutdown().await;
}

#[tokio::test]
async fn a_parents_repeated_refusals_flag_its_child_too_and_a_flagged_parent_cannot_delegate() {
    let admin_env = "PORTCULLIS_TEST_DELEG_ADMIN";
    std::env::set_var(admin_env, "deleg-operator-token-0123456789");
    let peer = Peer::everything();
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {admin_env} }}\nupstreams:\n  e: {{ url: \"{}\" }}\n\
         approvals: {{ channel: none, flag: {{ consecutive: 2, total: 100 }} }}\n{}",
        peer.url(),
        agents_yaml(", permissions: { deny: [mcp__e__get-sum] }")
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let url = proxy_url(&p, "e");
    let (token, _) = child(p.addr, DEV.1, json!({"name": "kid"})).await;

    let dev =
        calls(&url, DEV.1, &["call", "get-sum", SUM, "call", "get-sum", SUM, "call", "echo", ECHO]).await;
    assert!(text_of(&dev[2]).contains("flagged"), "dev is flagged after two refusals: {dev:?}");
    let kid = calls(&url, &token, &["call", "echo", ECHO]).await;
    assert!(text_of(&kid[0]).contains("flagged"), "a flagged root flags its child (issue 25): {kid:?}");

    let (status, doc) = mint(p.addr, Some(DEV.1), "{}").await;
    assert_eq!(status, 403, "{doc}");
    assert!(doc["message"].as_str().unwrap().contains("flagged"), "{doc}");
    p.shutdown().await;
}

#[tokio::test]
async fn bad_minting_requests_are_refused_with_a_reason() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &agents_yaml(""))).await;
    let huge = format!(r#"{{"deny":["{}"]}}"#, "x".repeat(20_000));
    let cases: [(Option<&str>, &str, u16, &str); 5] = [
        (Some(DEV.1), "{not json", 400, "not JSON"),
        (Some(DEV.1), r#"{"name":"x","colour":"red"}"#, 400, "unknown field(s): colour"),
        (Some(DEV.1), r#"{"name":"a/b"}"#, 400, "name"),
        (Some(DEV.1), &huge, 413, "at most 16384 bytes"),
        (Some("pcd_not-a-real-delegated-token-at-all"), "{}", 401, ""),
    ];
    for (token, body, want, why) in cases {
        let (status, doc) = mint(p.addr, token, body).await;
        assert_eq!(status, want, "{doc}");
        assert!(doc.to_string().contains(why), "{doc}");
    }
    let (status, _) = mint(p.addr, None, "{}").await;
    assert_eq!(status, 401, "no credential");
    let (status, h, _) =
        crate::support::get(&format!("http://{}/delegations", p.addr), &[("authorization", &auth(DEV.1))])
            .await;
    assert_eq!((status, h["allow"].to_str().unwrap()), (405, "POST"));
    assert!(peer.journal_http().is_empty());
    p.shutdown().await;
}
