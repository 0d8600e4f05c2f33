//! OAuth discovery answered by the proxy for `auth: passthrough` upstreams, so that an MCP
//! client calling `http://HOST/mcp/NAME` finds metadata for the URL it called.
//!
//! | path at the proxy | answer |
//! | --- | --- |
//! | `GET /.well-known/oauth-protected-resource/mcp/NAME` | the upstream's RFC 9728 metadata, `resource` = `http://HOST/mcp/NAME` |
//! | `GET /.well-known/oauth-protected-resource` | the same, when exactly one upstream is passthrough |
//! | `GET /.well-known/oauth-authorization-server`, `GET /.well-known/openid-configuration`, `GET /authorize`, `POST /register`, `POST /token` | relayed to the origin of the one passthrough upstream (the 2025-03-26 flow, where the MCP server's origin is its authorization server) |
//!
//! The root paths do not say which upstream they mean: with several passthrough upstreams they
//! answer 404 naming the per-upstream location rather than guess (a client following RFC 9728
//! never needs them; a 2025-03-26 client can only be served with one passthrough upstream). With
//! none, they are unknown routes as before. Relayed answers keep status, `Content-Type`,
//! `Location` and cache headers only (no cookies), and are bounded like every OAuth fetch.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use http::{header, HeaderName, Method, Request, StatusCode, Uri};
use http_body::Body as HttpBody;
use http_body_util::{BodyExt, Full};

use super::{Target, Targets};
use crate::oauth::fetch::{Fetcher, FETCH_TIMEOUT, MAX_DOCUMENT};
use crate::oauth::metadata::{self, MetadataError, WELL_KNOWN};
use crate::oauth::passthrough::{host_of, resource_url};
use crate::proxy::{json_response, BoxError, Resp};

/// A request the proxy answers itself.
#[derive(Debug)]
pub enum WellKnown {
    /// The protected-resource metadata of a passthrough upstream.
    ResourceMetadata(Arc<Target>),
    /// A 2025-03-26 discovery or registration path, for the one passthrough upstream.
    Relay(Arc<Target>),
    /// Refused with an OAuth-shaped error body.
    Refuse { status: StatusCode, error: &'static str, description: String },
}

/// The paths of the 2025-03-26 flow, relative to the server's origin, and their methods.
const ORIGIN_PATHS: &[(&str, Method)] = &[
    ("/.well-known/oauth-authorization-server", Method::GET),
    ("/.well-known/openid-configuration", Method::GET),
    ("/authorize", Method::GET),
    ("/register", Method::POST),
    ("/token", Method::POST),
];

/// Request headers a relayed OAuth request keeps (`authorization`: a client's own credential
/// for the token endpoint, meant for the upstream like every passthrough credential).
const RELAY_REQUEST: &[HeaderName] = &[header::CONTENT_TYPE, header::ACCEPT, header::AUTHORIZATION];
/// Response headers a relayed answer keeps.
const RELAY_RESPONSE: &[HeaderName] = &[
    header::CONTENT_TYPE,
    header::LOCATION,
    header::CACHE_CONTROL,
    header::PRAGMA,
    header::WWW_AUTHENTICATE,
];

impl WellKnown {
    /// The proxy's answer for this path, if it is one of the module's; `None` leaves the request
    /// to the usual "no route".
    pub fn claim(targets: &Targets, method: &Method, uri: &Uri) -> Option<WellKnown> {
        let path = uri.path();
        let passthrough = || targets.passthrough();
        if let Some(name) = path.strip_prefix(WELL_KNOWN).and_then(|r| r.strip_prefix("/mcp/")) {
            let name = name.strip_suffix('/').unwrap_or(name);
            return Some(match targets.get(name) {
                _ if *method != Method::GET => method_refused(method),
                Some(t) if t.auth.passthrough().is_some() => WellKnown::ResourceMetadata(t),
                Some(_) => refuse(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    format!("upstream {name:?} does not use auth: passthrough, so the proxy answers for its authorization itself; there is nothing to discover"),
                ),
                None => refuse(StatusCode::NOT_FOUND, "not_found", format!("no upstream named {name:?} is configured")),
            });
        }
        let root_prm = path == WELL_KNOWN;
        let origin_path = ORIGIN_PATHS.iter().find(|(p, _)| *p == path);
        if !root_prm && origin_path.is_none() {
            return None;
        }
        let candidates = passthrough();
        let one = match candidates.as_slice() {
            [] => return None,
            [one] => one.clone(),
            several => {
                let names: Vec<&str> = several.iter().map(|t| &*t.name).collect();
                return Some(refuse(
                    StatusCode::NOT_FOUND,
                    "ambiguous_upstream",
                    format!(
                        "several upstreams use auth: passthrough ({}); {path} does not say which. Discover through {WELL_KNOWN}/mcp/NAME (RFC 9728), as MCP clients since 2025-06-18 do",
                        names.join(", ")
                    ),
                ));
            }
        };
        Some(match origin_path {
            Some((_, m)) if m != method => method_refused(method),
            Some(_) => WellKnown::Relay(one),
            None if *method != Method::GET => method_refused(method),
            None => WellKnown::ResourceMetadata(one),
        })
    }

    /// Answers the request.
    pub async fn answer<B>(self, req: Request<B>, fetcher: Fetcher) -> Result<Resp, BoxError>
    where
        B: HttpBody<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Ok(match self {
            WellKnown::Refuse { status, error, description } => oauth_error(status, error, &description),
            WellKnown::ResourceMetadata(target) => {
                let host = host_of(req.headers(), req.uri()).map(str::to_owned);
                resource_metadata(&target, host, &fetcher).await
            }
            WellKnown::Relay(target) => relay(&target, req, &fetcher).await,
        })
    }
}

fn refuse(status: StatusCode, error: &'static str, description: String) -> WellKnown {
    WellKnown::Refuse { status, error, description }
}

fn method_refused(method: &Method) -> WellKnown {
    refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request",
        format!("method {method} is not served on this path"),
    )
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Resp {
    let body = serde_json::json!({ "error": error, "error_description": description });
    json_response(status, body.to_string())
}

async fn resource_metadata(target: &Target, host: Option<String>, fetcher: &Fetcher) -> Resp {
    let Some(host) = host else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "the request names no usable host");
    };
    let hinted = target.auth.passthrough().and_then(|p| p.hinted());
    match metadata::discover(fetcher, &target.url, hinted.as_ref()).await {
        Ok(doc) => {
            let doc = doc.for_resource(resource_url(&host, &target.name));
            json_response(StatusCode::OK, serde_json::to_vec(&doc).unwrap_or_default())
        }
        Err(e @ MetadataError::NotFound { .. }) => {
            oauth_error(StatusCode::NOT_FOUND, "not_found", &format!("upstream {}: {e}", target.name))
        }
        Err(e) => {
            tracing::warn!(upstream = %target.name, error = %e, "the upstream's protected-resource metadata cannot be served");
            oauth_error(
                StatusCode::BAD_GATEWAY,
                "upstream_metadata",
                &format!("upstream {}: {e}", target.name),
            )
        }
    }
}

async fn relay<B>(target: &Target, req: Request<B>, fetcher: &Fetcher) -> Resp
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let body = match read_bounded(body).await {
        Ok(b) => b,
        Err(why) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", why),
    };
    let origin = format!(
        "{}://{}",
        target.url.scheme_str().unwrap_or("http"),
        target.url.authority().map_or("", |a| a.as_str())
    );
    let pq = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(url) = format!("{origin}{pq}").parse::<Uri>() else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "the path cannot be relayed");
    };
    let mut out = Request::new(Full::new(body));
    *out.method_mut() = parts.method;
    *out.uri_mut() = url;
    for name in RELAY_REQUEST {
        for v in parts.headers.get_all(name) {
            out.headers_mut().append(name, v.clone());
        }
    }
    match fetcher.send(out).await {
        Ok(got) => {
            let mut resp = http::Response::new(crate::proxy::full(got.body));
            *resp.status_mut() = got.status;
            for name in RELAY_RESPONSE {
                for v in got.headers.get_all(name) {
                    resp.headers_mut().append(name, v.clone());
                }
            }
            resp
        }
        Err(e) => {
            tracing::warn!(upstream = %target.name, error = %e, "an OAuth request could not be relayed");
            oauth_error(
                StatusCode::BAD_GATEWAY,
                "temporarily_unavailable",
                &format!("upstream {}: {e}", target.name),
            )
        }
    }
}

/// Reads a relayed request's body: at most [`MAX_DOCUMENT`] bytes within [`FETCH_TIMEOUT`].
async fn read_bounded<B>(body: B) -> Result<Bytes, &'static str>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let read = async {
        let mut body = std::pin::pin!(body);
        let mut out = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| "the request body broke off")?;
            if let Ok(data) = frame.into_data() {
                if out.len() + data.len() > MAX_DOCUMENT {
                    return Err("the request body is too large for an OAuth request");
                }
                out.extend_from_slice(&data);
            }
        }
        Ok(out.freeze())
    };
    tokio::time::timeout(FETCH_TIMEOUT, read).await.unwrap_or(Err("the request body was sent too slowly"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn targets(yaml: &str) -> Targets {
        Targets::from_config(&Config::parse(yaml, "t").unwrap()).unwrap()
    }

    fn claim(t: &Targets, m: Method, p: &str) -> Option<WellKnown> {
        WellKnown::claim(t, &m, &p.parse().unwrap())
    }

    #[test]
    fn per_upstream_metadata_is_served_for_passthrough_upstreams_only() {
        let t = targets("upstreams:\n  a: { url: \"http://127.0.0.1:9/mcp\", auth: passthrough }\n  b: { url: \"http://127.0.0.1:9/mcp\" }\n");
        assert!(matches!(
            claim(&t, Method::GET, "/.well-known/oauth-protected-resource/mcp/a"),
            Some(WellKnown::ResourceMetadata(_))
        ));
        let Some(WellKnown::Refuse { status, description, .. }) =
            claim(&t, Method::GET, "/.well-known/oauth-protected-resource/mcp/b")
        else {
            panic!()
        };
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(description.contains("passthrough"), "{description}");
        assert!(matches!(
            claim(&t, Method::GET, "/.well-known/oauth-protected-resource"),
            Some(WellKnown::ResourceMetadata(_))
        ));
        assert!(matches!(claim(&t, Method::POST, "/token"), Some(WellKnown::Relay(_))));
        assert!(matches!(
            claim(&t, Method::GET, "/token"),
            Some(WellKnown::Refuse { status: StatusCode::METHOD_NOT_ALLOWED, .. })
        ));
        assert!(claim(&t, Method::GET, "/.well-known/other").is_none());
    }

    #[test]
    fn root_paths_are_not_guessed_between_several_passthrough_upstreams_nor_served_without_one() {
        let t = targets("upstreams:\n  a: { url: \"http://127.0.0.1:9/mcp\", auth: passthrough }\n  b: { url: \"http://127.0.0.1:8/mcp\", auth: passthrough }\n");
        for p in
            ["/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/register"]
        {
            let m = if p == "/register" { Method::POST } else { Method::GET };
            let Some(WellKnown::Refuse { status, error, description }) = claim(&t, m, p) else {
                panic!("{p}")
            };
            assert_eq!((status, error), (StatusCode::NOT_FOUND, "ambiguous_upstream"));
            assert!(description.contains("a, b") && description.contains("/mcp/NAME"), "{description}");
        }
        let t = targets("upstreams:\n  a: { url: \"http://127.0.0.1:9/mcp\" }\n");
        assert!(claim(&t, Method::GET, "/.well-known/oauth-authorization-server").is_none());
        assert!(claim(&t, Method::POST, "/register").is_none());
    }
}
