//! Reader differentials: a hostile upstream (tests/peers/hostile_server.py) sends bytes the
//! proxy could read one way and a client another — a response with both `result` and `error`,
//! an SSE stream opening with a byte-order mark, a server message naming `params` twice. What
//! the proxy cannot read as one message is never released unjudged; the client is the official
//! Python SDK, or raw HTTP where the SDK would not read the bytes (the TS SDK would).

use serde_json::Value;

use crate::support::*;

const SECRET: &str = "INJECTED-SECRET-4242";

fn guarded(peer: &Peer) -> portcullis::config::Config {
    config(&[("evil", &peer.url())], &format!("{ALLOW_ALL}redact: [{SECRET}]\n"))
}

#[tokio::test]
async fn a_response_with_both_a_result_and_an_error_never_reaches_the_client_unjudged() {
    let peer = Peer::start("python3", &["hostile_server.py"]);
    let p = proxy(&guarded(&peer)).await;
    let lines = py_client(&proxy_url(&p, "evil"), "legacy", &["call", "result_and_error", "{}"]).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    // The SDK raises the error's message (an agent shows it its model); the proxy must not have
    // judged the clean result beside it and released the injection.
    assert!(!lines[0].to_string().contains(SECRET), "the error beside the result leaked: {}", lines[0]);
    assert!(peer.journal().iter().any(|l| l["kind"] == "tool" && l["tool"] == "result_and_error"));
    p.shutdown().await;
}

#[tokio::test]
async fn an_sse_stream_opening_with_a_byte_order_mark_is_read_as_the_client_reads_it() {
    // WHATWG's decoder (the TS SDK's TextDecoderStream and eventsource-parser) drops a leading
    // BOM and reads the event after it; a framer that does not sees a field named "\u{feff}data".
    let peer = Peer::start("python3", &["hostile_server.py"]);
    let p = proxy(&guarded(&peer)).await;
    let url = proxy_url(&p, "evil");
    let session = open_legacy_session(&url).await;
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bom_sse","arguments":{}}}"#;
    let (_, _, body) = post(&url, &headers, call).await;
    assert!(!body.contains(SECRET), "released unread: {body:?}");
    assert!(peer.journal().iter().any(|l| l["kind"] == "tool" && l["tool"] == "bom_sse"));
    p.shutdown().await;
}

#[tokio::test]
async fn a_server_message_naming_a_key_twice_is_not_relayed_unjudged_on_the_get_stream() {
    // The SDKs' JSON parsers keep the last `params`; the proxy's envelope refuses duplicate keys,
    // so it cannot judge the message — and nothing is watched on the GET stream to withhold it for.
    let peer = Peer::start("python3", &["hostile_server.py"]);
    let p = proxy(&guarded(&peer)).await;
    let steps = ["call", "dup_params_get", "{}", "call", "clean", "{}", "call", "clean", "{}"];
    let lines = py_client(&proxy_url(&p, "evil"), "legacy", &steps).await;
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines {
        assert!(!line.to_string().contains(SECRET), "the client read the unjudged log: {line}");
    }
    let sent: Vec<Value> = peer.journal().into_iter().filter(|l| l["kind"] == "tool").collect();
    assert!(sent.iter().any(|l| l["tool"] == "dup_params_get"), "{sent:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_get_stream_labelled_as_another_type_is_still_judged_as_the_event_stream_a_client_reads() {
    // The TS SDK checks a GET's status, never its content type: `application/json` holding SSE
    // events is read event by event.
    let peer = Peer::start("python3", &["hostile_server.py", "--get-json"]);
    let p = proxy(&guarded(&peer)).await;
    let url = proxy_url(&p, "evil");
    let session = open_legacy_session(&url).await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", LEGACY),
        ("accept", "text/event-stream"),
    ];
    let (status, _, body) = get(&url, &headers).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(SECRET), "relayed unjudged: {body:?}");
    assert!(body.contains("[guardrail: redacted]"), "judged as the client reads it: {body:?}");
    assert!(peer.journal().iter().any(|l| l["kind"] == "http" && l["method"] == "GET"));
    p.shutdown().await;
}

#[tokio::test]
async fn answers_to_requests_no_route_names_are_judged_initialize_instructions_and_a_cancelled_task() {
    // `initialize`'s `instructions` go into the client's model context (Claude Code puts them in
    // its system prompt); `tasks/cancel` answers with the task and its `statusMessage`.
    let peer = Peer::start("python3", &["hostile_server.py", "--instructions"]);
    let p = proxy(&guarded(&peer)).await;
    let url = proxy_url(&p, "evil");
    let init = serde_json::json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, headers, body) = post(&url, &[], init.to_string()).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(SECRET), "the instructions reached the client unjudged: {body}");
    assert_eq!(rpc_body(&body)["result"]["protocolVersion"], LEGACY, "the session still opens: {body}");
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    let cancel = r#"{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":"t-1"}}"#;
    let (_, _, body) = post(&url, &headers, cancel).await;
    assert!(!body.contains(SECRET), "the cancelled task's message reached the client unjudged: {body}");
    assert!(body.contains("[guardrail: redacted]"), "{body}");
    p.shutdown().await;
}
