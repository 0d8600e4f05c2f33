//! `secrets:`: credentials the proxy holds for the agent (read from the environment, never the
//! file), and the destinations each may be sent to (tool globs and URL prefixes).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::Arc;

use serde::Deserialize;

use super::Problems;
use crate::rules::destination::{read_url, Host, Reading};
use crate::rules::glob::{Flavour, Glob};

/// The shortest value held: a shorter one would match ordinary text in results.
pub const MIN_VALUE_LEN: usize = 8;

/// One entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    pub name: String,
    pub env: String,
    #[serde(default)]
    pub to: Vec<String>,
}

/// The compiled `secrets:` section; empty when none is configured.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    pub entries: Vec<Secret>,
    /// Each plain HTTP upstream's base URL: a `/http/{upstream}/{path}` call goes to the base
    /// with the path after it, and that is the URL a `to` prefix is matched against.
    pub http_bases: BTreeMap<String, String>,
}

/// One credential and where it may go.
#[derive(Debug, Clone)]
pub struct Secret {
    /// What the agent sees: `portcullis:secret:{name}`.
    pub name: Arc<str>,
    /// The variable it was read from (named in problems, never the value).
    pub env: String,
    pub value: Value,
    pub to: Vec<Allowed>,
}

/// A held value. Its `Debug` never shows it; the bytes are zeroed when the last copy drops.
#[derive(Clone)]
pub struct Value(Arc<zeroize::Zeroizing<String>>);

impl Value {
    pub fn expose(&self) -> &str {
        self.0.as_str()
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<held secret, {} bytes>", self.0.len())
    }
}

/// A destination a secret may be sent to.
#[derive(Debug, Clone)]
pub enum Allowed {
    /// A tool, by a text glob over qualified names (`mcp__github__*`).
    Tool(Glob),
    /// A URL prefix: this scheme, host and port, and a path under this one.
    Url(UrlPrefix),
}

/// `https://api.github.com/repos/` compiled: matched by scheme, canonical host, port and whole
/// path segments, never by text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPrefix {
    pub scheme: String,
    pub host: Host,
    pub port: Option<u16>,
    /// Always starts with `/`; `/` alone allows every path.
    pub path: String,
}

impl UrlPrefix {
    /// Reads a prefix as the fetchers read a URL; only an unambiguous URL with a plain path.
    pub fn parse(text: &str) -> Result<UrlPrefix, String> {
        let (scheme, host, port) = match read_url(text) {
            Reading::One(d) => (d.scheme, d.host, d.port),
            other => return Err(other.doubt().unwrap_or_else(|| "not a URL".into())),
        };
        let path = plain_path(text).ok_or("its path is not plain (dot segments, escapes, backslashes)")?;
        Ok(UrlPrefix { scheme, host, port, path })
    }

    /// True when the URL `text`, read the way the fetcher will, is under this prefix. A URL the
    /// readers disagree on, or whose path is not plain, is under no prefix.
    pub fn admits(&self, text: &str) -> bool {
        let Reading::One(d) = read_url(text) else { return false };
        if d.scheme != self.scheme || d.host != self.host || d.port != self.port {
            return false;
        }
        let Some(path) = plain_path(text) else { return false };
        match path.strip_prefix(self.path.as_str()) {
            Some(rest) => self.path.ends_with('/') || rest.is_empty() || rest.starts_with('/'),
            None => false,
        }
    }
}

/// The path of `text` as the URL Standard reads it, when every reader must read it the same:
/// only unreserved characters, `/`, and percent escapes of bytes that are not `.`, `/` or `\`,
/// with no `.` or `..` segment. `None` for anything else.
fn plain_path(text: &str) -> Option<String> {
    let text = text.trim_matches(|c: char| c <= ' ');
    // The URL Standard removes dot segments before anyone can look; a prefix or a URL written
    // with one (or an escape of a dot) is not plain, whatever it resolves to.
    let lower = text.to_ascii_lowercase();
    let dotted = ["/./", "/../", "%2e"].iter().any(|d| lower.contains(d))
        || lower.ends_with("/.")
        || lower.ends_with("/..");
    if text.contains('\\') || dotted {
        return None;
    }
    let url = url::Url::parse(text).ok()?;
    let path = url.path();
    let plain = |c: char| c.is_ascii_alphanumeric() || "-._~/%!$&'()*+,;=:@".contains(c);
    if !path.starts_with('/') || !path.chars().all(plain) {
        return None;
    }
    let lower = path.to_ascii_lowercase();
    if ["%2e", "%2f", "%5c"].iter().any(|e| lower.contains(e)) {
        return None;
    }
    if path.split('/').any(|seg| seg == "." || seg == "..") {
        return None;
    }
    Some(path.to_owned())
}

/// A name the sentinel can carry: lower-case letters, digits, `_` and `-`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn valid_env(env: &str) -> bool {
    !env.is_empty() && env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Compiles `secrets:`, reading each value through `env`. Every problem is reported: a name
/// reused, a variable unset or shorter than [`MIN_VALUE_LEN`], two secrets with one value, a
/// `to` entry that is neither a tool glob nor a plain URL.
pub(crate) fn compile(
    raw: Vec<Raw>,
    http_bases: BTreeMap<String, String>,
    env: &dyn Fn(&str) -> Option<OsString>,
    p: &mut Problems,
) -> Secrets {
    let mut entries: Vec<Secret> = Vec::new();
    for (i, r) in raw.into_iter().enumerate() {
        let at = format!("secrets[{i}]");
        if !valid_name(&r.name) {
            p.add(format!("{at}.name"), format!("{:?} is not a name (a-z, 0-9, _ and -)", r.name));
        } else if entries.iter().any(|e| *e.name == *r.name) {
            p.add(format!("{at}.name"), format!("{:?} is named twice", r.name));
        }
        let value = match env(&r.env).map(OsString::into_string) {
            _ if !valid_env(&r.env) => {
                p.add(format!("{at}.env"), format!("{:?} is not an environment variable name", r.env));
                None
            }
            None => {
                p.add(format!("{at}.env"), format!("the environment variable {} is unset", r.env));
                None
            }
            Some(Err(_)) => {
                p.add(format!("{at}.env"), format!("the environment variable {} is not UTF-8", r.env));
                None
            }
            Some(Ok(v)) if v.len() < MIN_VALUE_LEN => {
                p.add(
                    format!("{at}.env"),
                    format!("the value of {} is shorter than {MIN_VALUE_LEN} bytes", r.env),
                );
                None
            }
            Some(Ok(v)) => Some(Value(Arc::new(zeroize::Zeroizing::new(v)))),
        };
        if let Some(v) = &value {
            if let Some(same) = entries.iter().find(|e| e.value.expose() == v.expose()) {
                p.add(format!("{at}.env"), format!("holds the same value as secret {:?}", &*same.name));
            }
        }
        let mut to = Vec::new();
        for (j, t) in r.to.iter().enumerate() {
            match allowed(t) {
                Ok(a) => to.push(a),
                Err(why) => p.add(format!("{at}.to[{j}]"), format!("{t:?}: {why}")),
            }
        }
        if let Some(value) = value {
            entries.push(Secret { name: Arc::from(r.name.as_str()), env: r.env, value, to });
        }
    }
    Secrets { entries, http_bases }
}

/// A `to` entry: a URL prefix when it has a scheme, else a tool glob.
fn allowed(text: &str) -> Result<Allowed, String> {
    if text.contains("://") {
        return UrlPrefix::parse(text).map(Allowed::Url);
    }
    if text.trim().is_empty() || text.chars().any(|c| c.is_whitespace()) {
        return Err("neither a tool glob nor a URL".into());
    }
    Ok(Allowed::Tool(Glob::new(text, Flavour::Text)))
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
