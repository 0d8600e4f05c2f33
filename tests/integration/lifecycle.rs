//! Limits and lifecycle: graceful shutdown drains in-flight calls; the admin listener serves
//! metrics and health.

use crate::support::*;

#[tokio::test]
async fn graceful_shutdown_drains_an_in_flight_call() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], "")).await;
    let url = proxy_url(&p, "py");
    let admin = p.admin_addr;
    let client = tokio::spawn(async move {
        py_client(
            &url,
            "legacy",
            &["list", "call-progress", "slow", r#"{"steps":8}"#],
        )
        .await
    });
    // Shut down once the slow call is running upstream (its journal line appears), not on a timer.
    for _ in 0..600 {
        if peer.tools_run().iter().any(|t| t == "slow") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(
        peer.tools_run().iter().any(|t| t == "slow"),
        "the slow call started"
    );
    p.shutdown().await;
    let out = client.await.unwrap();
    assert_eq!(
        text_of(&out[1]),
        "done",
        "the in-flight call finished: {}",
        out[1]
    );
    assert!(
        tokio::net::TcpStream::connect(admin).await.is_err(),
        "listeners are closed after shutdown"
    );
}

#[tokio::test]
async fn admin_listener_serves_metrics_and_health() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], "")).await;
    py_client(
        &proxy_url(&p, "py"),
        "legacy",
        &["list", "call", "echo", r#"{"message":"m"}"#],
    )
    .await;
    let get = |path: &'static str| {
        let addr = p.admin_addr;
        async move {
            use http_body_util::BodyExt;
            let client =
                hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                    .build_http::<http_body_util::Empty<bytes::Bytes>>();
            let resp = client
                .get(format!("http://{addr}{path}").parse().unwrap())
                .await
                .unwrap();
            let status = resp.status().as_u16();
            (
                status,
                String::from_utf8(
                    resp.into_body()
                        .collect()
                        .await
                        .unwrap()
                        .to_bytes()
                        .to_vec(),
                )
                .unwrap(),
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
