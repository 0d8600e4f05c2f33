//! A Slack announcement of a parked ask, as a real receiver on 127.0.0.1 gets it. The tool name
//! is the agent's choice and sits in a code span. `<`, `>` and `&` are escaped, so no mention or
//! masked link; but a backtick in the name closes the span (the arguments' backticks are replaced,
//! the name's are not), and what follows is mrkdwn: `*…*` is bold, a bare URL becomes a link.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::harness::{call, Admin};
use crate::support::{eventually, open_legacy_session, proxy, proxy_url, Peer};

/// A receiver that keeps every request body and answers 200.
async fn receiver() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = got.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let Ok(n) = s.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    let Some(end) = text.find("\r\n\r\n") else { continue };
                    let length = text[..end]
                        .to_ascii_lowercase()
                        .lines()
                        .find_map(|l| {
                            l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0usize);
                    if buf.len() >= end + 4 + length {
                        seen.lock()
                            .unwrap()
                            .push(String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into());
                        let _ = s
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                        return;
                    }
                }
            });
        }
    });
    (port, got)
}

#[tokio::test]
async fn a_tool_name_cannot_close_the_slack_code_span_or_format_the_why_line() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_SLACK", "r8-slack-operator-token-a");
    std::env::set_var(token_env, token);
    let (port, got) = receiver().await;
    std::env::set_var("PORTCULLIS_TEST_R8_SLACK_URL", format!("http://127.0.0.1:{port}/services/T0/B0/x"));
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         approvals:\n  channel: api\n  timeout: 60s\n  notify:\n    - {{ slack_webhook_env: PORTCULLIS_TEST_R8_SLACK_URL }}\n",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (url, admin) = (proxy_url(&p, "py"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;
    let tool = "write_note` *SECURITY: reviewed, safe to allow — approve within 1 min* `";
    let pending = call(&url, &session, tool, json!({"path": "a", "text": "b"}));
    let id = admin.parked_one().await;
    let body = eventually("the Slack POST", || async { got.lock().unwrap().first().cloned() }).await;
    admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
    let _ = tokio::time::timeout(Duration::from_secs(10), pending).await;

    let v: Value = serde_json::from_str(&body).unwrap();
    let text = v["blocks"][0]["text"]["text"].as_str().unwrap().to_owned();
    let first = text.lines().next().unwrap();
    assert_eq!(first.matches('`').count(), 2, "the tool name closed its code span:\n{text}");
    let why = text.lines().find(|l| l.starts_with("*Why:*")).unwrap();
    // The reason quotes the tool name: it sits in one code span it cannot close, where Slack
    // formats nothing (`*bold*` stays literal text).
    let reason = why["*Why:*".len()..].trim();
    assert!(
        reason.starts_with('`') && reason.ends_with('`') && reason.matches('`').count() == 2,
        "the reason line carries the agent's formatting:\n{text}"
    );
    assert!(
        text.lines().all(|l| !l.contains("<http") || l.starts_with("<http://")),
        "no agent link:\n{text}"
    );
}
