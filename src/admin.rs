//! The admin listener: `/metrics` (Prometheus text), `/healthz` (the process answers) and
//! `/readyz` (ready to guard traffic). Open, as Prometheus and orchestrators expect; it binds
//! loopback by default. Token-protected endpoints (approvals, status) arrive with their issues.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use http::{Method, Request, StatusCode};
use hyper::body::Incoming;
use tower::Service;

use crate::proxy::{full, Resp};
use crate::telemetry::Metrics;

/// The admin service.
pub fn service(
    metrics: Arc<Metrics>,
) -> impl Service<Request<Incoming>, Response = Resp, Error = Infallible, Future: Future + Send + 'static>
       + Clone
       + Send
       + 'static {
    tower::service_fn(move |req: Request<Incoming>| {
        let metrics = metrics.clone();
        async move { Ok::<_, Infallible>(route(&req, &metrics)) }
    })
}

fn text(status: StatusCode, content_type: &'static str, body: impl Into<bytes::Bytes>) -> Resp {
    let mut resp = Resp::new(full(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    resp
}

fn route<B>(req: &Request<B>, metrics: &Metrics) -> Resp {
    if req.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n");
    }
    match req.uri().path() {
        "/metrics" => text(StatusCode::OK, "text/plain; version=0.0.4", metrics.render()),
        "/healthz" => text(StatusCode::OK, "text/plain", "ok\n"),
        // Nothing yet can make the proxy unable to guard (the checker arrives with Layer 2).
        "/readyz" => text(StatusCode::OK, "text/plain", "ready\n"),
        _ => text(StatusCode::NOT_FOUND, "text/plain", "not found: try /metrics, /healthz or /readyz\n"),
    }
}
