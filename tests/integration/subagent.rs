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
