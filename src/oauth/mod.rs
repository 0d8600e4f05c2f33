//! OAuth-protected tool servers: what crosses to each upstream in `Authorization`, per
//! `upstreams.NAME.auth` ([`crate::config::UpstreamAuth`]).
//!
//! | mode | the agent's `Authorization` | sent to the upstream | an upstream 401/403 |
//! | --- | --- | --- | --- |
//! | `none` (default) | dropped | nothing | an error naming the fix |
//! | `passthrough` | forwarded to this upstream only | the agent's | relayed, its challenge pointed at the proxy's metadata |
//! | `bearer_env` | dropped | the proxy's static token | an upstream error; nothing of the token |
//! | `client_credentials` | dropped | the proxy's fetched token ([`token`]) | an upstream error; the cached token is forgotten |
//!
//! Where each part runs: the route layer rewrites passthrough challenges ([`passthrough`]) and
//! serves discovery (`proxy::route::well_known`, with [`metadata`]); the upstream service, at the
//! egress, drops the agent's credential where it is not meant for the upstream
//! ([`Auth::forwards_agent_credential`]), adds the proxy-held one ([`Auth::credential`]) and
//! turns a refusal into an error ([`Auth::refusal`]) — below the pre gate, so the error answers
//! the call's JSON-RPC id, and so the gate still tells callers apart by their credential (its
//! repeated-denial breaker keys on it) until agent authentication names them.
//!
//! A 401 on a proxy-held credential is not retried: a `tools/call` may have run. The cached
//! client-credentials token is forgotten, so the next call fetches a new one.

pub mod challenge;
pub mod fetch;
pub mod metadata;
pub mod origin;
pub mod passthrough;
pub mod secret;
pub mod token;

use std::sync::Arc;

use http::header::WWW_AUTHENTICATE;
use http::{HeaderMap, HeaderValue, StatusCode};

use crate::config::UpstreamAuth;
use fetch::Fetcher;
use passthrough::Passthrough;
use secret::SecretError;
use token::{TokenError, TokenSource};

/// One upstream's credential handling, built from its config at start.
pub enum Auth {
    None,
    Passthrough(Passthrough),
    /// `Bearer <token>`, marked sensitive.
    Bearer(HeaderValue),
    ClientCredentials(Arc<TokenSource>),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => f.write_str("None"),
            Auth::Passthrough(p) => f.debug_tuple("Passthrough").field(p).finish(),
            Auth::Bearer(_) => f.write_str("Bearer([redacted])"),
            Auth::ClientCredentials(t) => f.debug_tuple("ClientCredentials").field(t).finish(),
        }
    }
}

/// An upstream's refusal of a call, as the agent reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("upstream {upstream} requires authorization (HTTP {status}); set upstreams.{upstream}.auth to passthrough or a proxy-held credential (bearer_env or client_credentials)")]
    NeedsCredential { upstream: String, status: u16 },
    #[error("upstream {upstream} refused the credential portcullis holds for it (HTTP {status}{detail})")]
    HeldCredential { upstream: String, status: u16, detail: String },
}

impl Refused {
    pub fn upstream(&self) -> &str {
        match self {
            Refused::NeedsCredential { upstream, .. } | Refused::HeldCredential { upstream, .. } => upstream,
        }
    }
}

/// A proxy-held credential could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("portcullis could not obtain its credential for upstream {upstream}")]
pub struct CredentialError {
    pub upstream: String,
    #[source]
    pub source: TokenError,
}

impl Auth {
    /// Builds `upstream`'s handling, reading any secret its config names.
    pub fn new(upstream: &str, config: &UpstreamAuth, fetcher: &Fetcher) -> Result<Auth, SecretError> {
        Ok(match config {
            UpstreamAuth::None => Auth::None,
            UpstreamAuth::Passthrough => Auth::Passthrough(Passthrough::default()),
            UpstreamAuth::Bearer { env } => {
                let token = secret::read(upstream, env)?;
                let mut v = HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
                    SecretError::NotHeader { upstream: upstream.to_owned(), var: env.to_string() }
                })?;
                v.set_sensitive(true);
                Auth::Bearer(v)
            }
            UpstreamAuth::ClientCredentials(cc) => {
                let secret = secret::read(upstream, &cc.client_secret_env)?;
                Auth::ClientCredentials(Arc::new(TokenSource::new((**cc).clone(), secret, fetcher.clone())))
            }
        })
    }

    /// Whether the agent's `Authorization` may reach this upstream.
    pub fn forwards_agent_credential(&self) -> bool {
        matches!(self, Auth::Passthrough(_))
    }

    pub fn passthrough(&self) -> Option<&Passthrough> {
        match self {
            Auth::Passthrough(p) => Some(p),
            _ => None,
        }
    }

    /// The proxy-held `Authorization` value to send, if this upstream has one.
    pub async fn credential(&self, upstream: &str) -> Result<Option<HeaderValue>, CredentialError> {
        match self {
            Auth::None | Auth::Passthrough(_) => Ok(None),
            Auth::Bearer(v) => Ok(Some(v.clone())),
            Auth::ClientCredentials(t) => t
                .bearer()
                .await
                .map(Some)
                .map_err(|source| CredentialError { upstream: upstream.to_owned(), source }),
        }
    }

    /// What the agent is told when the upstream answers 401 or 403 (`sent`: the credential sent
    /// with the call). `None`: relay the answer (passthrough, or any other status).
    pub fn refusal(
        &self,
        upstream: &str,
        status: StatusCode,
        headers: &HeaderMap,
        sent: Option<&HeaderValue>,
    ) -> Option<Refused> {
        if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return None;
        }
        let upstream = upstream.to_owned();
        let status = status.as_u16();
        match self {
            Auth::Passthrough(_) => None,
            Auth::None => Some(Refused::NeedsCredential { upstream, status }),
            Auth::Bearer(_) | Auth::ClientCredentials(_) => {
                if let (Auth::ClientCredentials(t), Some(sent), 401) = (self, sent, status) {
                    t.invalidate(sent);
                }
                Some(Refused::HeldCredential { upstream, status, detail: challenge_detail(headers) })
            }
        }
    }
}

/// `: error "insufficient_scope", scope "a b"` from a Bearer challenge, each value kept only if
/// it is plain (RFC 6749 error and scope characters), so nothing else the upstream wrote is
/// repeated.
fn challenge_detail(headers: &HeaderMap) -> String {
    let plain =
        |v: &str| v.len() <= 256 && v.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\');
    let mut parts = Vec::new();
    for c in headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(challenge::parse)
        .flatten()
    {
        if !c.is_bearer() {
            continue;
        }
        for name in ["error", "scope"] {
            if let Some(v) = c.param(name).filter(|v| plain(v)) {
                parts.push(format!("{name} \"{v}\""));
            }
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_credential_never_shows_in_debug() {
        let mut v = HeaderValue::from_static("Bearer s3cr3t-token");
        v.set_sensitive(true);
        let shown = format!("{:?}", Auth::Bearer(v));
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }

    #[test]
    fn refusals_name_the_fix_or_the_held_credential_and_only_plain_challenge_words() {
        let mut h = HeaderMap::new();
        h.insert(WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer error="insufficient_scope", scope="tools:write", error_description="token abc123 lacks scope""#));
        let none = Auth::None.refusal("fs", StatusCode::UNAUTHORIZED, &h, None).unwrap();
        assert_eq!(
            none.to_string(),
            "upstream fs requires authorization (HTTP 401); set upstreams.fs.auth to passthrough or a proxy-held credential (bearer_env or client_credentials)"
        );
        let held = Auth::Bearer(HeaderValue::from_static("Bearer x"))
            .refusal("fs", StatusCode::FORBIDDEN, &h, None)
            .unwrap();
        assert_eq!(
            held.to_string(),
            "upstream fs refused the credential portcullis holds for it (HTTP 403: error \"insufficient_scope\", scope \"tools:write\")"
        );
        assert!(Auth::Passthrough(Passthrough::default())
            .refusal("fs", StatusCode::UNAUTHORIZED, &h, None)
            .is_none());
        assert!(Auth::None.refusal("fs", StatusCode::NOT_FOUND, &h, None).is_none());
    }
}
