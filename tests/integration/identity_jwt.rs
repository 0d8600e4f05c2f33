//! Agents named by JWTs from a real identity provider on loopback (`tests/peers/idp.py`: real
//! RSA and Ed25519 keys, a JWKS, tokens signed by PyJWT), through a real proxy to the MCP
//! project's `server-everything`, whose journal says what reached it.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::support::{config, eventually, get, post, proxy, proxy_url, py_client_with, text_of, Peer};

pub(crate) const ISSUER: &str = "https://idp.portcullis.test";
pub(crate) const AUDIENCE: &str = "portcullis-agents";

fn team(idp: &Peer) -> String {
    format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\n\
         agents:\n  alice: {{ profile: standard }}\n  bob: {{ permissions: {{ deny: [mcp__e__echo] }} }}\n\
         auth:\n  jwt: {{ issuer: \"{ISSUER}\", audience: {AUDIENCE}, jwks: \"http://127.0.0.1:{}/jwks.json\", refresh: 1s }}\n",
        idp.port
    )
}

/// A request to the identity provider peer (tests/peers/idp.py), answered 200 with JSON.
pub(crate) async fn idp(idp: &Peer, path: &str, body: Value) -> Value {
    let (status, _, text) =
        post(&format!("http://127.0.0.1:{}{path}", idp.port), &[], body.to_string()).await;
    assert_eq!(status, 200, "{path}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// A token for `sub` from the provider, signed with `kid`, with claims overridden by `extra`.
async fn token(p: &Peer, sub: &str, kid: &str, extra: Value) -> String {
    let mut claims = json!({ "iss": ISSUER, "aud": AUDIENCE, "sub": sub });
    let mut exp_in = 300;
    for (k, v) in extra.as_object().unwrap() {
        if k == "exp_in" {
            exp_in = v.as_i64().unwrap();
        } else {
            claims[k] = v.clone();
        }
    }
    idp(p, "/sign", json!({ "claims": claims, "kid": kid, "exp_in": exp_in })).await["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");

async fn status_with(url: &str, token: &str) -> (u16, String) {
    let (status, _, body) = post(url, &[ACCEPT, ("authorization", &format!("Bearer {token}"))], INIT).await;
    (status, body)
}

#[tokio::test]
async fn rs256_and_eddsa_tokens_name_their_agent_and_bad_ones_are_refused() {
    let provider = Peer::start("python3", &["idp.py"]);
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &team(&provider))).await;
    let url = proxy_url(&p, "e");
    eventually("the proxy to load the keys", || async {
        let (s, _, _) = get(&format!("http://{}/readyz", p.admin_addr), &[]).await;
        (s == 200).then_some(())
    })
    .await;

    let alice = token(&provider, "alice", "rsa-1", json!({})).await;
    let bob = token(&provider, "bob", "ed-1", json!({})).await;
    let echo = r#"{"message":"hi"}"#;
    let a = py_client_with(
        &url,
        "legacy",
        &["--header", &format!("Authorization: Bearer {alice}")],
        &["call", "echo", echo],
    )
    .await;
    assert_eq!(text_of(&a[0]), "Echo: hi", "RS256, alice's policy allows: {a:?}");
    let b = py_client_with(
        &url,
        "legacy",
        &["--header", &format!("Authorization: Bearer {bob}")],
        &["call", "echo", echo],
    )
    .await;
    assert_eq!(b[0]["result"]["isError"], true, "EdDSA, bob's own deny: {b:?}");
    assert_eq!(peer.calls_received(), vec!["echo".to_owned()], "only alice's call ran");
    let before = peer.journal_http().len();

    // alg none: alice's own claims, no signature.
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": 4_000_000_000u64});
    let none = format!("{}.{}.", b64(json!({"alg": "none", "typ": "JWT"})), b64(claims.clone()));
    // alice's real header and signature over different claims (sub swapped to bob's name).
    let mut parts = alice.split('.');
    let (h, _, sig) = (parts.next().unwrap(), parts.next(), parts.next().unwrap());
    let spliced = format!(
        "{h}.{}.{sig}",
        b64(json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "bob", "exp": 4_000_000_000u64}))
    );
    // Algorithm confusion: HS256 keyed with the RSA key's published modulus.
    let jwks: Value =
        serde_json::from_str(&get(&format!("http://127.0.0.1:{}/jwks.json", provider.port), &[]).await.2)
            .unwrap();
    let secret = jwks["keys"][0]["n"].as_str().unwrap().to_owned();
    let signing_input = format!("{}.{}", b64(json!({"alg": "HS256", "kid": "rsa-1"})), b64(claims.clone()));
    let mac = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes()),
        signing_input.as_bytes(),
    );
    let confused =
        format!("{signing_input}.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.as_ref()));
    let cases = [
        ("HS256 keyed with public material", confused, "algorithm is not accepted"),
        ("expired", token(&provider, "alice", "rsa-1", json!({"exp_in": -120})).await, "expired"),
        (
            "wrong audience",
            token(&provider, "alice", "rsa-1", json!({"aud": "someone-else"})).await,
            "audience",
        ),
        (
            "wrong issuer",
            token(&provider, "alice", "ed-1", json!({"iss": "https://evil.test"})).await,
            "issuer",
        ),
        ("unknown agent", token(&provider, "mallory", "rsa-1", json!({})).await, "not configured"),
        ("no sub", token(&provider, "alice", "rsa-1", json!({"sub": null})).await, "claim"),
        (
            "signed by another key under a known kid",
            idp(&provider, "/sign_rogue", json!({"claims": claims, "kid": "rsa-1"})).await["token"]
                .as_str()
                .unwrap()
                .to_owned(),
            "signature",
        ),
        ("alg none", none, "not a signed JWT"),
        ("claims swapped under a real signature", spliced, "signature"),
        ("garbage", "eyJ.garbage.!!".to_owned(), "not a signed JWT"),
    ];
    for (what, t, says) in cases {
        let (status, body) = status_with(&url, &t).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(body.contains(says), "{what}: the reason says {says:?}: {body}");
    }
    assert_eq!(peer.journal_http().len(), before, "no refused request reached the upstream");
    p.shutdown().await;
}

#[tokio::test]
async fn a_rotated_key_is_learned_off_the_call_path_and_a_dropped_one_stops_working() {
    let provider = Peer::start("python3", &["idp.py"]);
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &team(&provider))).await;
    let url = proxy_url(&p, "e");
    let old = token(&provider, "alice", "rsa-1", json!({})).await;
    eventually("the first key set", || async { (status_with(&url, &old).await.0 == 200).then_some(()) })
        .await;

    idp(&provider, "/rotate", json!({"kid": "rsa-2", "drop": ["rsa-1"]})).await;
    let new = token(&provider, "alice", "rsa-2", json!({})).await;
    // The first sighting of the new kid may be refused (the refresh it nudges runs in the
    // background); it is accepted once the set is refreshed, and the dropped key stops working.
    eventually("the rotated key", || async { (status_with(&url, &new).await.0 == 200).then_some(()) }).await;
    eventually("the dropped key refused", || async {
        (status_with(&url, &old).await.0 == 401).then_some(())
    })
    .await;
    p.shutdown().await;
}

#[tokio::test]
async fn a_provider_that_is_down_refuses_jwts_and_never_opens_the_door() {
    std::env::set_var("PORTCULLIS_TEST_JWT_STATIC", "static-agent-token-5c4b3a29181706f5");
    let provider = Peer::start("python3", &["idp.py"]);
    idp(&provider, "/fail", json!({"on": true})).await;
    let peer = Peer::everything();
    std::env::set_var("PORTCULLIS_TEST_ADMIN_TOKEN_JWT", "jwt-operator-token");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: PORTCULLIS_TEST_ADMIN_TOKEN_JWT }}\n\
         upstreams: {{ e: {{ url: \"{}\" }} }}\n\
         permissions: {{ allow: [\"mcp__*\"] }}\n\
         agents:\n  alice: {{ }}\n  carol: {{ token_env: PORTCULLIS_TEST_JWT_STATIC }}\n\
         auth:\n  jwt: {{ issuer: \"{ISSUER}\", audience: {AUDIENCE}, jwks: \"http://127.0.0.1:{}/jwks.json\", refresh: 1s }}\n",
        peer.url(),
        provider.port
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))).await;
    let url = proxy_url(&p, "e");
    let alice = token(&provider, "alice", "rsa-1", json!({})).await;

    let (status, body) = status_with(&url, &alice).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("identity provider"), "{body}");
    let (ready, _, why) = get(&format!("http://{}/readyz", p.admin_addr), &[]).await;
    assert_eq!(ready, 503, "{why}");
    // The first fetch may still be on its way: /status names its failure once it has failed.
    let admin = format!("http://{}/status", p.admin_addr);
    let status = eventually("the failed fetch in /status", || async {
        let (_, _, text) = get(&admin, &[("authorization", "Bearer jwt-operator-token")]).await;
        let v: Value = serde_json::from_str(&text).unwrap();
        v["identity"]["jwt"]["last_error"].as_str().is_some_and(|e| e.contains("503")).then_some(v)
    })
    .await;
    assert_eq!(status["identity"]["jwt"]["keys_loaded"], false, "{status}");
    assert_eq!(status["identity"]["agents"], json!(["alice", "carol"]), "{status}");
    assert!(peer.journal_http().is_empty(), "nothing reached the upstream while keys were missing");
    // A static-token agent does not depend on the provider.
    let (status, body) = status_with(&url, "static-agent-token-5c4b3a29181706f5").await;
    assert_eq!(status, 200, "{body}");

    // The provider comes back: the proxy recovers by itself.
    idp(&provider, "/fail", json!({"on": false})).await;
    eventually("recovery", || async { (status_with(&url, &alice).await.0 == 200).then_some(()) }).await;
    let (ready, _, _) = get(&format!("http://{}/readyz", p.admin_addr), &[]).await;
    assert_eq!(ready, 200);
    p.shutdown().await;
}
