//! `upstreams.NAME.auth`: what crosses to one upstream in the `Authorization` header.
//!
//! ```yaml
//! auth: none                          # the default: the agent's Authorization is never forwarded
//! auth: passthrough                   # the agent's own OAuth flow, through the proxy
//! auth: { bearer_env: FS_TOKEN }      # a static token the proxy holds, from an env var
//! auth:                               # the OAuth client-credentials grant, done by the proxy
//!   client_credentials: { token_url: https://as.example/token, client_id: portcullis,
//!                         client_secret_env: FS_CLIENT_SECRET, scope: "tools:read", resource: https://fs.example/mcp }
//! ```
//!
//! Secrets are named here (environment variables), never written: the values are read when the
//! proxy starts (`crate::oauth`), so `validate` checks names and shapes only.

use http::Uri;
use serde::Deserialize;

use super::Problems;

/// What the proxy does with credentials for one upstream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum UpstreamAuth {
    /// The agent's `Authorization` is dropped; a 401/403 from the upstream is an error naming the fix.
    #[default]
    None,
    /// The agent's `Authorization` is forwarded to this upstream only, and OAuth discovery is
    /// answered for the proxy's URL.
    Passthrough,
    /// A static bearer token read from an environment variable.
    Bearer { env: EnvName },
    /// A token the proxy obtains with the client-credentials grant.
    ClientCredentials(Box<ClientCredentials>),
}

impl UpstreamAuth {
    /// The word used in config and docs.
    pub fn as_str(&self) -> &'static str {
        match self {
            UpstreamAuth::None => "none",
            UpstreamAuth::Passthrough => "passthrough",
            UpstreamAuth::Bearer { .. } => "bearer_env",
            UpstreamAuth::ClientCredentials(_) => "client_credentials",
        }
    }
}

/// The client-credentials grant (RFC 6749 §4.4), the client authenticating with
/// `client_secret_basic` (§2.3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    pub token_url: Uri,
    pub client_id: String,
    pub client_secret_env: EnvName,
    /// Space-separated scope tokens, sent as `scope` when given.
    pub scope: Option<String>,
    /// The RFC 8707 resource indicator, sent as `resource` when given.
    pub resource: Option<Uri>,
}

/// The name of an environment variable: ASCII letters, digits and `_`, not starting with a digit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvName(String);

impl EnvName {
    pub fn parse(s: &str) -> Option<EnvName> {
        let ok = !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        ok.then(|| EnvName(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EnvName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The map forms; exactly one key.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeld {
    bearer_env: Option<String>,
    client_credentials: Option<RawClientCredentials>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClientCredentials {
    token_url: String,
    client_id: String,
    client_secret_env: String,
    scope: Option<String>,
    resource: Option<String>,
}

const FORMS: &str = "none, passthrough, { bearer_env: VAR } or { client_credentials: { token_url, client_id, client_secret_env, scope?, resource? } }";

/// Compiles `upstreams.NAME.auth` (at `path`), reporting every problem.
pub(super) fn compile(path: &str, raw: Option<serde_json::Value>, p: &mut Problems) -> UpstreamAuth {
    let raw = match raw {
        None | Some(serde_json::Value::Null) => return UpstreamAuth::None,
        Some(serde_json::Value::String(s)) => {
            return match s.as_str() {
                "none" => UpstreamAuth::None,
                "passthrough" => UpstreamAuth::Passthrough,
                _ => {
                    p.add(path, format!("{s:?} is not an auth mode (one of {FORMS})"));
                    UpstreamAuth::None
                }
            };
        }
        Some(v) => v,
    };
    let held: RawHeld = match serde_json::from_value(raw) {
        Ok(h) => h,
        Err(e) => {
            p.add(path, format!("{e} (one of {FORMS})"));
            return UpstreamAuth::None;
        }
    };
    match (held.bearer_env, held.client_credentials) {
        (Some(var), None) => match env_name(&format!("{path}.bearer_env"), &var, p) {
            Some(env) => UpstreamAuth::Bearer { env },
            None => UpstreamAuth::None,
        },
        (None, Some(cc)) => client_credentials(&format!("{path}.client_credentials"), cc, p),
        (Some(_), Some(_)) => {
            p.add(path, "give either bearer_env or client_credentials, not both");
            UpstreamAuth::None
        }
        (None, None) => {
            p.add(path, format!("an empty auth map (one of {FORMS})"));
            UpstreamAuth::None
        }
    }
}

fn env_name(path: &str, s: &str, p: &mut Problems) -> Option<EnvName> {
    let name = EnvName::parse(s);
    if name.is_none() {
        p.add(
            path,
            format!("{s:?} is not an environment variable name (the secret itself never goes in the file)"),
        );
    }
    name
}

fn client_credentials(path: &str, raw: RawClientCredentials, p: &mut Problems) -> UpstreamAuth {
    let token_url = absolute_url(&format!("{path}.token_url"), &raw.token_url, p);
    if let Some(u) = &token_url {
        let loopback = matches!(u.host(), Some("127.0.0.1" | "localhost" | "[::1]" | "::1"));
        if u.scheme_str() == Some("http") && !loopback {
            p.warn(
                format!("{path}.token_url"),
                "the client secret would cross the network unencrypted: use https",
            );
        }
    }
    if raw.client_id.is_empty() || raw.client_id.chars().any(char::is_control) {
        p.add(format!("{path}.client_id"), "must be a non-empty string without control characters");
    }
    let secret = env_name(&format!("{path}.client_secret_env"), &raw.client_secret_env, p);
    if let Some(scope) = &raw.scope {
        // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces.
        let token_ok = |t: &str| {
            !t.is_empty()
                && t.bytes().all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
        };
        if !scope.split(' ').all(token_ok) {
            p.add(
                format!("{path}.scope"),
                format!("{scope:?} is not a space-separated list of scope tokens"),
            );
        }
    }
    let resource = raw.resource.as_deref().and_then(|r| {
        let u = absolute_url(&format!("{path}.resource"), r, p)?;
        if r.contains('#') {
            p.add(format!("{path}.resource"), "a resource indicator has no fragment (RFC 8707 §2)");
            return None;
        }
        Some(u)
    });
    match (token_url, secret) {
        (Some(token_url), Some(client_secret_env)) => {
            UpstreamAuth::ClientCredentials(Box::new(ClientCredentials {
                token_url,
                client_id: raw.client_id,
                client_secret_env,
                scope: raw.scope,
                resource,
            }))
        }
        _ => UpstreamAuth::None,
    }
}

/// An absolute http(s) URL without user info (which would put a credential in the file).
fn absolute_url(path: &str, s: &str, p: &mut Problems) -> Option<Uri> {
    let uri: Uri = match s.parse() {
        Ok(u) => u,
        Err(e) => {
            p.add(path, format!("{s:?} is not a URL: {e}"));
            return None;
        }
    };
    match (uri.scheme_str(), uri.authority()) {
        (_, Some(a)) if a.as_str().contains('@') => {
            p.add(path, "no user info in the URL: credentials come from environment variables");
            None
        }
        (Some("http" | "https"), Some(_)) => Some(uri),
        _ => {
            p.add(path, format!("{s:?} must be an absolute http:// or https:// URL"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(yaml: &str) -> (UpstreamAuth, Problems) {
        let mut p = Problems::default();
        let v: serde_json::Value = serde_saphyr::from_str(yaml).unwrap();
        (compile("upstreams.fs.auth", Some(v), &mut p), p)
    }

    #[test]
    fn each_form_compiles_to_its_mode() {
        assert_eq!(one("none").0, UpstreamAuth::None);
        assert_eq!(one("passthrough").0, UpstreamAuth::Passthrough);
        assert_eq!(
            one("{ bearer_env: FS_TOKEN }").0,
            UpstreamAuth::Bearer { env: EnvName("FS_TOKEN".into()) }
        );
        let (auth, p) = one(
            "{ client_credentials: { token_url: \"https://as.example/token\", client_id: px, client_secret_env: S, scope: \"a b\", resource: \"https://fs.example/mcp\" } }",
        );
        assert!(p.problems.is_empty() && p.warnings.is_empty(), "{:?}", p.problems);
        let UpstreamAuth::ClientCredentials(cc) = auth else { panic!("{auth:?}") };
        assert_eq!((cc.client_id.as_str(), cc.scope.as_deref()), ("px", Some("a b")));
        assert_eq!(cc.resource.unwrap(), "https://fs.example/mcp");
    }

    #[test]
    fn bad_auth_values_are_problems_at_their_paths() {
        for (yaml, at) in [
            ("bearer", "upstreams.fs.auth"),
            ("{ bearer_env: FS_TOKEN, colour: red }", "upstreams.fs.auth"),
            ("{ bearer_env: \"not a var\" }", "upstreams.fs.auth.bearer_env"),
            ("{ bearer_env: \"\" }", "upstreams.fs.auth.bearer_env"),
            ("{ }", "upstreams.fs.auth"),
            ("{ bearer_env: A, client_credentials: { token_url: \"https://a/t\", client_id: x, client_secret_env: S } }", "upstreams.fs.auth"),
            ("{ client_credentials: { token_url: \"https://a/t\", client_id: x } }", "upstreams.fs.auth"),
            ("{ client_credentials: { token_url: \"https://a/t\", client_id: x, client_secret_env: S, audience: y } }", "upstreams.fs.auth"),
            ("{ client_credentials: { token_url: \"ftp://a/t\", client_id: x, client_secret_env: S } }", "upstreams.fs.auth.client_credentials.token_url"),
            ("{ client_credentials: { token_url: \"https://u:p@a/t\", client_id: x, client_secret_env: S } }", "upstreams.fs.auth.client_credentials.token_url"),
            ("{ client_credentials: { token_url: \"https://a/t\", client_id: \"\", client_secret_env: S } }", "upstreams.fs.auth.client_credentials.client_id"),
            ("{ client_credentials: { token_url: \"https://a/t\", client_id: x, client_secret_env: \"9X\" } }", "upstreams.fs.auth.client_credentials.client_secret_env"),
            ("{ client_credentials: { token_url: \"https://a/t\", client_id: x, client_secret_env: S, scope: \"a  b\" } }", "upstreams.fs.auth.client_credentials.scope"),
            ("{ client_credentials: { token_url: \"https://a/t\", client_id: x, client_secret_env: S, resource: \"https://r/#f\" } }", "upstreams.fs.auth.client_credentials.resource"),
        ] {
            let (_, p) = one(yaml);
            assert!(p.problems.iter().any(|x| x.path == at), "{yaml}: want a problem at {at}, got {:?}", p.problems);
        }
    }

    #[test]
    fn a_client_secret_sent_in_clear_to_another_host_is_a_warning() {
        let (_, p) = one("{ client_credentials: { token_url: \"http://as.example/t\", client_id: x, client_secret_env: S } }");
        assert!(p.problems.is_empty());
        assert_eq!(p.warnings[0].path, "upstreams.fs.auth.client_credentials.token_url");
        let (_, p) = one("{ client_credentials: { token_url: \"http://127.0.0.1:9/t\", client_id: x, client_secret_env: S } }");
        assert!(p.warnings.is_empty());
    }
}
