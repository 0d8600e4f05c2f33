//! Routing: `/mcp/{upstream}` and `/http/{upstream}/{path…}` to a configured upstream.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Method, Request, Uri};
use tower::{Layer, Service};

use super::error::{ErrorKind, ProxyError};
use super::{BoxError, Resp};
use crate::config::Config;

/// One configured upstream, ready to address.
#[derive(Debug)]
pub struct Target {
    pub name: Arc<str>,
    pub url: Uri,
}

/// Upstreams by name.
#[derive(Debug, Default)]
pub struct Targets(HashMap<String, Arc<Target>>);

impl Targets {
    pub fn from_config(config: &Config) -> Targets {
        Targets(
            config
                .upstreams
                .values()
                .map(|u| {
                    (u.name.clone(), Arc::new(Target { name: u.name.as_str().into(), url: u.url.clone() }))
                })
                .collect(),
        )
    }
}

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
    /// A plain HTTP tool: the path below the upstream's URL, with the query.
    Http { path_and_query: String },
}

impl Route {
    /// Resolves a request path against the targets.
    pub fn resolve(targets: &Targets, method: &Method, uri: &Uri) -> Result<Route, ProxyError> {
        let path = uri.path();
        let no_route = || {
            ProxyError::new(ErrorKind::NoRoute(format!(
                "{path} (use /mcp/{{upstream}} or /http/{{upstream}}/…)"
            )))
        };
        let lookup = |name: &str| {
            targets.0.get(name).cloned().ok_or_else(|| {
                ProxyError::new(ErrorKind::NoRoute(format!("no upstream named {name:?} is configured")))
            })
        };
        if let Some(rest) = path.strip_prefix("/mcp/") {
            let name = rest.strip_suffix('/').unwrap_or(rest);
            if name.contains('/') {
                return Err(no_route());
            }
            if !matches!(*method, Method::POST | Method::GET | Method::DELETE) {
                return Err(ProxyError::new(ErrorKind::Method(method.clone())));
            }
            return Ok(Route { target: lookup(name)?, kind: RouteKind::Mcp });
        }
        if let Some(rest) = path.strip_prefix("/http/") {
            let (name, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let mut path_and_query = format!("/{tail}");
            if let Some(q) = uri.query() {
                path_and_query.push('?');
                path_and_query.push_str(q);
            }
            return Ok(Route { target: lookup(name)?, kind: RouteKind::Http { path_and_query } });
        }
        Err(no_route())
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
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        match Route::resolve(&self.targets, req.method(), req.uri()) {
            Ok(route) => {
                req.extensions_mut().insert(route);
                Box::pin(self.inner.call(req))
            }
            Err(e) => Box::pin(std::future::ready(Err(e.into()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets() -> Targets {
        let c = Config::parse("upstreams:\n  fs: { url: \"http://127.0.0.1:9/mcp\" }\n", "t").unwrap();
        Targets::from_config(&c)
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
    fn unknown_paths_upstreams_and_methods_are_refused() {
        let t = targets();
        for (m, p) in [
            (Method::POST, "/mcp/nope"),
            (Method::POST, "/mcp/fs/extra"),
            (Method::POST, "/other"),
            (Method::PUT, "/mcp/fs"),
            (Method::POST, "/http/nope/x"),
        ] {
            assert!(Route::resolve(&t, &m, &p.parse().unwrap()).is_err(), "{m} {p}");
        }
    }
}
