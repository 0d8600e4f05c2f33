//! A waiver is keyed by the tool and its arguments spelled by `canonical_json` (565d99e writes it
//! from the borrowed value). The arguments are a `serde_json::Value` first, whose numbers are
//! `u64`, `i64` or `f64`: two integers past 2^64 that differ in their last digits become the same
//! `f64`, and so the same key — while the Python SDK server reads each exactly.

use serde_json::{json, Value};

use crate::support::{eventually, post, proxy, proxy_url, rpc_body, text_of, Peer, LEGACY};

const TOKEN_ENV: &str = "PORTCULLIS_IT_RT10_ADMIN";
const TOKEN: &str = "rt10-admin-token-5c1e9a7d3b";

/// `add(a, 0)` with `a` written as given (a `Value` would hold it as an `f64` already).
fn call(url: &str, session: &str, id: u64, a: &str) -> tokio::task::JoinHandle<Value> {
    let (url, session) = (url.to_owned(), session.to_owned());
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{a},"b":0}}}}}}"#
    );
    tokio::spawn(async move {
        let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
        let (_, _, text) = post(&url, &h, body).await;
        rpc_body(&text)
    })
}

/// The ids of the calls parked for the operator.
async fn parked(admin: &str) -> Vec<u64> {
    let (_, _, text) =
        crate::support::get(&format!("{admin}/approvals"), &[("authorization", &format!("Bearer {TOKEN}"))])
            .await;
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    v["pending"].as_array().cloned().unwrap_or_default().iter().filter_map(|a| a["id"].as_u64()).collect()
}

async fn decide(admin: &str, id: u64, decision: &str) {
    let (status, _, body) = post(
        &format!("{admin}/approvals/{id}"),
        &[("authorization", &format!("Bearer {TOKEN}"))],
        json!({ "decision": decision }).to_string(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

/// The `a` of every `add` the server ran, as it wrote it (the journal's own digits: a `Value`
/// would round it).
fn added(peer: &Peer) -> Vec<String> {
    let text = std::fs::read_to_string(&peer.journal).unwrap_or_default();
    text.lines()
        .filter(|l| l.contains(r#""tool":"add""#))
        .filter_map(|l| l.split(r#""args":{"a":"#).nth(1)?.split(',').next().map(str::to_owned))
        .collect()
}

/// `add` has no rule, so the floor asks; the operator allows `a` for the session; then `b_a` is
/// called. Returns whether that call was forwarded without anyone being asked.
async fn waived_for(a: &str, other: &str) -> (bool, Vec<String>) {
    std::env::set_var(TOKEN_ENV, TOKEN);
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {TOKEN_ENV} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         approvals: {{ channel: api, timeout: 60s }}\n",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (url, admin) = (proxy_url(&p, "py"), format!("http://{}", p.admin_addr));
    let session = crate::support::open_legacy_session(&url).await;
    let first = call(&url, &session, 1, a);
    let ids =
        eventually("the first call parked", || async { Some(parked(&admin).await).filter(|i| i.len() == 1) })
            .await;
    decide(&admin, ids[0], "allow_session").await;
    let answer = first.await.unwrap();
    assert!(answer["result"]["isError"] != true, "{answer}");
    // The other call: parked (asked), or answered at once (a waiver matched it).
    let mut second = call(&url, &session, 2, other);
    let waived = tokio::select! {
        done = &mut second => {
            let a = done.unwrap();
            assert!(a["result"].is_object() && !text_of(&a).contains("denied"), "{a}");
            true
        }
        ids = eventually("the second call parked", || async { Some(parked(&admin).await).filter(|i| i.len() == 1) }) => {
            decide(&admin, ids[0], "deny").await;
            let _ = second.await;
            false
        }
    };
    p.shutdown().await;
    (waived, added(&peer))
}

#[tokio::test]
async fn a_waiver_for_one_integer_does_not_cover_another() {
    // What held: integers a u64 holds are keyed exactly.
    let (waived, ran) = waived_for("18446744073709551614", "18446744073709551615").await;
    assert!(!waived, "the waiver for ...614 let ...615 through: the server ran {ran:?}");
    assert_eq!(ran, ["18446744073709551614"]);
}

#[tokio::test]
async fn a_waiver_for_one_large_integer_does_not_cover_another() {
    let (waived, ran) = waived_for("18446744073709551616", "18446744073709551617").await;
    assert!(!waived, "the waiver for 2^64 let 2^64+1 through unasked: the server ran {ran:?}");
    assert_eq!(ran, ["18446744073709551616"]);
}
