//! `state:`: where what replicas must agree on lives — in this process (`memory`, the default)
//! or in Redis / Valkey (`redis`), shared by every proxy pointed at it.

use std::time::Duration;

use serde::Deserialize;

use super::raw::Scalar;
use super::Problems;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    backend: Option<String>,
    url_env: Option<String>,
    prefix: Option<String>,
    timeout: Option<Scalar>,
}

/// The state backend.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Backend {
    /// Everything in this process (one proxy; `demo`).
    #[default]
    Memory,
    /// Redis or Valkey at the URL in the variable `url_env` (`redis://host:6379/0`,
    /// `rediss://…` for TLS; credentials in the URL, so the variable is a secret).
    Redis { url_env: String },
}

/// The compiled `state:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateSettings {
    pub backend: Backend,
    /// Every key and channel starts with it, so replicas of one deployment share, and other
    /// deployments on the same server do not.
    pub prefix: String,
    /// The longest one store operation may take before it counts as a failure.
    pub timeout: Duration,
}

impl Default for StateSettings {
    fn default() -> Self {
        StateSettings {
            backend: Backend::Memory,
            prefix: "portcullis:".into(),
            timeout: Duration::from_millis(500),
        }
    }
}

impl StateSettings {
    /// Whether replicas share state.
    pub fn shared(&self) -> bool {
        self.backend != Backend::Memory
    }
}

pub(crate) fn compile(raw: Raw, p: &mut Problems) -> StateSettings {
    let d = StateSettings::default();
    let backend = match (raw.backend.as_deref(), raw.url_env) {
        (None | Some("memory"), None) => Backend::Memory,
        (None | Some("memory"), Some(_)) => {
            p.add("state.url_env", "only the redis backend has a URL");
            Backend::Memory
        }
        (Some("redis" | "valkey"), Some(var)) => {
            if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                p.add("state.url_env", format!("{var:?} is not an environment variable name"));
            }
            Backend::Redis { url_env: var }
        }
        (Some("redis" | "valkey"), None) => {
            p.add("state.url_env", "the redis backend needs url_env: the variable holding its URL (never the URL itself: it may carry a password)");
            Backend::Memory
        }
        (Some(other), _) => {
            p.add("state.backend", format!("{other:?}: one of memory, redis"));
            Backend::Memory
        }
    };
    let prefix = raw.prefix.unwrap_or(d.prefix);
    if prefix.is_empty() || prefix.len() > 64 || prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
        p.add("state.prefix", "1 to 64 characters, no spaces");
    }
    let timeout = p.duration("state.timeout", raw.timeout, d.timeout);
    if timeout.is_zero() || timeout > Duration::from_secs(30) {
        p.add("state.timeout", "between 1ms and 30s");
    }
    StateSettings { backend, prefix, timeout }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn a_shared_store_needs_its_url_variable_and_a_shared_sealing_key() {
        let err = Config::parse("state: { backend: redis }\n", "t").unwrap_err();
        let paths: Vec<&str> = err.problems.iter().map(|p| p.path.as_str()).collect();
        assert!(paths.contains(&"state.url_env"), "{err}");
        let err = Config::parse("state: { backend: redis, url_env: REDIS_URL }\n", "t").unwrap_err();
        assert_eq!(err.problems[0].path, "approvals.seal_key_env", "{err}");
        let c = Config::parse(
            "state: { backend: redis, url_env: REDIS_URL, prefix: \"team-a:\", timeout: 250ms }\napprovals: { seal_key_env: SEAL }\n",
            "t",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(c.state.shared());
        assert_eq!(c.state.prefix, "team-a:");
        for bad in [
            "state: { backend: etcd }\n",
            "state: { backend: redis, url_env: \"not a var\" }\napprovals: { seal_key_env: SEAL }\n",
            "state: { url_env: REDIS_URL }\n",
            "state: { backend: redis, url_env: R, prefix: \"\" }\napprovals: { seal_key_env: SEAL }\n",
            "state: { backend: redis, url_env: R, timeout: 0ms }\napprovals: { seal_key_env: SEAL }\n",
            "state: { backend: redis, url_env: R, colour: red }\napprovals: { seal_key_env: SEAL }\n",
        ] {
            assert!(Config::parse(bad, "t").is_err(), "{bad}");
        }
        assert!(!Config::parse("", "t").unwrap().state.shared(), "memory by default");
    }
}
