//! Protected-resource metadata (RFC 9728) for a passthrough upstream: fetched from the upstream
//! when an agent asks, checked as a careful client would check it, and served again naming the
//! proxy's URL as the resource.
//!
//! Where the upstream's document is looked for, in order (MCP authorization 2025-06-18 and
//! 2025-11-25, "Protected Resource Metadata Discovery"):
//! 1. the `resource_metadata` URL of the upstream's last `WWW-Authenticate` challenge, if it is
//!    on the upstream's own origin;
//! 2. the path-suffixed well-known URL, `/.well-known/oauth-protected-resource{upstream path}`;
//! 3. the root well-known URL, `/.well-known/oauth-protected-resource`.
//!
//! A 4xx moves on to the next location (as clients do); anything else ends the search.
//!
//! What is checked: the document is a JSON object of at most [`MAX_DOCUMENT`] bytes, of the
//! types RFC 9728 §2 gives; its `resource` covers the upstream's URL (the check the MCP client
//! would have made against the upstream, and that it can no longer make once the proxy answers
//! for the proxy's URL — without it, a document naming `https://evil.example` would be laundered
//! into one naming the proxy); authorization servers are absolute http(s) URLs. Unknown members
//! are dropped, and so is `signed_metadata`: a verified signature would restore the upstream's
//! `resource` over the proxy's.
//!
//! [`MAX_DOCUMENT`]: super::fetch::MAX_DOCUMENT

use http::{StatusCode, Uri};
use serde::{Deserialize, Serialize};

use super::fetch::{redacted_url, FetchError, Fetcher};
use super::origin::{resource_covers, same_origin};

/// The well-known suffix (RFC 9728 §3).
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The members of RFC 9728 §2 the proxy relays.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ResourceMetadata {
    pub resource: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_servers: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_signing_alg_values_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_policy_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_tos_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_certificate_bound_access_tokens: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_details_types_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_bound_access_tokens_required: Option<bool>,
}

/// Why the upstream's metadata cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("the upstream publishes no protected-resource metadata (tried {tried})")]
    NotFound { tried: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} is not protected-resource metadata: {why}")]
    Malformed { url: String, why: String },
    #[error("{url} names resource {resource:?}, which is not the upstream's URL {upstream}: refused")]
    ResourceMismatch { url: String, resource: String, upstream: String },
}

impl ResourceMetadata {
    /// Parses and checks a document fetched from `url` for the upstream at `upstream`.
    pub fn from_upstream(body: &[u8], url: &Uri, upstream: &Uri) -> Result<ResourceMetadata, MetadataError> {
        let malformed = |why: String| MetadataError::Malformed { url: redacted_url(url), why };
        let doc: ResourceMetadata = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
        let resource: Uri = doc.resource.parse().map_err(|_| malformed("resource is not a URL".into()))?;
        if !resource_covers(&resource, upstream) {
            return Err(MetadataError::ResourceMismatch {
                url: redacted_url(url),
                resource: doc.resource,
                upstream: redacted_url(upstream),
            });
        }
        for s in doc.authorization_servers.iter().flatten() {
            let ok = s
                .parse::<Uri>()
                .is_ok_and(|u| matches!(u.scheme_str(), Some("http" | "https")) && u.authority().is_some());
            if !ok {
                return Err(malformed(format!("authorization server {s:?} is not an absolute http(s) URL")));
            }
        }
        Ok(doc)
    }

    /// The same metadata, for the resource the agent called.
    pub fn for_resource(mut self, resource: String) -> ResourceMetadata {
        self.resource = resource;
        self
    }
}

/// Where to look for the upstream's metadata, in order, without repeats (see the module doc).
pub fn locations(upstream: &Uri, hinted: Option<&Uri>) -> Vec<Uri> {
    let mut out: Vec<Uri> = hinted.filter(|h| same_origin(h, upstream)).cloned().into_iter().collect();
    let origin = format!(
        "{}://{}",
        upstream.scheme_str().unwrap_or("http"),
        upstream.authority().map_or("", |a| a.as_str())
    );
    let path = upstream.path().trim_end_matches('/');
    let query = upstream.query().map(|q| format!("?{q}")).unwrap_or_default();
    for candidate in [format!("{origin}{WELL_KNOWN}{path}{query}"), format!("{origin}{WELL_KNOWN}")] {
        if let Ok(u) = candidate.parse::<Uri>() {
            if !out.contains(&u) {
                out.push(u);
            }
        }
    }
    out
}

/// Fetches and checks the upstream's metadata (see the module doc for where it looks).
pub async fn discover(
    fetcher: &Fetcher,
    upstream: &Uri,
    hinted: Option<&Uri>,
) -> Result<ResourceMetadata, MetadataError> {
    let mut tried = Vec::new();
    for url in locations(upstream, hinted) {
        let got = fetcher.get_json(&url).await?;
        if got.status.is_client_error() {
            tried.push(redacted_url(&url));
            continue;
        }
        if got.status != StatusCode::OK {
            return Err(MetadataError::Status { url: redacted_url(&url), status: got.status.as_u16() });
        }
        return ResourceMetadata::from_upstream(&got.body, &url, upstream);
    }
    Err(MetadataError::NotFound { tried: tried.join(", ") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn the_hint_comes_first_then_the_path_suffixed_then_the_root_location() {
        let up = u("http://127.0.0.1:9/mcp/");
        let hint = u("http://localhost:9/custom/metadata.json");
        let got: Vec<String> = locations(&up, Some(&hint)).iter().map(Uri::to_string).collect();
        assert_eq!(
            got,
            [
                "http://localhost:9/custom/metadata.json",
                "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp",
                "http://127.0.0.1:9/.well-known/oauth-protected-resource",
            ]
        );
        let elsewhere = u("http://10.0.0.9/.well-known/oauth-protected-resource");
        assert_eq!(locations(&up, Some(&elsewhere)).len(), 2, "a hint on another origin is not fetched");
        assert_eq!(
            locations(&u("http://127.0.0.1:9"), None).len(),
            1,
            "an upstream at the root has one location"
        );
    }

    #[test]
    fn metadata_must_name_the_upstream_and_be_well_typed() {
        let up = u("http://127.0.0.1:9/mcp");
        let at = u("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp");
        let ok = br#"{"resource":"http://localhost:9/mcp","authorization_servers":["http://localhost:7"],"scopes_supported":["a"],"signed_metadata":"x.y.z","x-extra":1}"#;
        let doc = ResourceMetadata::from_upstream(ok, &at, &up).unwrap();
        let served = serde_json::to_value(doc.for_resource("http://px/mcp/fs".into())).unwrap();
        assert_eq!(
            served,
            serde_json::json!({"resource":"http://px/mcp/fs","authorization_servers":["http://localhost:7"],"scopes_supported":["a"]})
        );
        for bad in [
            &br#"{"resource":"https://evil.example.com/mcp","authorization_servers":["http://a"]}"#[..],
            br#"{"authorization_servers":["http://a"]}"#,
            br#"{"resource":"http://127.0.0.1:9/mcp","authorization_servers":"http://a"}"#,
            br#"{"resource":"http://127.0.0.1:9/mcp","authorization_servers":["javascript:alert(1)"]}"#,
            br#"{"resource":"http://127.0.0.1:9/mcp","scopes_supported":[1]}"#,
            br#"[1,2]"#,
            b"not json",
            b"",
        ] {
            assert!(
                ResourceMetadata::from_upstream(bad, &at, &up).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
