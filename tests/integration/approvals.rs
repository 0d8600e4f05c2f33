//! Approvals through the operator API, against the real Python SDK server: a call Layer 1 asks
//! about is parked (the agent's stream stays open), appears at `GET /approvals`, and is decided
//! with `portcullis approvals`; "allow for the session" arms a waiver for exactly that call.

use tokio::process::Command;

use serde_json::{json, Value};

use crate::support::{eventually, post, post_streaming, proxy, proxy_url, rpc_body, text_of, Peer};

use crate::support::LEGACY;

async fn open(url: &str) -> String {
    crate::support::open_legacy_session(url).await
}

/// Starts a call in the background; its answer arrives when someone decides.
fn call(
    url: &str,
    session: &str,
    id: u64,
    tool: &str,
    args: Value,
) -> tokio::task::JoinHandle<(String, Value)> {
    let (url, session, tool) = (url.to_owned(), session.to_owned(), tool.to_owned());
    tokio::spawn(async move {
        let body =
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}});
        let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
        let (_, headers, text) = post(&url, &h, body.to_string()).await;
        let ct = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        (ct, rpc_body(&text))
    })
}

/// Runs `portcullis approvals …` (async: the admin listener lives on this test's runtime).
async fn approvals_cli(admin: &str, token_env: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["approvals", "--admin", admin, "--token-env", token_env])
        .args(args)
        .output()
        .await
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Waits until exactly `n` calls are parked; returns their ids.
async fn parked(admin: &str, token_env: &str, n: usize) -> Vec<u64> {
    eventually(&format!("{n} parked call(s)"), || async {
        let (ok, text) = approvals_cli(admin, token_env, &["list"]).await;
        assert!(ok, "{text}");
        let ids: Vec<u64> = text.lines().filter_map(|l| l.split_whitespace().next()?.parse().ok()).collect();
        (ids.len() == n).then_some(ids)
    })
    .await
}

#[tokio::test]
async fn an_operator_decides_parked_calls_and_allow_for_the_session_waives_exactly_that_call() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_A";
    // A variable only this test reads (the proxy takes its admin token from the environment).
    std::env::set_var(token_env, "s3cret-operator-token");
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [mcp__py__echo], ask: [mcp__py__add] }}\napprovals: {{ channel: api, timeout: 30s }}\n",
        peer.url()
    );
    let c = portcullis::config::Config::parse(&yaml, "test").unwrap();
    let p = proxy(&c).await;
    let (url, admin) = (proxy_url(&p, "py"), format!("http://{}", p.admin_addr));
    let session = open(&url).await;

    // Without the token the API refuses.
    let (status, _, _) = post(&format!("{admin}/approvals/1"), &[], r#"{"decision":"allow_once"}"#).await;
    assert_eq!(status, 401);

    // write_note has no rule: the built-in floor asks. The call is parked, its stream open.
    let first = call(&url, &session, 1, "write_note", json!({"path":"a","text":"hello"}));
    let ids = parked(&admin, token_env, 1).await;
    assert!(peer.tools_run().is_empty(), "nothing runs while it waits");
    let (ok, text) = approvals_cli(&admin, token_env, &["allow", &ids[0].to_string(), "--always"]).await;
    assert!(ok, "{text}");
    let (ct, msg) = first.await.unwrap();
    assert_eq!(ct, "text/event-stream");
    assert_eq!(text_of(&msg), "wrote 5 bytes to a", "{msg}");
    assert_eq!(peer.tools_run(), ["write_note"]);

    // The same call again: the waiver answers, nobody is asked.
    let (_, again) = call(&url, &session, 2, "write_note", json!({"path":"a","text":"hello"})).await.unwrap();
    assert_eq!(text_of(&again), "wrote 5 bytes to a", "{again}");
    assert_eq!(peer.tools_run(), ["write_note", "write_note"]);

    // Changed arguments miss the waiver; an operator denies, and the server never sees it.
    let changed = call(&url, &session, 3, "write_note", json!({"path":"a","text":"hello!"}));
    let ids = parked(&admin, token_env, 1).await;
    let (ok, text) = approvals_cli(&admin, token_env, &["deny", &ids[0].to_string()]).await;
    assert!(ok, "{text}");
    let (_, denied) = changed.await.unwrap();
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert!(text_of(&denied).contains("An operator denied it"), "{denied}");
    assert_eq!(peer.tools_run().len(), 2, "the denied call never ran");

    // A configured ask can be allowed once, never for the session.
    let add = call(&url, &session, 4, "add", json!({"a": 2, "b": 3}));
    let ids = parked(&admin, token_env, 1).await;
    let (ok, text) = approvals_cli(&admin, token_env, &["allow", &ids[0].to_string(), "--always"]).await;
    assert!(!ok && text.contains("allowed once"), "{text}");
    let (ok, text) = approvals_cli(&admin, token_env, &["allow", &ids[0].to_string()]).await;
    assert!(ok, "{text}");
    let (_, added) = add.await.unwrap();
    assert_eq!(added["result"]["structuredContent"]["result"], 5, "{added}");

    // Another session has no waiver.
    let other = open(&url).await;
    let elsewhere = call(&url, &other, 5, "write_note", json!({"path":"a","text":"hello"}));
    let ids = parked(&admin, token_env, 1).await;
    approvals_cli(&admin, token_env, &["deny", &ids[0].to_string()]).await;
    assert_eq!(elsewhere.await.unwrap().1["result"]["isError"], true);
    let metrics = String::from_utf8(p.metrics.render()).unwrap();
    for line in [
        r#"portcullis_approvals_total{decision="allow_session"} 1"#,
        r#"portcullis_approvals_total{decision="allow_once"} 1"#,
        r#"portcullis_approvals_total{decision="deny"} 2"#,
        "portcullis_approvals_pending 0",
        "portcullis_waivers_active 1",
    ] {
        assert!(metrics.contains(line), "missing {line}");
    }
}

#[tokio::test]
async fn an_undecided_ask_times_out_and_never_reaches_the_upstream() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_B";
    std::env::set_var(token_env, "another-operator-token");
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\napprovals: {{ channel: api, timeout: 300ms }}\n",
        peer.url()
    );
    let c = portcullis::config::Config::parse(&yaml, "test").unwrap();
    let p = proxy(&c).await;
    let url = proxy_url(&p, "py");
    let session = open(&url).await;
    let (_, msg) = call(&url, &session, 1, "write_note", json!({"path":"x","text":"y"})).await.unwrap();
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    assert!(text_of(&msg).contains("No operator decided in time"), "{msg}");
    assert!(peer.tools_run().is_empty());
    let metrics = String::from_utf8(p.metrics.render()).unwrap();
    assert!(metrics.contains(r#"portcullis_approvals_total{decision="timeout"} 1"#), "{metrics}");
}

#[tokio::test]
async fn repeated_refusals_flag_the_session_until_an_operator_clears_it() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_C";
    std::env::set_var(token_env, "third-operator-token");
    let peer = Peer::python("legacy");
    // channel: none — with nobody to ask, a flagged session's calls are simply refused.
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [mcp__py__echo], deny: [mcp__py__write_note] }}\napprovals: {{ channel: none }}\n",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (url, admin) = (proxy_url(&p, "py"), format!("http://{}", p.admin_addr));
    let session = open(&url).await;
    let echo = |id: u64| call(&url, &session, id, "echo", json!({"message":"hi"}));
    assert_eq!(text_of(&echo(1).await.unwrap().1), "hi");
    for id in 2..5 {
        let (_, msg) = call(&url, &session, id, "write_note", json!({"path":"x","text":"y"})).await.unwrap();
        assert!(text_of(&msg).contains("portcullis denied"), "{msg}");
    }
    // Three refusals in a row: even an allowed call now needs a human (and there is none).
    let (_, msg) = echo(5).await.unwrap();
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    assert!(text_of(&msg).contains("flagged after repeated refusals"), "{msg}");
    assert_eq!(peer.tools_run(), ["echo"], "nothing ran after the flag");
    let (ok, status) = approvals_cli(&admin, token_env, &["status"]).await;
    assert!(ok && status.contains(&session), "{status}");
    // The caller (no credential: its address) is flagged too.
    let caller = status
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == ':'))
        .find(|w| w.starts_with("caller:"))
        .unwrap_or_else(|| panic!("the caller is listed: {status}"))
        .to_owned();
    // An address is many agents: a fresh session of it works until it is refused itself, and
    // then it is held at once (docs/approvals.md, "An address is not an agent").
    let other = open(&url).await;
    let (_, msg) = call(&url, &other, 1, "echo", json!({"message":"hi"})).await.unwrap();
    assert_eq!(text_of(&msg), "hi", "{msg}");
    let (_, msg) = call(&url, &other, 2, "write_note", json!({"path":"x","text":"y"})).await.unwrap();
    assert!(text_of(&msg).contains("portcullis denied"), "{msg}");
    let (_, msg) = call(&url, &other, 3, "echo", json!({"message":"hi"})).await.unwrap();
    assert!(text_of(&msg).contains("flagged after repeated refusals"), "one refusal holds it: {msg}");
    assert_eq!(peer.tools_run(), ["echo", "echo"], "nothing ran after each flag");
    // Another caller is unaffected.
    let auth = [("authorization", "Bearer another-agent")];
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (_, headers, _) = post(&url, &auth, init.to_string()).await;
    let theirs = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let h = [auth[0], ("mcp-session-id", theirs.as_str()), ("mcp-protocol-version", LEGACY)];
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}});
    let (_, _, text) = post(&url, &h, body.to_string()).await;
    assert_eq!(text_of(&rpc_body(&text)), "hi", "{text}");
    for key in [&session, &caller] {
        let (ok, text) = approvals_cli(&admin, token_env, &["clear", key]).await;
        assert!(ok, "{key}: {text}");
    }
    assert_eq!(text_of(&echo(6).await.unwrap().1), "hi", "cleared: rules apply again");
    let metrics = String::from_utf8(p.metrics.render()).unwrap();
    assert!(
        metrics.contains("portcullis_sessions_flagged_total 3"),
        "the session, its caller and the second session: {metrics}"
    );
}

#[tokio::test]
async fn a_parked_call_keeps_its_progress_flowing_and_is_withdrawn_when_the_agent_hangs_up() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_D";
    std::env::set_var(token_env, "fourth-operator-token");
    let peer = Peer::python("legacy");
    // echo is allowed only to be the barrier at the end; write_note is asked (not read-only).
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [mcp__py__echo] }}\napprovals: {{ channel: api, timeout: 30s, keepalive: 100ms }}\n",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (url, admin) = (proxy_url(&p, "py"), format!("http://{}", p.admin_addr));
    let session = open(&url).await;

    // A call with a progress token: while it waits, the agent gets progress notifications for it.
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_note",
        "arguments":{"path":"a","text":"b"},"_meta":{"progressToken":"tok-1"}}});
    let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    let (status, mut waiting) = post_streaming(&url, &h, body.to_string()).await;
    assert_eq!(status, 200, "answered at once, as a stream");
    let ids = parked(&admin, token_env, 1).await;
    // Decided only once two beats (keepalive: 100ms) have reached the agent, read as they come.
    let beats = |t: &str| t.matches("notifications/progress").count() >= 2;
    assert!(waiting.read_until(beats).await, "the stream ended while parked: {}", waiting.text());
    let (ok, text) = approvals_cli(&admin, token_env, &["allow", &ids[0].to_string()]).await;
    assert!(ok, "{text}");
    let stream = waiting.finish().await;
    let events: Vec<Value> = stream
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect();
    let progress: Vec<&Value> = events.iter().filter(|e| e["method"] == "notifications/progress").collect();
    assert!(progress.len() >= 2, "progress while parked: {stream}");
    assert!(progress.iter().all(|e| e["params"]["progressToken"] == "tok-1"), "{stream}");
    let n: Vec<f64> = progress.iter().filter_map(|e| e["params"]["progress"].as_f64()).collect();
    assert!(n.windows(2).all(|w| w[0] < w[1]), "progress only increases: {n:?}");
    let last = events.last().unwrap();
    assert_eq!(last["id"], 1);
    assert_eq!(last["result"]["content"][0]["text"], "wrote 1 bytes to a", "{stream}");

    // Without a token: SSE comments keep it alive. The agent hangs up; the ask is withdrawn and
    // the call never reaches the upstream.
    let hung = call(&url, &session, 2, "write_note", json!({"path":"gone","text":"never"}));
    parked(&admin, token_env, 1).await;
    hung.abort();
    let _ = hung.await;
    // Withdrawn (no longer listed) means its wait ended undecided, so it can no longer be sent.
    // A call sent after it, and answered, is the barrier the upstream's journal is read behind.
    parked(&admin, token_env, 0).await;
    let (_, after) = call(&url, &session, 3, "echo", json!({"message":"after"})).await.unwrap();
    assert_eq!(text_of(&after), "after", "{after}");
    assert_eq!(peer.tools_run(), ["write_note", "echo"], "the withdrawn call never ran");
    assert!(!peer.calls_received().is_empty());
    assert!(!format!("{:?}", peer.journal_http()).contains("never"), "the upstream never saw it");
}
