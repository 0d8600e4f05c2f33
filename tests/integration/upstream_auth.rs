//! `upstreams.NAME.auth` against real peers on loopback: what `Authorization` each upstream
//! actually received in each mode, what the agent sees, and how bad peers are answered.

use std::time::Duration;

use portcullis::config::Config;

use crate::support::oauth_peers::{Issue, Metadata, Protected, TokenEndpoint};
use crate::support::*;

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{}}}"#;

/// A config on port 0 with `upstreams` given as `(name, url, auth YAML)`.
fn config_with(upstreams: &[(&str, &str, &str)]) -> Config {
    let mut yaml = String::from("listen: 127.0.0.1:0\nadmin: { listen: 127.0.0.1:0 }\nupstreams:\n");
    for (name, url, auth) in upstreams {
        yaml.push_str(&format!("  {name}: {{ url: \"{url}\", auth: {auth} }}\n"));
    }
    yaml.push_str(ALLOW_ALL);
    Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))
}

async fn get(url: &str) -> (u16, String) {
    let (status, _, body) = crate::support::get(url, &[]).await;
    (status, body)
}

#[tokio::test]
async fn without_auth_the_agents_token_never_reaches_the_upstream_and_a_401_names_the_fix() {
    let up = Protected::start(Metadata::Good).await;
    up.accept("agent-token");
    let p = proxy(&config_with(&[("fs", &up.url(), "none")])).await;
    let (status, headers, body) =
        post(&proxy_url(&p, "fs"), &[("authorization", "Bearer agent-token")], CALL).await;
    assert_eq!(up.seen(), [None], "the upstream received no Authorization");
    assert_eq!(status, 200, "an upstream error answers the call: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["id"], 7);
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("upstream fs requires authorization")
            && msg.contains("set upstreams.fs.auth to passthrough"),
        "{msg}"
    );
    assert!(headers.get("www-authenticate").is_none(), "the upstream's challenge is not relayed");
    assert!(!body.contains("resource_metadata"), "{body}");
    p.shutdown().await;
}

#[tokio::test]
async fn passthrough_forwards_the_agents_token_to_that_upstream_only_and_answers_discovery_for_the_proxy() {
    let (a, b) = (Protected::start(Metadata::Good).await, Protected::start(Metadata::Good).await);
    a.accept("agent-token");
    b.accept("agent-token");
    let p = proxy(&config_with(&[("a", &a.url(), "passthrough"), ("b", &b.url(), "none")])).await;
    let agent = [("authorization", "Bearer agent-token")];
    let (status, _, body) = post(&proxy_url(&p, "a"), &agent, CALL).await;
    assert!(status == 200 && body.contains("ran"), "{status} {body}");
    post(&proxy_url(&p, "b"), &agent, CALL).await;
    assert_eq!(a.seen(), [Some("Bearer agent-token".to_owned())]);
    assert_eq!(b.seen(), [None], "the agent's token went to the passthrough upstream only");

    // Without a token: the upstream's 401, its challenge pointed at the proxy's metadata.
    let (status, headers, _) = post(&proxy_url(&p, "a"), &[], CALL).await;
    assert_eq!(status, 401);
    let challenge = headers.get("www-authenticate").unwrap().to_str().unwrap();
    let metadata = format!("http://{}/.well-known/oauth-protected-resource/mcp/a", p.addr);
    assert_eq!(
        challenge,
        format!(r#"Bearer error="invalid_token", scope="tools", resource_metadata="{metadata}""#)
    );

    // The proxy's metadata names the URL the agent called, with the upstream's servers.
    let (status, body) = get(&metadata).await;
    assert_eq!(status, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["resource"], format!("http://{}/mcp/a", p.addr));
    assert_eq!(doc["authorization_servers"], serde_json::json!(["https://as.example/tenant"]));
    assert_eq!(doc["scopes_supported"], serde_json::json!(["tools"]));
    let (status, _) = get(&format!("http://{}/.well-known/oauth-protected-resource/mcp/b", p.addr)).await;
    assert_eq!(status, 404, "an upstream that is not passthrough has no metadata at the proxy");
    p.shutdown().await;
}

#[tokio::test]
async fn a_bearer_env_token_is_sent_for_the_proxy_and_never_reaches_the_agent() {
    std::env::set_var("PORTCULLIS_IT_FS_TOKEN_b41", "static-proxy-token");
    let up = Protected::start(Metadata::Good).await;
    up.accept("static-proxy-token");
    let p = proxy(&config_with(&[("fs", &up.url(), "{ bearer_env: PORTCULLIS_IT_FS_TOKEN_b41 }")])).await;
    let (status, headers, body) =
        post(&proxy_url(&p, "fs"), &[("authorization", "Bearer agent-token")], CALL).await;
    assert!(status == 200 && body.contains("ran"), "{status} {body}");
    assert_eq!(up.seen(), [Some("Bearer static-proxy-token".to_owned())], "the proxy's, not the agent's");
    assert!(!format!("{headers:?}{body}").contains("static-proxy-token"));

    // The upstream stops accepting it: an upstream error, with nothing of the token.
    up.accepted.lock().unwrap().clear();
    let (status, headers, body) = post(&proxy_url(&p, "fs"), &[], CALL).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("upstream fs refused the credential portcullis holds for it (HTTP 401"), "{body}");
    assert!(!format!("{headers:?}{body}").contains("static-proxy-token"), "{body}");
    assert!(headers.get("www-authenticate").is_none());
    p.shutdown().await;
}

#[tokio::test]
async fn client_credentials_are_fetched_once_under_concurrency_and_again_after_expiry() {
    std::env::set_var("PORTCULLIS_IT_CC_SECRET_c72", "s3cr3t-client");
    let up = Protected::start(Metadata::Good).await;
    let delay = Duration::from_millis(300);
    let tokens = TokenEndpoint::start(Issue::Tokens { expires_in: 2, delay }, up.accepted.clone()).await;
    let auth = format!(
        "{{ client_credentials: {{ token_url: \"{}\", client_id: portcullis, client_secret_env: PORTCULLIS_IT_CC_SECRET_c72, scope: tools, resource: \"https://fs.example/mcp\" }} }}",
        tokens.url()
    );
    let p = proxy(&config_with(&[("fs", &up.url(), &auth)])).await;
    let url = proxy_url(&p, "fs");
    let calls = (0..8).map(|_| post(&url, &[("authorization", "Bearer agent-token")], CALL));
    for (status, headers, body) in futures_util::future::join_all(calls).await {
        assert!(status == 200 && body.contains("ran"), "{status} {body}");
        assert!(
            !format!("{headers:?}{body}").contains("cc-1"),
            "the proxy's token reached the agent: {body}"
        );
    }
    assert_eq!(tokens.requests(), 1, "eight concurrent calls, one token request");
    assert_eq!(up.seen(), vec![Some("Bearer cc-1".to_owned()); 8]);
    let form = tokens.forms.lock().unwrap()[0].clone();
    assert_eq!(form, "grant_type=client_credentials&scope=tools&resource=https%3A%2F%2Ffs.example%2Fmcp");

    // Two seconds of life: unusable from 1.8 s on, so a call after that fetches a new token.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (status, _, body) = post(&url, &[], CALL).await;
    assert!(status == 200 && body.contains("ran"), "{status} {body}");
    assert_eq!(tokens.requests(), 2);
    assert_eq!(up.seen().last().unwrap().as_deref(), Some("Bearer cc-2"));
    p.shutdown().await;
}

#[tokio::test]
async fn a_token_endpoint_that_is_down_or_answers_garbage_is_a_clear_error_and_nothing_is_forwarded() {
    std::env::set_var("PORTCULLIS_IT_CC_SECRET_d19", "s3cr3t-client");
    let up = Protected::start(Metadata::Good).await;
    let garbage = TokenEndpoint::start(Issue::Garbage, up.accepted.clone()).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    for (token_url, want) in
        [(format!("http://{closed}/token"), "could not be reached"), (garbage.url(), "sent no usable token")]
    {
        let auth = format!(
            "{{ client_credentials: {{ token_url: \"{token_url}\", client_id: portcullis, client_secret_env: PORTCULLIS_IT_CC_SECRET_d19 }} }}"
        );
        let p = proxy(&config_with(&[("fs", &up.url(), &auth)])).await;
        let (status, _, body) =
            post(&proxy_url(&p, "fs"), &[("authorization", "Bearer agent-token")], CALL).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body.contains("portcullis could not obtain its credential for upstream fs")
                && body.contains(want),
            "{body}"
        );
        assert!(!body.contains("s3cr3t"), "{body}");
        p.shutdown().await;
    }
    assert!(up.seen().is_empty(), "no call went out without its credential: {:?}", up.seen());
}

#[tokio::test]
async fn huge_malformed_or_foreign_upstream_metadata_is_a_clear_error_not_a_document() {
    for (body, want) in [
        ("x".repeat(200_000), "sent more than"),
        ("{\"resource\": ".to_owned(), "is not protected-resource metadata"),
        (
            r#"{"resource":"https://evil.example.com/mcp","authorization_servers":["https://as.example"]}"#
                .to_owned(),
            "refused",
        ),
    ] {
        let up = Protected::start(Metadata::Raw(body)).await;
        let p = proxy(&config_with(&[("fs", &up.url(), "passthrough")])).await;
        let (status, text) =
            get(&format!("http://{}/.well-known/oauth-protected-resource/mcp/fs", p.addr)).await;
        assert_eq!(status, 502, "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"], "upstream_metadata");
        assert!(v["error_description"].as_str().unwrap().contains(want), "{text}");
        assert!(!text.contains("evil.example.com/mcp\",\"authorization_servers"), "{text}");
        p.shutdown().await;
    }
}

#[tokio::test]
async fn bad_auth_values_are_config_errors_and_an_unset_secret_stops_the_start_naming_it() {
    let text = r#"
upstreams:
  a: { url: "http://127.0.0.1:1/mcp", auth: bearer }
  b: { url: "http://127.0.0.1:1/mcp", auth: { bearer_env: X, colour: red } }
  c: { url: "http://127.0.0.1:1/mcp", auth: { bearer_env: "not a var" } }
  d: { url: "http://127.0.0.1:1/mcp", auth: { client_credentials: { token_url: "https://as/t", client_id: x } } }
"#;
    let err = Config::parse(text, "t").unwrap_err();
    let paths: Vec<&str> = err.problems.iter().map(|p| p.path.as_str()).collect();
    for want in ["upstreams.a.auth", "upstreams.b.auth", "upstreams.c.auth.bearer_env", "upstreams.d.auth"] {
        assert!(paths.contains(&want), "missing {want} in {err}");
    }
    assert!(err.to_string().contains("client_secret_env"), "the missing key is named: {err}");

    let c = config_with(&[("fs", "http://127.0.0.1:1/mcp", "{ bearer_env: PORTCULLIS_IT_UNSET_VAR_e55 }")]);
    let err = portcullis::app::start(&c).await.err().expect("an unset secret stops the start");
    let shown = portcullis::runtime::Chain(&err).to_string();
    assert!(shown.contains("PORTCULLIS_IT_UNSET_VAR_e55") && shown.contains("upstream fs"), "{shown}");
}

#[tokio::test]
async fn with_agents_a_passthrough_route_takes_the_proxy_credential_from_proxy_authorization_only() {
    std::env::set_var("PORTCULLIS_TEST_AGENT_PASSTHROUGH", "passthrough-agent-token-77aa");
    let (a, b) = (Protected::start(Metadata::Good).await, Protected::start(Metadata::Good).await);
    a.accept("upstream-token");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams:\n  a: {{ url: \"{}\", auth: passthrough }}\n  b: {{ url: \"{}\" }}\n{ALLOW_ALL}\
         agents: {{ dev: {{ token_env: PORTCULLIS_TEST_AGENT_PASSTHROUGH }} }}\n",
        a.url(),
        b.url()
    );
    let p = proxy(&Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))).await;
    let both = [
        ("proxy-authorization", "Bearer passthrough-agent-token-77aa"),
        ("authorization", "Bearer upstream-token"),
    ];
    let (status, _, body) = post(&proxy_url(&p, "a"), &both, CALL).await;
    assert!(status == 200 && body.contains("ran"), "{status} {body}");
    assert_eq!(a.seen(), [Some("Bearer upstream-token".to_owned())], "only the upstream's token crossed");

    // The proxy's credential in Authorization on a passthrough route is not taken as the
    // proxy's (it would be the upstream's): 407, and nothing reaches the upstream.
    for headers in [&[("authorization", "Bearer passthrough-agent-token-77aa")][..], &[][..]] {
        let (status, h, body) = post(&proxy_url(&p, "a"), headers, CALL).await;
        assert_eq!(status, 407, "{body}");
        assert_eq!(h["proxy-authenticate"], "Bearer");
        assert!(h.get("www-authenticate").is_none(), "no OAuth challenge for the proxy's credential");
    }
    assert_eq!(a.seen().len(), 1, "{:?}", a.seen());

    // The upstream's metadata for the passthrough route; the proxy's own for the other.
    let (status, body) = get(&format!("http://{}/.well-known/oauth-protected-resource/mcp/a", p.addr)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("https://as.example/tenant"), "{body}");
    let (status, body) = get(&format!("http://{}/.well-known/oauth-protected-resource/mcp/b", p.addr)).await;
    assert_eq!(status, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["resource"], format!("http://{}/mcp/b", p.addr));

    // Elsewhere Authorization carries the proxy's credential, consumed at the door.
    let (status, _, body) =
        post(&proxy_url(&p, "b"), &[("authorization", "Bearer passthrough-agent-token-77aa")], CALL).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(b.seen(), [None]);
    p.shutdown().await;
}
