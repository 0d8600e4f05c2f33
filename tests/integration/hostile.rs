//! A hostile (or broken) MCP upstream — a real HTTP server on a socket sending canned answers —
//! must never get an uninspected result past the post gate.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use tokio::net::TcpListener;

use crate::support::*;

/// Serves one canned answer to every request.
async fn canned(content_type: &'static str, encoding: Option<&'static str>, body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    move |_req: http::Request<hyper::body::Incoming>| async move {
                        let mut b = http::Response::builder().header("content-type", content_type);
                        if let Some(e) = encoding {
                            b = b.header("content-encoding", e);
                        }
                        Ok::<_, Infallible>(b.body(Full::new(Bytes::from_static(body.as_bytes()))).unwrap())
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    url
}

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{}}}"#;

#[tokio::test]
async fn hostile_upstream_answers_never_leak_an_uninspected_result() {
    let cases: &[(&str, &'static str, Option<&'static str>, &'static str)] = &[
        ("duplicate id keys", "application/json", None, r#"{"jsonrpc":"2.0","id":1,"id":1,"result":{"content":[{"type":"text","text":"TOPSECRET-1234"}]}}"#),
        ("id spelled 1.0", "application/json", None, r#"{"jsonrpc":"2.0","id":1.0,"result":{"content":[{"type":"text","text":"TOPSECRET-1234"}]}}"#),
        ("claims gzip", "application/json", Some("gzip"), r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"TOPSECRET-1234"}]}}"#),
        ("odd content type", "text/plain", None, r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"TOPSECRET-1234"}]}}"#),
        ("secret in an error", "application/json", None, r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"TOPSECRET-1234"}}"#),
        ("sse without the final blank line", "text/event-stream", None, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"TOPSECRET-1234\"}]}}"),
        ("sse with a malformed twin", "text/event-stream", None, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"id\":1,\"result\":{\"t\":\"TOPSECRET-1234\"}}\n\n"),
        ("sse cr line endings", "text/event-stream", None, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"TOPSECRET-1234\"}}\r\r"),
    ];
    for (what, ct, enc, body) in cases {
        let url = canned(ct, *enc, body).await;
        let p = proxy(&config(&[("evil", &url)], &format!("{ALLOW_ALL}redact: [TOPSECRET-1234]\n"))).await;
        let (_, _, text) = post(&proxy_url(&p, "evil"), &[], CALL).await;
        assert!(!text.contains("TOPSECRET-1234"), "{what}: leaked: {text}");
        p.shutdown().await;
    }
}
