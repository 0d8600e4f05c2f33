//! `limits.per_agent`: how many calls an agent may make to the tools a pattern names — a minute,
//! at once, a UTC day — as written (raw) and as validated ([`PerAgentLimit`]).
//!
//! ```yaml
//! limits:
//!   per_agent:
//!     - { agent: "*", tool: "mcp__*", per_minute: 120 }
//!     - { agent: dev, tool: "mcp__github__*", per_minute: 30, concurrent: 4, per_day: 500 }
//! ```
//!
//! `agent: "*"` is every caller for whom no entry names its agent: each configured agent, and each
//! anonymous caller (keyed by its digest), gets its own count. An entry naming an agent replaces
//! the `"*"` entries for it. Every entry of the set that applies whose `tool` glob matches the
//! call's qualified name must have room, and a delegated agent counts against its root's entries.

use std::collections::BTreeSet;
use std::num::NonZeroU32;
use std::sync::Arc;

use serde::Deserialize;

use super::Problems;
use crate::rules::glob::{Flavour, Glob};

/// One entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    pub agent: Option<String>,
    pub tool: Option<String>,
    pub per_minute: Option<u64>,
    pub concurrent: Option<u64>,
    pub per_day: Option<u64>,
}

/// Whose calls an entry counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSelector {
    /// Every caller no entry names: each configured agent and each anonymous caller apart.
    Each,
    /// This configured agent (and every agent it delegated to).
    Named(Arc<str>),
}

impl AgentSelector {
    /// As written in config (a bounded metric label: configured names or `*`).
    pub fn as_str(&self) -> &str {
        match self {
            AgentSelector::Each => "*",
            AgentSelector::Named(n) => n,
        }
    }
}

/// One validated entry; at least one of the three bounds is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerAgentLimit {
    pub agent: AgentSelector,
    /// A text glob over the call's qualified name (`mcp__github__*`).
    pub tool: Glob,
    pub per_minute: Option<NonZeroU32>,
    pub concurrent: Option<NonZeroU32>,
    pub per_day: Option<NonZeroU32>,
}

/// The largest bound accepted: counts are kept in 32 bits.
const MAX: u64 = u32::MAX as u64 - 1;

/// Validates `raw`, with `agents` the configured agents' names; every problem is reported.
pub(crate) fn compile(raw: Vec<Raw>, agents: &BTreeSet<&str>, p: &mut Problems) -> Vec<PerAgentLimit> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, r) in raw.into_iter().enumerate() {
        let path = format!("limits.per_agent[{i}]");
        let mut ok = true;
        let agent = match r.agent.as_deref() {
            None => {
                p.add(format!("{path}.agent"), "missing: name a configured agent, or \"*\" for every caller");
                ok = false;
                AgentSelector::Each
            }
            Some("*") => AgentSelector::Each,
            Some(name) if agents.contains(name) => AgentSelector::Named(name.into()),
            Some(name) => {
                p.add(
                    format!("{path}.agent"),
                    format!("{name:?} is not a configured agent (agents:) nor \"*\""),
                );
                ok = false;
                AgentSelector::Each
            }
        };
        let tool = match r.tool.as_deref() {
            Some(t) if !t.trim().is_empty() => Glob::new(t, Flavour::Text),
            _ => {
                p.add(format!("{path}.tool"), "missing or empty: a pattern like \"mcp__github__*\" or \"*\"");
                ok = false;
                Glob::new("*", Flavour::Text)
            }
        };
        let mut bound = |key: &str, v: Option<u64>| match v {
            None => None,
            Some(n) if (1..=MAX).contains(&n) => NonZeroU32::new(n as u32),
            Some(n) => {
                p.add(format!("{path}.{key}"), format!("{n} is not between 1 and {MAX}"));
                ok = false;
                None
            }
        };
        let (per_minute, concurrent, per_day) = (
            bound("per_minute", r.per_minute),
            bound("concurrent", r.concurrent),
            bound("per_day", r.per_day),
        );
        if r.per_minute.is_none() && r.concurrent.is_none() && r.per_day.is_none() {
            p.add(&path, "sets no bound: give per_minute, concurrent or per_day");
            ok = false;
        }
        if ok && !seen.insert((agent.as_str().to_owned(), tool.as_str().to_owned())) {
            p.add(
                &path,
                format!("a second entry for agent {:?} and tool {:?}", agent.as_str(), tool.as_str()),
            );
            ok = false;
        }
        if ok {
            out.push(PerAgentLimit { agent, tool, per_minute, concurrent, per_day });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn problems(yaml: &str) -> Vec<String> {
        match Config::parse(yaml, "t") {
            Ok(_) => Vec::new(),
            Err(e) => e.problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect(),
        }
    }

    #[test]
    fn a_valid_list_compiles_with_named_and_wildcard_entries() {
        std::env::set_var("PORTCULLIS_UNIT_LIMITS_DEV", "dev-token-0123456789abcdef");
        let yaml = "agents: { dev: { token_env: PORTCULLIS_UNIT_LIMITS_DEV } }\nlimits:\n  per_agent:\n    \
                    - { agent: \"*\", tool: \"mcp__*\", per_minute: 120 }\n    \
                    - { agent: dev, tool: \"mcp__github__*\", per_minute: 30, concurrent: 4, per_day: 500 }\n";
        let c = Config::parse(yaml, "t").unwrap_or_else(|e| panic!("{e}"));
        let l = &c.limits.per_agent;
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].agent, AgentSelector::Each);
        assert_eq!(l[1].agent, AgentSelector::Named("dev".into()));
        assert_eq!(l[1].concurrent.map(NonZeroU32::get), Some(4));
        assert!(l[1].tool.matches("mcp__github__create_issue") && !l[1].tool.matches("mcp__fs__read"));
    }

    #[test]
    fn every_bad_entry_is_reported_with_its_path() {
        let cases: &[(&str, &str)] = &[
            (
                "{ agent: ghost, tool: \"*\", per_minute: 1 }",
                "limits.per_agent[0].agent: \"ghost\" is not a configured agent",
            ),
            ("{ tool: \"*\", per_minute: 1 }", "limits.per_agent[0].agent: missing"),
            ("{ agent: \"*\", per_minute: 1 }", "limits.per_agent[0].tool: missing"),
            ("{ agent: \"*\", tool: \" \", per_minute: 1 }", "limits.per_agent[0].tool: missing or empty"),
            ("{ agent: \"*\", tool: \"*\" }", "limits.per_agent[0]: sets no bound"),
            (
                "{ agent: \"*\", tool: \"*\", per_minute: 0 }",
                "limits.per_agent[0].per_minute: 0 is not between",
            ),
            (
                "{ agent: \"*\", tool: \"*\", per_day: 99999999999 }",
                "limits.per_agent[0].per_day: 99999999999",
            ),
            ("{ agent: \"*\", tool: \"*\", per_hour: 5 }", "unknown field `per_hour`"),
        ];
        for (entry, expected) in cases {
            let got = problems(&format!("limits: {{ per_agent: [ {entry} ] }}\n"));
            assert!(got.iter().any(|p| p.contains(expected)), "{entry}: expected {expected:?} in {got:?}");
        }
    }

    #[test]
    fn a_second_entry_for_the_same_agent_and_tool_is_refused() {
        let got = problems(
            "limits: { per_agent: [ { agent: \"*\", tool: \"mcp__*\", per_minute: 1 }, { agent: \"*\", tool: \"mcp__*\", per_day: 9 } ] }\n",
        );
        assert_eq!(got, ["limits.per_agent[1]: a second entry for agent \"*\" and tool \"mcp__*\""]);
    }
}
