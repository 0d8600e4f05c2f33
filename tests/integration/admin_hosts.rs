//! DNS-rebinding protection on the admin listener: `/metrics`, `/healthz`, `/readyz` and the
//! approvals API answer only allowed `Host` and `Origin` names, as the agent listener does, and a
//! scraper that names the listener's address (and sends no `Origin`) is served as before.

use crate::support::*;

#[tokio::test]
async fn the_admin_listener_refuses_a_rebinding_page_and_still_serves_its_scraper() {
    let env = "PORTCULLIS_TEST_ADMIN_TOKEN_HOSTS";
    std::env::set_var(env, "hosts-operator-token");
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n{ALLOW_ALL}",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let admin = p.admin_addr;
    let operator = ("authorization", "Bearer hosts-operator-token");
    for path in ["/metrics", "/healthz", "/readyz", "/status", "/approvals"] {
        let url = format!("http://{admin}{path}");
        for headers in [
            &[("host", "evil.example"), operator][..],
            &[("host", "evil.example"), ("origin", "http://evil.example"), operator][..],
            &[("origin", "http://evil.example"), operator][..],
            &[("origin", "null"), operator][..],
        ] {
            let (status, _, body) = get(&url, headers).await;
            assert_eq!(status, 403, "{path} {headers:?}: {body}");
            assert!(body.contains("allowed_hosts"), "{path}: {body}");
            assert!(!body.contains("portcullis_"), "{path}: no metric leaks: {body}");
        }
        // A scraper or probe (no Origin, the listener's address as Host) and a loopback page.
        let local = format!("http://localhost:{}", admin.port());
        for headers in [&[operator][..], &[("origin", local.as_str()), operator][..]] {
            let (status, _, body) = get(&url, headers).await;
            assert_eq!(status, 200, "{path} {headers:?}: {body}");
        }
    }
    let (_, _, metrics) = get(&format!("http://{admin}/metrics"), &[]).await;
    assert!(metrics.contains("portcullis_"), "{metrics}");
    p.shutdown().await;
}
