//! The configured upstreams, ready to address: each one's name, URL and what crosses to it in
//! `Authorization` (secrets read from the environment once, at start).

use std::collections::HashMap;
use std::sync::Arc;

use http::Uri;

use crate::config::Config;
use crate::oauth::fetch::Fetcher;
use crate::oauth::secret::SecretError;
use crate::oauth::Auth;

/// One configured upstream, ready to address.
#[derive(Debug)]
pub struct Target {
    pub name: Arc<str>,
    pub url: Uri,
    /// What crosses to it in `Authorization`.
    pub auth: Auth,
}

/// Upstreams by name, and the client OAuth discovery and token requests use.
#[derive(Debug)]
pub struct Targets {
    by_name: HashMap<String, Arc<Target>>,
    fetcher: Fetcher,
}

impl Targets {
    /// The upstreams of `config`, with any secret their `auth` names read from the environment.
    pub fn from_config(config: &Config) -> Result<Targets, SecretError> {
        let fetcher = Fetcher::new(config.limits.connect_timeout);
        let mut by_name = HashMap::new();
        for u in config.upstreams.values() {
            let auth = Auth::new(&u.name, &u.auth, &fetcher)?;
            by_name.insert(
                u.name.clone(),
                Arc::new(Target { name: u.name.as_str().into(), url: u.url.clone(), auth }),
            );
        }
        Ok(Targets { by_name, fetcher })
    }

    pub fn get(&self, name: &str) -> Option<Arc<Target>> {
        self.by_name.get(name).cloned()
    }

    /// The upstreams with `auth: passthrough`, by name.
    pub fn passthrough(&self) -> Vec<Arc<Target>> {
        let mut v: Vec<_> =
            self.by_name.values().filter(|t| t.auth.passthrough().is_some()).cloned().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// The client OAuth discovery and token requests use.
    pub fn fetcher(&self) -> Fetcher {
        self.fetcher.clone()
    }

    /// The upstreams' names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Whether an upstream of this name is configured.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }
}
