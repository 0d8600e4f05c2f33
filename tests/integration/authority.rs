//! Who may do what, for how long (issue 25): a delegated credential never outlives the credential
//! its root minted it under (a JWT's `exp`, a JWT signing key the provider dropped, a static token
//! a reload rotated); a JWT's `nbf` is checked; an anonymous caller reaches no agent's session
//! state; and a parent minting a fresh child per probe is flagged. Real peers: the PyJWT identity
//! provider (`tests/peers/idp.py`), `server-everything`, the Python SDK client, the plain HTTP
//! tool server.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{json, Value};

use crate::support::{config, eventually, get, post, proxy, proxy_url, py_client_with, text_of, Peer};

use crate::identity_jwt::{idp, AUDIENCE, ISSUER};
const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");
const ECHO: &str = r#"{"message":"hi"}"#;
const SUM: &str = r#"{"a":1,"b":2}"#;

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

fn jwt_team(idp: &Peer) -> String {
    format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\n\
         agents:\n  alice: {{ profile: standard }}\n  bob: {{ profile: standard }}\n\
         delegation: {{ max_depth: 3, max_ttl: 1h }}\n\
         auth:\n  jwt: {{ issuer: \"{ISSUER}\", audience: {AUDIENCE}, jwks: \"http://127.0.0.1:{}/jwks.json\", refresh: 1s }}\n",
        idp.port
    )
}

/// A token for `sub` signed with `kid`, living `exp_in` seconds, with `extra` claims.
async fn jwt(p: &Peer, sub: &str, kid: &str, exp_in: u64, extra: Value) -> String {
    let mut claims = json!({ "iss": ISSUER, "aud": AUDIENCE, "sub": sub });
    for (k, v) in extra.as_object().unwrap() {
        claims[k] = v.clone();
    }
    let t = idp(p, "/sign", json!({ "claims": claims, "kid": kid, "exp_in": exp_in })).await;
    t["token"].as_str().unwrap().to_owned()
}

/// The `exp` a JWT carries (read from its payload, as the proxy would after verifying it).
fn exp_of(token: &str) -> u64 {
    let payload = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap();
    serde_json::from_slice::<Value>(&bytes).unwrap()["exp"].as_u64().unwrap()
}

/// What the door says to `token` at `url`: the status and the body.
async fn door(url: &str, token: &str) -> (u16, String) {
    let (status, _, body) = post(url, &[ACCEPT, ("authorization", &format!("Bearer {token}"))], INIT).await;
    (status, body)
}

/// `POST /delegations` as `token`: the status and the answer.
async fn mint(addr: std::net::SocketAddr, token: &str, body: Value) -> (u16, Value) {
    let auth = format!("Bearer {token}");
    let (status, _, text) =
        post(&format!("http://{addr}/delegations"), &[("authorization", &auth)], body.to_string()).await;
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn minted(addr: std::net::SocketAddr, token: &str, body: Value) -> Value {
    let (status, doc) = mint(addr, token, body.clone()).await;
    assert_eq!(status, 201, "{body}: {doc}");
    doc
}

async fn keys_loaded(p: &portcullis::app::Running) {
    eventually("the proxy to load the keys", || async {
        let (s, _, _) = get(&format!("http://{}/readyz", p.admin_addr), &[]).await;
        (s == 200).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_child_minted_under_a_short_jwt_dies_when_the_jwt_expires_and_so_does_its_grandchild() {
    let provider = Peer::start("python3", &["idp.py"]);
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &jwt_team(&provider))).await;
    let url = proxy_url(&p, "e");
    keys_loaded(&p).await;

    let alice = jwt(&provider, "alice", "rsa-1", 6, json!({})).await;
    let exp = exp_of(&alice);
    let (status, doc) = mint(p.addr, &alice, json!({"name": "long", "ttl": "10m"})).await;
    assert_eq!(status, 403, "a ttl beyond the JWT is refused: {doc}");
    assert!(doc["message"].as_str().unwrap().contains("outlives alice's own credential"), "{doc}");
    let child = minted(p.addr, &alice, json!({"name": "kid"})).await;
    assert!(
        child["expires_at_unix"].as_u64().unwrap() <= exp,
        "capped by the JWT's exp, not max_ttl: {child}"
    );
    let child = child["token"].as_str().unwrap().to_owned();
    assert_eq!(door(&url, &child).await.0, 200);
    let grandchild = minted(p.addr, &child, json!({"name": "deeper"})).await;
    assert!(grandchild["expires_at_unix"].as_u64().unwrap() <= exp, "{grandchild}");
    let grandchild = grandchild["token"].as_str().unwrap().to_owned();
    assert_eq!(door(&url, &grandchild).await.0, 200);

    // Past the JWT's exp (the JWT itself is still inside its 30 s leeway): the tree is gone.
    let wait = (exp + 1).saturating_sub(unix_now());
    tokio::time::sleep(Duration::from_secs(wait)).await;
    for (who, token) in [("child", &child), ("grandchild", &grandchild)] {
        let (status, body) = door(&url, token).await;
        assert_eq!(status, 401, "{who}: {body}");
        assert!(body.contains("expired"), "{who}: {body}");
    }
    let (status, doc) = mint(p.addr, &alice, json!({})).await;
    assert_eq!(status, 403, "a JWT past its exp mints nothing: {doc}");
    assert!(doc["message"].as_str().unwrap().contains("alice's own credential has expired"), "{doc}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_child_dies_when_the_provider_drops_the_key_its_roots_jwt_was_signed_with() {
    let provider = Peer::start("python3", &["idp.py"]);
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &jwt_team(&provider))).await;
    let url = proxy_url(&p, "e");
    keys_loaded(&p).await;

    let alice = jwt(&provider, "alice", "rsa-1", 300, json!({})).await;
    let bob = jwt(&provider, "bob", "ed-1", 300, json!({})).await;
    let a_kid = minted(p.addr, &alice, json!({"name": "kid"})).await["token"].as_str().unwrap().to_owned();
    let a_grandkid = minted(p.addr, &a_kid, json!({})).await["token"].as_str().unwrap().to_owned();
    let b_kid = minted(p.addr, &bob, json!({"name": "kid"})).await["token"].as_str().unwrap().to_owned();
    for t in [&a_kid, &a_grandkid, &b_kid] {
        assert_eq!(door(&url, t).await.0, 200);
    }

    // The provider drops rsa-1 (it leaked, say); the refresh sees it gone.
    idp(&provider, "/rotate", json!({"kid": "rsa-2", "drop": ["rsa-1"]})).await;
    let body = eventually("alice's child to be withdrawn", || async {
        let (status, body) = door(&url, &a_kid).await;
        (status == 401).then_some(body)
    })
    .await;
    assert!(body.contains("withdrawn"), "the refusal says why: {body}");
    assert!(!body.contains("rsa-1") && !body.contains("alice"), "and names nobody: {body}");
    assert_eq!(door(&url, &a_grandkid).await.0, 401, "the grandchild goes too");
    assert_eq!(door(&url, &alice).await.0, 401, "as does the JWT itself");
    assert_eq!(door(&url, &b_kid).await.0, 200, "a child minted under another key stays");
    p.shutdown().await;
}

#[tokio::test]
async fn a_jwt_is_not_accepted_before_its_nbf_beyond_the_same_leeway_as_exp() {
    let provider = Peer::start("python3", &["idp.py"]);
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &jwt_team(&provider))).await;
    let url = proxy_url(&p, "e");
    keys_loaded(&p).await;

    let later = jwt(&provider, "alice", "rsa-1", 600, json!({"nbf": unix_now() + 120})).await;
    let (status, body) = door(&url, &later).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("not valid yet"), "{body}");
    let (status, _) = mint(p.addr, &later, json!({})).await;
    assert_eq!(status, 401, "nor can it mint");
    let skewed = jwt(&provider, "alice", "rsa-1", 600, json!({"nbf": unix_now() + 10})).await;
    assert_eq!(door(&url, &skewed).await.0, 200, "a clock 10 s ahead is within the leeway");
    // An `exp` at the edge of what a u64 holds, past what the clock can: accepted, never a panic,
    // and what it mints lives delegation.max_ttl.
    let forever = jwt(&provider, "alice", "rsa-1", u64::MAX - unix_now() - 60, json!({})).await;
    assert_eq!(door(&url, &forever).await.0, 200);
    let kid = minted(p.addr, &forever, json!({})).await;
    assert!(kid["expires_at_unix"].as_u64().unwrap() <= unix_now() + 3600, "{kid}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_static_token_rotated_by_a_reload_takes_every_child_minted_with_it() {
    const DEV: &str = "PORTCULLIS_TEST_AUTHORITY_DEV";
    const CI: &str = "PORTCULLIS_TEST_AUTHORITY_CI";
    let (leaked, fresh, ci) =
        ("dev-leaked-token-0a1b2c3d4e5f", "dev-rotated-token-9z8y7x6w5v4u", "ci-authority-token-1q2w3e4r5t");
    std::env::set_var(DEV, leaked);
    std::env::set_var(CI, ci);
    let peer = Peer::everything();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("portcullis.yaml");
    let write = |generation: u32| {
        let yaml = format!(
            "# generation {generation}\nlisten: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\n\
             upstreams:\n  e: {{ url: \"{}\" }}\npermissions: {{ allow: [\"mcp__*\"] }}\n\
             agents:\n  dev: {{ token_env: {DEV} }}\n  ci: {{ token_env: {CI} }}\n",
            peer.url()
        );
        std::fs::write(&file, yaml).unwrap();
    };
    write(0);
    let p = crate::support::proxy_reloading(&file).await;
    let url = proxy_url(&p, "e");
    let dev_kid = minted(p.addr, leaked, json!({"name": "kid"})).await["token"].as_str().unwrap().to_owned();
    let ci_kid = minted(p.addr, ci, json!({"name": "kid"})).await["token"].as_str().unwrap().to_owned();
    assert_eq!(door(&url, &dev_kid).await.0, 200);

    // An unrelated reload keeps dev's token, and its child.
    write(1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(door(&url, &dev_kid).await.0, 200, "the same token still vouches");

    // The operator rotates dev's leaked token.
    std::env::set_var(DEV, fresh);
    write(2);
    eventually("the reload to rotate dev's token", || async {
        (door(&url, leaked).await.0 == 401).then_some(())
    })
    .await;
    let (status, body) = door(&url, &dev_kid).await;
    assert_eq!(status, 401, "the leaked token's child is gone: {body}");
    assert!(body.contains("withdrawn"), "{body}");
    assert_eq!(door(&url, &ci_kid).await.0, 200, "ci's token did not change: its child stays");
    let again = minted(p.addr, fresh, json!({"name": "kid"})).await;
    assert_eq!(door(&url, again["token"].as_str().unwrap()).await.0, 200, "the new token mints anew");
    p.shutdown().await;
}

#[tokio::test]
async fn a_parent_minting_a_fresh_child_per_probe_is_flagged_and_so_is_every_child() {
    const DEV: (&str, &str) = ("PORTCULLIS_TEST_AUTHORITY_PROBE", "dev-probing-token-5t6y7u8i9o0p");
    // Flags are enforced where an operator can clear them: an admin token is configured.
    let admin_env = "PORTCULLIS_TEST_ADMIN_TOKEN_PROBE";
    std::env::set_var(admin_env, "probe-operator-token-0123456789");
    std::env::set_var(DEV.0, DEV.1);
    let peer = Peer::everything();
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {admin_env} }}\n\
         upstreams:\n  e: {{ url: \"{}\" }}\n\
         approvals: {{ channel: none, flag: {{ consecutive: 3, total: 100 }} }}\n\
         permissions: {{ allow: [\"mcp__*\"], deny: [mcp__e__get-sum] }}\n\
         agents:\n  dev: {{ token_env: {} }}\n",
        peer.url(),
        DEV.0
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))).await;
    let url = proxy_url(&p, "e");
    let calls = |token: String, steps: &'static [&'static str]| {
        let url = url.clone();
        async move {
            py_client_with(&url, "legacy", &["--header", &format!("Authorization: Bearer {token}")], steps)
                .await
        }
    };
    let early = minted(p.addr, DEV.1, json!({"name": "early"})).await["token"].as_str().unwrap().to_owned();
    // Each probe is a fresh child with a fresh streak of its own, refused once.
    for i in 0..3 {
        let probe = minted(p.addr, DEV.1, json!({"name": format!("probe{i}")})).await;
        let out = calls(probe["token"].as_str().unwrap().to_owned(), &["call", "get-sum", SUM]).await;
        assert_eq!(out[0]["result"]["isError"], true, "probe {i} is refused: {out:?}");
    }
    let (status, doc) = mint(p.addr, DEV.1, json!({"name": "probe3"})).await;
    assert_eq!(status, 403, "the flagged parent mints no more: {doc}");
    assert!(doc["message"].as_str().unwrap().contains("dev was flagged"), "{doc}");
    let (status, doc) = mint(p.addr, &early, json!({})).await;
    assert_eq!(status, 403, "nor does its child: {doc}");
    let why = doc["message"].as_str().unwrap();
    assert!(why.contains("acts for dev, which was flagged"), "{why}");
    assert!(!why.contains("probe"), "the reason names no sibling: {why}");
    let before = peer.calls_received().len();
    let dev = calls(DEV.1.to_owned(), &["call", "echo", ECHO]).await;
    assert!(text_of(&dev[0]).contains("flagged"), "dev's allowed call meets a human: {dev:?}");
    let kid = calls(early, &["call", "echo", ECHO]).await;
    assert!(text_of(&kid[0]).contains("flagged"), "and so does its child's: {kid:?}");
    assert_eq!(peer.calls_received().len(), before, "neither echo was sent");
    p.shutdown().await;
}

#[tokio::test]
async fn an_anonymous_caller_spelling_an_agents_session_gets_none_of_its_waivers() {
    const DEV: (&str, &str) = ("PORTCULLIS_TEST_AUTHORITY_NS", "dev-namespace-token-a9s8d7f6g5h4");
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_AUTHORITY";
    std::env::set_var(token_env, "authority-operator");
    std::env::set_var(DEV.0, DEV.1);
    let tools = crate::http_tools::tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\n\
         upstreams:\n  web: {{ url: \"{}\" }}\napprovals: {{ channel: api, timeout: 30s }}\n\
         permissions: {{ allow: [http__web__ok] }}\n\
         agents:\n  dev: {{ token_env: {} }}\nauth: {{ require: false }}\n",
        tools.url, DEV.0
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))).await;
    let (base, admin) = (format!("http://{}/http/web", p.addr), format!("http://{}", p.admin_addr));
    let operator = [("authorization", "Bearer authority-operator")];
    let decide = |decision: &'static str| {
        let admin = admin.clone();
        async move {
            let (admin, auth) = (&admin, &operator);
            let (id, agent) = eventually("a call to be parked", || async move {
                let (_, _, list) = get(&format!("{admin}/approvals"), auth).await;
                let v: Value = serde_json::from_str(&list).unwrap_or_default();
                Some((v["pending"][0]["id"].as_u64()?, v["pending"][0]["agent"].clone()))
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
    let dev = format!("Bearer {}", DEV.1);
    let as_dev = [("authorization", dev.as_str()), ("x-portcullis-session", "s1")];
    let (held, agent) =
        tokio::join!(post(&subscribe, &as_dev, r#"{"city":"Oslo"}"#), decide("allow_session"));
    assert_eq!((held.0, agent), (200, json!("dev")), "{}", held.2);
    let (status, _, body) = post(&subscribe, &as_dev, r#"{"city":"Oslo"}"#).await;
    assert_eq!(status, 200, "dev's waiver answers dev: {body}");

    // Anonymous, spelling dev's session key: asked anew (and denied), never waived.
    for spelling in ["dev/s1", "s1"] {
        let anonymous = [("x-portcullis-session", spelling)];
        let (refused, agent) =
            tokio::join!(post(&subscribe, &anonymous, r#"{"city":"Oslo"}"#), decide("deny"));
        assert_eq!(
            refused.0, 403,
            "{spelling}: dev's waiver never answers an anonymous caller: {}",
            refused.2
        );
        assert_eq!(agent, Value::Null, "{spelling}: the ask is the anonymous caller's");
    }
    assert_eq!(
        tools.seen.lock().unwrap().len(),
        2,
        "only dev's two calls reached the server: {:?}",
        tools.seen
    );
    p.shutdown().await;
}

#[tokio::test]
async fn a_session_id_stays_with_the_caller_that_first_used_it() {
    let admin_env = "PORTCULLIS_TEST_ADMIN_TOKEN_OWNER";
    std::env::set_var(admin_env, "owner-operator-token-0123456789");
    let tools = crate::http_tools::tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {admin_env} }}\n\
         upstreams:\n  web: {{ url: \"{}\" }}\n\
         approvals: {{ channel: none, flag: {{ consecutive: 3, total: 100 }} }}\n\
         permissions: {{ allow: [http__web__ok], deny: [\"http__web__admin*\"] }}\n",
        tools.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))).await;
    let base = format!("http://{}/http/web", p.addr);
    let a = [("authorization", "Bearer caller-a"), ("x-portcullis-session", "shared")];
    let b = [("authorization", "Bearer caller-b"), ("x-portcullis-session", "shared")];
    // a uses the session first, and is refused into a flag.
    for _ in 0..3 {
        assert_eq!(post(&format!("{base}/admin"), &a, "{}").await.0, 403);
    }
    let (status, _, body) = post(&format!("{base}/ok"), &a, "{}").await;
    assert_eq!(status, 403, "a is flagged: {body}");
    assert!(body.contains("flagged"), "{body}");
    // b presents the same session id: a's flag is not b's.
    let (status, _, body) = post(&format!("{base}/ok"), &b, "{}").await;
    assert_eq!(status, 200, "a's session state never answers b: {body}");
    // Nor do b's refusals under a's id flag a's session for a clear to miss: b is flagged, alone.
    for _ in 0..3 {
        assert_eq!(post(&format!("{base}/admin"), &b, "{}").await.0, 403);
    }
    // b is flagged: an unverified token is contained like an address (docs/approvals.md), so
    // b's next session is held at its first refusal.
    let other = [("authorization", "Bearer caller-b"), ("x-portcullis-session", "b-own")];
    assert_eq!(post(&format!("{base}/admin"), &other, "{}").await.0, 403);
    let (status, _, body) = post(&format!("{base}/ok"), &other, "{}").await;
    assert_eq!(status, 403, "b's refusals flagged b: {body}");
    assert_eq!(tools.seen.lock().unwrap().len(), 1, "only b's first allowed call was sent: {:?}", tools.seen);
    p.shutdown().await;
}
