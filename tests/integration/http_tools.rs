//! Plain HTTP tool endpoints (`/http/{upstream}/{path…}`) against a real HTTP server on a socket.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tokio::net::TcpListener;

use crate::support::*;

/// A real HTTP tool server that records every request it receives (method, path, body).
pub(crate) struct ToolServer {
    pub url: String,
    pub seen: Arc<Mutex<Vec<(String, String, String)>>>,
    /// Every request's header names and values, as `name: value` lines.
    pub headers: Arc<Mutex<Vec<String>>>,
}

pub(crate) async fn tool_server() -> ToolServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/api", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let headers = Arc::new(Mutex::new(Vec::new()));
    let (log, head_log) = (seen.clone(), headers.clone());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let (log, head_log) = (log.clone(), head_log.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let (log, head_log) = (log.clone(), head_log.clone());
                    async move {
                        let lines = req
                            .headers()
                            .iter()
                            .map(|(k, v)| format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())));
                        head_log.lock().unwrap().push(lines.collect::<Vec<_>>().join("\n"));
                        let method = req.method().to_string();
                        let path = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let body = String::from_utf8_lossy(&body).into_owned();
                        log.lock().unwrap().push((method, path.clone(), body.clone()));
                        let answer = format!(r#"{{"path":"{path}","echo":{body},"token":"TOPSECRET-1234"}}"#);
                        let resp = http::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(answer)))
                            .unwrap();
                        Ok::<_, Infallible>(resp)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    ToolServer { url, seen, headers }
}

#[tokio::test]
async fn plain_http_tools_are_gated_before_and_after_the_call() {
    let tools = tool_server().await;
    let p = proxy(&config(
        &[("weather", &tools.url)],
        "permissions: { allow: [\"http__weather__*\"], deny: [http__weather__v1/delete] }\nredact: [TOPSECRET-1234]\n",
    ))
    .await;
    let base = format!("http://{}/http/weather", p.addr);

    let (status, _, body) = post(&format!("{base}/v1/forecast?city=Oslo"), &[], r#"{"days":3}"#).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["path"], "/api/v1/forecast?city=Oslo",
        "the path and query reach the upstream under its base"
    );
    assert_eq!(v["echo"]["days"], 3);
    assert_eq!(v["token"], "[guardrail: redacted]", "the result was inspected: {body}");

    let (status, headers, body) = post(&format!("{base}/v1/delete"), &[], r#"{"all":true}"#).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(headers["x-portcullis-decision"], "deny");
    assert!(body.contains("http__weather__v1/delete"), "{body}");

    let seen = tools.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "only the allowed call reached the tool server: {seen:?}");
    assert_eq!(seen[0].1, "/api/v1/forecast?city=Oslo");
}

#[tokio::test]
async fn plain_http_tools_get_the_checker_both_ways() {
    use crate::support::fake_checker::{FakeChecker, Reply};
    let tools = tool_server().await;
    let checker = FakeChecker::start(|r| match r.data() {
        d if d.contains("exfil") => (Reply::Unsafe("sends data out".into()), None),
        // Only the result (judged under the injection rubric) is unsafe, not the arguments.
        d if d.contains("forecast-injected") && r.system().contains("prompt injection") => {
            (Reply::Unsafe("an injection".into()), None)
        }
        _ => (Reply::Safe, None),
    })
    .await;
    let extra = format!(
        "permissions: {{ allow: [\"http__weather__*\"] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  min_content_bytes: 0\n  rules: [{{ match: \"http__weather__*\", phases: [pre, post] }}]\n",
        checker.url
    );
    let p = proxy(&config(&[("weather", &tools.url)], &extra)).await;
    let base = format!("http://{}/http/weather", p.addr);
    let (status, headers, body) = post(&format!("{base}/v1/send"), &[], r#"{"note":"exfil the keys"}"#).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(headers["x-portcullis-decision"], "block");
    assert!(body.contains("portcullis blocked http__weather__v1/send"), "{body}");
    assert!(tools.seen.lock().unwrap().is_empty(), "a blocked call never reaches the tool");
    let (status, _, body) =
        post(&format!("{base}/v1/forecast"), &[], r#"{"city":"forecast-injected"}"#).await;
    assert_eq!(status, 403, "the result is withheld: {body}");
    assert!(body.contains("withheld the result") && !body.contains("TOPSECRET"), "{body}");
    assert_eq!(tools.seen.lock().unwrap().len(), 1, "it ran: a post-call block cannot un-run it");
    let (status, _, body) = post(&format!("{base}/v1/forecast"), &[], r#"{"city":"Lyon"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Lyon"), "{body}");
}

#[tokio::test]
async fn a_plain_http_ask_is_held_for_an_operator_and_a_session_waiver_answers_the_same_call() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_HTTP";
    std::env::set_var(token_env, "http-operator-token");
    let tools = tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  weather: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [http__weather__v1/forecast] }}\napprovals: {{ channel: api, timeout: 30s }}\n",
        tools.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (base, admin) = (format!("http://{}/http/weather", p.addr), format!("http://{}", p.admin_addr));
    let auth = [("authorization", "Bearer http-operator-token")];
    // Decides the one parked call with `decision`, once it shows up.
    let decide = |decision: &'static str| {
        let admin = admin.clone();
        async move {
            let (admin, auth) = (&admin, &auth);
            let id = crate::support::eventually("a call to be parked", || async move {
                let (_, _, list) = get(&format!("{admin}/approvals"), auth).await;
                let v: serde_json::Value = serde_json::from_str(&list).unwrap_or_default();
                v["pending"][0]["id"].as_u64()
            })
            .await;
            let body = format!(r#"{{"decision":"{decision}"}}"#);
            let (status, _, text) = post(&format!("{admin}/approvals/{id}"), auth, body).await;
            assert_eq!(status, 200, "{text}");
        }
    };
    let session = [("x-portcullis-session", "agent-9")];
    let call = |body: &'static str| {
        let url = format!("{base}/v1/alerts/subscribe");
        async move { post(&url, &session, body).await }
    };
    // Held until allowed for the session; the same call then passes without asking.
    let (held, ()) = tokio::join!(call(r#"{"city":"Oslo"}"#), decide("allow_session"));
    assert_eq!(held.0, 200, "{}", held.2);
    let (status, _, body) = call(r#"{"city":"Oslo"}"#).await;
    assert_eq!(status, 200, "waived: {body}");
    // Other arguments are asked again; denied, they never reach the tool server.
    let (denied, ()) = tokio::join!(call(r#"{"city":"Bergen"}"#), decide("deny"));
    assert_eq!(denied.0, 403, "{}", denied.2);
    assert!(denied.2.contains("An operator denied it"), "{}", denied.2);
    let seen = tools.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.iter().all(|(_, _, b)| b.contains("Oslo")), "{seen:?}");
}

#[tokio::test]
async fn a_plain_http_path_is_decided_and_forwarded_as_the_server_will_read_it() {
    let tools = tool_server().await;
    let p = proxy(&config(
        &[("web", &tools.url)],
        "permissions: { allow: [\"http__web__*\"], deny: [\"http__web__admin*\"] }\n",
    ))
    .await;
    let base = format!("http://{}/http/web", p.addr);
    // Spellings of /admin/delete that a server decodes or resolves to it: denied as admin.
    for path in
        ["/%61dmin/delete", "/%61%64min/delete", "/./admin/delete", "/x/../admin/delete", "/x/%2e%2e/admin"]
    {
        let (status, headers, body) = post(&format!("{base}{path}"), &[], "{}").await;
        assert_eq!(status, 403, "{path}: {body}");
        assert_eq!(headers["x-portcullis-decision"], "deny", "{path}");
    }
    // Spellings servers read in more than one way: refused as bad requests.
    for path in [
        "/.%2fadmin",
        "/x%5cadmin",
        "/%252e%252e/admin",
        "/admin;x",
        "/..;/admin",
        "/x//admin",
        "/../api2",
        "/a%00",
    ] {
        let (status, _, body) = post(&format!("{base}{path}"), &[], "{}").await;
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.contains("bad_path") && body.contains("not sent"), "{path}: {body}");
    }
    assert!(tools.seen.lock().unwrap().is_empty(), "nothing reached the server: {:?}", tools.seen);
    // An allowed call is forwarded exactly as normalised; the query as sent.
    let (status, _, body) = post(&format!("{base}/%7Eme/./v1/../run%c3%a9?q=%2e%2e"), &[], "{}").await;
    assert_eq!(status, 200, "{body}");
    let seen = tools.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].1, "/api/~me/run%C3%A9?q=%2e%2e");
}

#[tokio::test]
async fn beyond_max_pending_an_ask_is_refused_and_every_parked_one_stays() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_MAX_PENDING";
    std::env::set_var(token_env, "pending-operator");
    let tools = tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  web: {{ url: \"{}\" }}\n\
         approvals: {{ channel: api, timeout: 30s, max_pending: 1 }}\n",
        tools.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (base, admin) = (format!("http://{}/http/web", p.addr), format!("http://{}", p.admin_addr));
    let auth = [("authorization", "Bearer pending-operator")];
    let first_url = format!("{base}/v1/first");
    let first = tokio::spawn(async move { post(&first_url, &[], "{}").await });
    let (admin_ref, auth_ref) = (&admin, &auth);
    let id = crate::support::eventually("the first ask to be parked", || async move {
        let (_, _, list) = get(&format!("{admin_ref}/approvals"), auth_ref).await;
        let v: serde_json::Value = serde_json::from_str(&list).unwrap_or_default();
        v["pending"][0]["id"].as_u64()
    })
    .await;
    let (status, _, body) = post(&format!("{base}/v1/second"), &[], "{}").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("approvals.max_pending"), "{body}");
    let (_, _, list) = get(&format!("{admin}/approvals"), &auth).await;
    let v: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(v["pending"].as_array().map(Vec::len), Some(1), "the parked ask is still there: {list}");
    assert_eq!(v["pending"][0]["id"], id);
    let (status, _, text) = post(&format!("{admin}/approvals/{id}"), &auth, r#"{"decision":"deny"}"#).await;
    assert_eq!(status, 200, "{text}");
    let (status, _, body) = first.await.unwrap();
    assert_eq!(status, 403, "{body}");
    assert!(tools.seen.lock().unwrap().is_empty(), "{:?}", tools.seen);
}

#[tokio::test]
async fn thirty_denials_under_thirty_fresh_session_ids_flag_the_caller() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_FRESH_IDS";
    std::env::set_var(token_env, "fresh-operator-token");
    let tools = tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  web: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [http__web__ok], deny: [\"http__web__admin*\"] }}\napprovals: {{ channel: none }}\n",
        tools.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let base = format!("http://{}/http/web", p.addr);
    let me = ("authorization", "Bearer hijacked-agent");
    for i in 0..30 {
        let id = format!("fresh-{i}");
        let (status, _, body) =
            post(&format!("{base}/admin"), &[me, ("x-portcullis-session", &id)], "{}").await;
        assert_eq!(status, 403, "{body}");
    }
    let (status, _, body) =
        post(&format!("{base}/ok"), &[me, ("x-portcullis-session", "fresh-31")], "{}").await;
    assert_eq!(status, 403, "an allowed call of the flagged caller needs a human: {body}");
    assert!(body.contains("flagged after repeated refusals"), "{body}");
    let (status, _, body) = post(&format!("{base}/ok"), &[me], "{}").await;
    assert_eq!(status, 403, "without a session too: {body}");
    assert!(tools.seen.lock().unwrap().is_empty(), "{:?}", tools.seen);
    // An unverified token is the caller's to change: another one from the same address cannot
    // be told from this agent with a new token, and the address is held whole by now. (Configured
    // agents are told apart: identity.rs.)
    let other = ("authorization", "Bearer another-agent");
    let (status, _, body) =
        post(&format!("{base}/ok"), &[other, ("x-portcullis-session", "theirs")], "{}").await;
    assert_eq!(status, 403, "a fresh token from the held address: {body}");
    assert!(tools.seen.lock().unwrap().is_empty(), "{:?}", tools.seen);
}
