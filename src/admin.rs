//! The admin listener: `/metrics` (Prometheus text), `/healthz` (the process answers) and
//! `/readyz` (ready to guard traffic, and which upstreams cannot be reached). Open, as Prometheus and orchestrators expect; it binds
//! loopback by default. With `admin.token_env` set: the approvals API behind a bearer token,
//! `/console`, the operator's page that calls it (docs/console.md), and `POST /hook/{pre|post}`,
//! where `portcullis hook --proxy` hands over Claude Code's tool calls ([`crate::hook::serve`]).
//!
//! Every request's `Host` and `Origin` are checked against `allowed_hosts` and the admin
//! listener's own address first, as on the agent listener: a page a browser loaded from a name
//! that rebinds to loopback must not read `/metrics` (agent names, upstreams, refusal counts) or
//! reach the API. A scraper or probe that sends no `Origin` and names an allowed host is served.

mod always;
pub mod runbook;

use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use http::{Method, Request, StatusCode};
use hyper::body::Incoming;
use tower::Service;

use http_body_util::BodyExt;

use crate::approval::fleet::FleetDecideError;
use crate::approval::pending::DecideError;
use crate::approval::Choice;
use crate::config::hosts::AllowedHosts;
use crate::proxy::{full, Resp};
use crate::runtime::Shared;
use crate::telemetry::Metrics;

/// The admin service. The current policy's guardrails decide `/readyz`; `token` (from
/// `admin.token_env`) guards the approvals API, which is disabled without one; `allowed` names
/// the hosts it answers (`allowed_hosts` with the admin listener's own address).
pub fn service(
    metrics: Arc<Metrics>,
    shared: Arc<Shared>,
    token: Option<String>,
    allowed: AllowedHosts,
    upstreams: crate::readiness::Upstreams,
) -> impl Service<Request<Incoming>, Response = Resp, Error = Infallible, Future: Future + Send + 'static>
       + Clone
       + Send
       + 'static {
    let token: Arc<Option<String>> = Arc::new(token);
    let allowed = Arc::new(allowed);
    let upstreams = Arc::new(upstreams);
    tower::service_fn(move |req: Request<Incoming>| {
        let (metrics, shared, token) = (metrics.clone(), shared.clone(), token.clone());
        let upstreams = upstreams.clone();
        let refusal = allowed.refusal(req.uri(), req.headers());
        async move {
            if let Some(why) = refusal {
                let why = format!("{why}: refused (DNS-rebinding protection; see allowed_hosts)\n");
                return Ok::<_, Infallible>(text(StatusCode::FORBIDDEN, "text/plain", why));
            }
            let resp = match req.uri().path() {
                p if p == "/approvals"
                    || p.starts_with("/approvals/")
                    || p == "/status"
                    || p == "/decisions"
                    || p.starts_with("/sessions/") =>
                {
                    approvals(req, &shared, &token).await
                }
                p if p.starts_with("/decisions/") => {
                    unauthorized(&req, &token).unwrap_or_else(|| crate::explain::route(&req, &shared))
                }
                p if p.starts_with("/hook/") => match unauthorized(&req, &token) {
                    None => {
                        let phase = p["/hook/".len()..].to_owned();
                        crate::hook::serve::endpoint(req, &phase, shared).await
                    }
                    Some(refused) => refused,
                },
                "/console" => console(&req, token.is_some()),
                _ => {
                    let ready = if !shared.identities.load().ready() {
                        Err("not ready: the JWT signing keys have not been loaded, so agents cannot authenticate\n")
                    } else if !shared.guard.load().guardrails().is_none_or(|g| g.ready()) {
                        // A fail-closed guardrail rule depends on a checker whose breaker is
                        // open: calls it covers are being refused, so traffic should go elsewhere.
                        Err("not ready: the checker is down and a fail-closed guardrail rule depends on it\n")
                    } else {
                        Ok(())
                    };
                    let probed = match req.uri().path() {
                        "/readyz" => upstreams.unreachable().await,
                        _ => Vec::new(),
                    };
                    route(&req, &metrics, Readiness { guard: ready, unreachable: probed })
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

/// The operator console: one self-contained page, no data in it. Its script and style are inline
/// and allowed by hash, so nothing else can run or load in it; it talks only to this listener.
const CONSOLE: &str = include_str!("console.html");

/// The SHA-256 (base64) of the text between the page's one `<{tag}>` and `</{tag}>`, as CSP wants.
fn inline_hash(html: &str, tag: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let start = html.find(&open).map(|i| i + open.len()).expect("the console has one inline element");
    let end = html[start..].find(&close).map(|i| i + start).expect("and it is closed");
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(&html.as_bytes()[start..end]))
}

fn console_csp() -> &'static str {
    static CSP: OnceLock<String> = OnceLock::new();
    CSP.get_or_init(|| {
        format!(
            "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; connect-src 'self'; \
             img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            inline_hash(CONSOLE, "script"),
            inline_hash(CONSOLE, "style")
        )
    })
}

/// `GET /console`. Without an admin token there is no API for it to call: 404, like the API.
fn console<B>(req: &Request<B>, enabled: bool) -> Resp {
    if !enabled {
        return text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "the console is disabled: set admin.token_env and that variable\n",
        );
    }
    if req.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n");
    }
    let mut resp = text(StatusCode::OK, "text/html; charset=utf-8", CONSOLE);
    let h = resp.headers_mut();
    let csp = http::HeaderValue::from_str(console_csp()).expect("the policy is ASCII");
    h.insert(http::header::CONTENT_SECURITY_POLICY, csp);
    for (name, value) in [
        (http::header::X_FRAME_OPTIONS, "DENY"),
        (http::header::CACHE_CONTROL, "no-store"),
        (http::header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (http::header::REFERRER_POLICY, "no-referrer"),
        (http::HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
        (http::HeaderName::from_static("cross-origin-resource-policy"), "same-origin"),
    ] {
        h.insert(name, http::HeaderValue::from_static(value));
    }
    resp
}

/// Compares in time independent of where the strings differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer-token check of the protected endpoints: the refusal, if any (404 when no token is
/// configured: the API is disabled; 401 without the token).
fn unauthorized<B>(req: &Request<B>, token: &Option<String>) -> Option<Resp> {
    let Some(token) = token else {
        return Some(json(
            StatusCode::NOT_FOUND,
            serde_json::json!({"error": "the approvals API is disabled: set admin.token_env and that variable"}),
        ));
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
        return Some(resp);
    }
    None
}

/// `POST /sessions/{id}/task` with `{"task": "…"}`: what the user asked in session `id` (the key
/// as the proxy keeps it: `agent/id` for an agent's), from an operator-trusted front — the one
/// task the checker may read as the user's intent ([`crate::session::tasks`]). With
/// `"sends_to": ["bob@client.example", …]` (at most 64) the front says where the user asks to
/// send, and the task's words name nothing ([`crate::intent`]).
async fn user_task(req: Request<Incoming>, session: String, shared: &Shared) -> Resp {
    use http_body_util::BodyExt;
    if req.method() != Method::POST {
        return json(
            StatusCode::METHOD_NOT_ALLOWED,
            serde_json::json!({"error": "POST /sessions/{id}/task"}),
        );
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        #[serde(default)]
        task: String,
        sends_to: Option<Vec<String>>,
    }
    let body = match http_body_util::Limited::new(req.into_body(), 64 * 1024).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return json(StatusCode::PAYLOAD_TOO_LARGE, serde_json::json!({"error": "at most 64 KiB"}));
        }
    };
    if session.is_empty() {
        return json(StatusCode::NOT_FOUND, serde_json::json!({"error": "no session id"}));
    }
    match serde_json::from_slice::<Body>(&body) {
        Ok(b) if b.sends_to.as_ref().is_some_and(|l| l.len() > 64 || l.iter().any(|d| d.len() > 2048)) => {
            json(
                StatusCode::BAD_REQUEST,
                serde_json::json!({"error": "sends_to: at most 64 destinations of at most 2 KiB each"}),
            )
        }
        Ok(b) if b.task.trim().is_empty() && b.sends_to.is_none() => json(
            StatusCode::BAD_REQUEST,
            serde_json::json!({"error": "expected a task, a sends_to list, or both"}),
        ),
        Ok(b) => {
            shared.approvals.user_tasks.record(&session, &b.task, b.sends_to.as_deref());
            json(StatusCode::OK, serde_json::json!({"session": session, "recorded": true}))
        }
        Err(e) => json(
            StatusCode::BAD_REQUEST,
            serde_json::json!({"error": format!("expected {{\"task\": \"…\", \"sends_to\": [\"…\"]}}: {e}")}),
        ),
    }
}

/// `GET /approvals` lists parked calls (each with its `deadline`); `POST /approvals/{id}` with
/// `{"decision": "allow_once" | "allow_session" | "deny"}` decides one; `GET /status` shows the
/// flagged sessions and the checker, `POST /sessions/{id}/clear` clears one, `GET /decisions` the audit log's
/// latest entries (newest first). Bearer token required.
async fn approvals(req: Request<Incoming>, shared: &Shared, token: &Option<String>) -> Resp {
    if let Some(refused) = unauthorized(&req, token) {
        return refused;
    }
    let path = req.uri().path().to_owned();
    if path == "/decisions" && req.method() == Method::GET {
        // The audit log's latest entries (already digested and masked); 404 when it is off.
        let guard = shared.guard.load();
        let audit = guard.audit();
        if !audit.is_on() {
            return json(
                StatusCode::NOT_FOUND,
                serde_json::json!({"error": "the audit log is off: configure audit: in the config"}),
            );
        }
        let mut recent = audit.recent();
        recent.reverse();
        return json(StatusCode::OK, serde_json::json!({"decisions": recent}));
    }
    if path == "/status" && req.method() == Method::GET {
        let a = &shared.approvals;
        let flagged: Vec<serde_json::Value> = a
            .flags
            .list()
            .into_iter()
            .map(|(session, refusals)| match a.callers.describe(&session) {
                Some(caller) => {
                    serde_json::json!({"session": session, "refusals": refusals, "caller": caller})
                }
                None => serde_json::json!({"session": session, "refusals": refusals}),
            })
            .collect();
        return json(
            StatusCode::OK,
            serde_json::json!({
                "pending": a.pending.list().len(),
                "flagged_sessions": flagged,
                "identity": shared.identities.load().status(),
                "checker": checker_status(&shared.guard.load()),
            }),
        );
    }
    if let Some(session) = path.strip_prefix("/sessions/").and_then(|p| p.strip_suffix("/task")) {
        return user_task(req, session.to_owned(), shared).await;
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
        (Method::GET, None) => match shared.approvals.list_parked().await {
            Ok(list) => {
                // When each wait ends: `approvals.timeout` after it was parked (every replica
                // of a fleet runs one config), for the console's countdown.
                let wait = shared.approvals.timeout().as_secs();
                let pending: Vec<serde_json::Value> = list
                    .into_iter()
                    .map(|v| {
                        let deadline = v.since.saturating_add(wait);
                        let mut view = serde_json::json!(v);
                        view["deadline"] = deadline.into();
                        view
                    })
                    .collect();
                json(StatusCode::OK, serde_json::json!({"pending": pending}))
            }
            Err(e) => json(StatusCode::SERVICE_UNAVAILABLE, serde_json::json!({"error": e.to_string()})),
        },
        (Method::GET, Some(rest)) if rest.ends_with("/always") => always::preview(rest, shared).await,
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
            if let Some(resp) = always::decide(id, &body, shared).await {
                return resp;
            }
            let decision = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("decision").and_then(|d| d.as_str()).and_then(Choice::parse));
            let Some(decision) = decision else {
                return json(
                    StatusCode::BAD_REQUEST,
                    serde_json::json!({"error": "body must be {\"decision\": \"allow_once\" | \"allow_session\" | \"allow_always\" | \"deny\"}"}),
                );
            };
            match shared.approvals.decide_parked(id, decision).await {
                Ok(()) => json(StatusCode::OK, serde_json::json!({"id": id, "decision": decision.as_str()})),
                Err(e @ FleetDecideError::Local(DecideError::NotFound(_))) => {
                    json(StatusCode::NOT_FOUND, serde_json::json!({"error": e.to_string()}))
                }
                Err(e @ FleetDecideError::Local(DecideError::NotWaivable(_))) => {
                    json(StatusCode::CONFLICT, serde_json::json!({"error": e.to_string()}))
                }
                Err(e @ FleetDecideError::Gone(_)) => {
                    json(StatusCode::GONE, serde_json::json!({"error": e.to_string()}))
                }
                Err(e @ FleetDecideError::Store(_)) => {
                    json(StatusCode::SERVICE_UNAVAILABLE, serde_json::json!({"error": e.to_string()}))
                }
            }
        }
        _ => json(
            StatusCode::METHOD_NOT_ALLOWED,
            serde_json::json!({"error": "GET /approvals, POST /approvals/{id}"}),
        ),
    }
}

/// What judges calls, for `/status` and the console: nothing (`none`), the built-in detectors
/// alone (`checker: local`), or the detectors and then a model. Named here because `/metrics`
/// cannot tell "local" from "none": neither has a breaker.
fn checker_status(guard: &crate::gate::Guard) -> serde_json::Value {
    let detectors: Vec<&str> = crate::checker::detect::Category::ALL.iter().map(|c| c.as_str()).collect();
    match guard.guardrails() {
        None => serde_json::json!({"kind": "none"}),
        // The model handle is only read for its name; no rubric is asked for.
        Some(g) => match g.model_with_rubric("", "") {
            None => serde_json::json!({"kind": "local", "detectors": detectors}),
            Some((model, _)) => {
                serde_json::json!({"kind": "model", "model": model.model(), "detectors": detectors})
            }
        },
    }
}

/// What `/readyz` answers from: whether the guard can guard, and which upstreams it could not
/// reach (reported; a 503 only with `?strict`).
struct Readiness {
    guard: Result<(), &'static str>,
    unreachable: Vec<String>,
}

fn route<B>(req: &Request<B>, metrics: &Metrics, ready: Readiness) -> Resp {
    if req.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n");
    }
    match req.uri().path() {
        "/metrics" => text(StatusCode::OK, "text/plain; version=0.0.4", metrics.render()),
        "/healthz" => text(StatusCode::OK, "text/plain", "ok\n"),
        "/runbook" => {
            // Public text, like /metrics: no token, nothing that runs or loads.
            let mut resp = text(StatusCode::OK, "text/html; charset=utf-8", runbook::html());
            let h = resp.headers_mut();
            h.insert("content-security-policy", http::HeaderValue::from_static("default-src 'none'"));
            h.insert("x-content-type-options", http::HeaderValue::from_static("nosniff"));
            resp
        }
        "/readyz" => {
            let strict = req.uri().query().is_some_and(|q| q.split('&').any(|p| p == "strict"));
            let status = match (&ready.guard, ready.unreachable.is_empty()) {
                (Err(_), _) => StatusCode::SERVICE_UNAVAILABLE,
                (Ok(()), false) if strict => StatusCode::SERVICE_UNAVAILABLE,
                (Ok(()), _) => StatusCode::OK,
            };
            let mut body = ready.guard.err().unwrap_or("ready\n").to_owned();
            body.extend(ready.unreachable);
            text(status, "text/plain", body)
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found: try /metrics, /healthz, /readyz or /runbook\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_is_one_inline_script_and_style_allowed_by_hash_and_nothing_external() {
        for tag in ["script", "style"] {
            assert_eq!(CONSOLE.matches(&format!("<{tag}")).count(), 1, "one <{tag}>");
            assert_eq!(CONSOLE.matches(&format!("</{tag}>")).count(), 1, "one </{tag}>");
        }
        let csp = console_csp();
        assert!(csp.starts_with("default-src 'none'; script-src 'sha256-"), "{csp}");
        assert!(!csp.contains("unsafe"), "{csp}");
        let lower = CONSOLE.to_ascii_lowercase();
        for external in
            ["src=", "href=", "url(", "@import", "http:", "https:", "//cdn", "innerhtml", "outerhtml"]
        {
            assert!(!lower.contains(external), "the console must not use {external}");
        }
        for risky in ["insertAdjacentHTML", "document.write", "eval(", "new Function"] {
            assert!(!CONSOLE.contains(risky), "the console must not use {risky}");
        }
    }
}
