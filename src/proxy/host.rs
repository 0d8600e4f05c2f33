//! The `Host` / `Origin` check: DNS-rebinding protection for the agent listener.
//!
//! A web page the agent's user opens can resolve its own name to 127.0.0.1 and then talk to
//! the proxy from the browser. The browser still says where the page thinks it is: `Host:
//! evil.example` and `Origin: http://evil.example`. The MCP transport requires a server to
//! validate `Origin`; the proxy is the server the agent talks to, and it rewrites `Host` and
//! drops `Origin` before the upstream could check them, so it checks them here, against
//! `allowed_hosts` (loopback by default, plus the listen address). A request without `Origin`
//! is fine (non-browser clients send none); `Origin: null` is refused.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, StatusCode};
use tower::{Layer, Service};

use super::{json_response, BoxError, Resp};
use crate::mcp::jsonrpc::{self, code};

pub use crate::config::hosts::{AllowedHosts, HostPattern};

/// Refuses requests whose `Host` or `Origin` is not allowed, with HTTP 403.
#[derive(Clone)]
pub struct HostLayer {
    allowed: Arc<AllowedHosts>,
}

impl HostLayer {
    pub fn new(allowed: Arc<AllowedHosts>) -> Self {
        HostLayer { allowed }
    }
}

impl<S> Layer<S> for HostLayer {
    type Service = HostService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        HostService { inner, allowed: self.allowed.clone() }
    }
}

#[derive(Clone)]
pub struct HostService<S> {
    inner: S,
    allowed: Arc<AllowedHosts>,
}

impl<S, B> Service<Request<B>> for HostService<S>
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

    fn call(&mut self, req: Request<B>) -> Self::Future {
        match self.allowed.refusal(req.uri(), req.headers()) {
            None => Box::pin(self.inner.call(req)),
            Some(why) => {
                tracing::warn!(%why, "request refused: possible DNS rebinding");
                let message = format!("{why}: refused (DNS-rebinding protection; see allowed_hosts)");
                let body = jsonrpc::error_response(None, code::INVALID_REQUEST, &message);
                Box::pin(std::future::ready(Ok(json_response(StatusCode::FORBIDDEN, body))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderMap;

    fn check(allowed: &AllowedHosts, uri: &str, host: Option<&str>, origin: Option<&str>) -> bool {
        let mut h = HeaderMap::new();
        if let Some(v) = host {
            h.insert(http::header::HOST, v.parse().unwrap());
        }
        if let Some(v) = origin {
            h.insert(http::header::ORIGIN, v.parse().unwrap());
        }
        allowed.refusal(&uri.parse().unwrap(), &h).is_none()
    }

    #[test]
    fn loopback_names_on_any_port_and_the_listen_address_are_allowed_by_default() {
        let a = AllowedHosts::loopback().with_listen("10.1.2.3:8686".parse().unwrap());
        for (host, origin, ok) in [
            ("127.0.0.1:8686", None, true),
            ("127.0.0.1", None, true),
            ("localhost:1234", Some("http://localhost:3000"), true),
            ("LOCALHOST:1234", Some("https://127.0.0.1"), true),
            ("[::1]:8686", Some("http://[::1]:8686"), true),
            ("[0:0:0::1]:8686", None, true),
            ("LocalHost", Some("http://LOCALHOST:3000"), true),
            ("10.1.2.3:8686", None, true),
            ("10.1.2.3:9999", None, false),
            ("evil.example.com", None, false),
            ("evil.example.com:8686", Some("http://evil.example.com"), false),
            ("127.0.0.1:8686", Some("http://evil.example.com"), false),
            ("127.0.0.1:8686", Some("null"), false),
            ("127.0.0.1:8686", Some("file://"), false),
            ("127.0.0.1:8686", Some("http://127.0.0.1@evil.example"), false),
            ("127.0.0.1:8686", Some("http://localhost/path"), false),
            ("localhost.", None, false),
            ("localhost.evil.example", None, false),
            ("127.0.0.1.evil.example", None, false),
            ("127.0.0.1:86x6", None, false),
            ("[::1", None, false),
            ("::1", None, false),
        ] {
            assert_eq!(check(&a, "/mcp/x", Some(host), origin), ok, "{host} {origin:?}");
        }
        assert!(!check(&a, "/mcp/x", None, None), "no Host at all");
        assert!(!check(&a, "http://evil.example.com/mcp/x", Some("127.0.0.1"), None), "absolute form");
        assert!(check(&a, "http://localhost:8686/mcp/x", Some("localhost:8686"), None));
    }

    #[test]
    fn two_hosts_or_two_origins_are_refused_even_when_each_is_allowed() {
        let a = AllowedHosts::loopback();
        let mut h = HeaderMap::new();
        h.append(http::header::HOST, "localhost".parse().unwrap());
        assert!(a.refusal(&"/".parse().unwrap(), &h).is_none());
        h.append(http::header::HOST, "127.0.0.1".parse().unwrap());
        assert_eq!(a.refusal(&"/".parse().unwrap(), &h).as_deref(), Some("more than one Host header"));
        let mut h = HeaderMap::new();
        h.append(http::header::HOST, "localhost".parse().unwrap());
        h.append(http::header::ORIGIN, "http://localhost".parse().unwrap());
        assert!(a.refusal(&"/".parse().unwrap(), &h).is_none());
        h.append(http::header::ORIGIN, "http://localhost".parse().unwrap());
        assert_eq!(a.refusal(&"/".parse().unwrap(), &h).as_deref(), Some("more than one Origin header"));
    }

    #[test]
    fn a_configured_list_is_strict_and_star_is_only_explicit() {
        let listen = "127.0.0.1:8686".parse().unwrap();
        let a = AllowedHosts::from_list(&["agent.internal:8686".into(), "[::1]:*".into()]).unwrap();
        let a = a.with_listen(listen);
        assert!(check(&a, "/", Some("agent.internal:8686"), Some("https://agent.internal:8686")));
        assert!(!check(&a, "/", Some("agent.internal:8687"), None));
        assert!(check(&a, "/", Some("127.0.0.1:8686"), None), "the listen address");
        assert!(!check(&a, "/", Some("localhost:8686"), None), "a list replaces the loopback default");
        let any = AllowedHosts::from_list(&["*".into()]).unwrap().with_listen(listen);
        assert!(check(&any, "/", Some("evil.example.com"), Some("null")));
        for bad in [
            &["*", "localhost"][..],
            &[][..],
            &["http://x"][..],
            &["a b"][..],
            &["x:99999"][..],
            &["::1"][..],
        ] {
            let bad: Vec<String> = bad.iter().map(|s| s.to_string()).collect();
            assert!(AllowedHosts::from_list(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn allowed_hosts_problems_are_reported_with_their_key() {
        let e =
            crate::config::Config::parse("allowed_hosts: [\"*\", localhost, \"a b\"]\n", "t").unwrap_err();
        assert!(e.problems.iter().any(|p| p.path == "allowed_hosts" && p.message.contains("alone")), "{e}");
        let c = crate::config::Config::parse("allowed_hosts: [\"*\"]\n", "t").unwrap();
        assert_eq!(c.allowed_hosts, AllowedHosts::Any);
        assert_eq!(crate::config::Config::embedded().allowed_hosts, AllowedHosts::loopback());
    }
}
