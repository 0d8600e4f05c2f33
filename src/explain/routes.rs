//! `GET /decisions/{id}` and `GET /decisions/stream` on the admin listener (the bearer token is
//! checked by the caller, [`crate::admin`], before either is reached).

use http::{Method, Request, StatusCode};

use crate::decision::DecisionId;
use crate::proxy::{full, Resp};
use crate::runtime::Shared;

/// Answers a request under `/decisions/`.
pub fn route<B>(req: &Request<B>, shared: &Shared) -> Resp {
    if req.method() != Method::GET {
        return json(StatusCode::METHOD_NOT_ALLOWED, serde_json::json!({"error": "GET only"}));
    }
    let guard = shared.guard.load();
    let audit = guard.audit();
    match req.uri().path().strip_prefix("/decisions/").unwrap_or("") {
        "stream" => match audit.tap().subscribe() {
            Some(sub) => super::stream::respond(sub),
            None => json(StatusCode::SERVICE_UNAVAILABLE, serde_json::json!({"error": "shutting down"})),
        },
        id => match DecisionId::parse(id) {
            None => json(
                StatusCode::NOT_FOUND,
                serde_json::json!({"error": format!("{id:?} is not a decision id")}),
            ),
            Some(id) => match audit.explained(id) {
                lines if lines.is_empty() => json(
                    StatusCode::NOT_FOUND,
                    serde_json::json!({
                        "error": format!("decision {id} is not kept here (only the latest audit.explain decisions are; read the audit file with --audit)")
                    }),
                ),
                lines => json(StatusCode::OK, serde_json::json!({"id": id, "lines": lines})),
            },
        },
    }
}

fn json(status: StatusCode, v: serde_json::Value) -> Resp {
    let mut resp = Resp::new(full(v.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    resp.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    resp
}
