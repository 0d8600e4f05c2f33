//! `upstreams:`: where each HTTP upstream lives and what crosses to it, and the settings of the
//! stdio servers `wrap --name` runs (an entry without `url:`), whose `env:` may not name a
//! guard credential.

use std::collections::BTreeMap;

use http::Uri;

use super::{raw, upstream_auth, Compiler, Config, EnvName, StdioServer, Upstream};

/// The `upstreams:` section compiled: HTTP upstreams, stdio servers' settings, and the profile
/// each entry names (for the rule engine).
pub(super) struct Upstreams {
    pub http: BTreeMap<String, Upstream>,
    pub stdio: BTreeMap<String, StdioServer>,
    pub profiles: Vec<(String, String)>,
    /// Every upstream's `egress:` entries and sinks, each limited to its upstream.
    pub egress: crate::rules::egress::Egress,
    /// What the upstreams' `preset:`s give: `tools:` entries (after the operator's own) and
    /// private tools; their sinks are already in `egress`.
    pub presets: super::presets::Given,
}

impl Compiler {
    /// A stdio server's `env:` may not name a variable holding the guard's own credential.
    pub(super) fn no_credential_allowed(&mut self, config: &Config) {
        let secrets = config.guard_secret_vars();
        for (name, server) in &config.stdio_servers {
            let positions = self.env_positions.get(name).cloned().unwrap_or_default();
            for (i, var) in positions.into_iter().zip(&server.env) {
                if let Some(source) = secrets.source(var.as_str()) {
                    self.problem(
                        format!("upstreams.{name}.env[{i}]"),
                        format!("{var} holds the guard's own credential ({source}): a tool server never receives it"),
                    );
                }
            }
        }
    }

    pub(super) fn upstreams(&mut self, raw: BTreeMap<String, serde_json::Value>) -> Upstreams {
        let mut out = BTreeMap::new();
        let mut stdio = BTreeMap::new();
        let mut profiles = Vec::new();
        let mut presets = super::presets::Given::default();
        // Every upstream may hold an `egress:` block: refusals of its calls name that line.
        let upstreams = raw.keys().cloned().collect();
        let mut egress = crate::rules::egress::Egress { upstreams, ..Default::default() };
        for (name, v) in raw {
            let path = format!("upstreams.{name}");
            if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                || name.contains("__")
            {
                self.problem(&path, "upstream names use letters, digits, '-' and single '_' (they appear in tool names as mcp__{upstream}__{tool})");
            }
            let Some(u) = self.decode::<raw::Upstream>(&path, v) else {
                continue;
            };
            if let Some(p) = u.profile.clone() {
                profiles.push((name.clone(), p));
            }
            if let Some(preset) = &u.preset {
                if let Err(e) = super::presets::give(&name, preset, &mut presets) {
                    self.problem(format!("{path}.preset"), e.to_string());
                }
            }
            if let Some(e) = u.egress {
                let scope = crate::rules::Scope::Config;
                let mine =
                    super::egress::decode(e, &format!("{path}.egress"), scope, Some(&name), &mut self.p);
                egress.rules.extend(mine.rules);
                egress.sinks.extend(mine.sinks);
            }
            let has_auth = u.auth.is_some();
            let auth = upstream_auth::compile(&format!("{path}.auth"), u.auth, &mut self.p);
            let env = u.env.map(|list| self.env_names(&name, &format!("{path}.env"), list));
            match (u.url, u.stdio, env) {
                (Some(_), _, Some(_)) => self.problem(
                    format!("{path}.env"),
                    "an HTTP upstream is not started by portcullis: env: is for a stdio server (an entry without url:, run by `wrap --name`)",
                ),
                (Some(url), None, None) => {
                    if let Some(url) = self.url(&format!("{path}.url"), &url) {
                        out.insert(name.clone(), Upstream { name, url, auth });
                    }
                }
                (None, Some(_), _) => self.problem(
                    &path,
                    "stdio upstreams are guarded with `portcullis wrap -- CMD ARGS…` (an entry without url: holds its env: and profile:); `serve` proxies HTTP upstreams (url:)",
                ),
                (Some(_), Some(_), None) => self.problem(&path, "give either url or stdio, not both"),
                (None, None, Some(env)) => {
                    if has_auth {
                        self.problem(format!("{path}.auth"), "a stdio server is sent no Authorization: auth is for HTTP upstreams");
                    }
                    stdio.insert(name.clone(), StdioServer { name, env });
                }
                (None, None, None) => self.problem(
                    &path,
                    "missing url (or, for a stdio server run by `wrap --name`, env: the variables it gets)",
                ),
            }
        }
        let sinks = presets.sinks.drain(..);
        egress.sinks.extend(sinks.map(|(tool, up)| crate::rules::egress::Sink::new(&tool, Some(up))));
        Upstreams { http: out, stdio, profiles, egress, presets }
    }

    /// An allowlist of environment variable names: exact names, no patterns.
    fn env_names(&mut self, server: &str, path: &str, list: Vec<String>) -> Vec<EnvName> {
        let mut out = Vec::new();
        let mut positions = Vec::new();
        for (i, s) in list.iter().enumerate() {
            match EnvName::parse(s) {
                Some(n) => {
                    out.push(n);
                    positions.push(i);
                }
                None => self.problem(
                    format!("{path}[{i}]"),
                    format!("{s:?} is not an environment variable name (letters, digits and '_'; exact names, no patterns)"),
                ),
            }
        }
        self.env_positions.insert(server.to_owned(), positions);
        out
    }

    pub(super) fn url(&mut self, path: &str, s: &str) -> Option<Uri> {
        let uri: Uri = match s.parse() {
            Ok(u) => u,
            Err(e) => {
                self.problem(path, format!("{s:?} is not a URL: {e}"));
                return None;
            }
        };
        match (uri.scheme_str(), uri.authority()) {
            (Some("http" | "https"), Some(_)) => Some(uri),
            _ => {
                self.problem(path, format!("{s:?} must be an absolute http:// or https:// URL"));
                None
            }
        }
    }
}
