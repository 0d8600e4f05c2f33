//! Limits and lifecycle: graceful shutdown drains in-flight calls; the admin listener serves
//! metrics and health.

use crate::support::*;

#[tokio::test]
async fn graceful_shutdown_drains_an_in_flight_call() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], ALLOW_ALL)).await;
    let url = proxy_url(&p, "py");
    let admin = p.admin_addr;
    let client = tokio::spawn(async move {
        py_client(&url, "legacy", &["list", "call-progress", "slow", r#"{"steps":8}"#]).await
    });
    // Shut down once the slow call is running upstream (its journal line appears), not on a timer.
    let peer_ref = &peer;
    crate::support::eventually("the slow call to start upstream", || async move {
        peer_ref.tools_run().iter().any(|t| t == "slow").then_some(())
    })
    .await;
    p.shutdown().await;
    let out = client.await.unwrap();
    assert_eq!(text_of(&out[1]), "done", "the in-flight call finished: {}", out[1]);
    assert!(tokio::net::TcpStream::connect(admin).await.is_err(), "listeners are closed after shutdown");
}

#[tokio::test]
async fn admin_listener_serves_metrics_and_health() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], ALLOW_ALL)).await;
    py_client(&proxy_url(&p, "py"), "legacy", &["list", "call", "echo", r#"{"message":"m"}"#]).await;
    let get = |path: &'static str| {
        let addr = p.admin_addr;
        async move {
            use http_body_util::BodyExt;
            let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<http_body_util::Empty<bytes::Bytes>>();
            let resp = client.get(format!("http://{addr}{path}").parse().unwrap()).await.unwrap();
            let status = resp.status().as_u16();
            (
                status,
                String::from_utf8(resp.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap(),
            )
        }
    };
    let (status, metrics) = get("/metrics").await;
    assert_eq!(status, 200);
    for name in [
        r#"portcullis_tool_calls_total{outcome="forwarded",tool="mcp__py__echo",upstream="py"} 1"#,
        "portcullis_upstream_latency_seconds_bucket{upstream=\"py\"",
        "portcullis_proxy_overhead_seconds_count",
    ] {
        assert!(metrics.contains(name), "missing {name} in\n{metrics}");
    }
    assert_eq!(get("/healthz").await.0, 200);
    assert_eq!(get("/readyz").await.0, 200);
    assert_eq!(get("/nope").await.0, 404);
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let p = proxy(&config(&[], "limits: { client_header_timeout: 200ms }\n")).await;
    let mut s = tokio::net::TcpStream::connect(p.addr).await.unwrap();
    s.write_all(b"POST /mcp/x HTTP/1.1\r\nHost: a\r\n").await.unwrap();
    let mut buf = Vec::new();
    // The proxy closes the connection (possibly after a 408); reading to EOF proves it.
    let read = tokio::time::timeout(std::time::Duration::from_secs(30), s.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the slow client was cut off");
}

#[tokio::test]
async fn an_upstream_that_never_answers_times_out_with_a_jsonrpc_error() {
    // A real socket that accepts and reads but never responds.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let p =
        proxy(&config(&[("slow", &url)], &format!("{ALLOW_ALL}limits: {{ header_timeout: 300ms }}\n"))).await;
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{}}}"#;
    let (status, _, text) = post(&proxy_url(&p, "slow"), &[], body).await;
    assert_eq!(status, 200, "{text}");
    let v = rpc_body(&text);
    assert_eq!(v["id"], 3);
    assert_eq!(v["error"]["code"], -32002, "{text}");
}

#[tokio::test]
async fn h2c_clients_are_served() {
    use http_body_util::{BodyExt, Full};
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], ALLOW_ALL)).await;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http::<Full<bytes::Bytes>>();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"h2","version":"1"}}}"#;
    let req = http::Request::post(proxy_url(&p, "py"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(bytes::Bytes::from(init)))
        .unwrap();
    let resp = client.request(req).await.unwrap();
    assert_eq!(resp.version(), http::Version::HTTP_2);
    assert_eq!(resp.status(), 200);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let v = rpc_body(&String::from_utf8_lossy(&body));
    assert!(v["result"]["protocolVersion"].is_string(), "{v}");
}

#[tokio::test]
async fn readyz_names_an_unreachable_upstream_and_strict_readiness_fails_on_it() {
    let peer = Peer::python("legacy");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let p = proxy(&config(&[("py", &peer.url()), ("gone", &dead)], ALLOW_ALL)).await;
    let get = |path: &'static str| {
        let addr = p.admin_addr;
        async move {
            use http_body_util::BodyExt;
            let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<http_body_util::Empty<bytes::Bytes>>();
            let resp = client.get(format!("http://{addr}{path}").parse().unwrap()).await.unwrap();
            let status = resp.status().as_u16();
            (
                status,
                String::from_utf8(resp.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap(),
            )
        }
    };
    let (status, body) = get("/readyz").await;
    assert_eq!(status, 200, "one dead tool server does not take the proxy out of rotation: {body}");
    assert!(body.starts_with("ready\n"), "{body}");
    assert!(body.contains("upstream gone (127.0.0.1:") && body.contains("is unreachable"), "{body}");
    assert!(!body.contains("upstream py"), "the live upstream is not listed: {body}");
    let (status, body) = get("/readyz?strict").await;
    assert_eq!(status, 503, "{body}");
}
