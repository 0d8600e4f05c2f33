//! Approvals in the modern era (2026-07-28): the proxy answers an asked call with
//! `input_required` and a sealed `requestState`; the real Python SDK client asks its user (the
//! elicitation callback) and retries. Raw retries show that tampered, expired, replayed and
//! argument-changed states are refused, and the upstream's journal that it never sees the
//! proxy's key or state.

use serde_json::{json, Value};

use crate::support::{config, eventually, post, proxy, proxy_url, py_client_with, rpc_body, text_of, Peer};

const MODERN: &str = "2026-07-28";
const KEY: &str = "io.portcullis/approval";

fn bodies(peer: &Peer) -> String {
    peer.journal_http().iter().map(|l| l["body"].to_string()).collect::<Vec<_>>().join("\n")
}

/// A modern `tools/call` of write_note, from a client that can elicit, with `extra` params.
pub(crate) async fn call(url: &str, id: u64, text: &str, extra: Value, auth: &str) -> (u16, Value) {
    let mut params = json!({"name":"write_note","arguments":{"path":"p","text":text},
        "_meta":{"io.modelcontextprotocol/protocolVersion":MODERN,
                 "io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}});
    if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
        p.extend(e);
    }
    let body = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params});
    let h = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "write_note"),
        ("authorization", auth),
    ];
    let (status, _, text) = post(url, &h, body.to_string()).await;
    (status, rpc_body(&text))
}

pub(crate) fn answer(state: &str, decision: &str) -> Value {
    json!({"requestState": state, "inputResponses": {KEY: {"action":"accept","content":{"decision":decision}}}})
}

#[tokio::test]
async fn the_python_sdk_client_answers_input_required_and_retries() {
    let peer = Peer::python("modern");
    let p = proxy(&config(&[("py", &peer.url())], "approvals: { channel: auto, timeout: 30s }\n")).await;
    let url = proxy_url(&p, "py");
    let (one, two) =
        (json!({"path":"a","text":"one"}).to_string(), json!({"path":"a","text":"two"}).to_string());
    let out = py_client_with(
        &url,
        "modern",
        &["--elicit", "allow_once,deny,cancel"],
        &["call", "write_note", &one, "call", "write_note", &two, "call", "write_note", &two],
    )
    .await;
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(text_of(&out[0]), "wrote 3 bytes to a", "{}", out[0]);
    // Without a session there is no "allow for the session".
    assert_eq!(out[0]["elicitations"][0]["choices"], json!(["allow_once", "deny"]), "{}", out[0]);
    assert!(text_of(&out[1]).contains("The user denied it"), "{}", out[1]);
    assert!(text_of(&out[2]).contains("dismissed"), "{}", out[2]);
    assert_eq!(peer.tools_run(), ["write_note"]);
    let seen = bodies(&peer);
    assert!(
        !seen.contains(KEY) && !seen.contains("portcullis:"),
        "the upstream saw the proxy's state: {seen}"
    );
    assert!(!seen.contains("two"), "a refused call never reached the upstream");

    // With the agent's session header, "allow for the session" arms a waiver for that call.
    let out = py_client_with(
        &url,
        "modern",
        &["--header", "x-portcullis-session:agent-7", "--elicit", "allow_session"],
        &["call", "write_note", &two, "call", "write_note", &two],
    )
    .await;
    assert_eq!(out[0]["elicitations"][0]["choices"], json!(["allow_once", "allow_session", "deny"]));
    assert_eq!(text_of(&out[0]), "wrote 3 bytes to a", "{}", out[0]);
    assert!(out[1].get("elicitations").is_none(), "waived: {}", out[1]);
    assert_eq!(text_of(&out[1]), "wrote 3 bytes to a", "{}", out[1]);
    assert_eq!(peer.tools_run().len(), 3);
}

#[tokio::test]
async fn tampered_replayed_expired_and_changed_states_are_refused_before_the_upstream() {
    let peer = Peer::python("modern");
    let p =
        proxy(&config(&[("py", &peer.url())], "approvals: { channel: elicitation, timeout: 30s }\n")).await;
    let url = proxy_url(&p, "py");
    let auth = "Bearer agent-token";

    let (status, first) = call(&url, 1, "hello", json!({}), auth).await;
    assert_eq!(status, 200);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(first["result"]["inputRequests"][KEY]["method"], "elicitation/create");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(peer.journal().is_empty(), "asking sent nothing upstream");

    let refused = |v: &Value, why: &str| {
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(why), "{v}");
    };
    // Tampered: one character of the tag changed.
    let mut forged = state.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    refused(&call(&url, 2, "hello", answer(&forged, "allow_once"), auth).await.1, "tampered");
    // The arguments, or the caller, changed since the state was issued.
    refused(&call(&url, 3, "hello!", answer(&state, "allow_once"), auth).await.1, "different call");
    refused(
        &call(&url, 4, "hello", answer(&state, "allow_once"), "Bearer someone-else").await.1,
        "different call",
    );
    assert!(peer.journal().is_empty(), "nothing refused reached the upstream: {:?}", peer.journal());

    // The genuine retry is forwarded once — without the proxy's key or state — and only once.
    let (_, ok) = call(&url, 5, "hello", answer(&state, "allow_once"), auth).await;
    assert_eq!(ok["result"]["content"][0]["text"], "wrote 5 bytes to p", "{ok}");
    refused(&call(&url, 6, "hello", answer(&state, "allow_once"), auth).await.1, "already used");
    assert_eq!(peer.tools_run(), ["write_note"]);

    // Expired: approvals.timeout is also the state's lifetime, on the wall clock (the unit tests
    // in src/approval/mrtr.rs move that clock; this is the real one). A proxy of its own with a
    // short lifetime, so the rest of this test is not racing one. Until the state expires, a
    // retry for other arguments is refused as another call (which neither burns the state nor
    // reaches the upstream): the test retries that way until the refusal says expired.
    let short =
        proxy(&config(&[("py", &peer.url())], "approvals: { channel: elicitation, timeout: 200ms }\n")).await;
    let short_url = proxy_url(&short, "py");
    let (_, again) = call(&short_url, 7, "late", json!({}), auth).await;
    let late = again["result"]["requestState"].as_str().unwrap().to_owned();
    eventually("the state to expire", || async {
        let (_, v) = call(&short_url, 8, "late!", answer(&late, "allow_once"), auth).await;
        let why = v["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(why.contains("different call") || why.contains("expired"), "{v}");
        why.contains("expired").then_some(())
    })
    .await;
    refused(&call(&short_url, 8, "late", answer(&late, "allow_once"), auth).await.1, "expired");

    // The upstream's own state and answers travel inside the proxy's and come back exactly.
    let theirs = json!({"requestState":"upstream-state-xyz","inputResponses":{"theirs":{"action":"accept","content":{"ok":true}}}});
    let (_, asked) = call(&url, 9, "round", theirs, auth).await;
    let wrapped = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let (_, _) = call(&url, 10, "round", answer(&wrapped, "allow_once"), auth).await;
    let last = peer.journal_http().last().cloned().unwrap();
    assert_eq!(last["body"]["params"]["requestState"], "upstream-state-xyz", "{last}");
    assert_eq!(
        last["body"]["params"]["inputResponses"],
        json!({"theirs":{"action":"accept","content":{"ok":true}}})
    );
    let seen = bodies(&peer);
    assert!(!seen.contains(KEY) && !seen.contains("portcullis:"), "{seen}");
    assert!(!seen.contains("hello!") && !seen.contains("late"), "{seen}");
}

#[tokio::test]
async fn an_upstream_that_asks_its_own_questions_keeps_working_through_the_proxy() {
    for era in ["modern", "legacy"] {
        let peer = Peer::python(era);
        let p = proxy(&config(
            &[("py", &peer.url())],
            "permissions: { allow: [mcp__py__echo], ask: [mcp__py__confirm_delete] }\napprovals: { channel: elicitation }\n",
        ))
        .await;
        let args = json!({"path": "/tmp/x"}).to_string();
        // The proxy asks (allow once), then the server asks its own question ("sure"). In the
        // modern era the server's input_required round comes back as a retry the proxy asks
        // about again (allowed once more), with the server's state and answer restored inside.
        let answers = if era == "modern" { "allow_once,sure,allow_once" } else { "allow_once,sure" };
        let out = py_client_with(
            &proxy_url(&p, "py"),
            era,
            &["--elicit", answers],
            &["call", "confirm_delete", &args],
        )
        .await;
        assert_eq!(text_of(&out[0]), "deleted /tmp/x", "{era}: {}", out[0]);
        let forms: Vec<String> = out[0]["elicitations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["message"].as_str().unwrap_or("").to_owned())
            .collect();
        assert!(
            forms.iter().any(|m| m.contains("Really delete /tmp/x?")),
            "{era}: the server's own question: {forms:?}"
        );
        assert!(forms.iter().any(|m| m.contains("portcullis is holding")), "{era}: {forms:?}");
        assert_eq!(peer.tools_run(), ["confirm_delete"], "{era}");
        let seen = bodies(&peer);
        assert!(
            !seen.contains(KEY) && !seen.contains("portcullis:") && !seen.contains("portcullis-elicit"),
            "{era}: {seen}"
        );
    }
}
