//! The admin listener: `/metrics` (Prometheus text), `/healthz` (the process answers) and
//! `/readyz` (ready to guard traffic). Open, as Prometheus and orchestrators expect; it binds
//! loopback by default. Token-protected endpoints (approvals, status) arrive with their issues.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use http::{Method, Request, StatusCode};
use hyper::body::Incoming;
use tower::Service;

use crate::proxy::Shared;
use crate::proxy::{full, Resp};
use crate::telemetry::Metrics;

/// The admin service. The current policy's guardrails decide `/readyz`.
pub fn service(
    metrics: Arc<Metrics>,
    shared: Arc<Shared>,
) -> impl Service<Request<Incoming>, Response = Resp, Error = Infallible, Future: Future + Send + 'static>
       + Clone
       + Send
       + 'static {
    tower::service_fn(move |req: Request<Incoming>| {
        let metrics = metrics.clone();
        let ready = shared.guard.load().guardrails().is_none_or(|g| g.ready());
        async move { Ok::<_, Infallible>(route(&req, &metrics, ready)) }
    })
}

fn text(status: StatusCode, content_type: &'static str, body: impl Into<bytes::Bytes>) -> Resp {
    let mut resp = Resp::new(full(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    resp
}

fn route<B>(req: &Request<B>, metrics: &Metrics, ready: bool) -> Resp {
    if req.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n");
    }
    match req.uri().path() {
        "/metrics" => text(StatusCode::OK, "text/plain; version=0.0.4", metrics.render()),
        "/healthz" => text(StatusCode::OK, "text/plain", "ok\n"),
        "/readyz" if ready => text(StatusCode::OK, "text/plain", "ready\n"),
        // A fail-closed guardrail rule depends on a checker whose breaker is open: calls it
        // covers are being refused, so traffic should go elsewhere.
        "/readyz" => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "not ready: the checker is down and a fail-closed guardrail rule depends on it\n",
        ),
        _ => text(StatusCode::NOT_FOUND, "text/plain", "not found: try /metrics, /healthz or /readyz\n"),
    }
}
