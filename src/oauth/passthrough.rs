//! `auth: passthrough`: the agent's own OAuth flow works through the proxy.
//!
//! The agent calls `http://HOST/mcp/NAME`; that is the resource it must discover metadata for
//! and obtain a token for. So the proxy answers discovery for its own URL: an upstream's 401 or
//! 403 challenge has its `resource_metadata` pointed at the proxy's metadata URL
//! ([`metadata_url`]), every other parameter (`scope`, `error`, …) kept; the proxy's metadata is
//! the upstream's with `resource` replaced ([`super::metadata`]). The upstream's own
//! `resource_metadata` URL is remembered, to be fetched when the agent asks.

use arc_swap::ArcSwapOption;
use http::header::{HOST, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Uri};

use super::challenge::{self, Challenge, RESOURCE_METADATA};
use super::metadata::WELL_KNOWN;
use super::origin::same_origin;

/// The host the agent called, from `Host` (or the request target's authority, as HTTP/2 sends
/// it), if it is a plain `host[:port]`: it is written into URLs the agent reads. The host layer
/// has already checked it against `allowed_hosts`.
pub fn host_of<'a>(headers: &'a HeaderMap, uri: &'a Uri) -> Option<&'a str> {
    let h = headers.get(HOST).and_then(|v| v.to_str().ok()).or(uri.authority().map(|a| a.as_str()))?;
    let plain = !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b));
    plain.then_some(h)
}

/// The resource the agent called: `http://HOST/mcp/NAME` (the proxy serves plain HTTP).
pub fn resource_url(host: &str, upstream: &str) -> String {
    format!("http://{host}/mcp/{upstream}")
}

/// Where the proxy serves that resource's metadata (RFC 9728 §3.1, path-suffixed).
pub fn metadata_url(host: &str, upstream: &str) -> String {
    format!("http://{host}{WELL_KNOWN}/mcp/{upstream}")
}

/// State kept for one passthrough upstream.
#[derive(Debug, Default)]
pub struct Passthrough {
    /// The `resource_metadata` URL of the upstream's latest challenge, if on its own origin.
    hinted: ArcSwapOption<Uri>,
}

/// Whether the challenge points agents at the proxy's metadata (MCP routes) or at none (plain
/// HTTP tools, whose URL is not a resource the proxy describes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point<'a> {
    At(&'a str),
    Nowhere,
}

impl Passthrough {
    /// The upstream's own metadata URL, as its last challenge gave it.
    pub fn hinted(&self) -> Option<Uri> {
        self.hinted.load_full().map(|u| (*u).clone())
    }

    /// Rewrites the `WWW-Authenticate` challenges of a 401/403 from the upstream at `upstream`:
    /// each Bearer challenge's `resource_metadata` is set to `point` (or removed); a 401 without
    /// any Bearer challenge gets one. A header that does not parse is replaced (it named the
    /// upstream, and what else it said cannot be kept reliably).
    pub fn rewrite_challenges(
        &self,
        headers: &mut HeaderMap,
        upstream: &Uri,
        point: Point<'_>,
        unauthorized: bool,
    ) {
        let old: Vec<HeaderValue> = headers.get_all(WWW_AUTHENTICATE).iter().cloned().collect();
        headers.remove(WWW_AUTHENTICATE);
        let mut bearer_seen = false;
        for value in old {
            let Some(challenges) = value.to_str().ok().and_then(challenge::parse) else { continue };
            for mut c in challenges {
                if c.is_bearer() {
                    bearer_seen = true;
                    self.remember(c.param(RESOURCE_METADATA), upstream);
                    match point {
                        Point::At(url) => c.set(RESOURCE_METADATA, url),
                        Point::Nowhere => c.remove(RESOURCE_METADATA),
                    }
                }
                if let Ok(v) = HeaderValue::from_str(&c.to_string()) {
                    headers.append(WWW_AUTHENTICATE, v);
                }
            }
        }
        if !bearer_seen && unauthorized {
            let mut c = Challenge { scheme: "Bearer".into(), params: Vec::new() };
            if let Point::At(url) = point {
                c.set(RESOURCE_METADATA, url);
            }
            if let Ok(v) = HeaderValue::from_str(&c.to_string()) {
                headers.append(WWW_AUTHENTICATE, v);
            }
        }
    }

    fn remember(&self, hint: Option<&str>, upstream: &Uri) {
        let Some(hint) = hint else { return };
        match hint.parse::<Uri>() {
            Ok(u) if same_origin(&u, upstream) => self.hinted.store(Some(u.into())),
            _ => tracing::warn!(
                hint,
                "an upstream's resource_metadata is not on its own origin; it will not be fetched"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenged(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(WWW_AUTHENTICATE, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn values(h: &HeaderMap) -> Vec<&str> {
        h.get_all(WWW_AUTHENTICATE).iter().map(|v| v.to_str().unwrap()).collect()
    }

    #[test]
    fn the_challenge_points_at_the_proxy_and_keeps_scope_and_error() {
        let up: Uri = "http://127.0.0.1:9/mcp".parse().unwrap();
        let p = Passthrough::default();
        let mut h = challenged(&[
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://localhost:9/custom.json""#,
        ]);
        let proxy = metadata_url("127.0.0.1:8686", "fs");
        p.rewrite_challenges(&mut h, &up, Point::At(&proxy), false);
        assert_eq!(
            values(&h),
            [
                r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://127.0.0.1:8686/.well-known/oauth-protected-resource/mcp/fs""#
            ]
        );
        assert_eq!(
            p.hinted().unwrap(),
            "http://localhost:9/custom.json",
            "the upstream's own URL is remembered"
        );
    }

    #[test]
    fn a_401_without_a_bearer_challenge_gets_one_and_garbage_is_dropped() {
        let up: Uri = "http://127.0.0.1:9/mcp".parse().unwrap();
        let p = Passthrough::default();
        let mut h = challenged(&["Bearer abc==", r#"Basic realm="x""#]);
        p.rewrite_challenges(&mut h, &up, Point::At("http://px/m"), true);
        assert_eq!(values(&h), [r#"Basic realm="x""#, r#"Bearer resource_metadata="http://px/m""#]);
        let mut h = challenged(&[r#"Bearer resource_metadata="http://10.1.1.1/steal", scope="a""#]);
        p.rewrite_challenges(&mut h, &up, Point::Nowhere, true);
        assert_eq!(values(&h), [r#"Bearer scope="a""#]);
        assert!(p.hinted().is_none(), "a hint on another origin is not remembered");
    }
}
