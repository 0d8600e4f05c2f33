//! Red-team probes of issue 25 (identity, breakers that contain, per-agent limits, Host/Origin):
//! each test is an attack by a caller the issue names — an anonymous agent on loopback, a web
//! page in the operator's browser — against a real proxy and a real HTTP tool server, whose side
//! proves what was (not) forwarded. A test marked `ignore` is an open finding, described there.

use crate::http_tools::{tool_server, ToolServer};
use crate::support::*;
use portcullis::app::Running;

const ADMIN_TOKEN_ENV: &str = "PORTCULLIS_TEST_ADMIN_TOKEN_ATTACK25";
const TOKEN: &str = "attack25-operator";

/// A proxy in front of one HTTP tool server (`ok` allowed, `admin*` denied), anonymous callers,
/// nobody to ask, an admin token (so the breaker is enforced), and `extra` config.
async fn start(extra: &str) -> (ToolServer, Running) {
    std::env::set_var(ADMIN_TOKEN_ENV, TOKEN);
    let tools = tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {ADMIN_TOKEN_ENV} }}\nupstreams:\n  web: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [http__web__ok], deny: [\"http__web__admin*\"] }}\n\
         approvals: {{ channel: none }}\n{extra}",
        tools.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    (tools, p)
}

/// An anonymous call of `tool` with these headers: the status and body.
async fn call(p: &Running, tool: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let url = format!("http://{}/http/web/{tool}", p.addr);
    let (status, _, body) = post(&url, headers, "{}").await;
    (status, body)
}

fn forwarded(tools: &ToolServer, path: &str) -> usize {
    tools.seen.lock().unwrap().iter().filter(|(_, p, _)| p.ends_with(path)).count()
}

#[tokio::test]
async fn an_anonymous_agent_rotating_its_authorization_still_meets_the_breaker() {
    let (tools, p) = start("").await;
    for n in 0..25 {
        let auth = format!("Bearer probe-{n}");
        let (code, body) = call(&p, "admin", &[("authorization", &auth)]).await;
        assert_eq!(code, 403, "probe {n}: {body}");
    }
    // Twenty-five refusals from one address: the breaker must have met them. A call without a
    // session from that address is held (docs/approvals.md: contained flags hold those).
    let (code, body) = call(&p, "ok", &[("authorization", "Bearer probe-fresh")]).await;
    assert_eq!(code, 403, "25 refused probes from one address, and its next call went through: {body}");
    assert_eq!(forwarded(&tools, "/ok"), 0);
    p.shutdown().await;
}

#[tokio::test]
async fn an_address_held_whole_is_not_escaped_by_sending_an_authorization_header() {
    let (tools, p) = start("").await;
    for _ in 0..3 {
        assert_eq!(call(&p, "admin", &[("x-portcullis-session", "careless")]).await.0, 403);
    }
    for fresh in ["fresh-1", "fresh-2"] {
        assert_eq!(call(&p, "admin", &[("x-portcullis-session", fresh)]).await.0, 403);
    }
    let (code, body) = call(&p, "ok", &[("x-portcullis-session", "fresh-3")]).await;
    assert_eq!(code, 403, "the address is held whole: {body}");
    let h = [("x-portcullis-session", "fresh-4"), ("authorization", "Bearer anything")];
    let (code, body) = call(&p, "ok", &h).await;
    assert_eq!(code, 403, "the held address's next call, with a made-up Authorization, went through: {body}");
    assert_eq!(forwarded(&tools, "/ok"), 0);
    p.shutdown().await;
}

#[tokio::test]
async fn an_anonymous_agent_rotating_session_ids_under_one_authorization_meets_the_breaker() {
    // The control for the finding above: one unverified credential, a fresh session id per
    // probe. Like an address, it is contained: each fresh session after the flag buys one refused
    // probe, and three held sessions hold every call it makes (docs/approvals.md).
    let (tools, p) = start("").await;
    for n in 0..5 {
        let session = format!("probe-{n}");
        let h = [("authorization", "Bearer one"), ("x-portcullis-session", session.as_str())];
        assert_eq!(call(&p, "admin", &h).await.0, 403);
    }
    let h = [("authorization", "Bearer one"), ("x-portcullis-session", "fresh")];
    let (code, body) = call(&p, "ok", &h).await;
    assert_eq!(code, 403, "the caller is held whole: {body}");
    assert!(body.contains("flagged"), "{body}");
    assert_eq!(forwarded(&tools, "/ok"), 0);
    p.shutdown().await;
}

#[tokio::test]
async fn an_anonymous_agent_rotating_its_authorization_still_meets_its_rate_limit() {
    let limits = "limits: { per_agent: [ { agent: \"*\", tool: \"http__web__*\", per_minute: 2 } ] }\n";
    let (tools, p) = start(limits).await;
    let mut limited = 0;
    for n in 0..10 {
        let auth = format!("Bearer budget-{n}");
        let (code, body) = call(&p, "ok", &[("authorization", &auth)]).await;
        match code {
            200 => {}
            429 => limited += 1,
            other => panic!("call {n}: {other} {body}"),
        }
    }
    // Two a minute; a minute boundary during the test may let through two more.
    assert!(
        forwarded(&tools, "/ok") <= 4,
        "{} of 10 calls forwarded past a limit of 2 a minute",
        forwarded(&tools, "/ok")
    );
    assert!(limited >= 6, "{limited} refused");
    p.shutdown().await;
}

#[tokio::test]
async fn an_anonymous_agent_with_one_address_and_no_authorization_meets_its_rate_limit() {
    // The control for the finding above: the address is the budget.
    let limits = "limits: { per_agent: [ { agent: \"*\", tool: \"http__web__*\", per_minute: 2 } ] }\n";
    let (tools, p) = start(limits).await;
    for n in 0..10 {
        let session = format!("s-{n}");
        let (code, body) = call(&p, "ok", &[("x-portcullis-session", &session)]).await;
        assert!(code == 200 || code == 429, "call {n}: {code} {body}");
    }
    assert!(forwarded(&tools, "/ok") <= 4, "{} forwarded", forwarded(&tools, "/ok"));
    p.shutdown().await;
}

#[tokio::test]
async fn a_rebinding_page_reaches_neither_the_hook_nor_the_task_nor_the_delegation_routes() {
    let (tools, p) = start("").await;
    let operator = format!("Bearer {TOKEN}");
    let admin = p.admin_addr;
    let routes = [
        format!("http://{admin}/hook/pre"),
        format!("http://{admin}/hook/post"),
        format!("http://{admin}/sessions/s1/task"),
        format!("http://{admin}/sessions/s1/clear"),
        format!("http://{admin}/approvals/x/allow"),
        format!("http://{}/delegations", p.addr),
        format!("http://{}/delegations/some-id", p.addr),
        format!("http://{}/http/web/ok", p.addr),
    ];
    let body = r#"{"tool_name":"Bash","tool_input":{"command":"true"},"task":"t","ttl":"1m"}"#;
    for url in &routes {
        for headers in [
            &[("host", "evil.example"), ("authorization", operator.as_str())][..],
            &[("origin", "http://evil.example"), ("authorization", operator.as_str())][..],
            &[("origin", "null"), ("authorization", operator.as_str())][..],
        ] {
            let (status, _, text) = post(url, headers, body).await;
            assert_eq!(status, 403, "{url} {headers:?}: {text}");
            assert!(text.contains("allowed_hosts"), "{url}: {text}");
        }
    }
    assert_eq!(tools.seen.lock().unwrap().len(), 0, "nothing reached the tool server");
    p.shutdown().await;
}

const DEV: (&str, &str) = ("PORTCULLIS_TEST_ATTACK25_DEV", "dev-token-attack25-0f1e2d3c4b5a");

#[tokio::test]
async fn minting_children_and_grandchildren_does_not_multiply_a_parents_daily_budget() {
    std::env::set_var(DEV.0, DEV.1);
    let extra = format!(
        "agents:\n  dev: {{ token_env: {} }}\n\
         limits: {{ per_agent: [ {{ agent: dev, tool: \"http__web__*\", per_day: 3 }} ] }}\n",
        DEV.0
    );
    let (tools, p) = start(&extra).await;
    let mint = |token: String, name: &'static str| {
        let addr = p.addr;
        async move {
            let auth = format!("Bearer {token}");
            let body = format!(r#"{{"name":"{name}"}}"#);
            let (status, _, text) =
                post(&format!("http://{addr}/delegations"), &[("authorization", &auth)], body).await;
            assert_eq!(status, 201, "{text}");
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            doc["token"].as_str().unwrap().to_owned()
        }
    };
    let kid = mint(DEV.1.to_owned(), "kid").await;
    let other = mint(DEV.1.to_owned(), "other").await;
    let grandkid = mint(kid.clone(), "grand").await;
    let mut codes = Vec::new();
    for token in [DEV.1, kid.as_str(), other.as_str(), grandkid.as_str()] {
        for _ in 0..2 {
            let auth = format!("Bearer {token}");
            codes.push(call(&p, "ok", &[("authorization", &auth)]).await.0);
        }
    }
    assert_eq!(forwarded(&tools, "/ok"), 3, "three a day for dev and everything it delegated: {codes:?}");
    assert_eq!(codes.iter().filter(|&&c| c == 429).count(), 5, "{codes:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_denied_http_tool_is_not_reached_by_another_spelling_of_its_route() {
    // Everything but `admin*` is allowed here, so a spelling the rules read as another tool
    // would be forwarded.
    std::env::set_var(ADMIN_TOKEN_ENV, TOKEN);
    let tools = tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {ADMIN_TOKEN_ENV} }}\nupstreams:\n  web: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [\"http__web__*\"], deny: [\"http__web__admin*\"] }}\napprovals: {{ channel: none }}\n",
        tools.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let spellings = [
        "%61dmin",
        "%41dmin",
        "ok/../admin",
        "ok/%2e%2e/admin",
        "ok%2f..%2fadmin",
        "./admin",
        "/admin",
        "ok/./../admin",
        "admin%00",
        "ok;/../admin",
        "ok%5c..%5cadmin",
    ];
    let mut through = Vec::new();
    for tool in spellings {
        let session = format!("spell-{tool}");
        let (code, body) = call(&p, tool, &[("x-portcullis-session", &session)]).await;
        if code == 200 {
            through.push(format!("{tool}: {body}"));
        }
    }
    // The control: the door is open to what the rules allow.
    assert_eq!(call(&p, "ok", &[("x-portcullis-session", "control")]).await.0, 200);
    assert_eq!(forwarded(&tools, "/ok"), 1);
    let seen: Vec<String> = tools.seen.lock().unwrap().iter().map(|(_, path, _)| path.clone()).collect();
    let reached_admin =
        seen.iter().filter(|p| p.contains("admin") || p.contains("%61dmin") || p.contains("%41dmin"));
    assert_eq!(reached_admin.count(), 0, "forwarded: {seen:?}; answered 200: {through:#?}");
    p.shutdown().await;
}

/// `POST /delegations` as `token`: the status and the token minted (if any).
async fn mint_as(p: &Running, token: &str, name: &str) -> (u16, Option<String>) {
    let auth = format!("Bearer {token}");
    let body = format!(r#"{{"name":"{name}"}}"#);
    let (status, _, text) =
        post(&format!("http://{}/delegations", p.addr), &[("authorization", &auth)], body).await;
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    (status, doc["token"].as_str().map(str::to_owned))
}

#[tokio::test]
async fn a_child_probing_for_its_parent_flags_the_root_and_no_fresh_child_escapes_it() {
    std::env::set_var(DEV.0, DEV.1);
    let extra = format!("agents:\n  dev: {{ token_env: {} }}\n", DEV.0);
    let (tools, p) = start(&extra).await;
    let (status, kid) = mint_as(&p, DEV.1, "kid").await;
    assert_eq!(status, 201);
    let (status, sibling) = mint_as(&p, DEV.1, "sibling").await;
    assert_eq!(status, 201);
    let (kid, sibling) = (kid.unwrap(), sibling.unwrap());
    let as_ = |token: &str, session: &str| {
        [("authorization", format!("Bearer {token}")), ("x-portcullis-session", session.to_owned())]
    };
    // The kid probes from three fresh sessions: its root's streak counts every refusal.
    for s in ["k1", "k2", "k3"] {
        let h = as_(&kid, s);
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(call(&p, "admin", &h).await.0, 403);
    }
    for (who, token) in [("dev", DEV.1), ("sibling", sibling.as_str()), ("kid", kid.as_str())] {
        let h = as_(token, &format!("{who}-fresh"));
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (code, body) = call(&p, "ok", &h).await;
        assert_eq!(code, 403, "{who}: the root is flagged, and so is everything under it: {body}");
    }
    // Neither the root nor the kid can mint its way out.
    assert_ne!(mint_as(&p, DEV.1, "fresh").await.0, 201, "a flagged root cannot mint");
    assert_ne!(mint_as(&p, &kid, "grand").await.0, 201, "a child of a flagged root cannot mint");
    assert_eq!(forwarded(&tools, "/ok") + forwarded(&tools, "/admin"), 0);
    p.shutdown().await;
}

#[tokio::test]
async fn a_client_that_walks_away_from_a_long_call_frees_its_place_at_once() {
    use serde_json::json;
    let peer = Peer::python("legacy");
    let config = crate::support::config(
        &[("py", &peer.url())],
        "permissions: { allow: [\"mcp__py__*\"] }\n\
         limits:\n  per_agent:\n    - { agent: \"*\", tool: \"mcp__py__*\", concurrent: 1 }\n",
    );
    let p = proxy(&config).await;
    let url = proxy_url(&p, "py");
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, headers, body) = post(&url, &[], init.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let id = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let h = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", LEGACY)];
    post(&url, &h, json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string()).await;
    // A call that would run about a minute; the client reads nothing and goes away.
    let slow = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"steps":600}}});
    let (status, stream) = post_streaming(&url, &h, slow.to_string()).await;
    assert_eq!(status, 200);
    eventually("the slow call to reach the server", || async {
        peer.tools_run().contains(&"slow".to_owned()).then_some(())
    })
    .await;
    let echo = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"meanwhile"}}});
    let (_, _, text) = post(&url, &h, echo.to_string()).await;
    assert!(text.contains("1 call at once"), "the slow call holds the one place: {text}");
    drop(stream);
    let started = std::time::Instant::now();
    let mut n = 2;
    let said = loop {
        n += 1;
        let echo = json!({"jsonrpc":"2.0","id":n,"method":"tools/call","params":{"name":"echo","arguments":{"message":"after"}}});
        let (_, _, text) = post(&url, &h, echo.to_string()).await;
        let v = rpc_body(&text);
        if v["result"]["isError"] != true {
            break text;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the place of a call whose client went away was still held after 10 s: {text}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(said.contains("after"), "{said}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_flagged_address_holds_its_sessionless_calls_and_sessions_spelled_like_table_keys_count_as_sessions(
) {
    let (tools, p) = start("").await;
    for _ in 0..3 {
        assert_eq!(call(&p, "admin", &[("x-portcullis-session", "careless")]).await.0, 403);
    }
    let (code, body) = call(&p, "ok", &[]).await;
    assert_eq!(code, 403, "a call of the flagged address without a session is held: {body}");
    let (code, body) = call(&p, "ok", &[("x-portcullis-session", "second")]).await;
    assert_eq!(code, 200, "a second agent's session is not held: {body}");
    // Probes from sessions spelled like the breaker's own keys: each is one more held session.
    let address_key = {
        use sha2::Digest;
        let d = sha2::Sha256::digest(b"peer:127.0.0.1");
        format!("caller:{}", d[..8].iter().map(|b| format!("{b:02x}")).collect::<String>())
    };
    let more = format!("{address_key}#more");
    for s in [more.as_str(), "#untracked", "session:careless"] {
        assert_eq!(call(&p, "admin", &[("x-portcullis-session", s)]).await.0, 403, "{s}");
        assert_eq!(call(&p, "ok", &[("x-portcullis-session", s)]).await.0, 403, "{s} is held");
    }
    let (code, body) = call(&p, "ok", &[("x-portcullis-session", "second")]).await;
    assert_eq!(code, 403, "three held sessions hold the address whole: {body}");
    let (code, body) = call(&p, "ok", &[("x-portcullis-session", address_key.as_str())]).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(forwarded(&tools, "/ok"), 1);
    p.shutdown().await;
}

const CI: (&str, &str) = ("PORTCULLIS_TEST_ATTACK25_CI", "ci-token-attack25-a9b8c7d6e5f4");

/// Agents `dev` and `ci` before a Python SDK server; `dev` opens an upstream session: the peer,
/// the proxy, its URL and `dev`'s session id.
async fn devs_session() -> (Peer, portcullis::app::Running, String, String) {
    use serde_json::json;
    for (var, value) in [DEV, CI] {
        std::env::set_var(var, value);
    }
    let peer = Peer::python("legacy");
    let policy = format!(
        "permissions: {{ allow: [\"mcp__py__*\"] }}\nagents:\n  dev: {{ token_env: {} }}\n  ci: {{ token_env: {} }}\n",
        DEV.0, CI.0
    );
    let p = proxy(&crate::support::config(&[("py", &peer.url())], &policy)).await;
    let url = proxy_url(&p, "py");
    let dev = format!("Bearer {}", DEV.1);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, headers, body) = post(&url, &[("authorization", &dev)], init.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let id = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let h = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", LEGACY), ("authorization", &dev)];
    post(&url, &h, json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string()).await;
    (peer, p, url, id)
}

#[tokio::test]
async fn one_agent_cannot_act_inside_another_agents_upstream_session() {
    use serde_json::json;
    let (peer, p, url, id) = devs_session().await;
    let dev = format!("Bearer {}", DEV.1);
    let h = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", LEGACY), ("authorization", &dev)];
    // The control: dev works in its own session.
    let echo = |n: u64, m: &str| {
        json!({"jsonrpc":"2.0","id":n,"method":"tools/call","params":{"name":"echo","arguments":{"message":m}}})
            .to_string()
    };
    let (_, _, text) = post(&url, &h, echo(1, "dev-own")).await;
    assert!(text.contains("dev-own"), "{text}");
    // ci presents dev's upstream session id.
    let ci = format!("Bearer {}", CI.1);
    let h = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", LEGACY), ("authorization", &ci)];
    let (status, _, text) = post(&url, &h, echo(2, "ci-in-devs-session")).await;
    let received = peer.tools_run();
    assert_eq!(
        received.iter().filter(|t| *t == "echo").count(),
        1,
        "ci's call ran inside dev's upstream session (status {status}: {text})"
    );
    p.shutdown().await;
}

#[tokio::test]
async fn one_agent_cannot_end_another_agents_upstream_session() {
    use http_body_util::{BodyExt, Empty};
    use serde_json::json;
    let (_peer, p, url, id) = devs_session().await;
    let dev = format!("Bearer {}", DEV.1);
    let h = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", LEGACY), ("authorization", &dev)];
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Empty<bytes::Bytes>>();
    let req = http::Request::delete(&url)
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", LEGACY)
        .header("authorization", format!("Bearer {}", CI.1))
        .body(Empty::new())
        .unwrap();
    let resp = client.request(req).await.unwrap();
    let deleted = resp.status().as_u16();
    let _ = resp.into_body().collect().await;
    let echo = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"still-mine"}}});
    let (status, _, text) = post(&url, &h, echo.to_string()).await;
    assert!(
        status == 200 && text.contains("still-mine"),
        "ci's DELETE ({deleted}) ended dev's session: dev's next call is {status}: {text}"
    );
    p.shutdown().await;
}
