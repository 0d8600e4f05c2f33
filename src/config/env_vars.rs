//! Every setting that names an environment variable (`*_env`), and the check that each names
//! one that is set, and long enough where the value is a token: `validate` lists every miss, and
//! `serve` refuses to start on the admin token's (agents' tokens and the checker's key already
//! refuse it where they are read).

use super::{Backend, Config, Problem, UpstreamAuth};

/// What a variable holds, which sets how long it must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// A bearer token the proxy checks (`admin.token_env`, `agents.*.token_env`).
    Token,
    /// The key sealing approval state (`approvals.seal_key_env`).
    SealKey,
    /// A credential or address someone else checks: a key, a secret, a URL.
    Other,
}

impl Holds {
    /// The fewest bytes a value may have.
    pub fn minimum(self) -> usize {
        match self {
            Holds::Token => 16,
            Holds::SealKey => 32,
            Holds::Other => 1,
        }
    }
}

/// One `*_env` setting of the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSetting {
    /// Where it is set (`agents.dev.token_env`).
    pub setting: String,
    /// The variable it names.
    pub var: String,
    pub holds: Holds,
}

impl Config {
    /// Every `*_env` setting, in config order.
    pub fn env_settings(&self) -> Vec<EnvSetting> {
        let mut out = Vec::new();
        let mut add =
            |var: &str, setting: String, holds| out.push(EnvSetting { setting, var: var.to_owned(), holds });
        if let Some(var) = &self.admin.token_env {
            add(var, "admin.token_env".into(), Holds::Token);
        }
        for (name, agent) in &self.policy.identity.agents {
            if let Some(var) = &agent.token_env {
                add(var, format!("agents.{name}.token_env"), Holds::Token);
            }
        }
        if let Some(g) = &self.policy.guardrails {
            if let Backend::OpenAi(o) = &g.backend {
                if let Some(var) = &o.api_key_env {
                    add(var, "guardrails.checker.api_key_env".into(), Holds::Other);
                }
            }
            for (i, rule) in g.rules.0.iter().enumerate() {
                let model = rule.shadow.as_ref().and_then(|sh| sh.model.as_ref());
                if let Some(var) = model.and_then(|m| m.api_key_env.as_ref()) {
                    add(var, format!("guardrails.rules[{i}].shadow.checker.api_key_env"), Holds::Other);
                }
            }
        }
        if let Some(var) = &self.approvals.seal_key_env {
            add(var, "approvals.seal_key_env".into(), Holds::SealKey);
        }
        for (i, n) in self.approvals.notify.iter().enumerate() {
            if let super::approvals::notify::Target::Slack { env } = &n.target {
                add(env, format!("approvals.notify[{i}].slack_webhook_env"), Holds::Other);
            }
        }
        for (i, secret) in self.policy.secrets.entries.iter().enumerate() {
            add(&secret.env, format!("secrets[{i}].env"), Holds::Other);
        }
        if let super::state::Backend::Redis { url_env } = &self.state.backend {
            add(url_env, "state.url_env".into(), Holds::Other);
        }
        for (name, u) in &self.upstreams {
            match &u.auth {
                UpstreamAuth::Bearer { env } => {
                    add(env.as_str(), format!("upstreams.{name}.auth.bearer_env"), Holds::Other)
                }
                UpstreamAuth::ClientCredentials(c) => add(
                    c.client_secret_env.as_str(),
                    format!("upstreams.{name}.auth.client_credentials.client_secret_env"),
                    Holds::Other,
                ),
                UpstreamAuth::None | UpstreamAuth::Passthrough => {}
            }
        }
        out
    }

    /// A problem for each `*_env` setting whose variable `env` does not hold a usable value.
    pub fn env_problems(&self, env: impl Fn(&str) -> Option<String>) -> Vec<Problem> {
        self.env_settings().into_iter().filter_map(|s| unusable(&s, env(&s.var).as_deref())).collect()
    }
}

/// Why `value` (what `s.var` holds) cannot serve, if it cannot; never shows the value.
pub fn unusable(s: &EnvSetting, value: Option<&str>) -> Option<Problem> {
    let message = match value.map(str::trim) {
        None => format!("the environment variable {} is not set", s.var),
        Some("") => format!("the environment variable {} is empty", s.var),
        Some(v) if v.len() < s.holds.minimum() => format!(
            "the environment variable {} holds {} bytes; at least {} are needed (e.g. openssl rand -hex 32)",
            s.var,
            v.len(),
            s.holds.minimum()
        ),
        Some(_) => return None,
    };
    Some(Problem { path: s.setting.clone(), message })
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "admin: { token_env: PC_ADMIN }\n\
        agents: { dev: { token_env: PC_DEV } }\n\
        approvals: { seal_key_env: PC_SEAL }\n\
        upstreams: { up: { url: \"http://127.0.0.1:9/mcp\", auth: { bearer_env: PC_UP } } }\n";

    fn config() -> Config {
        Config::parse(YAML, "t").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn every_env_setting_is_listed_with_what_it_holds() {
        let got: Vec<(String, String, Holds)> =
            config().env_settings().into_iter().map(|s| (s.setting, s.var, s.holds)).collect();
        assert_eq!(
            got,
            [
                ("admin.token_env", "PC_ADMIN", Holds::Token),
                ("agents.dev.token_env", "PC_DEV", Holds::Token),
                ("approvals.seal_key_env", "PC_SEAL", Holds::SealKey),
                ("upstreams.up.auth.bearer_env", "PC_UP", Holds::Other),
            ]
            .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c))
        );
    }

    #[test]
    fn unset_empty_and_short_variables_are_each_a_problem_naming_the_setting_never_the_value() {
        let env = |var: &str| match var {
            "PC_ADMIN" => Some("short-secret".to_owned()),
            "PC_DEV" => Some("   ".to_owned()),
            "PC_SEAL" => Some("k".repeat(32)),
            _ => None,
        };
        let problems = config().env_problems(env);
        let lines: Vec<String> = problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect();
        assert_eq!(
            lines,
            [
                "admin.token_env: the environment variable PC_ADMIN holds 12 bytes; at least 16 are needed (e.g. openssl rand -hex 32)",
                "agents.dev.token_env: the environment variable PC_DEV is empty",
                "upstreams.up.auth.bearer_env: the environment variable PC_UP is not set",
            ]
        );
        assert!(!lines.concat().contains("short-secret"));
        let all_set = |_: &str| Some("x".repeat(40));
        assert!(config().env_problems(all_set).is_empty());
    }
}
