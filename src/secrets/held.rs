//! The held values, compiled once per policy: one automaton over every value's spellings, one
//! over the sentinels.

use aho_corasick::{AhoCorasick, MatchKind};

use super::{encodings, SENTINEL_PREFIX};
use crate::config::secrets::{Secret, Secrets};

/// The `secrets:` section ready to search with. Built only when some secret is configured: a
/// policy without one holds no `Held` and pays nothing.
///
/// The values themselves are zeroed when the last copy of the config drops
/// ([`crate::config::secrets::Value`]); the automaton's own copy of the patterns is not (the
/// crate gives no hook for it).
pub struct Held {
    pub(super) secrets: Vec<Secret>,
    pub(super) http_bases: std::collections::BTreeMap<String, String>,
    /// Every spelling of every value (leftmost-longest); pattern `i` belongs to `owner[i]`.
    pub(super) values: AhoCorasick,
    pub(super) owner: Vec<usize>,
    /// Each secret's sentinel, pattern `i` for secret `i` (leftmost-longest, so `gh2`'s sentinel
    /// is never read as `gh`'s followed by `2`).
    pub(super) sentinels: AhoCorasick,
    pub(super) sentinel_text: Vec<String>,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.secrets.iter().map(|s| &*s.name).collect();
        f.debug_struct("Held").field("secrets", &names).finish_non_exhaustive()
    }
}

impl Held {
    /// `None` when no secret is configured.
    pub fn new(config: &Secrets) -> Option<Held> {
        if config.entries.is_empty() {
            return None;
        }
        let mut patterns = Vec::new();
        let mut owner = Vec::new();
        for (i, s) in config.entries.iter().enumerate() {
            for spelling in encodings::spellings(s.value.expose()) {
                patterns.push(spelling);
                owner.push(i);
            }
        }
        let sentinel_text: Vec<String> =
            config.entries.iter().map(|s| format!("{SENTINEL_PREFIX}{}", s.name)).collect();
        // Built from env-sized patterns: far below the automaton's size limits.
        let build = |p: &[String], fold: bool| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .ascii_case_insensitive(fold)
                .build(p)
                .expect("bounded patterns")
        };
        Some(Held {
            // Case-folded: a host name, a hex dump or a shouting log line changes the case of a
            // value and still carries it.
            values: build(&patterns, true),
            owner,
            sentinels: build(&sentinel_text, false),
            sentinel_text,
            secrets: config.entries.clone(),
            http_bases: config.http_bases.clone(),
        })
    }

    /// The name of secret `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.secrets[i].name
    }

    /// The sentinel of secret `i`.
    pub fn sentinel(&self, i: usize) -> &str {
        &self.sentinel_text[i]
    }

    /// True when `text` holds some secret's sentinel as written (no JSON escapes).
    pub fn carries_sentinel(&self, text: &str) -> bool {
        self.sentinels.is_match(text)
    }

    /// True when `text` holds some spelling of some value.
    pub fn holds_value(&self, text: &str) -> bool {
        self.values.is_match(text)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// `github` (to `mcp__github__*` and `https://api.github.com/`) and `stripe` (to nothing).
    pub(crate) fn held() -> Held {
        let mut p = crate::config::Problems::default();
        let raw = |name: &str, env: &str, to: &[&str]| crate::config::secrets::Raw {
            name: name.into(),
            env: env.into(),
            to: to.iter().map(|s| s.to_string()).collect(),
        };
        let env = |var: &str| match var {
            "GH" => Some("ghp_Zq8LmN3vT0xY".into()),
            "ST" => Some("sk-live-0000aaaa".into()),
            _ => None,
        };
        let bases = BTreeMap::from([("gh".to_owned(), "https://api.github.com/".to_owned())]);
        let s = crate::config::secrets::compile(
            vec![
                raw("github", "GH", &["mcp__github__*", "https://api.github.com/"]),
                raw("stripe", "ST", &[]),
            ],
            bases,
            &env,
            &mut p,
        );
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        Held::new(&s).expect("configured")
    }

    #[test]
    fn no_secrets_configured_holds_nothing() {
        assert!(Held::new(&Secrets::default()).is_none());
        assert!(!format!("{:?}", held()).contains("ghp_"), "Debug names secrets, never values");
    }
}
