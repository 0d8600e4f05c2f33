//! Agent identity end to end: agents authenticate to the proxy with their own tokens, decide
//! under their own policy, and their credential never reaches the tool server. Real peers: the
//! MCP project's `server-everything` upstream (its journal says what reached it and whether an
//! `Authorization` header came with it) and the Python SDK's client.

use serde_json::Value;

use crate::support::{config, get, post, proxy, proxy_url, py_client_with, text_of, Peer};

const DEV: (&str, &str) = ("PORTCULLIS_TEST_AGENT_DEV", "dev-token-6f1e2d3c4b5a69788796");
const CI: (&str, &str) = ("PORTCULLIS_TEST_AGENT_CI", "ci-token-0a1b2c3d4e5f60718293");

fn team() -> String {
    for (var, value) in [DEV, CI] {
        std::env::set_var(var, value);
    }
    format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\n\
         agents:\n  \
           dev: {{ token_env: {} }}\n  \
           ci: {{ token_env: {}, profile: readonly, permissions: {{ deny: [mcp__e__echo], allow: [mcp__e__get-sum] }} }}\n",
        DEV.0, CI.0
    )
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}")
}

#[tokio::test]
async fn each_agent_decides_under_its_own_policy_and_its_token_stays_at_the_proxy() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &team())).await;
    let url = proxy_url(&p, "e");
    let echo = r#"{"message":"hi"}"#;

    let dev = py_client_with(&url, "legacy", &["--header", &bearer(DEV.1)], &["call", "echo", echo]).await;
    assert_eq!(text_of(&dev[0]), "Echo: hi", "{dev:?}");
    let ci = py_client_with(&url, "legacy", &["--header", &bearer(CI.1)], &["call", "echo", echo]).await;
    assert_eq!(ci[0]["result"]["isError"], true, "{ci:?}");
    let why = text_of(&ci[0]);
    assert!(
        why.contains("mcp__e__echo") && why.contains("agent"),
        "the reason names the rule's scope: {why}"
    );

    // The upstream ran dev's call only, and never saw an Authorization header.
    assert_eq!(peer.calls_received(), vec!["echo".to_owned()]);
    let journal = peer.journal_http();
    assert!(!journal.is_empty() && journal.iter().all(|l| l["has_authorization"] == false), "{journal:?}");

    let (_, _, metrics) = get(&format!("http://{}/metrics", p.admin_addr), &[]).await;
    assert!(
        metrics.contains(r#"portcullis_agent_calls_total{agent="dev",outcome="forwarded"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"portcullis_agent_calls_total{agent="ci",outcome="denied"} 1"#), "{metrics}");
    p.shutdown().await;
}

#[tokio::test]
async fn without_a_good_credential_nothing_reaches_the_upstream() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &team())).await;
    let url = proxy_url(&p, "e");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let accept = ("accept", "application/json, text/event-stream");
    let huge = format!("Bearer {}", "a".repeat(20_000));
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no credential", vec![accept]),
        ("a wrong token", vec![accept, ("authorization", "Bearer not-the-token-at-all-123")]),
        ("another scheme", vec![accept, ("authorization", "Basic ZGV2OmRldg==")]),
        ("an empty bearer", vec![accept, ("authorization", "Bearer ")]),
        ("alg none", vec![accept, ("authorization", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJkZXYifQ.")]),
        ("a huge token", vec![accept, ("authorization", &huge)]),
        (
            "a wrong proxy credential beside a right one",
            vec![
                accept,
                ("proxy-authorization", "Bearer wrong-wrong-wrong-wrong"),
                ("authorization", "Bearer dev-token-6f1e2d3c4b5a69788796"),
            ],
        ),
    ];
    for (what, headers) in cases {
        let (status, h, body) = post(&url, &headers, init).await;
        assert_eq!(status, 401, "{what}: {body}");
        let challenge = h["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.starts_with("Bearer ")
                && challenge.contains(&format!(
                    "resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp/e\"",
                    p.addr
                )),
            "{what}: {challenge}"
        );
        assert!(
            !body.contains("dev-token") && !body.contains("aaaa"),
            "{what}: nothing sent is echoed: {body}"
        );
    }
    // Every path but discovery needs the credential, known route or not (fail closed).
    for path in ["/mcp/e", "/mcp", "/MCP/e", "//mcp/e", "/http/e/x", "/delegations", "/nowhere"] {
        let (status, _, body) = post(&format!("http://{}{path}", p.addr), &[accept], init).await;
        assert_eq!(status, 401, "{path}: {body}");
    }
    assert!(peer.journal_http().is_empty(), "no refused request reached the upstream");

    // The metadata the challenge points at, served without a credential.
    let (status, _, doc) =
        get(&format!("http://{}/.well-known/oauth-protected-resource/mcp/e", p.addr), &[]).await;
    assert_eq!(status, 200, "{doc}");
    let doc: Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(doc["resource"], format!("http://{}/mcp/e", p.addr));

    // Proxy-Authorization is the proxy's credential too, and is consumed the same way.
    let (status, _, body) =
        post(&url, &[accept, ("proxy-authorization", &format!("Bearer {}", DEV.1))], init).await;
    assert_eq!(status, 200, "{body}");
    assert!(peer.journal_http().iter().all(|l| l["has_authorization"] == false));
    p.shutdown().await;
}

#[tokio::test]
async fn one_agents_waiver_and_flag_never_answer_for_another() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_AGENTS";
    std::env::set_var(token_env, "agents-operator-token");
    let tools = crate::http_tools::tool_server().await;
    let mut yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  web: {{ url: \"{}\" }}\n\
         approvals: {{ channel: api, timeout: 30s }}\n",
        tools.url
    );
    team();
    yaml.push_str(&format!(
        "permissions: {{ allow: [http__web__ok], deny: [\"http__web__admin*\"] }}\n\
         agents:\n  dev: {{ token_env: {} }}\n  ops: {{ token_env: {} }}\n",
        DEV.0, CI.0
    ));
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))).await;
    let (base, admin) = (format!("http://{}/http/web", p.addr), format!("http://{}", p.admin_addr));
    let operator = [("authorization", "Bearer agents-operator-token")];
    let dev = format!("Bearer {}", DEV.1);
    let ops = format!("Bearer {}", CI.1);
    let as_dev = [("authorization", dev.as_str()), ("x-portcullis-session", "shared")];
    let as_ops = [("authorization", ops.as_str()), ("x-portcullis-session", "shared")];
    // Decides the one parked call, once it shows up; returns the agent the API named.
    let decide = |decision: &'static str| {
        let admin = admin.clone();
        async move {
            let (admin, auth) = (&admin, &operator);
            let (id, agent) = crate::support::eventually("a call to be parked", || async move {
                let (_, _, list) = get(&format!("{admin}/approvals"), auth).await;
                let v: Value = serde_json::from_str(&list).unwrap_or_default();
                Some((v["pending"][0]["id"].as_u64()?, v["pending"][0]["agent"].as_str()?.to_owned()))
            })
            .await;
            let (status, _, text) =
                post(&format!("{admin}/approvals/{id}"), auth, format!(r#"{{"decision":"{decision}"}}"#))
                    .await;
            assert_eq!(status, 200, "{text}");
            agent
        }
    };
    let subscribe = format!("{base}/v1/subscribe");
    // dev's ask, allowed for the session: its repeat is waived.
    let (held, agent) =
        tokio::join!(post(&subscribe, &as_dev, r#"{"city":"Oslo"}"#), decide("allow_session"));
    assert_eq!((held.0, agent.as_str()), (200, "dev"), "{}", held.2);
    let (status, _, body) = post(&subscribe, &as_dev, r#"{"city":"Oslo"}"#).await;
    assert_eq!(status, 200, "dev's waiver: {body}");
    // ops, same session id, same call: asked anew, and denied, it never reaches the server.
    let (refused, agent) = tokio::join!(post(&subscribe, &as_ops, r#"{"city":"Oslo"}"#), decide("deny"));
    assert_eq!((refused.0, agent.as_str()), (403, "ops"), "dev's waiver never answers ops: {}", refused.2);
    assert_eq!(tools.seen.lock().unwrap().len(), 2, "{:?}", tools.seen);

    // dev is refused thirty times under thirty fresh session ids: dev is flagged, ops is not.
    for i in 0..30 {
        let s = format!("fresh-{i}");
        let (status, _, body) =
            post(&format!("{base}/admin"), &[("authorization", &dev), ("x-portcullis-session", &s)], "{}")
                .await;
        assert_eq!(status, 403, "{body}");
    }
    let flagged = tokio::spawn({
        let url = format!("{base}/ok");
        let dev = dev.clone();
        async move {
            post(&url, &[("authorization", dev.as_str()), ("x-portcullis-session", "new-id")], "{}").await
        }
    });
    assert_eq!(decide("deny").await, "dev", "dev's allowed call meets a human");
    let (status, _, body) = flagged.await.unwrap();
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = post(&format!("{base}/ok"), &as_ops, "{}").await;
    assert_eq!(status, 200, "ops is not flagged by dev's refusals: {body}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_modern_approval_state_answers_only_the_agent_it_was_issued_to() {
    use crate::mrtr::{answer, call};
    team();
    let peer = Peer::python("modern");
    let yaml = format!(
        "approvals: {{ channel: elicitation, timeout: 30s }}\nagents:\n  dev: {{ token_env: {} }}\n  ops: {{ token_env: {} }}\n",
        DEV.0, CI.0
    );
    let p = proxy(&config(&[("py", &peer.url())], &yaml)).await;
    let url = proxy_url(&p, "py");
    let (dev, ops) = (format!("Bearer {}", DEV.1), format!("Bearer {}", CI.1));
    let (_, first) = call(&url, 1, "hello", serde_json::json!({}), &dev).await;
    let state = first["result"]["requestState"].as_str().unwrap_or_else(|| panic!("{first}")).to_owned();
    // ops replays dev's state, answered "allow": refused, and nothing reaches the upstream.
    let (_, stolen) = call(&url, 2, "hello", answer(&state, "allow_once"), &ops).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
    // dev's own retry is honoured.
    let (_, ok) = call(&url, 3, "hello", answer(&state, "allow_once"), &dev).await;
    assert_eq!(ok["result"]["content"][0]["text"], "wrote 5 bytes to p", "{ok}");
    p.shutdown().await;
}
