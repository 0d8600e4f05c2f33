//! The whole tower stack driven in-process: `oneshot` requests over a `tower::service_fn`
//! upstream, no socket on either side. The fake upstream records what reached it, so "never
//! forwarded" is observed where it matters; the socket tests elsewhere stay the real-peer proof.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use portcullis::proxy::error::{ErrorKind, ProxyError};
use portcullis::proxy::route::Route;
use portcullis::proxy::{BoxError, Req, Resp};
use portcullis::runtime::Runtime;
use serde_json::Value;
use tower::ServiceExt;

use crate::support::config;

const POLICY: &str = "permissions:\n  allow: [\"mcp__*\"]\n  deny: [mcp__w__write_note]\n";

/// What the fake upstream does with each request it is sent.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Answers a JSON-RPC result echoing the request's id.
    Answer,
    /// Fails as the pooled client does when the server is down.
    Unreachable,
}

/// The bodies that reached the upstream, in order, with the upstream each was routed to.
type Journal = Arc<Mutex<Vec<(String, Bytes)>>>;

fn fake_upstream(
    behaviour: Behaviour,
) -> (
    Journal,
    impl tower::Service<Req, Response = Resp, Error = BoxError, Future: Send> + Clone + Send + Sync + 'static,
) {
    let journal = Journal::default();
    let seen = journal.clone();
    let svc = tower::service_fn(move |req: Req| {
        let seen = seen.clone();
        async move {
            let route =
                req.extensions().get::<Route>().map(|r| r.target.name.to_string()).unwrap_or_default();
            let body = req.into_body();
            seen.lock().unwrap().push((route.clone(), body.clone()));
            match behaviour {
                Behaviour::Unreachable => Err(Box::new(ProxyError::new(ErrorKind::Connect {
                    upstream: route,
                    source: "connection refused".into(),
                })) as BoxError),
                Behaviour::Answer => {
                    let id = serde_json::from_slice::<Value>(&body)
                        .map(|v| v["id"].clone())
                        .unwrap_or(Value::Null);
                    let answer = serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "result": { "content": [{ "type": "text", "text": "done" }] }
                    });
                    let resp = http::Response::builder()
                        .header("content-type", "application/json")
                        .body(
                            Full::new(Bytes::from(answer.to_string())).map_err(|e| match e {}).boxed_unsync(),
                        )
                        .unwrap();
                    Ok(resp)
                }
            }
        }
    });
    (journal, svc)
}

fn runtime(extra: &str) -> Runtime {
    let c = config(&[("w", "http://127.0.0.1:9/mcp")], extra);
    Runtime::new(&c, None).unwrap_or_else(|e| panic!("{e}"))
}

/// Sends one POST through a fresh stack over `upstream`; returns the status and the body as JSON.
async fn send<U>(runtime: &Runtime, upstream: U, body: impl Into<Bytes>) -> (u16, Value)
where
    U: tower::Service<Req, Response = Resp, Error = BoxError> + Clone + Send + Sync + 'static,
    U::Future: Send + 'static,
{
    let req = http::Request::post("/mcp/w")
        .header("host", format!("127.0.0.1:{}", runtime.config.listen.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .extension(portcullis::proxy::listener::Peer("127.0.0.1:40000".parse().unwrap()))
        .body(Full::new(body.into()))
        .unwrap();
    let resp = portcullis::app::proxy_over(runtime, upstream).oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (status, crate::support::rpc_body(&text))
}

#[tokio::test]
async fn an_allowed_call_reaches_the_upstream_byte_for_byte() {
    let rt = runtime(POLICY);
    let (journal, upstream) = fake_upstream(Behaviour::Answer);
    // Odd spacing, key order and an unknown field: the upstream must see exactly these bytes.
    let body = r#"{ "id":7,"jsonrpc":"2.0" ,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","n":1.50}},"x-extra":[1,2]}"#;
    let (status, v) = send(&rt, upstream, body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["id"], 7, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "done", "{v}");
    let journal = journal.lock().unwrap();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].0, "w", "routed to the named upstream");
    assert_eq!(journal[0].1, Bytes::from(body), "forwarded byte for byte");
}

#[tokio::test]
async fn a_denied_call_never_reaches_the_upstream() {
    let rt = runtime(POLICY);
    let (journal, upstream) = fake_upstream(Behaviour::Answer);
    let body = r#"{"jsonrpc":"2.0","id":"d-1","method":"tools/call","params":{"name":"write_note","arguments":{"path":"a"}}}"#;
    let (status, v) = send(&rt, upstream, body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["id"], "d-1", "{v}");
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(v.to_string().contains("mcp__w__write_note"), "the reason names the tool: {v}");
    assert!(journal.lock().unwrap().is_empty(), "the upstream saw: {:?}", journal.lock().unwrap());
    let metrics = String::from_utf8(rt.metrics.render()).unwrap();
    assert!(metrics.contains(r#"outcome="denied",tool="mcp__w__write_note",upstream="w"} 1"#), "{metrics}");
}

#[tokio::test]
async fn an_oversized_body_is_refused_with_a_clear_error_and_nothing_forwarded() {
    let rt = runtime(&format!("{POLICY}limits: {{ max_body: 1KiB }}\n"));
    let (journal, upstream) = fake_upstream(Behaviour::Answer);
    let big = "x".repeat(4096);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{big}"}}}}}}"#
    );
    let (status, v) = send(&rt, upstream, body).await;
    assert_eq!(status, 413, "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("1024-byte limit"), "{v}");
    assert!(journal.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_malformed_jsonrpc_body_gets_a_parse_error_and_nothing_forwarded() {
    let rt = runtime(POLICY);
    let (journal, upstream) = fake_upstream(Behaviour::Answer);
    let (status, v) = send(&rt, upstream, "{not json").await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert!(journal.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_unreachable_upstream_maps_to_the_error_the_real_stack_gives() {
    // The same answer `mcp_http::a_killed_upstream_yields_a_clear_jsonrpc_error_not_a_dropped_connection`
    // gets from a real, killed server: 200, -32001 naming the upstream, counted by kind.
    let rt = runtime(POLICY);
    let (journal, upstream) = fake_upstream(Behaviour::Unreachable);
    let body =
        r#"{"jsonrpc":"2.0","id":"call-9","method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let (status, v) = send(&rt, upstream, body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["id"], "call-9", "{v}");
    assert_eq!(v["error"]["code"], -32001, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("upstream w is unreachable"), "{v}");
    assert_eq!(journal.lock().unwrap().len(), 1, "the call was sent once");
    let metrics = String::from_utf8(rt.metrics.render()).unwrap();
    assert!(
        metrics.contains(r#"portcullis_upstream_errors_total{kind="connect",upstream="w"} 1"#),
        "counted by kind: {metrics}"
    );
}

/// A POST of `tools/call` id `id` to `echo` on upstream `w`, as a client on loopback sends it,
/// with `headers` added.
fn echo_call(runtime: &Runtime, id: u32, headers: &[(&str, &str)]) -> http::Request<Full<Bytes>> {
    let mut req = http::Request::post("/mcp/w")
        .header("host", format!("127.0.0.1:{}", runtime.config.listen.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .extension(portcullis::proxy::listener::Peer("127.0.0.1:40000".parse().unwrap()));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.body(Full::new(Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{}}}}}}"#
    ))))
    .unwrap()
}

#[tokio::test]
async fn beyond_max_pending_a_parked_mcp_ask_is_refused_at_once_and_nothing_is_forwarded() {
    let extra = "permissions:\n  ask: [mcp__w__echo]\napprovals: { channel: api, max_pending: 1 }\n";
    let c = config(&[("w", "http://127.0.0.1:9/mcp")], extra);
    let rt = Runtime::new(&c, Some("operator-token".into())).unwrap_or_else(|e| panic!("{e}"));
    let (journal, upstream) = fake_upstream(Behaviour::Answer);
    let post = |id: u32| echo_call(&rt, id, &[]);
    let stack = portcullis::app::proxy_over(&rt, upstream);
    // The first ask is parked: its stream stays open while it waits for an operator.
    let parked = stack.clone().oneshot(post(1)).await.unwrap();
    assert_eq!(parked.status(), 200);
    crate::support::eventually("the first ask is parked", || async {
        (rt.shared.approvals.pending.list().len() == 1).then_some(())
    })
    .await;
    // The second finds every parking permit taken: refused now, its stream ended.
    let refused = stack.clone().oneshot(post(2)).await.unwrap();
    let bytes = refused.into_body().collect().await.unwrap().to_bytes();
    let v = crate::support::rpc_body(&String::from_utf8_lossy(&bytes));
    assert_eq!(v["id"], 2, "{v}");
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(v.to_string().contains("approvals.max_pending"), "{v}");
    assert!(journal.lock().unwrap().is_empty(), "nothing reached the upstream");
    let metrics = String::from_utf8(rt.metrics.render()).unwrap();
    assert!(metrics.contains(r#"outcome="ask_refused",tool="mcp__w__echo",upstream="w"} 1"#), "{metrics}");
    drop(parked);
}

#[tokio::test]
async fn asks_parked_for_the_users_elicitation_are_bounded_by_max_pending_too() {
    // Elicitation asks used to park without limit: only operator asks had a table with a cap.
    let extra = "permissions:\n  ask: [mcp__w__echo]\napprovals: { channel: elicitation, max_pending: 1 }\n";
    let c = config(&[("w", "http://127.0.0.1:9/mcp")], extra);
    let rt = Runtime::new(&c, None).unwrap_or_else(|e| panic!("{e}"));
    // A session whose client declared it can elicit (as its initialize would have recorded).
    rt.shared.sessions.record("s-1", portcullis::mcp::era::Version::V2025_06_18, true);
    let (journal, upstream) = fake_upstream(Behaviour::Answer);
    let post =
        |id: u32| echo_call(&rt, id, &[("mcp-session-id", "s-1"), ("mcp-protocol-version", "2025-06-18")]);
    let stack = portcullis::app::proxy_over(&rt, upstream);
    let mut parked = stack.clone().oneshot(post(1)).await.unwrap().into_body();
    let first = parked.frame().await.expect("an event").expect("data").into_data().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("elicitation/create"), "the user is asked first");
    let refused = stack.clone().oneshot(post(2)).await.unwrap();
    let collect = refused.into_body().collect();
    let bytes = tokio::time::timeout(std::time::Duration::from_secs(30), collect)
        .await
        .expect("the second ask is answered at once, not parked")
        .unwrap()
        .to_bytes();
    let v = crate::support::rpc_body(&String::from_utf8_lossy(&bytes));
    assert_eq!(v["id"], 2, "{v}");
    assert!(v.to_string().contains("approvals.max_pending"), "{v}");
    assert!(journal.lock().unwrap().is_empty(), "nothing reached the upstream");
    drop(parked);
}
