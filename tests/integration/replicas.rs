//! Several `portcullis serve` replicas sharing a real `redis-server` (started by the tests on a
//! loopback port): what one replica learns, the others honour; what the store cannot vouch for
//! is refused; the store going away and coming back needs no operator.

use serde_json::json;

use crate::support::redis::Redis;
use crate::support::{eventually, get, proxy, proxy_url, Peer};

mod processes;

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

/// Two replicas of a plain-HTTP tool proxy sharing `redis`, with an operator token and the
/// api approval channel; `extra` is more policy.
async fn http_replicas(
    redis: &Redis,
    tools: &str,
    extra: &str,
) -> (portcullis::app::Running, portcullis::app::Running) {
    let (url_var, key_var, token_var) = (
        format!("PORTCULLIS_TEST_REDIS_{}", redis.port),
        "PORTCULLIS_TEST_SEAL_KEY",
        "PORTCULLIS_TEST_ADMIN_TOKEN_REPLICAS",
    );
    std::env::set_var(&url_var, redis.url());
    std::env::set_var(key_var, "7f3a9c1e5b2d4f60718293a4b5c6d7e8f90a1b2c3d4e5f6a");
    std::env::set_var(token_var, "replicas-operator");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_var} }}\nupstreams:\n  web: {{ url: \"{tools}\" }}\n\
         state: {{ backend: redis, url_env: {url_var}, timeout: 300ms }}\n\
         approvals: {{ channel: api, timeout: 30s, seal_key_env: {key_var} }}\n{extra}"
    );
    let config = portcullis::config::Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"));
    let (a, b) = (proxy(&config).await, proxy(&config).await);
    for p in [&a, &b] {
        eventually("a replica to reach the store", || async {
            metric(p.admin_addr, "portcullis_state_backend_up 1").await.then_some(())
        })
        .await;
    }
    (a, b)
}

const OPERATOR: (&str, &str) = ("authorization", "Bearer replicas-operator");

async fn parked(admin: std::net::SocketAddr) -> serde_json::Value {
    let (_, _, list) = get(&format!("http://{admin}/approvals"), &[OPERATOR]).await;
    serde_json::from_str(&list).unwrap_or_default()
}

#[tokio::test]
async fn an_ask_parked_at_one_replica_is_decided_at_another_and_its_waiver_answers_everywhere() {
    use crate::support::post;
    let redis = Redis::start();
    let tools = crate::http_tools::tool_server().await;
    let (a, b) = http_replicas(&redis, &tools.url, "").await;
    let session = [("x-portcullis-session", "fleet-1")];
    let (url_a, url_b) = (
        format!("http://{}/http/web/v1/subscribe", a.addr),
        format!("http://{}/http/web/v1/subscribe", b.addr),
    );

    // Parked at A; B's operator API lists it and decides it.
    let held = tokio::spawn({
        let url = url_a.clone();
        async move { post(&url, &session, r#"{"city":"Oslo"}"#).await }
    });
    let id = eventually("the ask listed at B", || async {
        parked(b.admin_addr).await["pending"][0]["id"].as_u64()
    })
    .await;
    let (status, _, text) = post(
        &format!("http://{}/approvals/{id}", b.admin_addr),
        &[OPERATOR],
        r#"{"decision":"allow_session"}"#,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let (status, _, body) = held.await.unwrap();
    assert_eq!(status, 200, "A learnt B's decision: {body}");
    // The waiver granted through B for A's call answers the same call at B, without asking.
    let (status, _, body) = post(&url_b, &session, r#"{"city":"Oslo"}"#).await;
    assert_eq!(status, 200, "waived at the other replica: {body}");
    assert_eq!(tools.seen.lock().unwrap().len(), 2, "{:?}", tools.seen);
    assert_eq!(parked(a.admin_addr).await["pending"], json!([]), "nothing left parked");

    // A decision for an ask nobody holds: 404 at either replica.
    let (status, _, _) =
        post(&format!("http://{}/approvals/{id}", a.admin_addr), &[OPERATOR], r#"{"decision":"deny"}"#).await;
    assert_eq!(status, 404);
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn a_flag_raised_at_one_replica_holds_at_another_and_is_cleared_from_there() {
    use crate::support::post;
    let redis = Redis::start();
    let tools = crate::http_tools::tool_server().await;
    let (a, b) = http_replicas(
        &redis,
        &tools.url,
        "permissions: { allow: [http__web__ok], deny: [\"http__web__admin*\"] }\n",
    )
    .await;
    let me = [("authorization", "Bearer some-agent"), ("x-portcullis-session", "s-flag")];
    for _ in 0..3 {
        let (status, _, body) = post(&format!("http://{}/http/web/admin", a.addr), &me, "{}").await;
        assert_eq!(status, 403, "{body}");
    }
    let status_at = |admin: std::net::SocketAddr| async move {
        let (_, _, s) = get(&format!("http://{admin}/status"), &[OPERATOR]).await;
        s
    };
    eventually("B to know the flag", || async {
        let s = status_at(b.admin_addr).await;
        s.contains("s-flag").then_some(())
    })
    .await;
    // At B, the session's allowed call now needs a human (parked, fleet-wide).
    let held = tokio::spawn({
        let url = format!("http://{}/http/web/ok", b.addr);
        async move { post(&url, &me, "{}").await }
    });
    let listed = eventually("B's call parked as flagged", || async {
        let v = parked(b.admin_addr).await;
        (v["pending"][0]["source"] == "flagged").then_some(v)
    })
    .await;
    let id = listed["pending"][0]["id"].as_u64().unwrap();
    post(&format!("http://{}/approvals/{id}", a.admin_addr), &[OPERATOR], r#"{"decision":"deny"}"#).await;
    assert_eq!(held.await.unwrap().0, 403);
    // Cleared at B (the session and its caller, as /status lists them): A lets the session's
    // allowed call through again.
    let listed: serde_json::Value = serde_json::from_str(&status_at(b.admin_addr).await).unwrap();
    let keys: Vec<String> = listed["flagged_sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["session"].as_str().unwrap().to_owned())
        .collect();
    // An anonymous caller's own session id is kept bound to it (`/~{digest}/s-flag`).
    assert!(
        keys.len() == 3
            && keys.iter().any(|k| k.starts_with("/~") && k.ends_with("/s-flag"))
            && keys.iter().filter(|k| k.starts_with("caller:")).count() == 2,
        "the session, its caller (an unverified token) and the address it came from: {keys:?}"
    );
    for key in &keys {
        let (status, _, text) =
            post(&format!("http://{}/sessions/{key}/clear", b.admin_addr), &[OPERATOR], "").await;
        assert_eq!(status, 200, "{text}");
    }
    eventually("A to hear both clears", || async {
        let s = status_at(a.admin_addr).await;
        (!s.contains("s-flag") && !s.contains("caller:")).then_some(())
    })
    .await;
    let ok = eventually("the clear to reach A", || async {
        let (status, _, _) = post(&format!("http://{}/http/web/ok", a.addr), &me, "{}").await;
        (status == 200).then_some(())
    });
    // (A flagged call would be parked: decide any such park as deny while waiting.)
    tokio::time::timeout(std::time::Duration::from_secs(30), ok).await.expect("cleared everywhere");
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn with_the_store_down_an_ask_is_refused_naming_the_store_and_allowed_calls_flow() {
    use crate::support::post;
    let mut redis = Redis::start();
    let tools = crate::http_tools::tool_server().await;
    let (a, b) = http_replicas(&redis, &tools.url, "permissions: { allow: [http__web__ok] }\n").await;
    redis.kill();
    eventually("the store seen down", || async {
        metric(a.admin_addr, "portcullis_state_backend_up 0").await.then_some(())
    })
    .await;
    let session = [("x-portcullis-session", "down-1")];
    let (status, _, body) = post(&format!("http://{}/http/web/v1/subscribe", a.addr), &session, "{}").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("approval store is unreachable"), "{body}");
    let (status, _, body) = post(&format!("http://{}/http/web/ok", a.addr), &session, "{}").await;
    assert_eq!(status, 200, "an allowed call needs no store: {body}");
    let (status, _, _) = get(&format!("http://{}/approvals", b.admin_addr), &[OPERATOR]).await;
    assert_eq!(status, 503, "the operator is told the list cannot be had");
    a.shutdown().await;
    b.shutdown().await;
}

/// Redis's own count of the commands it ran, by name (`INFO commandstats`).
async fn commands_run(redis: &Redis) -> std::collections::BTreeMap<String, u64> {
    let client = redis::Client::open(redis.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(&mut c).await.unwrap();
    info.lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let calls = rest.split(',').find_map(|kv| kv.strip_prefix("calls="))?.parse().ok()?;
            Some((name.to_owned(), calls))
        })
        .collect()
}

#[tokio::test]
async fn an_allowed_call_makes_no_round_trip_to_the_store() {
    use crate::support::post;
    let redis = Redis::start();
    let tools = crate::http_tools::tool_server().await;
    let (a, b) = http_replicas(&redis, &tools.url, "permissions: { allow: [http__web__ok] }\n").await;
    b.shutdown().await;
    let before = commands_run(&redis).await;
    for i in 0..50 {
        let s = format!("s-{}", i % 5);
        let (status, _, body) = post(
            &format!("http://{}/http/web/ok", a.addr),
            &[("authorization", "Bearer agent"), ("x-portcullis-session", &s)],
            "{}",
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let after = commands_run(&redis).await;
    // Only the background: the health check's PING, the heartbeat's SET, INFO itself.
    let grew: Vec<(String, u64)> = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(k, d)| *d > 0 && !matches!(k.as_str(), "ping" | "info" | "set"))
        .collect();
    assert!(grew.is_empty(), "allowed calls ran store commands: {grew:?}");
    let sets = after.get("set").copied().unwrap_or(0) - before.get("set").copied().unwrap_or(0);
    assert!(sets <= 10, "only the heartbeat writes (once a second): {sets} SETs");
    assert_eq!(tools.seen.lock().unwrap().len(), 50);
    a.shutdown().await;
}

#[tokio::test]
async fn an_operator_decides_another_replicas_parked_call_in_its_own_console() {
    use crate::console::Browser;
    use crate::support::post;
    let redis = Redis::start();
    let tools = crate::http_tools::tool_server().await;
    let (a, b) = http_replicas(&redis, &tools.url, "").await;
    let held = tokio::spawn({
        let url = format!("http://{}/http/web/v1/subscribe", a.addr);
        async move { post(&url, &[("x-portcullis-session", "console-1")], r#"{"city":"Oslo"}"#).await }
    });
    let id = eventually("the ask listed at B", || async {
        parked(b.admin_addr).await["pending"][0]["id"].as_u64()
    })
    .await;

    // B's console, in headless Chromium: the call parked at A, allowed once with a click.
    let browser = Browser::start().await;
    browser.goto(&format!("http://{}/console", b.admin_addr)).await;
    let field = browser.find("#token").await;
    browser.type_into(&field, "replicas-operator").await;
    browser.click(&browser.find("#connect").await).await;
    let card = format!(".approval[data-id=\"{id}\"]");
    browser
        .wait_for(
            "A's parked call in B's console",
            "var c = document.querySelector(arguments[0]); return c ? c.innerText : null;",
            json!([card]),
            |v| v.as_str().is_some_and(|t| t.contains("v1/subscribe")),
        )
        .await;
    browser.click(&browser.find(&format!("{card} button.allow-once")).await).await;
    let (status, _, body) =
        tokio::time::timeout(crate::support::PATIENCE, held).await.expect("released").unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(tools.seen.lock().unwrap().len(), 1);
    browser.quit().await;
    a.shutdown().await;
    b.shutdown().await;
}
