//! "Why was it refused?" against real peers: the Python SDK server behind the proxy, the real
//! `portcullis` binary asking its admin listener or reading its audit file, and the live tap read
//! over a real socket.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::process::Command;

use crate::support::{get, post, proxy, proxy_url, py_client, text_of, Peer, LEGACY};

const TOKEN_ENV: &str = "PORTCULLIS_TEST_ADMIN_TOKEN_EXPLAIN";
const TOKEN: &str = "explain-operator-token-5f1e0b77";

/// A shell tool whose `git push` (however spelt) is denied, with the admin API on.
fn yaml(upstream: &str, audit: &str) -> String {
    format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {TOKEN_ENV} }}\nupstreams:\n  py: {{ url: \"{upstream}\" }}\n\
         tools: [{{ match: mcp__py__echo, kind: shell, command: /message }}]\n\
         permissions: {{ allow: [\"Shell(git:*)\", mcp__py__add], deny: [\"Shell(git push:*)\"] }}\n{audit}"
    )
}

async fn start(upstream: &str, audit: &str) -> portcullis::app::Running {
    std::env::set_var(TOKEN_ENV, TOKEN);
    proxy(&portcullis::config::Config::parse(&yaml(upstream, audit), "test").unwrap()).await
}

/// The decision id a refusal cites.
fn cited(text: &str) -> String {
    let at =
        text.find("(decision ").unwrap_or_else(|| panic!("no decision cited: {text}")) + "(decision ".len();
    let id = text[at..].split(';').next().unwrap().to_owned();
    assert_eq!(id.len(), 12, "{text}");
    assert!(text.contains(&format!("`portcullis explain {id}`")), "{text}");
    id
}

/// Runs `portcullis explain …`; returns (success, stdout and stderr).
async fn explain(args: &[&str]) -> (bool, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_portcullis")).arg("explain").args(args).output().await.unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[tokio::test]
async fn a_refused_call_cites_a_decision_that_explain_shows_with_its_rule_scope_and_effect() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let peer = Peer::python("legacy");
    let p = start(&peer.url(), &format!("audit: {{ to: \"{}\" }}\n", log.display())).await;
    let out = py_client(
        &proxy_url(&p, "py"),
        "legacy",
        &[
            "call",
            "echo",
            r#"{"message": "git -C . push origin main"}"#,
            "call",
            "add",
            r#"{"a": 1, "b": 2}"#,
        ],
    )
    .await;
    let refusal = text_of(&out[0]);
    assert!(refusal.starts_with("portcullis denied mcp__py__echo"), "{refusal}");
    let id = cited(&refusal);
    assert!(peer.calls_received().iter().all(|c| c != "echo"), "the refused call never reached the server");

    // From the running proxy: the rule, its scope, what the command does, the policy version.
    let admin = format!("http://{}", p.admin_addr);
    let (ok, text) = explain(&[&id, "--admin", &admin, "--token-env", TOKEN_ENV]).await;
    assert!(ok, "{text}");
    // docs/explain.md shows a captured run: `PORTCULLIS_EXPLAIN_CAPTURE=FILE` writes this one.
    if let Some(file) = std::env::var_os("PORTCULLIS_EXPLAIN_CAPTURE") {
        std::fs::write(file, &text).unwrap();
    }
    for want in [
        format!("decision {id}"),
        "before the call".into(),
        "denied".into(),
        "tool:      mcp__py__echo (upstream py)".into(),
        "layer 1:   deny by Shell(git push:*) (scope config)".into(),
        "deny  Shell(git push:*)  scope config  on `git -C . push origin main`: is `git push origin main` once its global options are read".into(),
        "allow Shell(git:*)  scope config".into(),
        "policy:    version ".into(),
    ] {
        assert!(text.contains(&want), "{want:?} missing from:\n{text}");
    }
    // As JSON: the same lines the audit file holds.
    let (ok, json_text) = explain(&[&id, "--admin", &admin, "--token-env", TOKEN_ENV, "--json"]).await;
    assert!(ok, "{json_text}");
    let v: Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(v["lines"][0]["why"]["matched"][0]["rule"], "Shell(git push:*)", "{v:#}");
    assert_eq!(v["lines"][0]["reason"], refusal.as_str());

    // After the fact, from the audit file alone (what a restart leaves).
    let id_in_file = id.clone();
    crate::support::eventually("the refusal's line in the file", || {
        let (log, id) = (log.clone(), id_in_file.clone());
        async move { std::fs::read_to_string(&log).unwrap_or_default().contains(&id).then_some(()) }
    })
    .await;
    drop(p);
    let (ok, from_file) = explain(&[&id, "--audit", log.to_str().unwrap()]).await;
    assert!(ok, "{from_file}");
    assert!(from_file.contains("layer 1:   deny by Shell(git push:*) (scope config)"), "{from_file}");
    // The allowed call has an id and a policy version, and no rule list (the allow path pays nothing).
    let lines: Vec<Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let allowed = lines.iter().find(|l| l["tool"] == "mcp__py__add" && l["phase"] == "pre").unwrap();
    assert!(allowed["id"].is_string() && allowed["policy"].is_string(), "{allowed}");
    assert!(allowed.get("why").is_none(), "{allowed}");
    let (ok, unknown) = explain(&["000000000000", "--audit", log.to_str().unwrap()]).await;
    assert!(!ok && unknown.contains("in none of the audit files"), "{unknown}");
}

#[tokio::test]
async fn decisions_need_the_token_and_refusals_are_kept_even_with_the_audit_off() {
    let peer = Peer::python("legacy");
    let p = start(&peer.url(), "").await;
    let out =
        py_client(&proxy_url(&p, "py"), "legacy", &["call", "echo", r#"{"message": "git push --force"}"#])
            .await;
    let id = cited(&text_of(&out[0]));
    let admin = format!("http://{}", p.admin_addr);
    for path in [format!("/decisions/{id}"), "/decisions/stream".into()] {
        let (status, _, _) = get(&format!("{admin}{path}"), &[]).await;
        assert_eq!(status, 401, "{path} without a token");
        let (status, _, _) =
            get(&format!("{admin}{path}"), &[("authorization", "Bearer wrong-token-0000000")]).await;
        assert_eq!(status, 401, "{path} with a wrong token");
    }
    let bearer = format!("Bearer {TOKEN}");
    let (status, _, body) = get(&format!("{admin}/decisions/{id}"), &[("authorization", &bearer)]).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["lines"][0]["outcome"], "denied", "{v:#}");
    let (status, _, _) = get(&format!("{admin}/decisions/ZZZZZZZZZZZZ"), &[("authorization", &bearer)]).await;
    assert_eq!(status, 404);
    let (status, _, _) = get(&format!("{admin}/decisions/nonsense"), &[("authorization", &bearer)]).await;
    assert_eq!(status, 404);
}

/// An open `GET /decisions/stream`, read as it arrives.
struct Tap {
    body: hyper::body::Incoming,
    read: String,
}

impl Tap {
    async fn open(admin: &str) -> Tap {
        use http_body_util::Empty;
        let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http::<Empty<bytes::Bytes>>();
        let req = http::Request::get(format!("{admin}/decisions/stream"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Empty::new())
            .unwrap();
        let resp = client.request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        Tap { body: resp.into_body(), read: String::new() }
    }

    /// Reads until `seen` holds (true) or the stream ends (false), for at most 20 s.
    async fn until(&mut self, seen: impl Fn(&str) -> bool) -> bool {
        use http_body_util::BodyExt;
        let read = async {
            while !seen(&self.read) {
                match self.body.frame().await {
                    Some(Ok(f)) => {
                        self.read.push_str(&String::from_utf8_lossy(&f.into_data().unwrap_or_default()))
                    }
                    _ => return false,
                }
            }
            true
        };
        tokio::time::timeout(Duration::from_secs(20), read)
            .await
            .unwrap_or_else(|_| panic!("stream: {}", self.read))
    }
}

#[tokio::test]
async fn the_tap_streams_a_decision_made_after_subscribing_and_ends_on_shutdown() {
    let peer = Peer::python("legacy");
    let p = start(&peer.url(), "").await;
    let admin = format!("http://{}", p.admin_addr);
    let mut tap = Tap::open(&admin).await;
    let out =
        py_client(&proxy_url(&p, "py"), "legacy", &["call", "echo", r#"{"message": "git push origin"}"#])
            .await;
    let id = cited(&text_of(&out[0]));
    assert!(tap.until(|t| t.contains(&format!("\"id\":\"{id}\""))).await, "{}", tap.read);
    let event = tap
        .read
        .split("\n\n")
        .find(|e| e.contains(&id))
        .and_then(|e| e.strip_prefix("event: decision\ndata: "))
        .unwrap_or_else(|| panic!("one decision event: {}", tap.read));
    let v: Value = serde_json::from_str(event).unwrap();
    assert_eq!((v["outcome"].as_str(), v["tool"].as_str()), (Some("denied"), Some("mcp__py__echo")));
    assert_eq!(v["why"]["layer1"]["rule"], "Shell(git push:*)");
    // Shutdown ends the stream rather than waiting out the drain grace (30 s) on it.
    let stopped = tokio::time::timeout(Duration::from_secs(10), p.shutdown()).await;
    assert!(stopped.is_ok(), "shutdown waited on the open tap");
    assert!(!tap.until(|_| false).await, "the stream ended");
}

/// Sends `n` refused calls, 50 at a time, on `session`; returns how long they took.
async fn refusals(url: &str, session: &str, n: usize, padding: &str) -> Duration {
    let started = std::time::Instant::now();
    for batch in 0..n.div_ceil(50) {
        let calls = (0..50.min(n - batch * 50)).map(|i| async move {
            let body = json!({"jsonrpc": "2.0", "id": batch * 50 + i, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": format!("git push origin b{i} {padding}")}}});
            let h = [("mcp-session-id", session), ("mcp-protocol-version", LEGACY)];
            post(url, &h, body.to_string()).await
        });
        for (status, _, body) in futures_util::future::join_all(calls).await {
            assert_eq!(status, 200, "{body}");
            assert!(body.contains("(decision "), "{body}");
        }
    }
    started.elapsed()
}

/// A tap opened on a raw socket with a small receive buffer and never read: what a stuck
/// operator's `curl` looks like to the proxy.
fn stalled_tap(admin: std::net::SocketAddr) -> std::net::TcpStream {
    use std::io::Write;
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.set_recv_buffer_size(4096).unwrap();
    s.connect(&admin.into()).unwrap();
    let mut s: std::net::TcpStream = s.into();
    write!(s, "GET /decisions/stream HTTP/1.1\r\nHost: {admin}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n")
        .unwrap();
    // The head only (the tap is subscribed once it is sent); the body is left unread.
    use std::io::Read;
    let (mut head, mut byte) = (Vec::new(), [0u8]);
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head));
    s
}

#[tokio::test]
async fn a_subscriber_that_never_reads_does_not_stall_calls() {
    let peer = Peer::python("legacy");
    let p = start(&peer.url(), "").await;
    let admin = format!("http://{}", p.admin_addr);
    let url = proxy_url(&p, "py");
    let session = crate::support::open_legacy_session(&url).await;
    // Each refusal is an event of ~10 KiB (the command is in its reasons): 200 of them are more
    // than a subscriber's queue holds (512 KiB); the sockets' buffers may hold the rest.
    let padding = "x".repeat(4 << 10);
    let alone = refusals(&url, &session, 50, &padding).await;
    // Blocking socket work off the runtime the admin listener runs on.
    let at = p.admin_addr;
    let stalled = tokio::task::spawn_blocking(move || stalled_tap(at)).await.unwrap();
    let filling = refusals(&url, &session, 200, &padding).await;
    let beside_a_full_tap = refusals(&url, &session, 50, &padding).await;
    eprintln!(
        "50 refusals: {alone:?} alone, {beside_a_full_tap:?} beside a stalled tap (200 took {filling:?})"
    );
    assert!(
        beside_a_full_tap < alone * 4 + Duration::from_secs(5),
        "50 refusals took {alone:?} with no subscriber and {beside_a_full_tap:?} beside a stalled one"
    );
    // And a new subscriber still gets the next decision.
    let mut fresh = Tap::open(&admin).await;
    let out = py_client(&url, "legacy", &["call", "echo", r#"{"message": "git push"}"#]).await;
    let id = cited(&text_of(&out[0]));
    assert!(fresh.until(|t| t.contains(&id)).await);
    // The stalled subscriber, reading at last, gets the rest.
    let last = id.clone();
    let read = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut stalled = stalled;
        stalled.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let (mut all, mut buf) = (Vec::new(), vec![0u8; 1 << 16]);
        while !String::from_utf8_lossy(&all).contains(&last) {
            match stalled.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
        String::from_utf8_lossy(&all).into_owned()
    })
    .await
    .unwrap();
    // Every decision since it subscribed was delivered or counted as lost (and it was told).
    let events = read.matches("event: decision").count();
    let lost: usize = read
        .split("event: lost\ndata: {\"lost\":")
        .skip(1)
        .map(|rest| rest.split('}').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert!(read.contains(&id), "the stalled tap reached the last decision: {events} events, {lost} lost");
    assert!(events + lost >= 251, "{events} events delivered, {lost} lost: some vanished uncounted");
}
