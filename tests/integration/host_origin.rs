//! DNS-rebinding protection: the agent listener answers only allowed `Host` and `Origin` names
//! (the MCP conformance scenario `dns-rebinding-protection`, spelled as a browser would).

use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}"#;

#[tokio::test]
async fn a_rebound_host_or_a_foreign_origin_is_refused_before_the_upstream_sees_it() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], ALLOW_ALL)).await;
    let url = proxy_url(&p, "py");
    let http = format!("http://{}/http/py/anything", p.addr);
    for (headers, target) in [
        (&[("host", "evil.example.com"), ("origin", "http://evil.example.com")][..], &url),
        (&[("host", "evil.example.com")][..], &url),
        (&[("origin", "http://evil.example.com")][..], &url),
        (&[("origin", "null")][..], &url),
        (&[("origin", "http://localhost.evil.example.com")][..], &url),
        (&[("host", "evil.example.com"), ("origin", "http://evil.example.com")][..], &http),
    ] {
        let (status, _, body) = post(target, headers, INIT).await;
        assert_eq!(status, 403, "{headers:?}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], -32600, "{body}");
        assert!(v["error"]["message"].as_str().unwrap().contains("allowed_hosts"), "{body}");
    }
    assert!(peer.journal_http().is_empty(), "the upstream saw nothing: {:?}", peer.journal_http());

    // A loopback page, or a client that sends no Origin, is served.
    let local = format!("http://localhost:{}", p.addr.port());
    let (status, _, body) = post(&url, &[("origin", &local)], INIT).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = post(&url, &[], INIT).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(peer.journal_http().len(), 2);
}

#[tokio::test]
async fn a_configured_name_is_served_and_loopback_then_only_at_the_listen_address() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}allowed_hosts: [agent.internal]\n")))
        .await;
    let url = proxy_url(&p, "py");
    let (status, _, body) =
        post(&url, &[("host", "agent.internal"), ("origin", "https://agent.internal")], INIT).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = post(&url, &[("host", "localhost:1")], INIT).await;
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = post(&url, &[], INIT).await;
    assert_eq!(status, 200, "the address the proxy listens on: {body}");
    assert_eq!(peer.journal_http().len(), 2);
}
