//! JWTs from an identity provider: signature checked against its JWKS, then issuer, audience and
//! expiry; the agent is named by a configured claim.
//!
//! The key set is loaded at start and refreshed every `auth.jwt.refresh` in the background (a
//! token naming an unknown `kid` nudges an early refresh, at most one per `NUDGE_EVERY`);
//! nothing is fetched on a call's path. Keys that cannot be had mean JWTs are refused: an
//! identity provider that is down never opens the door.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use tokio::sync::Notify;

use super::AuthError;
use crate::config::agents::{JwksSource, JwtSettings};
use crate::oauth::fetch::{redacted_url, Fetcher};

/// The longest token considered: anything larger is refused before it is decoded.
pub const MAX_TOKEN: usize = 8 * 1024;
/// The least time between two refreshes that an unknown `kid` asks for.
const NUDGE_EVERY: Duration = Duration::from_secs(10);

/// One usable key.
struct Key {
    kid: Option<String>,
    /// The algorithm the JWK declares, if it does: a token must then use exactly it.
    alg: Option<Algorithm>,
    key: DecodingKey,
    /// Its print ([`super::credential::key_print`]): what a delegation minted under a token this
    /// key verified remembers it by.
    print: [u8; 32],
}

struct Keys {
    keys: Vec<Key>,
    /// Tokens these keys verified (by SHA-256 of the token). A new key set starts empty, so a
    /// dropped key's tokens are checked again, and fail.
    verified: moka::sync::Cache<[u8; 32], Verified>,
}

/// A token that verified: the agent its claim names, its `exp` (seconds since the epoch), and
/// the print of the key that verified it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub agent: String,
    pub exp: u64,
    pub key: [u8; 32],
}

/// Verified tokens remembered per key set.
const VERIFIED_CAPACITY: u64 = 10_000;
/// The leeway on `exp` (and `nbf`), for clocks a little apart.
const LEEWAY: u64 = 30;

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Checks JWTs. Cheap to share; the refresher task holds a weak handle and ends with it.
pub struct Verifier {
    settings: JwtSettings,
    issuer: Arc<str>,
    keys: ArcSwapOption<Keys>,
    /// Why the last load failed, for `/status` and the 503's message.
    last_error: ArcSwapOption<String>,
    nudge: Arc<Notify>,
    last_nudge: std::sync::Mutex<Option<Instant>>,
    /// Bounded in time and size (the OAuth code's client: a JWKS is an OAuth document).
    fetcher: Fetcher,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier").field("issuer", &self.settings.issuer).finish_non_exhaustive()
    }
}

fn parse_keys(bytes: &[u8]) -> Result<Keys, String> {
    let set: JwkSet = serde_json::from_slice(bytes).map_err(|e| format!("not a JWKS: {e}"))?;
    let mut keys = Vec::new();
    for jwk in &set.keys {
        // A shared secret in a published key set would let anyone mint tokens: never used.
        if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
            continue;
        }
        let Ok(key) = DecodingKey::from_jwk(jwk) else { continue };
        let alg = jwk.common.key_algorithm.and_then(|a| a.to_string().parse::<Algorithm>().ok());
        let print = super::credential::key_print(jwk.common.key_id.as_deref(), &jwk.algorithm);
        keys.push(Key { kid: jwk.common.key_id.clone(), alg, key, print });
    }
    if keys.is_empty() {
        return Err("the JWKS holds no usable public key".into());
    }
    let verified = moka::sync::Cache::builder()
        .max_capacity(VERIFIED_CAPACITY)
        .time_to_live(Duration::from_secs(300))
        .build();
    Ok(Keys { keys, verified })
}

#[derive(serde::Deserialize)]
struct Claims {
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

impl Verifier {
    /// A verifier whose keys are loaded by [`Verifier::refresh`]. A file is read here, at once, so
    /// a bad file is a start error rather than a refusal later.
    pub fn new(settings: JwtSettings) -> Result<Arc<Verifier>, String> {
        let v = Arc::new(Verifier {
            keys: ArcSwapOption::empty(),
            last_error: ArcSwapOption::from_pointee("the signing keys have not been fetched yet".to_owned()),
            nudge: Arc::new(Notify::new()),
            last_nudge: std::sync::Mutex::new(None),
            fetcher: Fetcher::new(Duration::from_secs(5)),
            issuer: settings.issuer.as_str().into(),
            settings,
        });
        if let JwksSource::File(path) = &v.settings.jwks {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            v.keys.store(Some(Arc::new(parse_keys(&bytes).map_err(|e| format!("{}: {e}", path.display()))?)));
            v.last_error.store(None);
        }
        Ok(v)
    }

    pub fn settings(&self) -> &JwtSettings {
        &self.settings
    }

    /// The configured issuer, as a delegation minted under one of its tokens remembers it.
    pub fn issuer(&self) -> Arc<str> {
        self.issuer.clone()
    }

    /// The print of the last key of the current set (for tests that mint under it).
    #[cfg(test)]
    pub(crate) fn last_key_print(&self) -> Option<[u8; 32]> {
        self.keys.load().as_deref().and_then(|k| k.keys.last().map(|k| k.print))
    }

    /// Whether the current key set still holds the key with this print: a key the provider
    /// dropped (seen at the last refresh) takes what was delegated under it with it.
    pub fn holds(&self, print: &[u8; 32]) -> bool {
        self.keys.load().as_deref().is_some_and(|k| k.keys.iter().any(|k| k.print == *print))
    }

    /// Why the last load of the key set failed, if it did.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.load().as_deref().cloned()
    }

    /// Whether keys are loaded.
    pub fn ready(&self) -> bool {
        self.keys.load().is_some()
    }

    /// Loads the key set once; on failure the keys already held are kept (a provider that is
    /// briefly down does not lock everyone out), and the failure is recorded.
    pub async fn refresh(&self) {
        let loaded = match &self.settings.jwks {
            JwksSource::File(path) => tokio::fs::read(path)
                .await
                .map(bytes::Bytes::from)
                .map_err(|e| format!("{}: {e}", path.display())),
            JwksSource::Url(url) => match self.fetcher.get_json(url).await {
                Ok(f) if f.status.is_success() => Ok(f.body),
                Ok(f) => Err(format!("answered HTTP {}", f.status.as_u16())),
                Err(e) => Err(e.to_string()),
            },
        }
        .and_then(|bytes| parse_keys(&bytes));
        match loaded {
            Ok(keys) => {
                self.keys.store(Some(Arc::new(keys)));
                self.last_error.store(None);
            }
            Err(e) => {
                tracing::warn!(jwks = %describe(&self.settings.jwks), error = %e, "could not load the JWT signing keys");
                self.last_error.store(Some(Arc::new(e)));
            }
        }
    }

    /// Refreshes every `refresh`, or sooner when nudged, while anyone else holds the verifier
    /// (a reload that replaces it ends the task at its next wake-up).
    pub fn spawn_refresher(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let (every, nudge) = (self.settings.refresh, self.nudge.clone());
        tokio::spawn(async move {
            loop {
                let Some(v) = weak.upgrade() else { return };
                v.refresh().await;
                drop(v);
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = nudge.notified() => {}
                }
            }
        });
    }

    fn nudge(&self) {
        let mut last = self.last_nudge.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_none_or(|t| t.elapsed() >= NUDGE_EVERY) {
            *last = Some(Instant::now());
            self.nudge.notify_one();
        }
    }

    /// The agent a token names, if its signature, issuer, audience, expiry and not-before hold.
    pub fn verify(&self, token: &str) -> Result<Verified, AuthError> {
        if token.len() > MAX_TOKEN {
            return Err(AuthError::Invalid("the token is too large"));
        }
        let digest: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(token.as_bytes()).into();
        if let Some(keys) = self.keys.load().as_deref() {
            if let Some(v) = keys.verified.get(&digest) {
                if v.exp.saturating_add(LEEWAY) > now() {
                    return Ok(v);
                }
                return Err(AuthError::Invalid("the token has expired"));
            }
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| AuthError::Invalid("not a signed JWT with an accepted algorithm"))?;
        if !self.settings.algorithms.contains(&header.alg) {
            return Err(AuthError::Invalid("the token's algorithm is not accepted"));
        }
        let Some(keys) = self.keys.load_full() else {
            return Err(AuthError::KeysUnavailable(
                self.last_error.load().as_deref().cloned().unwrap_or_default(),
            ));
        };
        let candidates: Vec<&Key> = match &header.kid {
            Some(kid) => keys.keys.iter().filter(|k| k.kid.as_deref() == Some(kid)).collect(),
            None => keys.keys.iter().collect(),
        };
        if candidates.is_empty() {
            // A rotation the proxy has not seen yet: fetch soon, refuse now.
            self.nudge();
            return Err(AuthError::Invalid("the token is signed with a key the proxy does not know"));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = LEEWAY;
        // `nbf` is checked with the same leeway as `exp`: a token minted for later is not yet good.
        validation.validate_nbf = true;
        let mut last = AuthError::Invalid("the token's signature does not verify");
        for k in candidates {
            if k.alg.is_some_and(|a| a != header.alg) {
                continue;
            }
            match jsonwebtoken::decode::<Claims>(token, &k.key, &validation) {
                Ok(data) => {
                    return match data.claims.rest.get(&self.settings.agent_claim) {
                        Some(serde_json::Value::String(name)) => {
                            // `exp` is required and checked, so it is a number here.
                            let Some(exp) = data.claims.rest.get("exp").and_then(|e| e.as_u64()) else {
                                return Err(AuthError::Invalid("the token lacks exp, iss or aud"));
                            };
                            let v = Verified { agent: name.clone(), exp, key: k.print };
                            keys.verified.insert(digest, v.clone());
                            Ok(v)
                        }
                        _ => {
                            Err(AuthError::Invalid("the token does not carry the claim that names the agent"))
                        }
                    };
                }
                Err(e) => {
                    use jsonwebtoken::errors::ErrorKind as K;
                    last = AuthError::Invalid(match e.kind() {
                        K::ExpiredSignature => "the token has expired",
                        K::ImmatureSignature => "the token is not valid yet",
                        K::InvalidIssuer => "the token's issuer is not the configured one",
                        K::InvalidAudience => "the token's audience is not this proxy",
                        K::MissingRequiredClaim(_) => "the token lacks exp, iss or aud",
                        _ => "the token's signature does not verify",
                    });
                    if !matches!(e.kind(), K::InvalidSignature | K::InvalidAlgorithm | K::InvalidKeyFormat) {
                        break;
                    }
                }
            }
        }
        Err(last)
    }
}

/// A JWKS source for logs (a URL's query could carry a secret: only scheme, host and path).
fn describe(s: &JwksSource) -> String {
    match s {
        JwksSource::File(p) => p.display().to_string(),
        JwksSource::Url(u) => redacted_url(u),
    }
}
