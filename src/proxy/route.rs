//! Routing: `/mcp/{upstream}` and `/http/{upstream}/{path…}` to a configured upstream.
//!
//! A plain HTTP tool's path is normalised here ([`path`]), once: the rule that decides the call
//! and the path the upstream receives are the same bytes. An upstream name is taken literally
//! (no escapes, no dot segments), so `/mcp/%66s` or `/http/./web` name no upstream.
//!
//! OAuth discovery for `auth: passthrough` upstreams is answered here ([`well_known`]), and such
//! an upstream's 401/403 challenge is pointed at the proxy's own metadata on the way back. (An
//! `Authorization` header reaching this layer is the agent's credential meant for upstreams; the
//! upstream service drops it for every upstream that is not passthrough — at the egress, so the
//! pre gate can still tell callers apart by it — see [`crate::oauth`].)

pub mod alias;
pub mod path;
pub mod well_known;

pub use path::PathError;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, StatusCode, Uri};
use http_body::Body as HttpBody;
use tower::{Layer, Service};

use super::error::{ErrorKind, ProxyError};
use super::{json_response, BoxError, Resp};
use crate::mcp::jsonrpc::{self, code};
use crate::oauth::passthrough::{host_of, metadata_url, Point};
use well_known::WellKnown;

pub use crate::runtime::targets::{Target, Targets};

/// What a request addresses.
#[derive(Debug, Clone)]
pub struct Route {
    pub target: Arc<Target>,
    pub kind: RouteKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteKind {
    /// MCP Streamable HTTP: POST, GET and DELETE on the upstream's URL.
    Mcp,
    /// A plain HTTP tool: the path below the upstream's URL, normalised, with the query as sent.
    Http { path_and_query: String },
}

/// Why a request has no route.
#[derive(Debug)]
pub enum Unrouted {
    /// No such upstream or route, or a method the route does not serve (404 / 405).
    Proxy(ProxyError),
    /// The path is spelled in a way servers read differently (400): nothing is forwarded.
    Path { mcp: bool, error: PathError },
}

impl From<ProxyError> for Unrouted {
    fn from(e: ProxyError) -> Self {
        Unrouted::Proxy(e)
    }
}

/// An upstream name as written in the path: literal, or refused (an escape or a dot segment
/// would make the proxy and a reader of the path disagree on which upstream is meant).
fn literal_name(name: &str) -> Result<&str, PathError> {
    if name.contains('%') {
        return Err(PathError::Ambiguous("an escape in the upstream name"));
    }
    if name == "." || name == ".." {
        return Err(PathError::Ambiguous("a dot segment for the upstream name"));
    }
    Ok(name)
}

impl Route {
    /// Resolves a request path against the targets.
    pub fn resolve(targets: &Targets, method: &Method, uri: &Uri) -> Result<Route, Unrouted> {
        let path = uri.path();
        let no_route = || {
            // `/mcp` itself is left here by the alias only when it cannot say which upstream.
            let message = match path.strip_suffix('/').unwrap_or(path) {
                "/mcp" => {
                    let urls: Vec<String> = targets.names().iter().map(|n| format!("/mcp/{n}")).collect();
                    format!("/mcp names no single upstream: use one of {}", urls.join(", "))
                }
                _ => format!("{path} (use /mcp/{{upstream}} or /http/{{upstream}}/…)"),
            };
            ProxyError::new(ErrorKind::NoRoute(message))
        };
        let lookup = |name: &str| {
            targets.get(name).ok_or_else(|| {
                ProxyError::new(ErrorKind::NoRoute(format!("no upstream named {name:?} is configured")))
            })
        };
        if let Some(rest) = path.strip_prefix("/mcp/") {
            let name = rest.strip_suffix('/').unwrap_or(rest);
            if name.split('/').any(|s| s == "." || s == ".." || s.contains('%')) {
                let error = PathError::Ambiguous("an escape or a dot segment in an MCP route");
                return Err(Unrouted::Path { mcp: true, error });
            }
            if name.contains('/') {
                return Err(no_route().into());
            }
            if !matches!(*method, Method::POST | Method::GET | Method::DELETE) {
                return Err(ProxyError::new(ErrorKind::Method(method.clone())).into());
            }
            return Ok(Route { target: lookup(name)?, kind: RouteKind::Mcp });
        }
        if let Some(rest) = path.strip_prefix("/http/") {
            let (name, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let bad = |error| Unrouted::Path { mcp: false, error };
            let name = literal_name(name).map_err(bad)?;
            let target = lookup(name)?;
            let mut path_and_query = path::normalise(&format!("/{tail}")).map_err(bad)?;
            if let Some(q) = uri.query() {
                path_and_query.push('?');
                path_and_query.push_str(q);
            }
            return Ok(Route { target, kind: RouteKind::Http { path_and_query } });
        }
        Err(no_route().into())
    }
}

impl Unrouted {
    /// The refusal: a route error goes to the rescue layer; a bad path is answered here, in the
    /// shape its route speaks (a JSON-RPC error for MCP, the plain tool error otherwise).
    fn into_result(self) -> Result<Resp, BoxError> {
        match self {
            Unrouted::Proxy(e) => Err(e.into()),
            Unrouted::Path { mcp: true, error } => {
                let body = jsonrpc::error_response(None, code::INVALID_REQUEST, &error.to_string());
                Ok(json_response(http::StatusCode::BAD_REQUEST, body))
            }
            Unrouted::Path { mcp: false, error } => {
                let body =
                    serde_json::json!({ "error": { "kind": "bad_path", "message": error.to_string() } });
                Ok(json_response(http::StatusCode::BAD_REQUEST, body.to_string()))
            }
        }
    }
}

/// Resolves the route and stores it in the request's extensions.
#[derive(Clone)]
pub struct RouteLayer {
    targets: Arc<Targets>,
}

impl RouteLayer {
    pub fn new(targets: Arc<Targets>) -> Self {
        RouteLayer { targets }
    }
}

impl<S> Layer<S> for RouteLayer {
    type Service = RouteService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RouteService { inner, targets: self.targets.clone() }
    }
}

#[derive(Clone)]
pub struct RouteService<S> {
    inner: S,
    targets: Arc<Targets>,
}

impl<S, B> Service<Request<B>> for RouteService<S>
where
    S: Service<Request<B>, Response = Resp, Error = BoxError>,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        match Route::resolve(&self.targets, req.method(), req.uri()) {
            Ok(route) => {
                if route.target.auth.passthrough().is_none() {
                    return Box::pin(self.inner.call(req.with(route)));
                }
                // Passthrough: the challenge names the metadata of the URL the agent called.
                let point = match (&route.kind, host_of(req.headers(), req.uri())) {
                    (RouteKind::Mcp, Some(host)) => Some(metadata_url(host, &route.target.name)),
                    _ => None,
                };
                let target = route.target.clone();
                let fut = self.inner.call(req.with(route));
                Box::pin(async move {
                    let mut resp = fut.await?;
                    let status = resp.status();
                    if let (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, Some(p)) =
                        (status, target.auth.passthrough())
                    {
                        let point = point.as_deref().map_or(Point::Nowhere, Point::At);
                        p.rewrite_challenges(
                            resp.headers_mut(),
                            &target.url,
                            point,
                            status == StatusCode::UNAUTHORIZED,
                        );
                    }
                    Ok(resp)
                })
            }
            Err(e) => match WellKnown::claim(&self.targets, req.method(), req.uri()) {
                Some(answer) => Box::pin(answer.answer(req, self.targets.fetcher())),
                None => Box::pin(std::future::ready(e.into_result())),
            },
        }
    }
}

/// A request carrying its route.
trait WithRoute {
    fn with(self, route: Route) -> Self;
}

impl<B> WithRoute for Request<B> {
    fn with(mut self, route: Route) -> Self {
        self.extensions_mut().insert(route);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_mcp_path_the_alias_left_alone_lists_the_routes_to_use() {
        let c = crate::config::Config::parse(
            "upstreams:\n  fs: { url: \"http://127.0.0.1:9/mcp\" }\n  web: { url: \"http://127.0.0.1:9/mcp\" }\n",
            "t",
        )
        .unwrap();
        let t = Targets::from_config(&c).unwrap();
        let Err(Unrouted::Proxy(e)) = Route::resolve(&t, &Method::POST, &"/mcp".parse().unwrap()) else {
            panic!("/mcp with two upstreams must be refused");
        };
        let text = format!("{e:?}");
        assert!(text.contains("/mcp/fs, /mcp/web"), "{text}");
    }

    fn targets() -> Targets {
        let c = crate::config::Config::parse("upstreams:\n  fs: { url: \"http://127.0.0.1:9/mcp\" }\n", "t")
            .unwrap();
        Targets::from_config(&c).unwrap()
    }

    #[test]
    fn routes_mcp_and_http_paths() {
        let t = targets();
        let r = Route::resolve(&t, &Method::POST, &"/mcp/fs".parse().unwrap()).unwrap();
        assert_eq!(r.kind, RouteKind::Mcp);
        let r = Route::resolve(&t, &Method::POST, &"/http/fs/v1/run?x=1".parse().unwrap()).unwrap();
        assert_eq!(r.kind, RouteKind::Http { path_and_query: "/v1/run?x=1".into() });
    }

    #[test]
    fn an_http_path_is_forwarded_normalised_with_its_query_as_sent() {
        let t = targets();
        for (p, want) in [
            ("/http/fs/%61dmin/delete", "/admin/delete"),
            ("/http/fs/./admin", "/admin"),
            ("/http/fs/x/../admin?a=%2e%2e/%2f", "/admin?a=%2e%2e/%2f"),
            ("/http/fs", "/"),
        ] {
            let r = Route::resolve(&t, &Method::POST, &p.parse().unwrap()).unwrap();
            assert_eq!(r.kind, RouteKind::Http { path_and_query: want.into() }, "{p}");
        }
    }

    #[test]
    fn ambiguous_paths_and_upstream_names_are_refused_as_bad_requests() {
        let t = targets();
        for p in [
            "/http/fs/.%2fadmin",
            "/http/fs/../other/admin",
            "/http/fs/admin;x",
            "/http/%66s/admin",
            "/http/./fs/admin",
            "/mcp/%66s",
            "/mcp/./fs",
            "/mcp/fs/..",
            "/mcp/fs/.",
        ] {
            let r = Route::resolve(&t, &Method::POST, &p.parse().unwrap());
            assert!(matches!(r, Err(Unrouted::Path { .. })), "{p}: {r:?}");
        }
    }

    #[test]
    fn unknown_paths_upstreams_and_methods_are_refused() {
        let t = targets();
        for (m, p) in [
            (Method::POST, "/mcp/nope"),
            (Method::POST, "/mcp/fs/extra"),
            (Method::POST, "/other"),
            (Method::PUT, "/mcp/fs"),
            (Method::POST, "/http/nope/x"),
            (Method::POST, "/mcp"),
        ] {
            assert!(Route::resolve(&t, &m, &p.parse().unwrap()).is_err(), "{m} {p}");
        }
    }
}
