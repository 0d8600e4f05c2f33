//! A span for every exchange on every transport, as the OTLP receiver got them: a JSON-RPC batch
//! (server-everything, the one revision with batches), a GET stream and a server request judged
//! on it (the hostile server's `sampling_on_get`), and `portcullis wrap` over the Python SDK's
//! stdio server (`tee` records what the server read), and a plain HTTP tool call with a key in
//! its query.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

use super::receiver::{Received, Receiver};
use super::{call, named, trace_named, Serve, ARGUMENT, CLIENT, SERVER};
use crate::support::{peers_dir, post, Peer, ALLOW_ALL, LEGACY};

const MARKER: &str = "INJECTED-SECRET-4242";

fn otlp(receiver: &Receiver) -> String {
    format!("telemetry: {{ otlp: {{ endpoint: \"{}\", sample: 1.0 }} }}\n", receiver.endpoint())
}

fn serve(upstream: &str, peer: &Peer, extra: &str) -> Serve {
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams:\n  {upstream}: {{ url: \"{}\" }}\n\
         {ALLOW_ALL}{extra}",
        peer.url()
    );
    Serve::start(&yaml, &[])
}

/// Opens a session at protocol `version`; returns its `Mcp-Session-Id`.
async fn open_session(url: &str, version: &str) -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, headers, body) = post(url, &[], init.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string();
    let (status, _, body) =
        post(url, &[("mcp-session-id", &session), ("mcp-protocol-version", version)], done).await;
    assert!(status == 202 || status == 200, "{status} {body}");
    session
}

/// No attribute of any span carries an argument, the marker or the session id.
fn nothing_secret(spans: &[Received], secrets: &[&str]) {
    for s in spans {
        for (k, v) in &s.attributes {
            for secret in secrets {
                assert!(!v.contains(secret), "{k}={v} in {}", s.name);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_one_span_with_an_mcp_span_per_member_under_the_parent_each_names() {
    let receiver = Receiver::start().await;
    let peer = Peer::everything();
    let serve = serve("ev", &peer, &otlp(&receiver));
    let url = format!("http://{}/mcp/ev", serve.addr);
    let version = "2025-03-26";
    let session = open_session(&url, version).await;

    let (trace, parent) = ("1f2e3d4c5b6a79881f2e3d4c5b6a7988", "a1b2c3d4e5f60718");
    let (meta_trace, meta_parent) = ("77777777777777778888888888888888", "0102030405060708");
    let traceparent = format!("00-{trace}-{parent}-01");
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", version),
        ("traceparent", &traceparent),
    ];
    let meta = json!({"traceparent": format!("00-{meta_trace}-{meta_parent}-01")});
    let batch = format!("[{},{}]", call("b-1", None), call("b-2", Some(meta)));
    let (status, _, body) = post(&url, &headers, batch).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.matches(&format!("Echo: {ARGUMENT}")).count(), 2, "both members answered: {body}");

    let spans =
        trace_named(&receiver, trace, "batch", &["tools/call echo", "portcullis.layer1", "POST"]).await;
    let batch = named(&spans, "batch");
    assert_eq!((batch.kind, batch.parent_span_id.as_str()), (SERVER, parent), "{batch:#?}");
    for (key, want) in [
        ("portcullis.batch.size", "2"),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
        ("portcullis.upstream", "ev"),
        ("http.response.status_code", "200"),
    ] {
        assert_eq!(batch.attr(key), Some(want), "{key} in {batch:#?}");
    }
    // The member without a context of its own is the batch's child.
    let first = named(&spans, "tools/call echo");
    assert_eq!((first.kind, &first.parent_span_id), (SERVER, &batch.span_id), "{first:#?}");
    assert_eq!(first.attr("jsonrpc.request.id"), Some("b-1"));
    assert_eq!(first.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(first.attr("mcp.session.id"), batch.attr("mcp.session.id"));
    // One decision (all forwarded or none) and one upstream call: they hang off the batch.
    let layer1: Vec<&Received> = spans.iter().filter(|s| s.name == "portcullis.layer1").collect();
    assert_eq!(layer1.len(), 2, "{spans:#?}");
    assert!(layer1.iter().all(|l| l.parent_span_id == batch.span_id), "{layer1:#?}");
    let upstream = named(&spans, "POST");
    assert_eq!((upstream.kind, &upstream.parent_span_id), (CLIENT, &batch.span_id), "{upstream:#?}");
    // So does the session's opening: its upstream call is the `initialize` span's child.
    let init = named(&receiver.spans(), "initialize").clone();
    let opened = crate::support::eventually("initialize's upstream call", || async {
        receiver.spans().into_iter().find(|s| s.name == "POST" && s.parent_span_id == init.span_id)
    })
    .await;
    assert_eq!(opened.trace_id, init.trace_id);

    // The member that names its parent in `_meta` is that parent's child, linked to the batch.
    let theirs = trace_named(&receiver, meta_trace, "tools/call echo", &[]).await;
    let second = named(&theirs, "tools/call echo");
    assert_eq!(second.parent_span_id, meta_parent, "{second:#?}");
    assert_eq!(second.attr("jsonrpc.request.id"), Some("b-2"));
    assert_eq!(second.links, vec![(trace.to_owned(), batch.span_id.clone())], "{second:#?}");

    nothing_secret(&receiver.spans(), &[ARGUMENT, &session]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_is_a_span_and_a_server_request_judged_on_it_is_its_child() {
    let receiver = Receiver::start().await;
    let peer = Peer::start("python3", &["hostile_server.py"]);
    let serve = serve("evil", &peer, &format!("redact: [{MARKER}]\n{}", otlp(&receiver)));
    let url = format!("http://{}/mcp/evil", serve.addr);
    let session = crate::support::open_legacy_session(&url).await;

    let (trace, parent) = ("2a2a2a2a2a2a2a2a3b3b3b3b3b3b3b3b", "4c4c4c4c4c4c4c4c");
    let traceparent = format!("00-{trace}-{parent}-01");
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Empty<bytes::Bytes>>();
    let get = http::Request::get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", LEGACY)
        .header("traceparent", &traceparent)
        .body(http_body_util::Empty::new())
        .unwrap();
    // Held open while the server sends on it.
    let stream = client.request(get).await.unwrap();
    assert_eq!(stream.status(), 200);

    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    let ask = json!({"jsonrpc":"2.0","id":"s-1","method":"tools/call","params":{"name":"sampling_on_get","arguments":{}}});
    let (status, _, body) = post(&url, &headers, ask.to_string()).await;
    assert_eq!(status, 200, "{body}");

    // The stream's span lasts as long as the stream: it ends once the client hangs up.
    let judged = trace_named(&receiver, trace, "sampling/createMessage", &[]).await;
    let judged = named(&judged, "sampling/createMessage").clone();
    drop(stream);
    let spans = crate::support::eventually("the stream's span", || async {
        let spans: Vec<Received> = receiver.spans().into_iter().filter(|s| s.trace_id == trace).collect();
        spans.iter().any(|s| s.name == "GET" && s.kind == SERVER).then_some(spans)
    })
    .await;
    let opened = spans.iter().find(|s| s.name == "GET" && s.kind == SERVER).expect("the stream's span");
    assert_eq!(opened.parent_span_id, parent, "{opened:#?}");
    for (key, want) in [
        ("http.request.method", "GET"),
        ("network.transport", "tcp"),
        ("portcullis.upstream", "evil"),
        ("http.response.status_code", "200"),
    ] {
        assert_eq!(opened.attr(key), Some(want), "{key} in {opened:#?}");
    }
    assert!(opened.attr("mcp.session.id").is_some_and(|h| h.len() == 32 && h != session));
    let upstream = spans.iter().find(|s| s.name == "GET" && s.kind == CLIENT).expect("the upstream GET");
    assert_eq!(upstream.parent_span_id, opened.span_id);
    assert_eq!((judged.kind, &judged.parent_span_id), (SERVER, &opened.span_id), "{judged:#?}");
    assert_eq!(judged.attr("mcp.method.name"), Some("sampling/createMessage"));
    assert!(
        judged.attr("jsonrpc.request.id").is_some_and(|id| id.starts_with("hostile-get-")),
        "{judged:#?}"
    );
    assert!(matches!(judged.attr("portcullis.decision"), Some("allow" | "refuse")), "{judged:#?}");

    nothing_secret(&receiver.spans(), &[MARKER, &session]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_relayed_over_stdio_is_a_pipe_span_under_the_parent_in_its_meta() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("portcullis.yaml");
    std::fs::write(&config, format!("permissions: {{ allow: [\"mcp__py__*\"] }}\n{}", otlp(&receiver)))
        .unwrap();
    let read = dir.path().join("server-stdin.jsonl");
    let server = peers_dir().join("py_server.py");
    // `tee` records exactly what the server read on its stdin.
    let script = format!("tee -a '{}' | exec python3 '{}' --stdio", read.display(), server.display());
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["wrap", "--config"])
        .arg(&config)
        .args(["--name", "py", "--", "sh", "-c", &script])
        .env("PORTCULLIS_LOG", "warn")
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    assert!(exchange(&mut stdin, &mut lines, init).await.is_some_and(|a| a["result"].is_object()));
    exchange(&mut stdin, &mut lines, json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await;
    let (trace, parent) = ("5e5e5e5e5e5e5e5e6f6f6f6f6f6f6f6f", "7a7a7a7a7a7a7a7a");
    let meta = json!({"traceparent": format!("00-{trace}-{parent}-01"), "progressToken": "p-1"});
    let called: Value = serde_json::from_str(&call("7", Some(meta))).unwrap();
    let answer = exchange(&mut stdin, &mut lines, called).await.expect("an answer");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap_or("").contains(ARGUMENT), "{answer}");
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status:?}");

    let spans = trace_named(&receiver, trace, "tools/call echo", &["portcullis.layer1"]).await;
    let exchange = named(&spans, "tools/call echo");
    assert_eq!((exchange.kind, exchange.parent_span_id.as_str()), (SERVER, parent), "{exchange:#?}");
    for (key, want) in [
        ("network.transport", "pipe"),
        ("mcp.method.name", "tools/call"),
        ("jsonrpc.request.id", "7"),
        ("gen_ai.tool.name", "echo"),
        ("portcullis.upstream", "py"),
    ] {
        assert_eq!(exchange.attr(key), Some(want), "{key} in {exchange:#?}");
    }
    assert_eq!(exchange.attr("network.protocol.name"), None, "stdio is no HTTP");
    assert_eq!(named(&spans, "portcullis.layer1").parent_span_id, exchange.span_id);
    // The initialize before it: a span of its own, a trace of its own.
    assert!(receiver
        .spans()
        .iter()
        .any(|s| s.name == "initialize" && s.attr("network.transport") == Some("pipe")));

    // The server read the exchange's context in `_meta`, every other key kept.
    let read = std::fs::read_to_string(&read).unwrap();
    let sent: Value = read
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == "7")
        .unwrap_or_else(|| panic!("the call reached the server: {read}"));
    let want = format!("00-{trace}-{}-01", exchange.span_id);
    assert_eq!(sent["params"]["_meta"]["traceparent"], want.as_str(), "{sent}");
    assert_eq!(sent["params"]["_meta"]["progressToken"], "p-1", "{sent}");
    assert_eq!(sent["params"]["arguments"]["message"], ARGUMENT);

    nothing_secret(&receiver.spans(), &[ARGUMENT]);
}

/// Writes `msg` to wrap's stdin; for a request, the next response wrap writes.
async fn exchange(
    stdin: &mut ChildStdin,
    lines: &mut Lines<BufReader<ChildStdout>>,
    msg: Value,
) -> Option<Value> {
    stdin.write_all(format!("{msg}\n").as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
    msg.get("id")?;
    loop {
        let line =
            tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap()?;
        let v: Value = serde_json::from_str(&line).unwrap();
        if v.get("method").is_none() {
            return Some(v);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_tool_call_is_a_span_named_for_its_path_never_its_query() {
    let receiver = Receiver::start().await;
    let peer = Peer::start("python3", &["hostile_server.py"]);
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams:\n  web: {{ url: \"http://127.0.0.1:{}/http\" }}\n\
         {ALLOW_ALL}{}",
        peer.port,
        otlp(&receiver)
    );
    let serve = Serve::start(&yaml, &[]);
    let (trace, parent) = ("6d6d6d6d6d6d6d6d7e7e7e7e7e7e7e7e", "8f8f8f8f8f8f8f8f");
    let traceparent = format!("00-{trace}-{parent}-01");
    let key = "query-key-no-span-may-carry-0123";
    let url = format!("http://{}/http/web/clean?key={key}", serve.addr);
    let (status, _, body) = post(&url, &[("traceparent", &traceparent)], "{}").await;
    assert_eq!(status, 200, "{body}");

    let spans = crate::support::eventually("the call's server and client spans", || async {
        let all: Vec<Received> = receiver.spans().into_iter().filter(|s| s.trace_id == trace).collect();
        (all.iter().any(|s| s.kind == SERVER) && all.iter().any(|s| s.kind == CLIENT)).then_some(all)
    })
    .await;
    let exchange = spans.iter().find(|s| s.kind == SERVER).unwrap();
    assert!(exchange.name.starts_with("POST ") && exchange.name.ends_with("clean"), "{exchange:#?}");
    assert_eq!(exchange.parent_span_id, parent);
    assert_eq!(exchange.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(exchange.attr("portcullis.upstream"), Some("web"));
    assert_eq!(exchange.attr("http.response.status_code"), Some("200"));
    let upstream = spans.iter().find(|s| s.kind == CLIENT).unwrap();
    assert_eq!((upstream.name.as_str(), &upstream.parent_span_id), ("POST", &exchange.span_id));
    assert_eq!(upstream.attr("server.address"), Some("127.0.0.1"));
    nothing_secret(&spans, &[key]);
}
