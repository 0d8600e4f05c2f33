//! Several `portcullis serve` replicas sharing a real `redis-server` (started by the tests on a
//! loopback port): what one replica learns, the others honour; what the store cannot vouch for
//! is refused; the store going away and coming back needs no operator.

use serde_json::json;

use crate::support::redis::Redis;
use crate::support::{eventually, get, proxy, proxy_url, Peer};

/// The variables the replicas read: the store's URL and the shared sealing key.
fn shared_config(redis: &Redis, peer: &Peer, extra: &str) -> portcullis::config::Config {
    let (url_var, key_var) = (format!("PORTCULLIS_TEST_REDIS_{}", redis.port), "PORTCULLIS_TEST_SEAL_KEY");
    std::env::set_var(&url_var, redis.url());
    std::env::set_var(key_var, "7f3a9c1e5b2d4f60718293a4b5c6d7e8f90a1b2c3d4e5f6a");
    crate::support::config(
        &[("py", &peer.url())],
        &format!(
            "state: {{ backend: redis, url_env: {url_var}, timeout: 300ms }}\n\
             approvals: {{ channel: elicitation, timeout: 30s, seal_key_env: {key_var} }}\n{extra}"
        ),
    )
}

async fn metric(admin: std::net::SocketAddr, line: &str) -> bool {
    let (_, _, text) = get(&format!("http://{admin}/metrics"), &[]).await;
    text.lines().any(|l| l == line)
}

#[tokio::test]
async fn an_approval_state_sealed_on_one_replica_is_honoured_once_on_another() {
    use crate::mrtr::{answer, call};
    let redis = Redis::start();
    let peer = Peer::python("modern");
    let config = shared_config(&redis, &peer, "");
    let (a, b) = (proxy(&config).await, proxy(&config).await);
    let (url_a, url_b) = (proxy_url(&a, "py"), proxy_url(&b, "py"));
    let auth = "Bearer agent-token";
    eventually("replica a to reach the store", || async {
        metric(a.admin_addr, "portcullis_state_backend_up 1").await.then_some(())
    })
    .await;

    let (_, first) = call(&url_a, 1, "hello", json!({}), auth).await;
    let state = first["result"]["requestState"].as_str().unwrap_or_else(|| panic!("{first}")).to_owned();
    // Retried at the other replica: the same key opens it, and its nonce is spent fleet-wide.
    let (_, ok) = call(&url_b, 2, "hello", answer(&state, "allow_once"), auth).await;
    assert_eq!(ok["result"]["content"][0]["text"], "wrote 5 bytes to p", "{ok}");
    let (_, replay) = call(&url_a, 3, "hello", answer(&state, "allow_once"), auth).await;
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    assert!(replay["error"]["message"].as_str().unwrap().contains("already used"), "{replay}");
    assert_eq!(peer.tools_run(), ["write_note"], "the approved call ran once");
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn with_the_store_down_retries_are_refused_allowed_calls_flow_and_it_recovers_by_itself() {
    use crate::mrtr::{answer, call};
    let mut redis = Redis::start();
    let peer = Peer::python("modern");
    let config = shared_config(&redis, &peer, "permissions: { allow: [mcp__py__echo] }\n");
    let p = proxy(&config).await;
    let url = proxy_url(&p, "py");
    let auth = "Bearer agent-token";
    eventually("the store up", || async {
        metric(p.admin_addr, "portcullis_state_backend_up 1").await.then_some(())
    })
    .await;
    let (_, first) = call(&url, 1, "hello", json!({}), auth).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();

    redis.kill();
    eventually("the store seen down", || async {
        metric(p.admin_addr, "portcullis_state_backend_up 0").await.then_some(())
    })
    .await;
    // A state whose single use cannot be recorded is never honoured.
    let (_, refused) = call(&url, 2, "hello", answer(&state, "allow_once"), auth).await;
    assert!(refused["error"]["message"].as_str().unwrap_or("").contains("unreachable"), "{refused}");
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
    // An allowed call needs no store.
    let echo = json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still here"},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}});
    let h = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let (status, _, body) = crate::support::post(&url, &h, echo.to_string()).await;
    assert!(status == 200 && body.contains("still here"), "{status} {body}");

    redis.restart();
    eventually("the store back", || async {
        metric(p.admin_addr, "portcullis_state_backend_up 1").await.then_some(())
    })
    .await;
    let (_, ok) = call(&url, 3, "hello", answer(&state, "allow_once"), auth).await;
    assert_eq!(
        ok["result"]["content"][0]["text"], "wrote 5 bytes to p",
        "the refused retry did not burn it: {ok}"
    );
    p.shutdown().await;
}
