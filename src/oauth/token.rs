//! The client-credentials grant (RFC 6749 §4.4) done by the proxy for one upstream: a token
//! cached until shortly before it expires, refreshed in the background once it is three
//! quarters through its life, and fetched by one request however many calls are waiting.
//!
//! Reading the cached token takes no lock (an [`ArcSwapOption`] load). Fetches are
//! single-flight: the first caller that finds no usable token starts a shared future; every
//! caller arriving while it runs awaits the same one, success or failure. The client
//! authenticates with `client_secret_basic` (RFC 6749 §2.3.1). The token and the secret never
//! appear in an error, a log line or a `Debug`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use base64::Engine as _;
use bytes::Bytes;
use futures_util::future::{BoxFuture, FutureExt, Shared};
use http::{header, HeaderValue, Request};
use http_body_util::Full;
use serde::Deserialize;
use tokio::time::Instant;

use super::fetch::{redacted_url, FetchError, Fetcher};
use super::secret::Secret;
use crate::config::ClientCredentials;

/// The lifetime assumed when a token response has no `expires_in` (RFC 6749 §5.1 makes it
/// optional): short, so a token that does expire is not used long past its end.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);
/// The longest token accepted (it is sent in a header on every call).
const MAX_TOKEN: usize = 16 << 10;

/// Why no token could be had. Cloned to every caller of one flight.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token endpoint failed: {0}")]
    Fetch(#[from] FetchError),
    #[error("the token endpoint {url} answered HTTP {status}{}", error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default())]
    Refused { url: String, status: u16, error: Option<String> },
    #[error("the token endpoint {url} sent no usable token: {why}")]
    Malformed { url: String, why: &'static str },
}

/// A token and when to stop using it.
#[derive(Clone)]
struct Token {
    header: HeaderValue,
    refresh_at: Instant,
    usable_until: Instant,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token").field("header", &"[redacted]").finish_non_exhaustive()
    }
}

/// When a token issued at `now` for `lifetime` is refreshed in the background, and when it is
/// no longer used: refresh after three quarters of its life; stop using it a tenth of its life
/// (at most 30 s) before it expires, so clocks and transit do not make the upstream see it expired.
fn schedule(now: Instant, lifetime: Duration) -> (Instant, Instant) {
    let margin = (lifetime / 10).min(Duration::from_secs(30));
    (now + lifetime * 3 / 4, now + lifetime - margin)
}

type Flight = Shared<BoxFuture<'static, Result<Token, TokenError>>>;

/// Tokens for one upstream.
pub struct TokenSource {
    settings: ClientCredentials,
    secret: Secret,
    fetcher: Fetcher,
    current: ArcSwapOption<Token>,
    flight: Mutex<Option<Flight>>,
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSource")
            .field("token_url", &redacted_url(&self.settings.token_url))
            .field("client_id", &self.settings.client_id)
            .field("secret", &self.secret)
            .finish_non_exhaustive()
    }
}

impl TokenSource {
    pub fn new(settings: ClientCredentials, secret: Secret, fetcher: Fetcher) -> TokenSource {
        TokenSource { settings, secret, fetcher, current: ArcSwapOption::empty(), flight: Mutex::new(None) }
    }

    /// The `Authorization` value to send now.
    pub async fn bearer(self: &Arc<Self>) -> Result<HeaderValue, TokenError> {
        let now = Instant::now();
        if let Some(t) = self.current.load_full() {
            if now < t.usable_until {
                if now >= t.refresh_at {
                    // Off the call path: the caller goes on with the still-valid token.
                    tokio::spawn(self.flight());
                }
                return Ok(t.header.clone());
            }
        }
        self.flight().await.map(|t| t.header)
    }

    /// Forgets `used` if it is still the cached token (the upstream refused it): the next call
    /// fetches a new one.
    pub fn invalidate(&self, used: &HeaderValue) {
        let current = self.current.load();
        if current.as_ref().is_some_and(|t| t.header == *used) {
            self.current.compare_and_swap(&*current, None);
        }
    }

    /// The fetch in flight, or a new one.
    fn flight(self: &Arc<Self>) -> Flight {
        let mut slot = self.flight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = &*slot {
            return f.clone();
        }
        let this = self.clone();
        let fut = async move {
            let got = this.request().await;
            if let Ok(t) = &got {
                this.current.store(Some(Arc::new(t.clone())));
            }
            this.flight.lock().unwrap_or_else(|p| p.into_inner()).take();
            got
        }
        .boxed()
        .shared();
        *slot = Some(fut.clone());
        fut
    }

    async fn request(&self) -> Result<Token, TokenError> {
        let s = &self.settings;
        let url = redacted_url(&s.token_url);
        let mut form = vec![("grant_type", "client_credentials")];
        form.extend(s.scope.as_deref().map(|v| ("scope", v)));
        let resource = s.resource.as_ref().map(|r| r.to_string());
        form.extend(resource.as_deref().map(|v| ("resource", v)));
        let body = form.iter().map(|(k, v)| format!("{k}={}", form_encode(v))).collect::<Vec<_>>().join("&");
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form_encode(&s.client_id),
            form_encode(self.secret.expose())
        ));
        let mut auth = HeaderValue::from_str(&format!("Basic {basic}")).map_err(|_| {
            TokenError::Malformed { url: url.clone(), why: "the client credentials cannot be sent" }
        })?;
        auth.set_sensitive(true);
        let req = Request::post(s.token_url.clone())
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .header(header::AUTHORIZATION, auth)
            .body(Full::new(Bytes::from(body)))
            .map_err(|_| TokenError::Malformed { url: url.clone(), why: "the request cannot be built" })?;
        let got = self.fetcher.send(req).await?;
        if !got.status.is_success() {
            return Err(TokenError::Refused {
                url,
                status: got.status.as_u16(),
                error: oauth_error(&got.body),
            });
        }
        let (header, lifetime) = parse_token(&got.body).map_err(|why| TokenError::Malformed { url, why })?;
        let (refresh_at, usable_until) = schedule(Instant::now(), lifetime);
        Ok(Token { header, refresh_at, usable_until })
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
}

/// The `Authorization` value and lifetime from a token response (RFC 6749 §5.1).
fn parse_token(body: &[u8]) -> Result<(HeaderValue, Duration), &'static str> {
    let r: TokenResponse = serde_json::from_slice(body).map_err(|_| "the answer is not a token response")?;
    if !r.token_type.eq_ignore_ascii_case("bearer") {
        return Err("the token type is not Bearer");
    }
    // RFC 6750 §2.1 b64token: what a bearer credential may hold.
    let t = r.access_token.trim_end_matches('=');
    let b64token = !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !b64token || r.access_token.len() > MAX_TOKEN {
        return Err("the access token is empty, too long or not a bearer token");
    }
    let lifetime = match r.expires_in {
        None | Some(serde_json::Value::Null) => DEFAULT_LIFETIME,
        Some(serde_json::Value::Number(n)) => {
            n.as_u64().map(Duration::from_secs).ok_or("expires_in is not a whole number of seconds")?
        }
        // Some servers send it as a string.
        Some(serde_json::Value::String(s)) => {
            s.parse().map(Duration::from_secs).map_err(|_| "expires_in is not a number")?
        }
        Some(_) => return Err("expires_in is not a number"),
    };
    if lifetime.is_zero() {
        return Err("the token expires at once");
    }
    let mut header = HeaderValue::from_str(&format!("Bearer {}", r.access_token))
        .map_err(|_| "the access token cannot be sent")?;
    header.set_sensitive(true);
    Ok((header, lifetime))
}

/// The OAuth `error` code of an error response (RFC 6749 §5.2), if it is one: a short ASCII
/// word, so nothing else the endpoint wrote is repeated.
fn oauth_error(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct E {
        error: String,
    }
    let e: E = serde_json::from_slice(body).ok()?;
    let ok = e.error.len() <= 64 && e.error.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then_some(e.error)
}

/// `application/x-www-form-urlencoded` (the WHATWG form encoding RFC 6749 Appendix B uses).
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(b as char),
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_refreshed_at_three_quarters_and_dropped_shortly_before_expiry() {
        let now = Instant::now();
        let (refresh, until) = schedule(now, Duration::from_secs(3600));
        assert_eq!((refresh - now, until - now), (Duration::from_secs(2700), Duration::from_secs(3570)));
        let (refresh, until) = schedule(now, Duration::from_secs(2));
        assert_eq!((refresh - now, until - now), (Duration::from_millis(1500), Duration::from_millis(1800)));
    }

    #[test]
    fn token_responses_are_checked() {
        let (h, life) =
            parse_token(br#"{"access_token":"abc.DEF-_~+/==","token_type":"bearer","expires_in":60}"#)
                .unwrap();
        assert_eq!((h.to_str().unwrap(), life), ("Bearer abc.DEF-_~+/==", Duration::from_secs(60)));
        assert!(h.is_sensitive());
        assert_eq!(
            parse_token(br#"{"access_token":"a","token_type":"Bearer","expires_in":"30"}"#).unwrap().1,
            Duration::from_secs(30)
        );
        assert_eq!(
            parse_token(br#"{"access_token":"a","token_type":"Bearer"}"#).unwrap().1,
            DEFAULT_LIFETIME
        );
        for bad in [
            &br#"{"access_token":"a","token_type":"mac"}"#[..],
            br#"{"access_token":"","token_type":"Bearer"}"#,
            br#"{"access_token":"a b","token_type":"Bearer"}"#,
            br#"{"access_token":"a\nb","token_type":"Bearer"}"#,
            br#"{"access_token":"a","token_type":"Bearer","expires_in":-1}"#,
            br#"{"access_token":"a","token_type":"Bearer","expires_in":0}"#,
            br#"{"token_type":"Bearer"}"#,
            b"<html>",
        ] {
            assert!(parse_token(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn only_a_plain_oauth_error_code_is_repeated() {
        assert_eq!(
            oauth_error(br#"{"error":"invalid_client","error_description":"secret s3cr3t wrong"}"#)
                .as_deref(),
            Some("invalid_client")
        );
        assert_eq!(oauth_error(br#"{"error":"<script>"}"#), None);
        assert_eq!(oauth_error(b"garbage"), None);
    }

    #[test]
    fn form_encoding_escapes_what_basic_credentials_need_escaped() {
        assert_eq!(form_encode("a b:c/d%é"), "a+b%3Ac%2Fd%25%C3%A9");
    }
}
