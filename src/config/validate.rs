//! What `portcullis validate` checks beyond parsing: the environment the config will run in
//! (every `*_env` variable set, tokens long enough) and a config that would proxy nothing.

use super::{Config, Problem};

/// What `validate` found in a config that parsed.
#[derive(Debug, Default)]
pub struct Findings {
    /// Each stops `serve` (or makes a part of it silently useless): `validate` exits non-zero.
    pub problems: Vec<Problem>,
    /// Legal, but probably not meant.
    pub warnings: Vec<Problem>,
}

/// Checks `config` against the environment `env` reads.
pub fn findings(config: &Config, env: impl Fn(&str) -> Option<String>) -> Findings {
    let mut warnings = Vec::new();
    if config.upstreams.is_empty() {
        warnings.push(Problem {
            path: "upstreams".into(),
            message: "none configured: `serve` has nothing to proxy (fine when the config only serves `wrap` or `hook`)"
                .into(),
        });
    }
    Findings { problems: config.env_problems(env), warnings }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_with_no_upstream_is_a_warning_and_an_unset_token_is_a_problem() {
        let c =
            Config::parse("admin: { token_env: PC_VALIDATE_ADMIN }\n", "t").unwrap_or_else(|e| panic!("{e}"));
        let f = findings(&c, |_| None);
        assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
        assert_eq!(f.warnings[0].path, "upstreams");
        assert_eq!(f.problems.len(), 1, "{:?}", f.problems);
        assert_eq!(f.problems[0].path, "admin.token_env");
        let set = findings(&c, |_| Some("a-long-enough-admin-token".into()));
        assert!(set.problems.is_empty(), "{:?}", set.problems);
    }
}
