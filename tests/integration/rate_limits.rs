//! `limits.per_agent` end to end, against the Python SDK's MCP server: a caller past its budget
//! reads a refusal with a retry hint and the server never sees the call; refused calls spend no
//! budget and do not trip the repeated-denial breaker; calls at once are held until answered;
//! replicas share a budget through a real `redis-server`, and keep their own when it is gone.

use serde_json::{json, Value};

use crate::support::redis::Redis;
use crate::support::{eventually, get, post, post_streaming, proxy, proxy_url, rpc_body, Peer, LEGACY};

const DEV: (&str, &str) = ("PORTCULLIS_TEST_LIMITS_DEV", "dev-token-limits-5a4b3c2d1e0f");

/// A legacy-era session opened with `auth` (an `Authorization` value, or none).
struct Session {
    url: String,
    id: String,
    auth: Option<String>,
    next: u64,
}

impl Session {
    async fn open(url: &str, auth: Option<&str>) -> Session {
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
        let h: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
        let (status, headers, body) = post(url, &h, init.to_string()).await;
        assert_eq!(status, 200, "{body}");
        let id = headers["mcp-session-id"].to_str().unwrap().to_owned();
        let s = Session { url: url.to_owned(), id, auth: auth.map(str::to_owned), next: 1 };
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        let h = s.headers();
        post(url, &h, note.to_string()).await;
        s
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        let mut h = vec![("mcp-session-id", self.id.as_str()), ("mcp-protocol-version", LEGACY)];
        if let Some(a) = &self.auth {
            h.push(("authorization", a));
        }
        h
    }

    fn body(&mut self, tool: &str, args: Value) -> String {
        self.next += 1;
        json!({"jsonrpc":"2.0","id":self.next,"method":"tools/call","params":{"name":tool,"arguments":args}})
            .to_string()
    }

    /// Calls `tool`; returns the text of the result and whether it is an error.
    async fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let body = self.body(tool, args);
        let (status, _, text) = post(&self.url, &self.headers(), body).await;
        assert_eq!(status, 200, "{text}");
        let v = rpc_body(&text);
        let said = v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{v}")).to_owned();
        (said, v["result"]["isError"] == true)
    }

    async fn echo(&mut self, message: &str) -> (String, bool) {
        self.call("echo", json!({ "message": message })).await
    }
}

async fn metrics(admin: std::net::SocketAddr) -> String {
    get(&format!("http://{admin}/metrics"), &[]).await.2
}

#[tokio::test]
async fn an_agent_past_its_budget_reads_a_retry_hint_and_refused_calls_spend_none_nor_flag_it() {
    std::env::set_var(DEV.0, DEV.1);
    let peer = Peer::python("legacy");
    let config = crate::support::config(
        &[("py", &peer.url())],
        &format!(
            "permissions: {{ allow: [\"mcp__py__*\"], deny: [mcp__py__write_note] }}\n\
             agents:\n  dev: {{ token_env: {} }}\n\
             limits:\n  per_agent:\n    - {{ agent: dev, tool: \"mcp__py__echo\", per_day: 2 }}\n",
            DEV.0
        ),
    );
    let p = proxy(&config).await;
    let bearer = format!("Bearer {}", DEV.1);
    let mut s = Session::open(&proxy_url(&p, "py"), Some(&bearer)).await;

    // A call the policy refuses spends none of the budget.
    let (denied, is_error) = s.call("write_note", json!({"path": "p", "text": "t"})).await;
    assert!(is_error && denied.contains("denied"), "{denied}");
    for m in ["one", "two"] {
        let (said, is_error) = s.echo(m).await;
        assert!(!is_error && said.contains(m), "{said}");
    }
    for _ in 0..5 {
        let (said, is_error) = s.echo("three").await;
        assert!(is_error, "{said}");
        assert!(
            said.contains("rate-limited mcp__py__echo")
                && said.contains("2 calls a day (UTC) to mcp__py__echo")
                && said.contains("retry in "),
            "the refusal says why and when: {said}"
        );
        assert!(!said.contains("dev"), "the refusal names no principal: {said}");
    }
    // Five rate-limit refusals in a row did not flag the session (the breaker flags after three
    // refusals): a call no limit covers still goes through without a human.
    let (sum, is_error) = s.call("add", json!({"a": 2, "b": 3})).await;
    assert!(!is_error && sum.contains('5'), "{sum}");

    let ran = peer.tools_run();
    assert_eq!(ran.iter().filter(|t| *t == "echo").count(), 2, "the server ran only the admitted: {ran:?}");
    let text = metrics(p.admin_addr).await;
    for line in [
        r#"portcullis_rate_limited_total{agent="dev",limit="per_day",tool="mcp__py__echo"} 5"#,
        r#"portcullis_tool_calls_total{outcome="rate_limited",tool="mcp__py__echo",upstream="py"} 5"#,
        r#"portcullis_agent_calls_total{agent="dev",outcome="rate_limited"} 5"#,
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    p.shutdown().await;
}

#[tokio::test]
async fn calls_at_once_are_held_until_the_upstream_answers() {
    let peer = Peer::python("legacy");
    let config = crate::support::config(
        &[("py", &peer.url())],
        "permissions: { allow: [\"mcp__py__*\"] }\n\
         limits:\n  per_agent:\n    - { agent: \"*\", tool: \"mcp__py__*\", concurrent: 1 }\n",
    );
    let p = proxy(&config).await;
    let mut s = Session::open(&proxy_url(&p, "py"), None).await;
    // A slow call (about a second) holds the one place while its answer streams.
    let slow = s.body("slow", json!({"steps": 10}));
    let (status, mut stream) = post_streaming(&s.url, &s.headers(), slow).await;
    assert_eq!(status, 200);
    eventually("the slow call to reach the server", || async {
        peer.tools_run().contains(&"slow".to_owned()).then_some(())
    })
    .await;
    let (said, is_error) = s.echo("meanwhile").await;
    assert!(is_error && said.contains("1 call at once to mcp__py__*"), "{said}");
    assert!(stream.read_until(|t| t.contains("done")).await, "{}", stream.text());
    drop(stream);
    // The answer is in: the place is free again.
    let mut tries = 0;
    let said = loop {
        match s.echo("after").await {
            (said, false) => break said,
            (said, true) if tries < 50 => {
                assert!(said.contains("at once"), "{said}");
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            (said, true) => panic!("the place was never freed: {said}"),
        }
    };
    assert!(said.contains("after"), "{said}");
    p.shutdown().await;
}

/// Two replicas sharing `redis`, each allowing `per_day` echoes per caller.
async fn replicas(
    redis: &Redis,
    peer: &Peer,
    per_day: u32,
) -> (portcullis::app::Running, portcullis::app::Running) {
    let (url_var, key_var) =
        (format!("PORTCULLIS_TEST_LIMITS_REDIS_{}", redis.port), "PORTCULLIS_TEST_SEAL_KEY");
    std::env::set_var(&url_var, redis.url());
    std::env::set_var(key_var, "7f3a9c1e5b2d4f60718293a4b5c6d7e8f90a1b2c3d4e5f6a");
    // Two agents: callers are told apart by verified credentials (anonymous callers on one
    // address are one caller, whatever `Authorization` they send).
    std::env::set_var("PORTCULLIS_TEST_LIMITS_ONE", "one-caller-7d6c5b4a");
    std::env::set_var("PORTCULLIS_TEST_LIMITS_ANOTHER", "another-caller-1f2e3d");
    let config = crate::support::config(
        &[("py", &peer.url())],
        &format!(
            "permissions: {{ allow: [\"mcp__py__*\"] }}\n\
             state: {{ backend: redis, url_env: {url_var}, timeout: 300ms }}\n\
             approvals: {{ seal_key_env: {key_var} }}\n\
             agents:\n  one: {{ token_env: PORTCULLIS_TEST_LIMITS_ONE }}\n  another: {{ token_env: PORTCULLIS_TEST_LIMITS_ANOTHER }}\n\
             limits:\n  per_agent:\n    - {{ agent: \"*\", tool: \"mcp__py__echo\", per_day: {per_day} }}\n"
        ),
    );
    let (a, b) = (proxy(&config).await, proxy(&config).await);
    for r in [&a, &b] {
        eventually("the replica to reach the store", || async {
            metrics(r.admin_addr).await.lines().any(|l| l == "portcullis_state_backend_up 1").then_some(())
        })
        .await;
    }
    (a, b)
}

#[tokio::test]
async fn replicas_share_one_budget_through_the_store() {
    let redis = Redis::start();
    let peer = Peer::python("legacy");
    let (a, b) = replicas(&redis, &peer, 3).await;
    // One caller (the same credential) at both replicas; another caller has a budget of its own.
    let auth = "Bearer one-caller-7d6c5b4a";
    let mut at_a = Session::open(&proxy_url(&a, "py"), Some(auth)).await;
    let mut at_b = Session::open(&proxy_url(&b, "py"), Some(auth)).await;
    let mut other = Session::open(&proxy_url(&b, "py"), Some("Bearer another-caller-1f2e3d")).await;
    assert!(!at_a.echo("1").await.1 && !at_b.echo("2").await.1 && !at_a.echo("3").await.1);
    let (said, limited) = at_b.echo("4").await;
    assert!(limited && said.contains("3 calls a day (UTC)"), "b counts a's calls: {said}");
    assert!(at_a.echo("5").await.1, "and a counts b's");
    assert!(!other.echo("elsewhere").await.1, "another caller is counted apart");
    let ran = peer.tools_run();
    assert_eq!(ran.iter().filter(|t| *t == "echo").count(), 4, "{ran:?}");
    for r in [&a, &b] {
        assert!(metrics(r.admin_addr).await.contains("portcullis_rate_limit_store_fallbacks_total 0"));
    }
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn with_the_store_gone_each_replica_keeps_limits_on_its_own_counts() {
    let mut redis = Redis::start();
    let peer = Peer::python("legacy");
    let (a, b) = replicas(&redis, &peer, 2).await;
    let auth = "Bearer one-caller-7d6c5b4a";
    let mut at_a = Session::open(&proxy_url(&a, "py"), Some(auth)).await;
    let mut at_b = Session::open(&proxy_url(&b, "py"), Some(auth)).await;
    assert!(!at_a.echo("shared").await.1, "counted in the store, and in a's own share");

    redis.kill();
    for r in [&a, &b] {
        eventually("the store seen down", || async {
            metrics(r.admin_addr).await.lines().any(|l| l == "portcullis_state_backend_up 0").then_some(())
        })
        .await;
    }
    // Neither open nor closed for everyone: each replica now allows what its own count leaves.
    assert!(!at_a.echo("a2").await.1, "a has made one of two");
    let (said, limited) = at_a.echo("a3").await;
    assert!(limited && said.contains("retry in"), "{said}");
    assert!(!at_b.echo("b1").await.1 && !at_b.echo("b2").await.1, "b counts its own two");
    assert!(at_b.echo("b3").await.1);
    let ran = peer.tools_run();
    assert_eq!(ran.iter().filter(|t| *t == "echo").count(), 4, "{ran:?}");
    for r in [&a, &b] {
        let text = metrics(r.admin_addr).await;
        let fallbacks = text
            .lines()
            .find_map(|l| l.strip_prefix("portcullis_rate_limit_store_fallbacks_total "))
            .and_then(|n| n.parse::<u64>().ok());
        assert!(fallbacks.is_some_and(|n| n >= 2), "{fallbacks:?}");
    }
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn wrap_over_stdio_keeps_the_same_budget_for_its_one_client() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("portcullis.yaml");
    std::fs::write(
        &config,
        "permissions: { allow: [\"mcp__py__*\"] }\n\
         limits:\n  per_agent:\n    - { agent: \"*\", tool: \"mcp__py__echo\", per_day: 2 }\n",
    )
    .unwrap();
    let argv = json!([
        env!("CARGO_BIN_EXE_portcullis"),
        "wrap",
        "--config",
        config.to_str().unwrap(),
        "--name",
        "py",
        "--",
        "python3",
        "py_server.py",
        "--stdio"
    ])
    .to_string();
    let m = r#"{"message":"hi"}"#;
    let steps =
        crate::support::py_client_stdio(&argv, &["call", "echo", m, "call", "echo", m, "call", "echo", m])
            .await;
    assert_eq!(steps.len(), 3, "{steps:?}");
    for s in &steps[..2] {
        assert_ne!(s["result"]["isError"], true, "{s}");
    }
    let said = crate::support::text_of(&steps[2]);
    assert!(steps[2]["result"]["isError"] == true && said.contains("rate-limited mcp__py__echo"), "{said}");
}

#[tokio::test]
async fn a_plain_http_tool_past_its_budget_is_a_429_saying_when_to_retry() {
    let tools = crate::http_tools::tool_server().await;
    let config = crate::support::config(
        &[("weather", &tools.url)],
        "permissions: { allow: [\"http__weather__*\"] }\n\
         limits:\n  per_agent:\n    - { agent: \"*\", tool: \"http__weather__*\", per_day: 1 }\n",
    );
    let p = proxy(&config).await;
    let url = format!("http://{}/http/weather/v1/forecast", p.addr);
    let (status, _, body) = post(&url, &[], r#"{"days":1}"#).await;
    assert_eq!(status, 200, "{body}");
    let (status, headers, body) = post(&url, &[], r#"{"days":2}"#).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(headers["x-portcullis-decision"], "rate_limited");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["kind"], "rate_limited", "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("retry in"), "{v}");
    assert_eq!(tools.seen.lock().unwrap().len(), 1, "the refused call never reached the tool");
    p.shutdown().await;
}
