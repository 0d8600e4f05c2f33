//! The `/mcp` alias: clients that insist on a URL ending in `/mcp` reach the same route, rewritten
//! to its one spelling `/mcp/{upstream}` before any layer reads the path.
//!
//! | sent | rewritten to | when |
//! | --- | --- | --- |
//! | `/mcp`, `/mcp/` | `/mcp/{only}` | exactly one upstream is configured |
//! | `/{upstream}/mcp`, `/{upstream}/mcp/` | `/mcp/{upstream}` | `{upstream}` is configured, spelled literally |
//!
//! Why a rewrite at the door and not a second match in the router: authentication (which
//! `Authorization` is whose, on a passthrough upstream) and the delegation allowlist (which
//! upstream a delegated agent may reach) read the upstream name from the path before the router
//! runs. Were the alias known to the router alone, `/{upstream}/mcp` would name no upstream to
//! them — and a delegated agent would reach every upstream through it. Rewritten once, every
//! layer below sees the same bytes, and the alias is nothing but another spelling.
//!
//! Positive: a path is rewritten only when it is one of the two shapes above, the name is a
//! configured upstream, and no route the proxy serves claims the path already (`/http/mcp` is the
//! plain HTTP tool `mcp`; `/delegations/mcp` is the delegation API). Everything else passes
//! untouched, to be routed or refused as before.

use std::sync::Arc;
use std::task::{Context, Poll};

use http::uri::PathAndQuery;
use http::{Request, Uri};
use tower::{Layer, Service};

use super::Targets;

/// The first path segments the proxy serves itself: a path starting with one is never an alias.
const SERVED: &[&str] = &["mcp", "http", "delegations", ".well-known"];

/// The canonical path for an alias spelling, or `None` when `path` is not an alias.
pub fn canonical(targets: &Targets, path: &str) -> Option<String> {
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    if trimmed == "/mcp" {
        return match targets.names().as_slice() {
            [only] => Some(format!("/mcp/{only}")),
            _ => None,
        };
    }
    let name = trimmed.strip_prefix('/')?.strip_suffix("/mcp")?;
    let literal =
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !literal || SERVED.contains(&name) || !targets.contains(name) {
        return None;
    }
    Some(format!("/mcp/{name}"))
}

/// `uri` with its path replaced by the canonical one (query kept), or `None` if not an alias.
fn rewrite(targets: &Targets, uri: &Uri) -> Option<Uri> {
    let path = canonical(targets, uri.path())?;
    let pq = match uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path,
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(PathAndQuery::try_from(pq).ok()?);
    Uri::from_parts(parts).ok()
}

/// Rewrites alias spellings to `/mcp/{upstream}`; see the module docs for where it must sit.
#[derive(Clone)]
pub struct AliasLayer {
    targets: Arc<Targets>,
}

impl AliasLayer {
    pub fn new(targets: Arc<Targets>) -> Self {
        AliasLayer { targets }
    }
}

impl<S> Layer<S> for AliasLayer {
    type Service = Alias<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Alias { inner, targets: self.targets.clone() }
    }
}

#[derive(Clone)]
pub struct Alias<S> {
    inner: S,
    targets: Arc<Targets>,
}

impl<S, B> Service<Request<B>> for Alias<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        if let Some(uri) = rewrite(&self.targets, req.uri()) {
            *req.uri_mut() = uri;
        }
        self.inner.call(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(names: &[&str]) -> Targets {
        let mut yaml = String::from("upstreams:\n");
        for n in names {
            yaml.push_str(&format!("  {n}: {{ url: \"http://127.0.0.1:9/mcp\" }}\n"));
        }
        let c = crate::config::Config::parse(&yaml, "t").unwrap();
        Targets::from_config(&c).unwrap()
    }

    #[test]
    fn alias_spellings_are_rewritten_and_everything_else_is_left_alone() {
        let one = targets(&["fs"]);
        let two = targets(&["fs", "web", "http", "mcp", "delegations"]);
        for (t, path, want) in [
            (&one, "/mcp", Some("/mcp/fs")),
            (&one, "/mcp/", Some("/mcp/fs")),
            (&one, "/fs/mcp", Some("/mcp/fs")),
            (&one, "/fs/mcp/", Some("/mcp/fs")),
            (&two, "/mcp", None),
            (&two, "/web/mcp", Some("/mcp/web")),
            (&two, "/mcp/mcp", None),
            (&two, "/http/mcp", None),
            (&two, "/delegations/mcp", None),
            (&one, "/nope/mcp", None),
            (&one, "/%66s/mcp", None),
            (&one, "/./mcp", None),
            (&one, "/a/fs/mcp", None),
            (&one, "//fs/mcp", None),
            (&one, "/fs/mcp/x", None),
            (&one, "/fs/mcp//", None),
            (&one, "/mcp/fs", None),
            (&one, "/mcpx", None),
        ] {
            assert_eq!(canonical(t, path).as_deref(), want, "{path}");
        }
    }

    #[test]
    fn the_rewrite_keeps_the_query_and_the_authority() {
        let t = targets(&["fs"]);
        let uri: Uri = "http://127.0.0.1:8686/fs/mcp?x=1".parse().unwrap();
        assert_eq!(rewrite(&t, &uri).unwrap().to_string(), "http://127.0.0.1:8686/mcp/fs?x=1");
        let uri: Uri = "/mcp".parse().unwrap();
        assert_eq!(rewrite(&t, &uri).unwrap().to_string(), "/mcp/fs");
    }
}
