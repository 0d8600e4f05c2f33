//! Agent authentication, and the proxy's own OAuth protected-resource metadata (RFC 9728).
//!
//! With agents configured, a request to a tool route (`/mcp/…`, `/http/…`, `/delegations`, any
//! path but discovery) carries the agent's bearer token: in `Proxy-Authorization` (always the proxy's: RFC 9110 made
//! it for this, and it is how an agent that also holds an upstream's OAuth token for a
//! `passthrough` upstream sends both), else in `Authorization`. The header that carried it is
//! removed here, once the token is checked, so no layer below, no upstream and no checker ever
//! sees it; the [`Agent`](crate::identity::Agent) travels on in the request's extensions. A credential that fails is
//! refused even where none is required: a wrong token is never quietly downgraded to anonymous.
//!
//! A refusal is HTTP 401 with `WWW-Authenticate: Bearer resource_metadata="…"` naming the
//! metadata this layer serves at `/.well-known/oauth-protected-resource/{route}` (and at the
//! root), as the MCP authorization spec asks. Discovery paths need no credential.
//!
//! An upstream with `auth: passthrough` owns `Authorization` and its route's metadata: the
//! agent's token there is the upstream's, obtained through the upstream's own OAuth flow
//! ([`crate::oauth`]). On such a route the proxy's credential can only be `Proxy-Authorization`,
//! and a missing one is answered 407 with `Proxy-Authenticate` — not 401, which would send an
//! MCP client into the upstream's OAuth flow for a credential the proxy wants.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::{Either, Ready};
use http::{header, HeaderValue, Method, Request, StatusCode};
use tower::{Layer, Service};

use super::route::Targets;
use super::{json_response, BoxError, Resp};
use crate::identity::{bearer, AuthError, Identities};
use crate::mcp::jsonrpc::{self, code};
use crate::runtime::Shared;

/// Where RFC 9728 puts a resource's metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

#[derive(Clone)]
pub struct AuthenticateLayer {
    shared: Arc<Shared>,
    targets: Arc<Targets>,
}

impl AuthenticateLayer {
    pub fn new(shared: Arc<Shared>, targets: Arc<Targets>) -> Self {
        AuthenticateLayer { shared, targets }
    }
}

impl<S> Layer<S> for AuthenticateLayer {
    type Service = Authenticate<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Authenticate { inner, shared: self.shared.clone(), targets: self.targets.clone() }
    }
}

#[derive(Clone)]
pub struct Authenticate<S> {
    inner: S,
    shared: Arc<Shared>,
    targets: Arc<Targets>,
}

/// Whether `path` (`/mcp/NAME…`, `/http/NAME…`, or that behind the metadata prefix) addresses
/// an upstream with `auth: passthrough`.
fn passthrough_route(targets: &Targets, path: &str) -> bool {
    let route = resource_path(path.strip_prefix(METADATA_PATH).unwrap_or(path));
    let name = route.rsplit('/').next().unwrap_or("");
    !name.is_empty() && targets.get(name).is_some_and(|t| t.auth.passthrough().is_some())
}

/// Paths that need no credential: OAuth discovery, and the 2025-03-26 authorization paths a
/// passthrough upstream's flow uses. Everything else needs the agent's credential — the tool
/// routes, `/delegations`, and any path not known today (fail closed: a route added later is
/// guarded without anyone remembering to list it here).
fn open(path: &str) -> bool {
    path.starts_with("/.well-known/") || matches!(path, "/authorize" | "/register" | "/token")
}

impl<S, B> Service<Request<B>> for Authenticate<S>
where
    S: Service<Request<B>, Response = Resp, Error = BoxError>,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Either<S::Future, Ready<Result<Resp, BoxError>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let ids = self.shared.identities.load();
        if !ids.enabled() {
            return Either::Left(self.inner.call(req));
        }
        let path = req.uri().path();
        let passthrough = passthrough_route(&self.targets, path);
        if path.starts_with(METADATA_PATH) && req.method() == Method::GET && !passthrough {
            return Either::Right(ready(metadata(&req, &ids)));
        }
        if open(path) {
            return Either::Left(self.inner.call(req));
        }
        // On a passthrough route `Authorization` is the upstream's.
        let carriers: &[header::HeaderName] = if passthrough {
            &[header::PROXY_AUTHORIZATION]
        } else {
            &[header::PROXY_AUTHORIZATION, header::AUTHORIZATION]
        };
        let carrier = carriers.iter().find(|h| req.headers().contains_key(*h)).cloned();
        let verdict = match &carrier {
            None if ids.required() && passthrough => {
                self.shared.metrics.auth_refused(&AuthError::Missing);
                return Either::Right(ready(proxy_challenge()));
            }
            None if ids.required() => Err(AuthError::Missing),
            None => return Either::Left(self.inner.call(req)),
            Some(h) => match req.headers().get(h).and_then(bearer) {
                Some(token) => ids.authenticate_with(token, &self.shared.delegations),
                None => Err(AuthError::Invalid("not a Bearer credential")),
            },
        };
        match verdict {
            Ok(agent) => {
                if let Some(h) = carrier {
                    req.headers_mut().remove(h);
                }
                req.extensions_mut().insert(Arc::new(agent));
                Either::Left(self.inner.call(req))
            }
            Err(e) => {
                self.shared.metrics.auth_refused(&e);
                Either::Right(ready(refuse(&req, &e)))
            }
        }
    }
}

/// 407 for a passthrough route without the proxy's credential.
fn proxy_challenge() -> Resp {
    let body = jsonrpc::error_response(
        None,
        code::UNAUTHORIZED,
        "this upstream's own OAuth token goes in Authorization; the proxy's agent credential goes in \
         Proxy-Authorization: Bearer …",
    );
    let mut resp = json_response(StatusCode::PROXY_AUTHENTICATION_REQUIRED, body);
    resp.headers_mut().insert(header::PROXY_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

fn ready(r: Resp) -> Ready<Result<Resp, BoxError>> {
    futures_util::future::ready(Ok(r))
}

/// `http://{Host}` as the agent addressed the proxy (the host layer has validated `Host`).
fn origin<B>(req: &Request<B>) -> String {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

/// The route part of a path (`/mcp/fs`), which names the resource.
fn resource_path(path: &str) -> &str {
    let mut parts = path.splitn(4, '/');
    let (_, kind, name) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if (kind == "mcp" || kind == "http") && !name.is_empty() {
        &path[..1 + kind.len() + 1 + name.len()]
    } else {
        ""
    }
}

fn refuse<B>(req: &Request<B>, e: &AuthError) -> Resp {
    let metadata = format!("{}{METADATA_PATH}{}", origin(req), resource_path(req.uri().path()));
    let mut challenge = format!("Bearer resource_metadata=\"{metadata}\"");
    let status = match e {
        AuthError::Missing => StatusCode::UNAUTHORIZED,
        AuthError::Invalid(_) => {
            challenge.push_str(", error=\"invalid_token\"");
            StatusCode::UNAUTHORIZED
        }
        AuthError::KeysUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    let body = jsonrpc::error_response(None, code::UNAUTHORIZED, &e.describe());
    let mut resp = json_response(status, body);
    if status == StatusCode::UNAUTHORIZED {
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
    }
    resp
}

/// The proxy's protected-resource metadata: the resource is the route the agent called, and the
/// authorization server is the JWT issuer (when agents get their tokens from one).
fn metadata<B>(req: &Request<B>, ids: &Identities) -> Resp {
    let rest = &req.uri().path()[METADATA_PATH.len()..];
    let resource = format!("{}{}", origin(req), rest);
    let mut doc = serde_json::json!({
        "resource": resource,
        "bearer_methods_supported": ["header"],
        "resource_name": "portcullis",
    });
    if let Some(issuer) = ids.issuer() {
        doc["authorization_servers"] = serde_json::json!([issuer]);
    }
    json_response(StatusCode::OK, doc.to_string())
}
