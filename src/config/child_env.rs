//! What a tool server the proxy starts inherits: never the guard's own credentials, and with
//! `upstreams.NAME.env` only a small baseline plus the variables named there.
//!
//! The guard's credentials are computed in one place, [`Config::guard_secret_vars`], from the
//! validated config: every `*_env` setting the config has (a test walks the config's raw types
//! so a new one cannot be left out) and the fixed names the binary reads by itself.

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::{Config, EnvName, UpstreamAuth};

/// The variable `portcullis approvals` and `portcullis hook` read the admin token from unless
/// told otherwise (`--token-env`): a credential by a fixed name, whatever the config says.
pub const ADMIN_TOKEN_VAR: &str = "PORTCULLIS_ADMIN_TOKEN";

/// What every allowlisted server still gets, because ordinary programs misbehave without it and
/// none of it is a credential:
/// - `PATH`: finding `node`, `npx`, `python3`, `git` (and the server command itself);
/// - `HOME`, `USER`, `LOGNAME`: who runs it and where its own dotfiles and caches live;
/// - `SHELL`: what a server that runs commands runs them with;
/// - `LANG`, `LC_*` (every locale category), `TZ`: how text, numbers and times are read and
///   printed, which a server's output must not silently change with;
/// - `TERM`: how a program that writes to the (inherited) stderr formats it;
/// - `TMPDIR`: where temporary files go (a server writing to `/tmp` instead may be refused).
///
/// Anything else a server needs (an API key of its own, a proxy setting) is named in its `env:`.
pub const BASELINE: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "SHELL", "TZ"];

/// The locale categories (`LC_ALL`, `LC_CTYPE`, …) are the baseline by this prefix.
const LOCALE_PREFIX: &str = "LC_";

/// The guard's own credentials: each variable, with the setting that names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardSecrets(BTreeMap<String, String>);

impl GuardSecrets {
    /// Whether `var` holds one of the guard's credentials.
    pub fn contains(&self, var: &str) -> bool {
        self.source(var).is_some()
    }

    /// The setting that names `var` (`guardrails.checker.api_key_env`), if it is a credential.
    pub fn source(&self, var: &str) -> Option<&str> {
        self.0.iter().find(|(name, _)| same_name(name, var)).map(|(_, source)| source.as_str())
    }

    /// Every credential variable, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The first setting to name a variable is the one reported.
    fn add(&mut self, var: &str, source: impl Into<String>) {
        self.0.entry(var.to_owned()).or_insert_with(|| source.into());
    }
}

/// Variable names are compared as the OS does: exactly on Unix, ignoring ASCII case on Windows.
fn same_name(a: &str, b: &str) -> bool {
    if cfg!(windows) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// What one spawned server's environment is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEnv<'a> {
    /// No `env:` configured: everything the proxy has but the guard's credentials.
    Inherit,
    /// `upstreams.NAME.env`: the [`BASELINE`] and these names only (never a credential).
    Only(&'a [EnvName]),
}

impl ChildEnv<'_> {
    /// The child's environment made from the parent's (pure: tests give any parent). A guard
    /// credential is dropped whatever else says it may pass, the baseline included, and so is
    /// any variable holding a credential's value under another name (`OPENAI_API_KEY` set to the
    /// checker's key): no credential's value reaches the child.
    pub fn apply(
        self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
        secrets: &GuardSecrets,
    ) -> Built {
        let parent: Vec<(OsString, OsString)> = parent.into_iter().collect();
        let is_secret = |name: &OsString| name.to_str().is_some_and(|n| secrets.contains(n));
        let values: Vec<&OsString> = parent
            .iter()
            .filter(|(name, value)| is_secret(name) && !value.is_empty())
            .map(|(_, v)| v)
            .collect();
        let mut built = Built::default();
        for (name, value) in &parent {
            if is_secret(name) {
                continue;
            }
            let passes = match name.to_str() {
                // Not UTF-8, so no validated name: no credential's, nor a listed or baseline one.
                None => matches!(self, ChildEnv::Inherit),
                Some(n) => self.passes(n),
            };
            if !passes {
                continue;
            }
            if values.contains(&value) {
                built.aliases.push(name.to_string_lossy().into_owned());
                continue;
            }
            built.vars.push((name.clone(), value.clone()));
        }
        built
    }

    fn passes(self, name: &str) -> bool {
        match self {
            ChildEnv::Inherit => true,
            ChildEnv::Only(listed) => {
                BASELINE.iter().any(|b| same_name(b, name))
                    || name.get(..LOCALE_PREFIX.len()).is_some_and(|p| same_name(p, LOCALE_PREFIX))
                    || listed.iter().any(|l| same_name(l.as_str(), name))
            }
        }
    }
}

/// A child's environment, as [`ChildEnv::apply`] made it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Built {
    pub vars: Vec<(OsString, OsString)>,
    /// Variables that would have passed but hold a credential's value: dropped, and named so
    /// the operator learns why a server misses them.
    pub aliases: Vec<String>,
}

/// A stdio server's settings: an `upstreams` entry without `url:` that gives `env:`, used by
/// `wrap --name NAME` and `pin --name NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServer {
    pub name: String,
    /// The variables it gets beside the [`BASELINE`].
    pub env: Vec<EnvName>,
}

impl Config {
    /// Every variable holding one of the guard's own credentials, with the setting naming it:
    /// the checker's and shadow checkers' `api_key_env`, `admin.token_env`, each agent's
    /// `token_env`, `approvals.seal_key_env`, `state.url_env`, each upstream's `auth.bearer_env`
    /// and `auth.client_credentials.client_secret_env`, and [`ADMIN_TOKEN_VAR`]. A server the
    /// proxy starts never receives them.
    pub fn guard_secret_vars(&self) -> GuardSecrets {
        let mut s = GuardSecrets::default();
        if let Some(var) = &self.admin.token_env {
            s.add(var, "admin.token_env");
        }
        for (name, agent) in &self.policy.identity.agents {
            if let Some(var) = &agent.token_env {
                s.add(var, format!("agents.{name}.token_env"));
            }
        }
        if let Some(g) = &self.policy.guardrails {
            if let super::Backend::OpenAi(o) = &g.backend {
                if let Some(var) = &o.api_key_env {
                    s.add(var, "guardrails.checker.api_key_env");
                }
            }
            for (i, rule) in g.rules.0.iter().enumerate() {
                let model = rule.shadow.as_ref().and_then(|sh| sh.model.as_ref());
                if let Some(var) = model.and_then(|m| m.api_key_env.as_ref()) {
                    s.add(var, format!("guardrails.rules[{i}].shadow.checker.api_key_env"));
                }
            }
        }
        if let Some(var) = &self.approvals.seal_key_env {
            s.add(var, "approvals.seal_key_env");
        }
        for (i, secret) in self.policy.secrets.entries.iter().enumerate() {
            s.add(&secret.env, format!("secrets[{i}].env"));
        }
        if let super::state::Backend::Redis { url_env } = &self.state.backend {
            s.add(url_env, "state.url_env");
        }
        for (name, u) in &self.upstreams {
            match &u.auth {
                UpstreamAuth::Bearer { env } => {
                    s.add(env.as_str(), format!("upstreams.{name}.auth.bearer_env"))
                }
                UpstreamAuth::ClientCredentials(c) => s.add(
                    c.client_secret_env.as_str(),
                    format!("upstreams.{name}.auth.client_credentials.client_secret_env"),
                ),
                UpstreamAuth::None | UpstreamAuth::Passthrough => {}
            }
        }
        s.add(ADMIN_TOKEN_VAR, "the admin token `portcullis approvals` and `portcullis hook` read");
        s
    }

    /// What the stdio server run as `upstream` (`wrap --name`) inherits.
    pub fn child_env(&self, upstream: &str) -> ChildEnv<'_> {
        match self.stdio_servers.get(upstream) {
            Some(server) => ChildEnv::Only(&server.env),
            None => ChildEnv::Inherit,
        }
    }
}
