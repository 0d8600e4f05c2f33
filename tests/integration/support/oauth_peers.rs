//! Real OAuth peers on loopback sockets: a tool server that requires a bearer token and
//! publishes RFC 9728 metadata, and a client-credentials token endpoint. Both record what they
//! received, so tests assert what actually crossed the wire.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tokio::net::TcpListener;

type Handler = Arc<dyn Fn(http::request::Parts, Bytes) -> http::Response<Full<Bytes>> + Send + Sync>;

/// Serves `handler` on 127.0.0.1:0 (after `delay`, per request); returns the port.
async fn serve(handler: Handler, delay: Duration) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let handler = handler.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let handler = handler.clone();
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
                        tokio::time::sleep(delay).await;
                        Ok::<_, Infallible>(handler(parts, body))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    port
}

fn respond(status: u16, headers: &[(&str, String)], body: impl Into<Bytes>) -> http::Response<Full<Bytes>> {
    let mut b = http::Response::builder().status(status).header("content-type", "application/json");
    for (k, v) in headers {
        b = b.header(*k, v);
    }
    b.body(Full::new(body.into())).unwrap()
}

/// What the protected tool server publishes at its path-suffixed metadata location.
#[derive(Clone)]
pub enum Metadata {
    /// A good document naming the server and an authorization server.
    Good,
    /// This body, as sent.
    Raw(String),
}

/// A tool server at `/mcp` that answers JSON-RPC only with an accepted bearer token.
pub struct Protected {
    pub port: u16,
    /// The `Authorization` of every request to `/mcp`, in order.
    pub seen: Arc<Mutex<Vec<Option<String>>>>,
    /// Tokens it accepts (without `Bearer `).
    pub accepted: Arc<Mutex<HashSet<String>>>,
}

impl Protected {
    pub async fn start(metadata: Metadata) -> Protected {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(Mutex::new(HashSet::new()));
        let port_cell = Arc::new(Mutex::new(0u16));
        let (log, ok, port_of) = (seen.clone(), accepted.clone(), port_cell.clone());
        let handler: Handler = Arc::new(move |parts, body| {
            let port = *port_of.lock().unwrap();
            let me = format!("http://127.0.0.1:{port}");
            match (parts.method.as_str(), parts.uri.path()) {
                ("GET", "/.well-known/oauth-protected-resource/mcp") => match &metadata {
                    Metadata::Good => respond(
                        200,
                        &[],
                        serde_json::json!({
                            "resource": format!("http://localhost:{port}/mcp"),
                            "authorization_servers": ["https://as.example/tenant"],
                            "scopes_supported": ["tools"],
                        })
                        .to_string(),
                    ),
                    Metadata::Raw(body) => respond(200, &[], body.clone()),
                },
                ("POST", "/mcp") => {
                    let auth = parts.headers.get("authorization").map(|v| v.to_str().unwrap().to_owned());
                    log.lock().unwrap().push(auth.clone());
                    let token = auth.as_deref().and_then(|a| a.strip_prefix("Bearer "));
                    if !token.is_some_and(|t| ok.lock().unwrap().contains(t)) {
                        let challenge = format!(
                            r#"Bearer error="invalid_token", scope="tools", resource_metadata="{me}/.well-known/oauth-protected-resource/mcp""#
                        );
                        return respond(
                            401,
                            &[("www-authenticate", challenge)],
                            r#"{"error":"invalid_token"}"#,
                        );
                    }
                    let msg: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                    let answer = serde_json::json!({
                        "jsonrpc": "2.0", "id": msg["id"],
                        "result": { "content": [{ "type": "text", "text": "ran" }] },
                    });
                    respond(200, &[], answer.to_string())
                }
                _ => respond(404, &[], "{}"),
            }
        });
        let port = serve(handler, Duration::ZERO).await;
        *port_cell.lock().unwrap() = port;
        Protected { port, seen, accepted }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    pub fn accept(&self, token: &str) {
        self.accepted.lock().unwrap().insert(token.to_owned());
    }

    pub fn seen(&self) -> Vec<Option<String>> {
        self.seen.lock().unwrap().clone()
    }
}

/// How the token endpoint answers.
#[derive(Clone, Copy)]
pub enum Issue {
    /// `cc-N` tokens living `expires_in` seconds, after `delay`.
    Tokens { expires_in: u64, delay: Duration },
    /// 200 with a body that is not a token response.
    Garbage,
}

/// A client-credentials token endpoint at `/token` for client `portcullis` / secret
/// `s3cr3t-client`. Issued tokens are added to `grants` (the protected server's accepted set).
pub struct TokenEndpoint {
    pub port: u16,
    /// Token requests received.
    pub requests: Arc<AtomicUsize>,
    /// Each request's form body.
    pub forms: Arc<Mutex<Vec<String>>>,
}

impl TokenEndpoint {
    pub async fn start(issue: Issue, grants: Arc<Mutex<HashSet<String>>>) -> TokenEndpoint {
        use base64::Engine as _;
        let requests = Arc::new(AtomicUsize::new(0));
        let forms = Arc::new(Mutex::new(Vec::new()));
        let (count, log) = (requests.clone(), forms.clone());
        let expected =
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("portcullis:s3cr3t-client"));
        let handler: Handler = Arc::new(move |parts, body| {
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            log.lock().unwrap().push(String::from_utf8_lossy(&body).into_owned());
            if parts.headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
                return respond(401, &[], r#"{"error":"invalid_client"}"#);
            }
            match issue {
                Issue::Garbage => respond(200, &[], "<html>not a token</html>"),
                Issue::Tokens { expires_in, .. } => {
                    let token = format!("cc-{n}");
                    grants.lock().unwrap().insert(token.clone());
                    let body = serde_json::json!({ "access_token": token, "token_type": "Bearer", "expires_in": expires_in });
                    respond(200, &[], body.to_string())
                }
            }
        });
        let delay = match issue {
            Issue::Tokens { delay, .. } => delay,
            Issue::Garbage => Duration::ZERO,
        };
        let port = serve(handler, delay).await;
        TokenEndpoint { port, requests, forms }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/token", self.port)
    }

    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}
