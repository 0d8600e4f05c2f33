//! OpenTelemetry traces end to end: the real binary (`portcullis serve`) with `telemetry.otlp`
//! pointing at an OTLP/HTTP receiver on loopback that decodes the protobuf it is sent; the real
//! Python SDK server as the upstream (its journal shows the trace context it received); the fake
//! checker (a real HTTP server speaking Chat Completions) for the checker's span.
//! `transports.rs`: batches, GET streams and stdio.

mod receiver;
mod transports;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::support::fake_checker::{FakeChecker, Reply};
use crate::support::{eventually, open_legacy_session, post, rpc_body, Peer, LEGACY, PATIENCE};
use receiver::{Received, Receiver};

/// An argument no span may carry.
const ARGUMENT: &str = "the-argument-text-no-span-may-carry";
const SERVER: i32 = 2;
const CLIENT: i32 = 3;

/// `portcullis serve` as a child process, killed on drop.
struct Serve {
    child: Child,
    addr: String,
    admin: String,
    _dir: tempfile::TempDir,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    fn start(yaml: &str, env: &[(&str, &str)]) -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("portcullis.yaml");
        std::fs::write(&file, yaml).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(["serve", "--config"])
            .arg(&file)
            // Export every 50 ms instead of every 5 s: the test reads what arrived.
            .env("OTEL_BSP_SCHEDULE_DELAY", "50")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let said = Arc::new(Mutex::new(String::new()));
        let log = said.clone();
        // Drained to the end: a full pipe would stop the proxy.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("portcullis listening on http://") {
                    // `ADDR (admin http://ADMIN)`
                    let mut words = rest.split(' ');
                    let addr = words.next().unwrap_or("").to_owned();
                    let admin = words.nth(1).unwrap_or("").trim_end_matches(')').to_owned();
                    let _ = tx.send((addr, admin));
                }
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let (addr, admin) = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("serve did not start; it said:\n{}", said.lock().unwrap()));
        Serve { child, addr, admin, _dir: dir }
    }
}

fn traced_config(peer: &Peer, checker: &FakeChecker, receiver: &Receiver) -> String {
    format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [\"mcp__*\"] }}\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 5s }}\n  min_content_bytes: 0\n  \
         rules: [{{ match: mcp__py__echo, phases: [pre] }}]\n\
         telemetry: {{ otlp: {{ endpoint: \"{}\", sample: 1.0 }} }}\n",
        peer.url(),
        checker.url,
        receiver.endpoint()
    )
}

fn call(id: &str, meta: Option<Value>) -> String {
    call_tool(id, "echo", json!({"message": ARGUMENT}), meta)
}

fn call_tool(id: &str, tool: &str, arguments: Value, meta: Option<Value>) -> String {
    let mut params = json!({"name": tool, "arguments": arguments});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// The spans of trace `trace`, once its exchange and `also` have arrived.
async fn trace_of(receiver: &Receiver, trace: &str, also: &[&str]) -> Vec<Received> {
    trace_named(receiver, trace, "tools/call echo", also).await
}

async fn trace_named(receiver: &Receiver, trace: &str, root: &str, also: &[&str]) -> Vec<Received> {
    eventually(&format!("the spans of trace {trace}"), || async {
        let spans: Vec<Received> = receiver.spans().into_iter().filter(|s| s.trace_id == trace).collect();
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        [root].iter().chain(also).all(|n| names.contains(n)).then_some(spans)
    })
    .await
}

fn named<'a>(spans: &'a [Received], name: &str) -> &'a Received {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name} in {spans:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_is_one_trace_from_the_callers_context_through_the_checker_to_the_upstream() {
    let receiver = Receiver::start().await;
    let peer = Peer::python("legacy");
    let checker = FakeChecker::replying(Reply::Safe).await;
    let serve = Serve::start(&traced_config(&peer, &checker, &receiver), &[]);
    let url = format!("http://{}/mcp/py", serve.addr);
    let session = open_legacy_session(&url).await;

    let (trace, parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let traceparent = format!("00-{trace}-{parent}-01");
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", LEGACY),
        ("traceparent", traceparent.as_str()),
        ("tracestate", "agent=1"),
    ];
    let (status, _, body) = post(&url, &headers, call("call-1", None)).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        rpc_body(&body)["result"]["content"][0]["text"].as_str().unwrap_or("").contains(ARGUMENT),
        "{body}"
    );

    let spans = trace_of(&receiver, trace, &["portcullis.layer1", "chat fake-judge", "POST"]).await;
    let exchange = named(&spans, "tools/call echo");
    assert_eq!((exchange.kind, exchange.parent_span_id.as_str()), (SERVER, parent), "{exchange:#?}");
    assert_eq!(exchange.service, "portcullis");
    for (key, want) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.request.id", "call-1"),
        ("network.transport", "tcp"),
        ("portcullis.upstream", "py"),
        ("http.response.status_code", "200"),
    ] {
        assert_eq!(exchange.attr(key), Some(want), "{key} in {exchange:#?}");
    }
    let hashed = exchange.attr("mcp.session.id").expect("a session digest");
    assert!(hashed.len() == 32 && hashed != session, "{hashed}");

    let layer1 = named(&spans, "portcullis.layer1");
    assert_eq!(layer1.parent_span_id, exchange.span_id);
    assert_eq!(layer1.attr("portcullis.decision"), Some("check"), "{layer1:#?}");

    let judged = named(&spans, "chat fake-judge");
    assert_eq!((judged.kind, &judged.parent_span_id), (CLIENT, &exchange.span_id), "{judged:#?}");
    assert_eq!(judged.attr("gen_ai.request.model"), Some("fake-judge"));
    assert_eq!(judged.attr("gen_ai.operation.name"), Some("chat"));
    assert_eq!(judged.attr("portcullis.checker.verdict"), Some("safe"));
    assert_eq!(judged.attr("portcullis.checker.cache"), Some("miss"));
    let input: u64 = judged.attr("gen_ai.usage.input_tokens").and_then(|t| t.parse().ok()).unwrap_or(0);
    assert!(input > 0, "the checker's token count: {judged:#?}");
    assert!(judged.attr("gen_ai.usage.output_tokens").is_some(), "{judged:#?}");

    let upstream = named(&spans, "POST");
    assert_eq!((upstream.kind, &upstream.parent_span_id), (CLIENT, &exchange.span_id), "{upstream:#?}");
    assert_eq!(upstream.attr("http.response.status_code"), Some("200"));
    assert_eq!(upstream.attr("server.address"), Some("127.0.0.1"));

    // The upstream received the upstream span's context, in its headers and in `_meta`; the
    // caller's `tracestate` goes on with the trace, as W3C Trace Context asks.
    let sent = format!("00-{trace}-{}-01", upstream.span_id);
    let received = peer
        .journal_http()
        .into_iter()
        .find(|l| l["body"]["method"] == "tools/call")
        .expect("the call reached the upstream");
    assert_eq!(received["headers"]["traceparent"], sent.as_str(), "{received}");
    assert_eq!(received["headers"]["tracestate"], "agent=1", "{received}");
    assert_eq!(received["body"]["params"]["_meta"]["traceparent"], sent.as_str(), "{received}");
    assert_eq!(received["body"]["params"]["arguments"]["message"], ARGUMENT);

    // An MCP request's own `_meta.traceparent` names the call more closely than the headers.
    let (meta_trace, meta_parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let meta = json!({"traceparent": format!("00-{meta_trace}-{meta_parent}-01"), "progressToken": 7});
    let (status, _, body) = post(&url, &headers, call("call-2", Some(meta))).await;
    assert_eq!(status, 200, "{body}");
    let spans = trace_of(&receiver, meta_trace, &["POST"]).await;
    assert_eq!(named(&spans, "tools/call echo").parent_span_id, meta_parent);
    let second =
        peer.journal_http().into_iter().filter(|l| l["body"]["method"] == "tools/call").nth(1).unwrap();
    assert_eq!(second["body"]["params"]["_meta"]["progressToken"], 7, "other _meta keys are kept: {second}");

    // Nothing the agent sent as arguments, and not the session id, is in any span.
    for s in receiver.spans() {
        for (k, v) in &s.attributes {
            assert!(!v.contains(ARGUMENT) && !v.contains(&session), "{k}={v} in {}", s.name);
        }
    }
    for (path, kind) in receiver.exports() {
        assert_eq!((path.as_str(), kind.as_str()), ("/v1/traces", "application/x-protobuf"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_for_an_operator_is_a_span_of_the_exchange_it_holds() {
    let receiver = Receiver::start().await;
    let peer = Peer::python("legacy");
    let (token_env, token) = ("PORTCULLIS_OTEL_TEST_ADMIN_TOKEN", "otel-operator-token-0123456789");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\n\
         upstreams:\n  py: {{ url: \"{}\" }}\n\
         permissions: {{ ask: [mcp__py__add] }}\napprovals: {{ channel: api, timeout: 30s }}\n\
         telemetry: {{ otlp: {{ endpoint: \"{}\" }} }}\n",
        peer.url(),
        receiver.endpoint()
    );
    let serve = Serve::start(&yaml, &[(token_env, token)]);
    let url = format!("http://{}/mcp/py", serve.addr);
    let session = open_legacy_session(&url).await;
    let trace = "5a1e0c7d2b3f4a6e8d9c0b1a2f3e4d5c";
    let traceparent = format!("00-{trace}-1111111111111111-01");
    let held = {
        let (url, session) = (url.clone(), session.clone());
        tokio::spawn(async move {
            let headers = [
                ("mcp-session-id", session.as_str()),
                ("mcp-protocol-version", LEGACY),
                ("traceparent", traceparent.as_str()),
            ];
            post(&url, &headers, call_tool("add-1", "add", json!({"a": 2, "b": 3}), None)).await
        })
    };
    let bearer = format!("Bearer {token}");
    let approvals = format!("{}/approvals", serve.admin);
    let id = eventually("the parked call", || async {
        let (status, _, body) = crate::support::get(&approvals, &[("authorization", &bearer)]).await;
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).ok()?;
        v["pending"].as_array()?.first()?["id"].as_u64()
    })
    .await;
    let decided = format!("{approvals}/{id}");
    let (status, _, body) =
        post(&decided, &[("authorization", &bearer)], r#"{"decision":"allow_once"}"#).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = held.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(rpc_body(&body)["result"]["structuredContent"]["result"], 5, "{body}");

    let spans = trace_named(&receiver, trace, "tools/call add", &["portcullis.approval", "POST"]).await;
    let exchange = named(&spans, "tools/call add");
    let wait = named(&spans, "portcullis.approval");
    assert_eq!(wait.parent_span_id, exchange.span_id, "{spans:#?}");
    assert_eq!(wait.attr("portcullis.approval.channel"), Some("api"));
    assert_eq!(wait.attr("portcullis.approval.decision"), Some("allow_once"));
    let layer1 = named(&spans, "portcullis.layer1");
    assert_eq!(
        layer1.attr("portcullis.decision"),
        Some("refuse"),
        "an ask is Layer 1's refusal a human may overrule"
    );
    assert!(layer1.attr("portcullis.rule").is_some_and(|r| r.contains("mcp__py__add")), "{layer1:#?}");
    let upstream = named(&spans, "POST");
    assert_eq!(upstream.parent_span_id, exchange.span_id, "the call goes on in the exchange's trace");
}
