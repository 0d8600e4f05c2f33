//! Red team, round 5: the features merged last round that nobody attacked (egress over every
//! argument, plan mode, the user's own task channel, grants, escapes, connect and the `/mcp`
//! alias), against real peers. A test that fails today is an open finding, marked `#[ignore]`
//! with its severity so the suite stays green; the others are attacks that held and stay as
//! regression tests. Each finding's premise — that a real fetcher, shell or client does what the
//! attack needs with these exact bytes — is checked by running it, not by reading.

mod connect;
mod egress;
mod escape;
mod grants;
mod plan;
mod task;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tokio::net::TcpListener;

/// A real HTTP server on 127.0.0.1:0 that records every request (`METHOD /path body`) and
/// answers 200 with a JSON body, or, for `/redirect`, 302 to the location it was built with.
pub(crate) struct Target {
    pub port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Target {
    pub async fn start(location: Option<String>) -> Target {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (log, location) = (log.clone(), location.clone());
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let (log, location) = (log.clone(), location.clone());
                        async move {
                            let method = req.method().to_string();
                            let pq = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
                            let body =
                                req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                            log.lock()
                                .unwrap()
                                .push(format!("{method} {pq} {}", String::from_utf8_lossy(&body)));
                            let resp = match (pq.starts_with("/redirect"), location) {
                                (true, Some(to)) => http::Response::builder()
                                    .status(302)
                                    .header("location", to)
                                    .body(Full::new(Bytes::from_static(b"moved"))),
                                _ => http::Response::builder()
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
        Target { port, seen }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far, `METHOD /path body`.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// A config parsed from YAML, or the test fails naming the problem.
pub(crate) fn parse(yaml: &str) -> portcullis::config::Config {
    portcullis::config::Config::parse(yaml, "attack_round5").unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}
