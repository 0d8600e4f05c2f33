//! The upstream end of the stack: a pooled hyper client (rustls for https) that sends the
//! upstream its own `Host`, never the agent's `Origin` or hop-by-hop headers, and bounds every
//! wait — connect, response head, silence inside a body.
//!
//! It also decides what crosses in `Authorization` ([`crate::oauth`]): the agent's only to a
//! `passthrough` upstream, the proxy's own for `bearer_env` and `client_credentials`, nothing
//! otherwise. And it turns an upstream's 401/403 to a call that
//! carried none of the agent's into an error the agent can act on: here, below the pre gate, so
//! the error answers the call's JSON-RPC id, and nothing of the upstream's challenge or of the
//! proxy's credential reaches the agent.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, Uri};
use http_body::{Body as HttpBody, Frame};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::time::Sleep;
use tower::Service;
use tracing::Instrument;

use crate::config::Limits;
use crate::proxy::error::{ErrorKind, ProxyError};
use crate::proxy::route::{Route, RouteKind, Target};
use crate::proxy::telemetry::UpstreamElapsed;
use crate::proxy::{BoxError, Req, Resp};
use crate::telemetry::{otel, Metrics};

/// Headers that describe one hop and never cross the proxy (RFC 9110 §7.6.1), plus the ones the
/// proxy owns: `host` (rewritten), `origin` (the agent's, not ours), `proxy-authorization`
/// (meant for a proxy, never for the tool server) and `content-length` (recomputed).
const STRIP: &[HeaderName] = &[
    header::CONNECTION,
    header::HOST,
    header::ORIGIN,
    header::PROXY_AUTHORIZATION,
    header::PROXY_AUTHENTICATE,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::CONTENT_LENGTH,
];

const KEEP_ALIVE: &str = "keep-alive";
const PROXY_CONNECTION: &str = "proxy-connection";

/// Sends requests to upstreams. A clone shares the client (one `Arc`: a call takes one clone,
/// where cloning the client itself is a handful of them).
#[derive(Clone)]
pub struct Upstream(Arc<Sender>);

struct Sender {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    header_timeout: Duration,
    idle_timeout: Duration,
    metrics: Arc<Metrics>,
}

impl Upstream {
    pub fn new(limits: &Limits, metrics: Arc<Metrics>) -> Upstream {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(limits.connect_timeout));
        http.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .pool_max_idle_per_host(256)
            .build(https);
        Upstream(Arc::new(Sender {
            client,
            header_timeout: limits.header_timeout,
            idle_timeout: limits.idle_timeout,
            metrics,
        }))
    }
}

/// The upstream URI for a route.
fn target_uri(target: &Target, kind: &RouteKind) -> Result<Uri, http::Error> {
    match kind {
        RouteKind::Mcp => Ok(target.url.clone()),
        RouteKind::Http { path_and_query } => {
            let base = target.url.path().trim_end_matches('/');
            let pq = format!("{base}{path_and_query}");
            let mut parts = target.url.clone().into_parts();
            parts.path_and_query = Some(pq.parse()?);
            Ok(Uri::from_parts(parts)?)
        }
    }
}

/// True for a header that never crosses the proxy: [`STRIP`], `keep-alive`, `proxy-connection`,
/// and the gate's own task and mode headers (the user's task is for the checker, never for a
/// tool; the mode is the gate's).
fn hop_by_hop(name: &HeaderName) -> bool {
    STRIP.contains(name)
        || matches!(
            name.as_str(),
            KEEP_ALIVE | PROXY_CONNECTION | crate::call::TASK_HEADER | crate::call::MODE_HEADER
        )
}

/// Removes hop-by-hop headers, including any the `Connection` header names, except `keep`.
///
/// One pass over the names the message has (a handful), rather than a removal (a hash and a
/// probe) for each of the fourteen names that could be there; the names `Connection` lists are
/// compared in place and the doomed ones gathered on the stack: no allocation, where a message
/// carries one or two of them (`connection`, `host`, `content-length`).
fn strip_hop_by_hop(headers: &mut HeaderMap, keep: Option<&HeaderName>) {
    // The names `Connection` lists, but for `close` and `keep-alive` (no header to strip, or
    // stripped anyway): usually none. A listed token that is no valid header name names no
    // header: it matches none.
    let tokens = || {
        headers
            .get_all(header::CONNECTION)
            .into_iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|t| !t.eq_ignore_ascii_case("close") && !t.eq_ignore_ascii_case(KEEP_ALIVE))
    };
    let lists_any = tokens().next().is_some();
    let listed = |n: &HeaderName| lists_any && tokens().any(|t| t.eq_ignore_ascii_case(n.as_str()));
    let mut doomed: [Option<HeaderName>; 8] = Default::default();
    let mut found = 0;
    let mut more = Vec::new();
    for name in headers.keys() {
        if Some(name) == keep || !(hop_by_hop(name) || listed(name)) {
            continue;
        }
        match doomed.get_mut(found) {
            Some(slot) => *slot = Some(name.clone()),
            None => more.push(name.clone()),
        }
        found += 1;
    }
    for name in doomed.iter().flatten().chain(&more) {
        headers.remove(name);
    }
}

impl Service<Req> for Upstream {
    type Response = Resp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let this = self.0.clone();
        let span = upstream_span(&req);
        let traced = span.clone();
        Box::pin(
            async move {
                let (mut parts, body) = req.into_parts();
                let route = parts
                    .extensions
                    .remove::<Route>()
                    .ok_or_else(|| ProxyError::new(ErrorKind::Internal("no route".into())))?;
                let name = route.target.name.clone();
                let uri = target_uri(&route.target, &route.kind)
                    .map_err(|e| ProxyError::new(ErrorKind::Internal(Box::new(e))))?;
                strip_hop_by_hop(&mut parts.headers, None);
                let auth = &route.target.auth;
                if !auth.forwards_agent_credential() {
                    parts.headers.remove(header::AUTHORIZATION);
                }
                let held =
                    auth.credential(&name).await.map_err(|e| ProxyError::new(ErrorKind::Credential(e)))?;
                if let Some(credential) = &held {
                    parts.headers.insert(header::AUTHORIZATION, credential.clone());
                }
                // Answers must be readable to be inspected: ask for them uncompressed.
                parts.headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("identity"));
                if let Some(auth) = uri.authority() {
                    let host = HeaderValue::from_str(auth.as_str())
                        .map_err(|e| ProxyError::new(ErrorKind::Internal(Box::new(e))))?;
                    parts.headers.insert(header::HOST, host);
                }
                let mcp = matches!(route.kind, RouteKind::Mcp).then_some(&body[..]);
                let body = otel::propagate(&span, &mut parts.headers, mcp).map_or(body, Bytes::from);
                let mut out = Request::new(Full::new(body));
                *out.method_mut() = parts.method;
                *out.uri_mut() = uri;
                *out.headers_mut() = parts.headers;

                let start = Instant::now();
                let sent = tokio::time::timeout(this.header_timeout, this.client.request(out)).await;
                let elapsed = start.elapsed();
                let resp = match sent {
                    Err(_) => {
                        let secs = this.header_timeout.as_secs_f64();
                        return Err(ProxyError::new(ErrorKind::UpstreamTimeout {
                            upstream: name.to_string(),
                            secs,
                        })
                        .into());
                    }
                    Ok(Err(e)) if e.is_connect() => {
                        return Err(ProxyError::new(ErrorKind::Connect {
                            upstream: name.to_string(),
                            source: Box::new(e),
                        })
                        .into())
                    }
                    Ok(Err(e)) => {
                        return Err(ProxyError::new(ErrorKind::Upstream {
                            upstream: name.to_string(),
                            source: Box::new(e),
                        })
                        .into())
                    }
                    Ok(Ok(resp)) => resp,
                };
                this.metrics.upstream_latency(&name, elapsed.as_secs_f64());
                span.record("http.response.status_code", resp.status().as_u16());
                let (mut parts, body) = resp.into_parts();
                if let Some(refused) = auth.refusal(&name, parts.status, &parts.headers, held.as_ref()) {
                    return Err(ProxyError::new(ErrorKind::Unauthorized(refused)).into());
                }
                strip_hop_by_hop_response(&mut parts.headers);
                parts.extensions.insert(UpstreamElapsed(elapsed));
                let body = IdleTimeout::new(body, this.idle_timeout).boxed_unsync();
                Ok(Resp::from_parts(parts, body))
            }
            .instrument(traced),
        )
    }
}

/// The upstream call's span when traces are on and the request is an exchange's.
fn upstream_span(req: &Req) -> tracing::Span {
    match req.extensions().get::<Route>().filter(|_| otel::on()) {
        Some(r) => otel::spans::upstream(req.extensions(), &r.target.name, req.method(), &r.target.url),
        None => tracing::Span::none(),
    }
}

/// Response side: the same hop-by-hop set, but `content-length` stays (it describes the body
/// we relay unchanged; layers that rewrite the body remove it).
fn strip_hop_by_hop_response(headers: &mut HeaderMap) {
    strip_hop_by_hop(headers, Some(&header::CONTENT_LENGTH));
}

/// A body that fails if the upstream goes silent for longer than `limit` between frames.
pub struct IdleTimeout {
    inner: Incoming,
    sleep: Pin<Box<Sleep>>,
    limit: Duration,
}

impl IdleTimeout {
    fn new(inner: Incoming, limit: Duration) -> Self {
        IdleTimeout { inner, sleep: Box::pin(tokio::time::sleep(limit)), limit }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("upstream sent nothing for {0:?}")]
pub struct IdleError(Duration);

impl HttpBody for IdleTimeout {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(f) => {
                let deadline = tokio::time::Instant::now() + this.limit;
                this.sleep.as_mut().reset(deadline);
                Poll::Ready(f.map(|r| r.map_err(Into::into)))
            }
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(IdleError(this.limit))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_and_proxy_owned_headers_are_stripped() {
        let mut h = HeaderMap::new();
        h.insert(header::CONNECTION, HeaderValue::from_static("keep-alive, x-secret-hop"));
        h.insert("x-secret-hop", HeaderValue::from_static("1"));
        h.insert(header::ORIGIN, HeaderValue::from_static("https://evil.example"));
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8686"));
        h.insert(header::PROXY_AUTHORIZATION, HeaderValue::from_static("Basic x"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer for-the-tool"));
        h.insert("mcp-session-id", HeaderValue::from_static("abc"));
        h.insert(crate::call::TASK_HEADER, HeaderValue::from_static("Pay the rent"));
        h.insert(crate::call::MODE_HEADER, HeaderValue::from_static("plan"));
        strip_hop_by_hop(&mut h, None);
        assert_eq!(h.len(), 2, "{h:?}");
        assert!(h.contains_key(header::AUTHORIZATION) && h.contains_key("mcp-session-id"));
    }

    #[test]
    fn every_hop_by_hop_name_is_stripped_with_all_its_values_and_nothing_else_is() {
        let hop = [
            "connection",
            "host",
            "origin",
            "proxy-authorization",
            "proxy-authenticate",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "content-length",
            "keep-alive",
            "proxy-connection",
            "portcullis-task",
            "portcullis-mode",
        ];
        for name in hop {
            let mut h = HeaderMap::new();
            h.append(name, HeaderValue::from_static("a"));
            h.append(name, HeaderValue::from_static("b"));
            h.insert("accept", HeaderValue::from_static("application/json"));
            strip_hop_by_hop(&mut h, None);
            assert!(!h.contains_key(name), "{name}: {h:?}");
            assert_eq!(h.len(), 1, "{name}: only accept is left: {h:?}");
        }
        // A message with none of them is left as it was; the response keeps its length.
        let mut h = HeaderMap::new();
        h.insert("accept", HeaderValue::from_static("application/json"));
        h.insert("content-length", HeaderValue::from_static("12"));
        let mut plain = h.clone();
        plain.remove("content-length");
        let before = plain.clone();
        strip_hop_by_hop(&mut plain, None);
        assert_eq!(plain, before);
        strip_hop_by_hop_response(&mut h);
        assert_eq!(h.get("content-length").map(HeaderValue::as_bytes), Some(&b"12"[..]), "{h:?}");
        // Names listed in Connection go too, however they are spelled there.
        let mut h = HeaderMap::new();
        h.append(header::CONNECTION, HeaderValue::from_static(" X-One ,x-two"));
        h.append(header::CONNECTION, HeaderValue::from_static("X-Three"));
        for n in ["x-one", "x-two", "x-three", "x-four"] {
            h.insert(n, HeaderValue::from_static("v"));
        }
        strip_hop_by_hop(&mut h, None);
        assert_eq!(h.keys().map(HeaderName::as_str).collect::<Vec<_>>(), ["x-four"], "{h:?}");
        // More doomed names than the stack holds: every one goes, the rest stays.
        let mut h = HeaderMap::new();
        let listed: Vec<String> = (0..12).map(|i| format!("x-hop-{i}")).collect();
        h.insert(header::CONNECTION, HeaderValue::from_str(&listed.join(",")).unwrap());
        for n in hop.iter().copied().chain(listed.iter().map(String::as_str)).chain(["x-stays"]) {
            h.append(HeaderName::from_bytes(n.as_bytes()).unwrap(), HeaderValue::from_static("v"));
        }
        strip_hop_by_hop(&mut h, None);
        assert_eq!(h.keys().map(HeaderName::as_str).collect::<Vec<_>>(), ["x-stays"], "{h:?}");
        // The response keeps its length even when `Connection` lists it.
        let mut h = HeaderMap::new();
        h.insert(header::CONNECTION, HeaderValue::from_static("content-length, x-one"));
        h.insert("content-length", HeaderValue::from_static("12"));
        h.insert("x-one", HeaderValue::from_static("v"));
        strip_hop_by_hop_response(&mut h);
        assert_eq!(h.keys().map(HeaderName::as_str).collect::<Vec<_>>(), ["content-length"], "{h:?}");
    }

    #[test]
    fn http_routes_join_the_upstream_base_path() {
        let t = Target {
            name: "t".into(),
            url: "http://127.0.0.1:9/api/".parse().unwrap(),
            auth: crate::oauth::Auth::None,
        };
        let kind = RouteKind::Http { path_and_query: "/v1/x?q=1".into() };
        assert_eq!(target_uri(&t, &kind).unwrap(), "http://127.0.0.1:9/api/v1/x?q=1");
        assert_eq!(target_uri(&t, &RouteKind::Mcp).unwrap(), "http://127.0.0.1:9/api/");
    }
}
