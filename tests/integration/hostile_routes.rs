//! A hostile upstream (tests/peers/hostile_server.py) tries every route a result takes to the
//! agent that a per-stream, exact-id post gate would not watch: id spellings the SDKs coerce,
//! answers on other streams, server-to-client messages, lying plain-HTTP bodies. The client is
//! the official Python SDK (or raw HTTP where the SDK would not show the text); the journal shows
//! that the upstream really sent it.

use serde_json::Value;

use crate::support::*;

const SECRET: &str = "INJECTED-SECRET-4242";

fn hostile() -> Peer {
    Peer::start("python3", &["hostile_server.py"])
}

/// The py_client `--stdio` argv that runs `server` (a shell command) behind `portcullis wrap`.
fn wrap_argv(cfg: &std::path::Path, server: &str) -> String {
    serde_json::json!([
        env!("CARGO_BIN_EXE_portcullis"),
        "wrap",
        "--config",
        cfg,
        "--name",
        "evil",
        "--",
        "sh",
        "-c",
        server
    ])
    .to_string()
}

fn guarded(peer: &Peer) -> portcullis::config::Config {
    let http = format!("http://127.0.0.1:{}/http", peer.port);
    config(&[("evil", &peer.url()), ("evilhttp", &http)], &format!("{ALLOW_ALL}redact: [{SECRET}]\n"))
}

#[tokio::test]
async fn answers_under_any_id_spelling_or_on_any_stream_reach_the_sdk_client_inspected() {
    let peer = hostile();
    let p = proxy(&guarded(&peer)).await;
    // `"0xA"` and `10.0` are spellings only the TS SDK (`Number(id)`) reads; the Python SDK
    // refuses them, so they are checked over raw HTTP below.
    let tools = ["id_string", "id_spaced", "stray_id", "answer_on_get"];
    let steps: Vec<String> = tools.iter().map(|t| format!("call {t} {{}}")).collect();
    let mut args: Vec<&str> = Vec::new();
    for s in &steps {
        args.extend(s.splitn(3, ' '));
    }
    let lines = py_client(&proxy_url(&p, "evil"), "legacy", &args).await;
    assert_eq!(lines.len(), tools.len(), "{lines:?}");
    for (tool, line) in tools.iter().zip(&lines) {
        let text = line.to_string();
        assert!(!text.contains(SECRET), "{tool}: the client read the upstream's raw answer: {text}");
        assert!(text_of(line).contains("[guardrail: redacted]"), "{tool}: not the inspected answer: {text}");
    }
    let url = proxy_url(&p, "evil");
    let session = open_legacy_session(&url).await;
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    for tool in ["id_hex", "id_float"] {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        );
        let (_, _, body) = post(&url, &headers, call).await;
        assert!(!body.contains(SECRET) && body.contains("[guardrail: redacted]"), "{tool}: {body}");
    }
    let ran: Vec<String> =
        peer.journal().iter().filter(|l| l["kind"] == "tool").map(|l| l["tool"].to_string()).collect();
    assert_eq!(ran.len(), tools.len() + 2, "every hostile tool ran upstream: {ran:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn an_answer_on_an_earlier_post_stream_of_the_session_is_inspected() {
    let peer = hostile();
    let p = proxy(&guarded(&peer)).await;
    let url = proxy_url(&p, "evil");
    let session = open_legacy_session(&url).await;
    let call = |id: u32, name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
        )
    };
    let held = {
        let (url, session, body) = (url.clone(), session.clone(), call(1, "hold_open"));
        tokio::spawn(async move {
            post(&url, &[("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)], body).await
        })
    };
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    let (_, _, own) = post(&url, &headers, call(2, "answer_elsewhere")).await;
    let (_, _, earlier) = held.await.unwrap();
    assert!(!own.contains(SECRET), "{own}");
    assert!(!earlier.contains(SECRET), "the answer to id 2 on id 1's stream leaked: {earlier}");
    // The rewrite is spliced into the upstream's own bytes, so the id keeps its spelling: read
    // the events as JSON.
    let redacted_answer_to_2 = earlier
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
        .any(|m| m["id"] == 2 && m.to_string().contains("[guardrail: redacted]"));
    assert!(redacted_answer_to_2, "{earlier}");
    p.shutdown().await;
}

#[tokio::test]
async fn an_upstream_elicitation_imitating_the_approval_form_never_reaches_the_user() {
    let peer = hostile();
    let p = proxy(&guarded(&peer)).await;
    let lines = py_client_with(
        &proxy_url(&p, "evil"),
        "legacy",
        &["--elicit", "allow_once"],
        &["call", "fake_approval", "{}"],
    )
    .await;
    assert!(lines[0].get("elicitations").is_none(), "the user was shown the fake form: {}", lines[0]);
    // The upstream was answered by the proxy (a JSON-RPC error), so it did not hang.
    let replies: Vec<Value> = peer.journal().into_iter().filter(|l| l["kind"] == "reply").collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    let err = &replies[0]["body"]["error"];
    assert!(err["message"].as_str().unwrap_or("").contains("portcullis refused it"), "{replies:?}");
    assert!(text_of(&lines[0]).contains("reply="), "{}", lines[0]);
    p.shutdown().await;
}

#[tokio::test]
async fn server_to_client_messages_are_judged_by_the_upstreams_post_rules() {
    let peer = hostile();
    let p = proxy(&guarded(&peer)).await;
    let url = proxy_url(&p, "evil");
    let session = open_legacy_session(&url).await;
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    let call = |name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
        )
    };
    let _ = &call;
    // A log line: relayed redacted.
    let (_, _, body) = post(&url, &headers, call("log_leak")).await;
    assert!(!body.contains(SECRET), "{body}");
    assert!(body.contains("notifications/message") && body.contains("[guardrail: redacted]"), "{body}");
    assert!(peer.journal().iter().any(|l| l["kind"] == "tool" && l["tool"] == "log_leak"));
    p.shutdown().await;
}

#[tokio::test]
async fn plain_http_results_that_are_not_utf8_or_not_json_are_judged_as_text() {
    let peer = hostile();
    let p = proxy(&guarded(&peer)).await;
    for tool in ["latin1", "broken_json", "json_garbage", "json_lie", "gzip"] {
        let url = format!("http://{}/http/evilhttp/{tool}", p.addr);
        let (status, _, body) = post(&url, &[], "{}").await;
        assert!(!body.contains(SECRET), "{tool}: released unjudged ({status}): {body}");
        match tool {
            "gzip" => assert_ne!(status, 200, "{tool}: a body the proxy cannot read is refused"),
            _ => assert!(body.contains("[guardrail: redacted]"), "{tool}: {body}"),
        }
    }
    let ran = peer.journal().iter().filter(|l| l["kind"] == "tool").count();
    assert_eq!(ran, 5, "the upstream really answered each");
    p.shutdown().await;
}

#[tokio::test]
async fn the_wrap_relay_watches_the_same_routes_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("p.yaml");
    std::fs::write(&cfg, format!("{ALLOW_ALL}redact: [{SECRET}]\n")).unwrap();
    let journal = dir.path().join("journal.jsonl");
    let server = format!(
        "PEER_JOURNAL={} exec python3 {} --stdio",
        journal.display(),
        peers_dir().join("hostile_server.py").display()
    );
    let argv = wrap_argv(&cfg, &server);
    let steps = ["call", "id_string", "{}", "call", "log_leak", "{}", "call", "fake_approval", "{}"];
    let lines = py_client_stdio_with(&argv, &["--elicit", "allow_once"], &steps).await;
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines {
        assert!(!line.to_string().contains(SECRET), "{line}");
    }
    assert!(text_of(&lines[0]).contains("[guardrail: redacted]"), "{}", lines[0]);
    assert!(lines[2].get("elicitations").is_none(), "the user was shown the fake form: {}", lines[2]);
    let seen = std::fs::read_to_string(&journal).unwrap();
    let replies: Vec<Value> = seen
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["kind"] == "reply")
        .collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert!(replies[0].to_string().contains("portcullis refused it"), "{replies:?}");
}

/// The words every transport answers a withheld malformed answer with.
const MALFORMED: &str = "portcullis withheld a malformed answer from upstream evil";

#[tokio::test]
async fn a_malformed_answer_is_withheld_and_its_call_answered_on_every_transport() {
    // Over HTTP: as a JSON body and as an SSE event on a stream the server keeps open. The
    // client gets an error for the call at once (not after the stream ends), never the answer,
    // and the session goes on.
    let peer = hostile();
    let p = proxy(&guarded(&peer)).await;
    let steps = ["call", "dup_id_json", "{}", "call", "dup_id_sse", "{}", "call", "id_string", "{}"];
    let lines = py_client_with(&proxy_url(&p, "evil"), "legacy", &["--timeout", "20"], &steps).await;
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines[..2] {
        assert!(!line.to_string().contains(SECRET), "{line}");
        assert_eq!(line["error"]["kind"], "jsonrpc", "{line}");
        assert!(line["error"]["message"].as_str().unwrap_or("").contains(MALFORMED), "{line}");
    }
    assert!(text_of(&lines[2]).contains("[guardrail: redacted]"), "{}", lines[2]);
    let ran: Vec<Value> = peer.journal().into_iter().filter(|l| l["kind"] == "tool").collect();
    assert_eq!(ran.len(), 3, "the upstream really sent them: {ran:?}");
    p.shutdown().await;

    // Over stdio (`wrap`): the same words, and the relay goes on.
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("p.yaml");
    std::fs::write(&cfg, format!("{ALLOW_ALL}redact: [{SECRET}]\n")).unwrap();
    let server = format!("exec python3 {} --stdio", peers_dir().join("hostile_server.py").display());
    let argv = wrap_argv(&cfg, &server);
    let steps = ["call", "dup_id", "{}", "call", "id_string", "{}"];
    let lines = py_client_stdio_with(&argv, &["--timeout", "20"], &steps).await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(!lines[0].to_string().contains(SECRET), "{}", lines[0]);
    assert!(lines[0]["error"]["message"].as_str().unwrap_or("").contains(MALFORMED), "{}", lines[0]);
    assert!(text_of(&lines[1]).contains("[guardrail: redacted]"), "{}", lines[1]);
}
