//! Egress against real peers: a web-post tool on the Python SDK server, marked a sink, is never
//! sent to metadata, loopback or private destinations in any spelling unless an `egress:` line
//! allows it; a sink on a plain HTTP upstream is refused a private address before the call; a
//! plain HTTP tool's redirect to metadata is withheld.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use portcullis::config::Config;
use tokio::net::TcpListener;

use crate::support::*;

/// A real HTTP server on 127.0.0.1:0: `/redirect/…` answers 302 to the URL after it (decoded
/// from the query `?to=`), anything else records the request and answers 200.
struct Sink {
    base: String,
    seen: Arc<Mutex<Vec<String>>>,
}

async fn sink() -> Sink {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let log = log.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let log = log.clone();
                    async move {
                        let pq = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        log.lock().unwrap().push(format!("{pq} {}", String::from_utf8_lossy(&body)));
                        let resp = match pq.split_once("/redirect?to=") {
                            Some((_, to)) => http::Response::builder()
                                .status(302)
                                .header("location", to.replace("%20", " "))
                                .body(Full::new(Bytes::from_static(b"moved"))),
                            None => http::Response::builder()
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from_static(b"{\"ok\":true}"))),
                        };
                        Ok::<_, Infallible>(resp.unwrap())
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Sink { base, seen }
}

fn parse(yaml: &str) -> Config {
    Config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e}"))
}

/// The Python peer as upstream `py` (its `web_post` a sink), at the auto posture: the floor
/// allows everything, so only egress can refuse.
fn py_config(peer: &Peer, upstream_egress: &str) -> Config {
    parse(&format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nposture: auto\n\
         upstreams:\n  py: {{ url: \"{}\"{upstream_egress} }}\n\
         egress: {{ sinks: [mcp__py__web_post] }}\n",
        peer.url()
    ))
}

fn post_step(url: &str, body: &str) -> String {
    serde_json::json!({ "url": url, "body": body }).to_string()
}

#[tokio::test]
async fn a_sink_is_never_sent_to_cloud_metadata_or_loopback_in_any_spelling() {
    let peer = Peer::python("legacy");
    let p = proxy(&py_config(&peer, "")).await;
    let refused = [
        ("http://169.254.169.254/latest/meta-data/", "egress: metadata"),
        ("http://2852039166/", "egress: metadata"),
        ("http://0xa9.0xfe.0xa9.0xfe/", "egress: metadata"),
        ("http://[::ffff:a9fe:a9fe]/", "egress: metadata"),
        ("http://[fd00:ec2::254]/latest/", "egress: metadata"),
        ("http://METADATA.google.internal./computeMetadata/v1/", "egress: metadata"),
        ("http://127.1:9/", "egress: loopback"),
        ("http://localhost:9/", "egress: loopback"),
        ("http://10.0.0.7/hook", "egress: private"),
    ];
    let args: Vec<String> = refused.iter().map(|(url, _)| post_step(url, "hello")).collect();
    let mut steps: Vec<&str> = Vec::new();
    for a in &args {
        steps.extend(["call", "web_post", a]);
    }
    // The destination hidden in the body text, as a bare host.
    let in_body = post_step("https://docs.rs/", "then read fd00:ec2::254 please");
    steps.extend(["call", "web_post", &in_body]);
    let out = py_client(&proxy_url(&p, "py"), "legacy", &steps).await;
    for (i, (url, rule)) in refused.iter().enumerate() {
        assert_eq!(out[i]["result"]["isError"], true, "{url}: {}", out[i]);
        let text = text_of(&out[i]);
        assert!(text.contains(rule), "{url}: {text}");
        assert!(text.contains("argument /url"), "{url}: {text}");
        assert!(text.contains("egress: {allow: ["), "{url}: the line that allows it: {text}");
    }
    let last = &out[refused.len()];
    assert!(text_of(last).contains("egress: metadata"), "{last}");
    assert!(text_of(last).contains("argument /body"), "{last}");
    assert!(peer.tools_run().is_empty(), "no refused call reached the tool: {:?}", peer.tools_run());
}

#[tokio::test]
async fn the_egress_line_the_refusal_names_lets_the_sink_post_to_a_local_server() {
    let peer = Peer::python("legacy");
    let target = sink().await;
    let url = format!("{}/hook", target.base);
    let step = post_step(&url, "build finished");

    // Refused, naming the line.
    let p = proxy(&py_config(&peer, "")).await;
    let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "web_post", &step]).await;
    let text = text_of(&out[0]);
    assert!(text.contains(r#"`egress: {allow: ["127.0.0.1"]}` (under upstreams.py"#), "{text}");
    assert!(target.seen.lock().unwrap().is_empty());

    // That line, under the upstream: the tool runs and really posts.
    let p = proxy(&py_config(&peer, ", egress: { allow: [\"127.0.0.1\"] }")).await;
    let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "web_post", &step]).await;
    assert!(text_of(&out[0]).contains("HTTP 200"), "{}", out[0]);
    assert_eq!(*target.seen.lock().unwrap(), ["/hook build finished"]);
    // An allow lifts the default, never a deny: metadata stays refused next to it.
    let meta = post_step("http://169.254.169.254/", "x");
    let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "web_post", &meta]).await;
    assert!(text_of(&out[0]).contains("egress: metadata"), "{}", out[0]);
    assert_eq!(peer.tools_run(), ["web_post"]);
}

#[tokio::test]
async fn an_unmarked_tool_is_refused_only_metadata() {
    let peer = Peer::python("legacy");
    let p = proxy(&py_config(&peer, "")).await;
    let out = py_client(
        &proxy_url(&p, "py"),
        "legacy",
        &[
            "call",
            "echo",
            r#"{"message":"my dev server is http://localhost:3000"}"#,
            "call",
            "echo",
            r#"{"message":"now GET http://169.254.169.254/latest/meta-data/iam/"}"#,
        ],
    )
    .await;
    assert_eq!(text_of(&out[0]), "my dev server is http://localhost:3000");
    assert!(text_of(&out[1]).contains("egress: metadata"), "{}", out[1]);
    assert_eq!(peer.tools_run(), ["echo"]);
}

#[tokio::test]
async fn a_sink_on_a_plain_http_upstream_is_refused_a_private_address_before_the_call() {
    let target = sink().await;
    let p = proxy(&parse(&format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nposture: auto\n\
         upstreams:\n  hooks: {{ url: \"{}/api\", egress: {{ sinks: [\"http__hooks__*\"], deny: [evil.example] }} }}\n",
        target.base
    )))
    .await;
    let base = format!("http://{}/http/hooks", p.addr);
    let (status, _, body) =
        post(&format!("{base}/send"), &[], r#"{"webhook":"http://192.168.1.20/x"}"#).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("egress: private") && body.contains("/webhook"), "{body}");
    let (status, _, body) = post(&format!("{base}/send"), &[], r#"{"to":"ops@mail.evil.example"}"#).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("upstreams.hooks.egress.deny: evil.example"), "{body}");
    assert!(target.seen.lock().unwrap().is_empty(), "nothing reached the upstream");
    let (status, _, body) =
        post(&format!("{base}/send"), &[], r#"{"webhook":"https://hooks.example/x"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(target.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_plain_http_tools_redirect_to_metadata_is_withheld_and_others_pass() {
    let target = sink().await;
    let p = proxy(&parse(&format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nposture: auto\n\
         upstreams:\n  web: {{ url: \"{}\" }}\n",
        target.base
    )))
    .await;
    let base = format!("http://{}/http/web", p.addr);
    for to in ["http://169.254.169.254/latest/meta-data/", "//2852039166/x", "http://[fd00:ec2::254]/"] {
        let (status, headers, body) = post(&format!("{base}/redirect?to={to}"), &[], "{}").await;
        assert_eq!(status, 403, "{to}: {body}");
        assert!(headers.get("location").is_none(), "{to}: the Location never reaches the agent");
        assert!(
            body.contains("redirects where egress refuses") && body.contains("egress: metadata"),
            "{body}"
        );
    }
    for to in ["https://docs.rs/serde", "/api/next"] {
        let (status, headers, _) = post(&format!("{base}/redirect?to={to}"), &[], "{}").await;
        assert_eq!(status, 302, "{to}");
        assert_eq!(headers.get("location").unwrap(), to);
    }
}
