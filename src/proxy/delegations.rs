//! `POST /delegations` (an authenticated agent mints a narrower credential for a child) and
//! `DELETE /delegations/{id}` (an ancestor revokes one, with everything below it); and, for a
//! delegated agent, the door to upstreams outside the allowlist it was given.
//!
//! It sits right below the authenticate layer, which has already checked the caller's credential
//! and put its [`Agent`] in the extensions; the minting body is read here, bounded in bytes and
//! time, since these requests never reach the body-limit layer. Answers are plain JSON (this is
//! the proxy's own API, not MCP): `201` with the token, or a status that says whose fault a
//! refusal is (400 malformed, 403 wider than the parent, 409 the name is taken, 429 full).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;

use bytes::Bytes;
use futures_util::future::Either;
use http::{header, HeaderValue, Method, Request, StatusCode};
use http_body::Body as HttpBody;
use http_body_util::{BodyExt, Limited};
use serde_json::json;
use tower::{Layer, Service};

use super::route::Targets;
use super::{json_response, BoxError, Resp};
use crate::identity::delegation::{self, MintError, MintRequest, Minting};
use crate::identity::Agent;
use crate::mcp::jsonrpc::{self, code};
use crate::runtime::Shared;

const ROOT: &str = "/delegations";

#[derive(Clone)]
pub struct DelegationsLayer {
    shared: Arc<Shared>,
    targets: Arc<Targets>,
}

impl DelegationsLayer {
    pub fn new(shared: Arc<Shared>, targets: Arc<Targets>) -> Self {
        DelegationsLayer { shared, targets }
    }
}

impl<S> Layer<S> for DelegationsLayer {
    type Service = Delegations<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Delegations { inner, shared: self.shared.clone(), targets: self.targets.clone() }
    }
}

#[derive(Clone)]
pub struct Delegations<S> {
    inner: S,
    shared: Arc<Shared>,
    targets: Arc<Targets>,
}

type Answer = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

impl<S, B> Service<Request<B>> for Delegations<S>
where
    S: Service<Request<B>, Response = Resp, Error = BoxError>,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Either<S::Future, Answer>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let path = req.uri().path();
        if path == ROOT || path.starts_with("/delegations/") {
            return Either::Right(Box::pin(serve(self.shared.clone(), self.targets.clone(), req)));
        }
        if let Some(refused) = outside_allowlist(&self.shared, &req) {
            return Either::Right(Box::pin(std::future::ready(Ok(refused))));
        }
        Either::Left(self.inner.call(req))
    }
}

/// The upstream a tool route addresses (`/mcp/{u}`, `/http/{u}/…`), as written.
fn upstream_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/mcp/").or_else(|| path.strip_prefix("/http/"))?;
    rest.split('/').next()
}

/// A delegated agent reaches only the upstreams it was given: nothing else of another upstream
/// (its tool list, its resources) is its business. 403, as for a route it may not use.
fn outside_allowlist<B>(shared: &Shared, req: &Request<B>) -> Option<Resp> {
    let agent = req.extensions().get::<Arc<Agent>>().filter(|a| !a.delegated_by.is_empty())?;
    let upstream = upstream_of(req.uri().path())?;
    let grant = shared.delegations.grant_of(&agent.id, SystemTime::now());
    let why = match grant {
        Some(g) if g.reaches(upstream) => return None,
        Some(g) => format!(
            "upstream {upstream} is outside the upstreams {} was delegated ({}), by {}",
            agent.id,
            g.upstreams.as_deref().unwrap_or_default().join(", "),
            agent.delegated_by.join(" in turn by ")
        ),
        None => format!("the delegation to {} was revoked or has expired", agent.id),
    };
    let body = jsonrpc::error_response(None, code::UNAUTHORIZED, &format!("portcullis refused: {why}"));
    Some(json_response(StatusCode::FORBIDDEN, body))
}

fn answer(status: StatusCode, error: &str, message: &str) -> Resp {
    json_response(status, json!({ "error": error, "message": message }).to_string())
}

fn refused(e: &MintError) -> Resp {
    let (status, error) = match e {
        MintError::BadRequest(_) => (StatusCode::BAD_REQUEST, "invalid_request"),
        MintError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
        MintError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
        MintError::Full(_) => (StatusCode::TOO_MANY_REQUESTS, "too_many_delegations"),
        MintError::ParentGone => (StatusCode::UNAUTHORIZED, "invalid_token"),
        MintError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
        MintError::Random => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    };
    answer(status, error, &e.to_string())
}

fn not_allowed(allow: &'static str) -> Resp {
    let mut r = answer(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", &format!("use {allow}"));
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

async fn serve<B>(shared: Arc<Shared>, targets: Arc<Targets>, req: Request<B>) -> Result<Resp, BoxError>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let Some(agent) = req.extensions().get::<Arc<Agent>>().cloned() else {
        let why = match shared.identities.load().enabled() {
            true => "minting or revoking a delegation needs an agent credential (Authorization: Bearer …)",
            false => "no agents are configured, so there is nobody to delegate from",
        };
        return Ok(answer(StatusCode::UNAUTHORIZED, "unauthorized", why));
    };
    let path = req.uri().path().to_owned();
    match (req.method().clone(), path.strip_prefix("/delegations/")) {
        (Method::POST, None) => {
            let timeout = shared.limits.client_header_timeout * 3;
            let body = match read(req.into_body(), timeout).await {
                Ok(b) => b,
                Err(r) => return Ok(r),
            };
            Ok(mint(&shared, &targets, &agent, &body))
        }
        (_, None) => Ok(not_allowed("POST")),
        (Method::DELETE, Some(id)) if !id.is_empty() && !id.contains('/') => {
            match shared.delegations.revoke(&agent, id, SystemTime::now()) {
                Ok(n) => {
                    tracing::info!(agent = %agent.id, delegation = id, revoked = n, "delegation revoked");
                    Ok(json_response(StatusCode::OK, json!({ "id": id, "revoked": n }).to_string()))
                }
                Err(e) => Ok(refused(&e)),
            }
        }
        (Method::DELETE, _) => Ok(answer(StatusCode::NOT_FOUND, "not_found", "DELETE /delegations/{id}")),
        (_, Some(_)) => Ok(not_allowed("DELETE")),
    }
}

/// The whole body, at most [`delegation::MAX_BODY`] bytes, within `timeout`.
async fn read<B>(body: B, timeout: std::time::Duration) -> Result<Bytes, Resp>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let too_large = || {
        answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            &format!("a delegation request is at most {} bytes", delegation::MAX_BODY),
        )
    };
    if body.size_hint().lower() > delegation::MAX_BODY as u64 {
        return Err(too_large());
    }
    match tokio::time::timeout(timeout, Limited::new(body, delegation::MAX_BODY).collect()).await {
        Err(_) => Err(answer(StatusCode::REQUEST_TIMEOUT, "timeout", "the body was sent too slowly")),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(_)) => Err(answer(StatusCode::BAD_REQUEST, "invalid_request", "the body could not be read")),
        Ok(Ok(c)) => Ok(c.to_bytes()),
    }
}

fn mint(shared: &Shared, targets: &Targets, parent: &Agent, body: &[u8]) -> Resp {
    let request = match MintRequest::parse(body) {
        Ok(r) => r,
        Err(e) => return refused(&e),
    };
    // A flagged agent meets a human first: a fresh child would be a fresh streak. So does one
    // whose root is flagged (streaks follow authority). The root's name is in the caller's own
    // id, so saying it tells the caller nothing about anyone else.
    let flagged = |id: &str| shared.approvals.flagged(None, Some(&format!("agent:{id}")));
    if !parent.delegated_by.is_empty() && flagged(&parent.name) {
        return refused(&MintError::Forbidden(format!(
            "{} acts for {}, which was flagged after repeated refusals (its own or its delegates'); \
             an operator must clear it before anything under it delegates",
            parent.id, parent.name
        )));
    }
    if flagged(&parent.id) {
        return refused(&MintError::Forbidden(format!(
            "{} was flagged after repeated refusals (its own or its delegates'); an operator must clear \
             it before it delegates",
            parent.id
        )));
    }
    let guard = shared.guard.load();
    let Some(root_profile) = guard.agent_profile(&parent.name) else {
        return refused(&MintError::Forbidden(format!("agent {} is no longer configured", parent.name)));
    };
    let minting = Minting {
        settings: guard.delegation(),
        root_profile,
        kinds: guard.kinds(),
        upstream: &|u: &str| targets.contains(u),
    };
    match shared.delegations.mint(parent, request, &minting, SystemTime::now()) {
        Ok(m) => {
            tracing::info!(agent = %parent.id, child = %m.agent, delegation = %m.id, "delegation minted");
            let unix = m.expires.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            let doc = json!({
                "id": m.id,
                "token": m.token,
                "agent": m.agent,
                "expires_at": delegation::rfc3339(m.expires),
                "expires_at_unix": unix,
            });
            let mut r = json_response(StatusCode::CREATED, doc.to_string());
            r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(e) => refused(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::upstream_of;

    #[test]
    fn the_upstream_is_the_first_segment_of_a_tool_route() {
        for (path, want) in [
            ("/mcp/fs", Some("fs")),
            ("/mcp/fs/", Some("fs")),
            ("/http/web/get/x", Some("web")),
            ("/delegations", None),
            ("/mcpx/fs", None),
        ] {
            assert_eq!(upstream_of(path), want, "{path}");
        }
    }
}
