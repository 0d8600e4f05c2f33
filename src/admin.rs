//! The admin listener: `/metrics` (Prometheus text), `/healthz` (the process answers) and
//! `/readyz` (ready to guard traffic). Open, as Prometheus and orchestrators expect; it binds
//! loopback by default. Token-protected endpoints (approvals, status) arrive with their issues.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use http::{Method, Request, StatusCode};
use hyper::body::Incoming;
use tower::Service;

use http_body_util::BodyExt;

use crate::approval::pending::DecideError;
use crate::approval::Decision;
use crate::proxy::Shared;
use crate::proxy::{full, Resp};
use crate::telemetry::Metrics;

/// The admin service. The current policy's guardrails decide `/readyz`; `token` (from
/// `admin.token_env`) guards the approvals API, which is disabled without one.
pub fn service(
    metrics: Arc<Metrics>,
    shared: Arc<Shared>,
    token: Option<String>,
) -> impl Service<Request<Incoming>, Response = Resp, Error = Infallible, Future: Future + Send + 'static>
       + Clone
       + Send
       + 'static {
    let token: Arc<Option<String>> = Arc::new(token);
    tower::service_fn(move |req: Request<Incoming>| {
        let (metrics, shared, token) = (metrics.clone(), shared.clone(), token.clone());
        async move {
            let resp = match req.uri().path() {
                p if p == "/approvals"
                    || p.starts_with("/approvals/")
                    || p == "/status"
                    || p.starts_with("/sessions/") =>
                {
                    approvals(req, &shared, &token).await
                }
                _ => {
                    let ready = shared.guard.load().guardrails().is_none_or(|g| g.ready());
                    route(&req, &metrics, ready)
                }
            };
            Ok::<_, Infallible>(resp)
        }
    })
}

fn text(status: StatusCode, content_type: &'static str, body: impl Into<bytes::Bytes>) -> Resp {
    let mut resp = Resp::new(full(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    resp
}

fn json(status: StatusCode, v: serde_json::Value) -> Resp {
    text(status, "application/json", v.to_string())
}

/// Compares in time independent of where the strings differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `GET /approvals` lists parked calls; `POST /approvals/{id}` with
/// `{"decision": "allow_once" | "allow_session" | "deny"}` decides one; `GET /status` shows the
/// flagged sessions, `POST /sessions/{id}/clear` clears one. Bearer token required.
async fn approvals(req: Request<Incoming>, shared: &Shared, token: &Option<String>) -> Resp {
    let Some(token) = token else {
        return json(
            StatusCode::NOT_FOUND,
            serde_json::json!({"error": "the approvals API is disabled: set admin.token_env and that variable"}),
        );
    };
    let presented = req
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !same(presented.as_bytes(), token.as_bytes()) {
        let mut resp = json(StatusCode::UNAUTHORIZED, serde_json::json!({"error": "bearer token required"}));
        resp.headers_mut().insert(http::header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
        return resp;
    }
    let path = req.uri().path().to_owned();
    if path == "/status" && req.method() == Method::GET {
        let a = &shared.approvals;
        let flagged: Vec<serde_json::Value> = a
            .flags
            .list()
            .into_iter()
            .map(|(session, refusals)| serde_json::json!({"session": session, "refusals": refusals}))
            .collect();
        return json(
            StatusCode::OK,
            serde_json::json!({"pending": a.pending.list().len(), "flagged_sessions": flagged}),
        );
    }
    if let Some(session) = path.strip_prefix("/sessions/").and_then(|p| p.strip_suffix("/clear")) {
        if req.method() != Method::POST {
            return json(
                StatusCode::METHOD_NOT_ALLOWED,
                serde_json::json!({"error": "POST /sessions/{id}/clear"}),
            );
        }
        return match shared.approvals.flags.clear(session) {
            true => json(StatusCode::OK, serde_json::json!({"session": session, "cleared": true})),
            false => json(
                StatusCode::NOT_FOUND,
                serde_json::json!({"error": format!("session {session:?} is not flagged")}),
            ),
        };
    }
    match (req.method().clone(), path.strip_prefix("/approvals/")) {
        (Method::GET, None) => {
            json(StatusCode::OK, serde_json::json!({"pending": shared.approvals.pending.list()}))
        }
        (Method::POST, Some(id)) => {
            let Ok(id) = id.parse::<u64>() else {
                return json(
                    StatusCode::NOT_FOUND,
                    serde_json::json!({"error": format!("no approval {id:?}")}),
                );
            };
            let body = match http_body_util::Limited::new(req.into_body(), 4096).collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => {
                    return json(
                        StatusCode::BAD_REQUEST,
                        serde_json::json!({"error": "body over 4 KiB or unreadable"}),
                    )
                }
            };
            let decision = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("decision").and_then(|d| d.as_str()).and_then(Decision::parse));
            let Some(decision) = decision else {
                return json(
                    StatusCode::BAD_REQUEST,
                    serde_json::json!({"error": "body must be {\"decision\": \"allow_once\" | \"allow_session\" | \"deny\"}"}),
                );
            };
            match shared.approvals.pending.decide(id, decision) {
                Ok(()) => json(StatusCode::OK, serde_json::json!({"id": id, "decision": decision.as_str()})),
                Err(e @ DecideError::NotFound(_)) => {
                    json(StatusCode::NOT_FOUND, serde_json::json!({"error": e.to_string()}))
                }
                Err(e @ DecideError::NotWaivable(_)) => {
                    json(StatusCode::CONFLICT, serde_json::json!({"error": e.to_string()}))
                }
            }
        }
        _ => json(
            StatusCode::METHOD_NOT_ALLOWED,
            serde_json::json!({"error": "GET /approvals, POST /approvals/{id}"}),
        ),
    }
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
