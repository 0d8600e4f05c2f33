//! The decision tap (`GET /decisions/stream`) and `GET /decisions/{id}`: only the bearer token
//! opens them (no query-string token, no other method, no CORS grant to a page), what they carry
//! is the masked audit line (no secret in an argument, no agent credential), and a subscriber that
//! never reads costs the calls nothing.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::harness::{call, serve, write_config};
use crate::support::{open_legacy_session_with, proxy_url, Peer};

/// A GitHub token of the real shape (`ghp_` and 36 characters).
const GH: &str = "ghp_R8tapSecretR8tapSecretR8tapSecret012";
const AWS: &str = "AKIAR8TAPSECRET12345";
const AGENT: &str = "Bearer r8-agent-credential-never-in-the-tap";

/// Opens the stream over a raw socket with `request_head` (no body; `HOST` is the listener's
/// address, which `allowed_hosts` admits); the socket.
async fn open(addr: std::net::SocketAddr, request_head: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request_head.replace("HOST", &addr.to_string()).as_bytes()).await.unwrap();
    s
}

/// Reads until `want` appears or `wait` passes; what was read.
async fn read_for(s: &mut TcpStream, want: &str, wait: Duration) -> String {
    let mut got = Vec::new();
    let end = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 8192];
    while !String::from_utf8_lossy(&got).contains(want) {
        match tokio::time::timeout_at(end, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn the_tap_opens_only_with_the_bearer_header_and_grants_no_page_a_cors_read() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TAP_A", "r8-tap-operator-token-a");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let p = serve(&write_config(dir.path(), token_env, &peer.url(), ""), None).await;
    for head in [
        format!("GET /decisions/stream?token={token} HTTP/1.1\r\nHost: HOST\r\n\r\n"),
        format!("GET /decisions/stream?access_token={token} HTTP/1.1\r\nHost: HOST\r\n\r\n"),
        "HEAD /decisions/stream HTTP/1.1\r\nHost: HOST\r\n\r\n".to_owned(),
        "OPTIONS /decisions/stream HTTP/1.1\r\nHost: HOST\r\nOrigin: https://evil.example\r\nAccess-Control-Request-Method: GET\r\n\r\n".to_owned(),
        format!("GET /decisions/stream HTTP/1.1\r\nHost: HOST\r\nCookie: token={token}\r\n\r\n"),
        format!("GET /decisions/stream HTTP/1.1\r\nHost: HOST\r\nAuthorization: Basic {token}\r\n\r\n"),
        format!("GET /decisions/stream HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer {}\r\n\r\n", &token[..token.len() - 1]),
    ] {
        let mut s = open(p.admin_addr, &head).await;
        let got = read_for(&mut s, "\r\n\r\n", Duration::from_secs(5)).await;
        let status = got.split(' ').nth(1).unwrap_or("");
        assert!(["401", "403", "404", "405"].contains(&status), "{head:?} answered {got:?}");
        assert!(!got.to_ascii_lowercase().contains("access-control-allow-origin"), "{head:?}: {got}");
        assert!(!got.contains("text/event-stream"), "{head:?} opened the stream: {got}");
    }
    // A page on another origin is refused even with the token; without an Origin the tap opens.
    for (origin, want) in [("Origin: https://evil.example\r\n", "HTTP/1.1 403"), ("", "HTTP/1.1 200")] {
        let head = format!(
            "GET /decisions/stream HTTP/1.1\r\nHost: HOST\r\n{origin}Authorization: Bearer {token}\r\n\r\n"
        );
        let mut s = open(p.admin_addr, &head).await;
        let got = read_for(&mut s, "\r\n\r\n", Duration::from_secs(5)).await;
        assert!(got.starts_with(want), "{origin:?}: {got}");
        assert!(!got.to_ascii_lowercase().contains("access-control-allow-origin"), "{got}");
    }
}

#[tokio::test]
async fn the_tap_and_the_kept_record_carry_no_secret_argument_and_no_agent_credential() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TAP_B", "r8-tap-operator-token-b");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let extra = "permissions: { deny: [\"mcp__py__write_note\"] }\n";
    let p = serve(&write_config(dir.path(), token_env, &peer.url(), extra), None).await;
    let mut tap = open(
        p.admin_addr,
        &format!("GET /decisions/stream HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer {token}\r\n\r\n"),
    )
    .await;
    assert!(read_for(&mut tap, "\r\n\r\n", Duration::from_secs(5)).await.starts_with("HTTP/1.1 200"));
    let url = proxy_url(&p, "py");
    let session = open_legacy_session_with(&url, &[("authorization", AGENT)]).await;
    let text = format!("deploy with {GH} and {AWS}");
    let refused = call(&url, &session, "write_note", json!({"path": "/tmp/r8", "text": text})).await.unwrap();
    let said = refused["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned();
    let at = said.find("(decision ").unwrap_or_else(|| panic!("{refused}")) + 10;
    let id = said[at..at + 12].to_owned();
    let streamed = read_for(&mut tap, &id, Duration::from_secs(5)).await;
    assert!(streamed.contains(&id), "the decision reached the tap: {streamed}");
    let (status, _, kept) = crate::support::get(
        &format!("http://{}/decisions/{id}", p.admin_addr),
        &[("authorization", &format!("Bearer {token}"))],
    )
    .await;
    assert_eq!(status, 200, "{kept}");
    for (what, text) in [("tap", &streamed), ("record", &kept), ("refusal", &said)] {
        // The session id is shown (the operator clears a session by it), like the audit file.
        for secret in [GH, AWS, &AGENT[7..]] {
            assert!(!text.contains(secret), "{what} carries {secret}: {text}");
        }
    }
}

#[tokio::test]
async fn a_tap_that_never_reads_costs_the_calls_nothing_and_many_taps_are_served() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TAP_C", "r8-tap-operator-token-c");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let extra = "permissions: { deny: [\"mcp__py__write_note\"] }\n";
    let p = serve(&write_config(dir.path(), token_env, &peer.url(), extra), None).await;
    let head =
        format!("GET /decisions/stream HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer {token}\r\n\r\n");
    // Fifty subscribers that read the head and then never read again.
    let mut taps = Vec::new();
    for _ in 0..50 {
        let mut s = open(p.admin_addr, &head).await;
        assert!(read_for(&mut s, "\r\n\r\n", Duration::from_secs(5)).await.starts_with("HTTP/1.1 200"));
        taps.push(s);
    }
    let url = proxy_url(&p, "py");
    let session = open_legacy_session_with(&url, &[]).await;
    // Denied calls with 32 KiB arguments: each audit line is large, every tap falls behind.
    let big = "z".repeat(32 << 10);
    let mut slowest = Duration::ZERO;
    let started = Instant::now();
    for i in 0..200 {
        let t = Instant::now();
        let v = call(&url, &session, "write_note", json!({"path": format!("/tmp/{i}"), "text": big}))
            .await
            .unwrap();
        assert_eq!(v["result"]["isError"], true, "{v}");
        slowest = slowest.max(t.elapsed());
    }
    let total = started.elapsed();
    eprintln!("200 denied calls with 50 stalled taps: {total:?} in all, slowest {slowest:?}");
    assert!(slowest < Duration::from_secs(2), "a call waited {slowest:?} on the stalled taps");
    // A fresh tap still gets the next decision at once.
    let mut fresh = open(p.admin_addr, &head).await;
    assert!(read_for(&mut fresh, "\r\n\r\n", Duration::from_secs(5)).await.starts_with("HTTP/1.1 200"));
    let v = call(&url, &session, "write_note", json!({"path": "/tmp/last", "text": "x"})).await.unwrap();
    let said = v["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned();
    let at = said.find("(decision ").unwrap() + 10;
    assert!(read_for(&mut fresh, &said[at..at + 12], Duration::from_secs(5))
        .await
        .contains(&said[at..at + 12]));
    drop(taps);
}
