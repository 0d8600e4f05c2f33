//! Approval announcements (`approvals.notify`) against real receivers on loopback: a JSON
//! webhook and a Slack-format receiver each get one POST per parked ask, with the fields and
//! without the session id or a secret; a receiver that answers 500 or never answers does not
//! delay the ask or its decision, and is counted.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::{eventually, get, open_legacy_session, post, proxy, proxy_url, text_of, Peer, LEGACY};

/// How a receiver answers.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    Ok,
    ServerError,
    /// Reads the request and never answers.
    Hang,
}

/// One request a receiver got: its path and body.
type Got = Arc<Mutex<Vec<(String, String)>>>;

/// A tiny HTTP/1.1 receiver on 127.0.0.1:0.
async fn receiver(answer: Answer) -> (u16, Got) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let got: Got = Arc::default();
    let seen = got.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else { return };
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head_end, length) = loop {
                    let Ok(n) = s.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| {
                                l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0usize);
                        break (i + 4, len);
                    }
                };
                while buf.len() < head_end + length {
                    let Ok(n) = s.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned();
                seen.lock().unwrap().push((path, body));
                let status = match answer {
                    Answer::Ok => "200 OK",
                    Answer::ServerError => "500 Internal Server Error",
                    Answer::Hang => {
                        tokio::time::sleep(Duration::from_secs(600)).await;
                        return;
                    }
                };
                let reply = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = s.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, got)
}

/// Starts a `write_note` call (the built-in floor asks about it) in the background.
fn write_note(url: &str, session: &str, text: &str) -> tokio::task::JoinHandle<Value> {
    let (url, session) = (url.to_owned(), session.to_owned());
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_note","arguments":{"path":"a","text":text}}});
    tokio::spawn(async move {
        let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
        let (_, _, text) = post(&url, &h, body.to_string()).await;
        crate::support::rpc_body(&text)
    })
}

async fn parked(admin: &str, token: &str) -> Vec<Value> {
    let auth = format!("Bearer {token}");
    let (status, _, body) = get(&format!("{admin}/approvals"), &[("authorization", &auth)]).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body).unwrap()["pending"].as_array().cloned().unwrap_or_default()
}

async fn decide(admin: &str, token: &str, id: u64, decision: &str) {
    let auth = format!("Bearer {token}");
    let body = json!({ "decision": decision }).to_string();
    let (status, _, text) = post(&format!("{admin}/approvals/{id}"), &[("authorization", &auth)], body).await;
    assert_eq!(status, 200, "{text}");
}

fn metric(p: &portcullis::app::Running, outcome: &str) -> u64 {
    let text = String::from_utf8(p.metrics.render()).unwrap();
    let line = format!("portcullis_notify_total{{outcome=\"{outcome}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(&line)).map_or(0, |v| v.trim().parse().unwrap_or(0))
}

#[tokio::test]
async fn each_parked_ask_is_posted_to_the_webhook_and_to_slack_with_its_fields_and_no_secret() {
    let (token_env, token) = ("PORTCULLIS_TEST_NOTIFY_TOKEN_A", "notify-operator-token-a");
    std::env::set_var(token_env, token);
    let (hook_port, hook) = receiver(Answer::Ok).await;
    let (slack_port, slack) = receiver(Answer::Ok).await;
    let slack_path = "/services/T0000/B0000/s3cretSlackPathToken";
    std::env::set_var("PORTCULLIS_TEST_NOTIFY_SLACK_A", format!("http://127.0.0.1:{slack_port}{slack_path}"));
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         approvals:\n  channel: api\n  timeout: 60s\n  console_url: \"https://ops.example.com/console\"\n  notify:\n\
         \x20   - {{ webhook: \"http://127.0.0.1:{hook_port}/hooks/team-token-123\" }}\n\
         \x20   - {{ slack_webhook_env: PORTCULLIS_TEST_NOTIFY_SLACK_A }}\n",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (url, admin) = (proxy_url(&p, "py"), format!("http://{}", p.admin_addr));
    let session = open_legacy_session(&url).await;
    let key = "ghp_".to_owned() + "R7q2ZkX9vLw3Tn8YbC5mPd1HsGf6Ja4Ue0Qx";
    let started = std::time::SystemTime::now();
    let call = write_note(&url, &session, &format!("hello {key}"));

    let (path, body) =
        eventually("the webhook's POST", || async { hook.lock().unwrap().first().cloned() }).await;
    assert_eq!(path, "/hooks/team-token-123");
    let n: Value = serde_json::from_str(&body).unwrap();
    let id = n["id"].as_u64().unwrap();
    assert_eq!(parked(&admin, token).await[0]["id"], id, "the id is the approval's");
    assert_eq!(n["event"], "approval.pending");
    assert_eq!(n["tool"], "mcp__py__write_note");
    assert_eq!(n["source"], "floor");
    assert!(n["arguments"].as_str().unwrap().contains("hello"), "{n}");
    assert!(!n["reason"].as_str().unwrap().is_empty(), "{n}");
    assert_eq!(n["console"], format!("https://ops.example.com/console#approval-{id}"));
    assert_eq!(n["session"].as_str().unwrap().len(), 16, "a digest of the session: {n}");
    // The deadline is the ask's: about now + 60 s, in RFC 3339.
    let deadline = n["deadline"].as_str().unwrap();
    assert!(deadline.ends_with('Z') && deadline.len() == 20, "{deadline}");
    let expected = portcullis::identity::delegation::rfc3339(started + Duration::from_secs(60));
    assert!(deadline[..15] == expected[..15], "{deadline} vs {expected}");

    let (path, body) = eventually("Slack's POST", || async { slack.lock().unwrap().first().cloned() }).await;
    assert_eq!(path, slack_path);
    let s: Value = serde_json::from_str(&body).unwrap();
    assert!(s["text"].as_str().unwrap().contains("mcp__py__write_note"), "{s}");
    assert_eq!(s["blocks"][0]["type"], "section", "{s}");
    assert!(s["blocks"][0]["text"]["text"].as_str().unwrap().contains(&format!("#approval-{id}")), "{s}");

    for (what, body) in [("webhook", hook.lock().unwrap()[0].1.clone()), ("slack", body)] {
        assert!(!body.contains(&key), "{what} got the secret: {body}");
        assert!(!body.contains(&session), "{what} got the session id: {body}");
        assert!(!body.contains(token), "{what} got the admin token");
    }
    decide(&admin, token, id, "allow_once").await;
    assert_eq!(text_of(&call.await.unwrap()), format!("wrote {} bytes to a", 6 + key.len()));
    eventually("two deliveries counted", || async { (metric(&p, "delivered") == 2).then_some(()) }).await;
    assert_eq!(hook.lock().unwrap().len(), 1, "one POST per ask");
    assert_eq!(metric(&p, "failed"), 0);
}

#[tokio::test]
async fn a_receiver_that_fails_or_hangs_never_delays_the_ask_or_its_decision_and_is_counted() {
    let (token_env, token) = ("PORTCULLIS_TEST_NOTIFY_TOKEN_B", "notify-operator-token-b");
    std::env::set_var(token_env, token);
    let (hang_port, hang) = receiver(Answer::Hang).await;
    let (fail_port, fail) = receiver(Answer::ServerError).await;
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         approvals:\n  channel: api\n  timeout: 60s\n  notify:\n\
         \x20   - {{ webhook: \"http://127.0.0.1:{hang_port}/hang\", timeout: 300ms }}\n\
         \x20   - {{ webhook: \"http://127.0.0.1:{fail_port}/fail\", timeout: 300ms }}\n",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (url, admin) = (proxy_url(&p, "py"), format!("http://{}", p.admin_addr));
    let session = open_legacy_session(&url).await;
    let call = write_note(&url, &session, "hi");
    // Parked, and seen by both receivers, one of which is now holding its connection open.
    eventually("both receivers reached", || async {
        (!hang.lock().unwrap().is_empty() && !fail.lock().unwrap().is_empty()).then_some(())
    })
    .await;
    let pending = parked(&admin, token).await;
    assert_eq!(pending.len(), 1, "the call is parked as usual: {pending:?}");
    let decided = Instant::now();
    decide(&admin, token, pending[0]["id"].as_u64().unwrap(), "allow_once").await;
    assert_eq!(text_of(&call.await.unwrap()), "wrote 2 bytes to a");
    assert!(decided.elapsed() < Duration::from_secs(5), "the decision waited {:?}", decided.elapsed());
    assert_eq!(peer.tools_run(), ["write_note"]);
    // Each receiver is tried four times (three retries), then given up: both counted.
    eventually("both announcements given up", || async { (metric(&p, "failed") == 2).then_some(()) }).await;
    assert_eq!(metric(&p, "retried"), 6);
    assert_eq!(metric(&p, "delivered"), 0);
    assert_eq!(fail.lock().unwrap().len(), 4, "the failing receiver saw every attempt");
}

#[tokio::test]
async fn an_unset_slack_variable_stops_the_start_and_validate_names_it() {
    let yaml = "listen: 127.0.0.1:0\nadmin: { listen: 127.0.0.1:0 }\nupstreams: {}\n\
                approvals: { notify: [ { slack_webhook_env: PORTCULLIS_TEST_NOTIFY_UNSET } ] }\n";
    let c = portcullis::config::Config::parse(yaml, "test").unwrap();
    let e = portcullis::app::start(&c).await.err().expect("refused to start").to_string();
    assert!(
        e.contains("approvals.notify[0].slack_webhook_env") && e.contains("PORTCULLIS_TEST_NOTIFY_UNSET"),
        "{e}"
    );
    let problems = c.env_problems(|_| None);
    assert!(problems.iter().any(|p| p.path == "approvals.notify[0].slack_webhook_env"), "{problems:?}");
}
