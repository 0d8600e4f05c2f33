//! `tool_descriptions:`: the operator's own words for a tool in the `tools/list` answers its
//! callers get, for everyone or for the agents named. The upstream's definition is what pins,
//! the guardrail screen and session waivers read; the caller reads the operator's.
//!
//! ```yaml
//! tool_descriptions:
//!   - { tool: mcp__fs__write_file, description: "Writes a file under /srv/project; other paths are refused." }
//!   - { tool: mcp__fs__read_file, agents: [ci-bot], description: "Reads a file under /srv/project." }
//! ```
//! A tool is named exactly (`mcp__{upstream}__{tool}`, no wildcard): a description says what one
//! tool does. An entry naming agents wins over one naming none; a delegated agent reads its root
//! agent's.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Deserialize;

use super::Problems;

/// The longest description accepted (bytes).
const MAX_DESCRIPTION: usize = 4096;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDescription {
    pub tool: String,
    pub description: String,
    #[serde(default)]
    pub agents: Vec<String>,
}

/// Description overrides, validated.
#[derive(Debug, Clone, Default)]
pub struct Descriptions {
    /// Qualified tool → description, for every caller.
    everyone: HashMap<String, Arc<str>>,
    /// Configured agent → qualified tool → description.
    by_agent: HashMap<Arc<str>, HashMap<String, Arc<str>>>,
}

impl Descriptions {
    pub fn is_empty(&self) -> bool {
        self.everyone.is_empty() && self.by_agent.is_empty()
    }

    /// True when some description may be replaced for `agent` (a configured agent's name; `None`
    /// for an anonymous caller).
    pub fn apply_to(&self, agent: Option<&str>) -> bool {
        !self.everyone.is_empty() || agent.is_some_and(|a| self.by_agent.contains_key(a))
    }

    /// The description `agent` reads for `qualified`, if the operator wrote one.
    pub fn of(&self, agent: Option<&str>, qualified: &str) -> Option<&Arc<str>> {
        agent
            .and_then(|a| self.by_agent.get(a))
            .and_then(|t| t.get(qualified))
            .or_else(|| self.everyone.get(qualified))
    }
}

/// A tool name an entry may give: `mcp__{upstream}__{tool}`, both parts present, no wildcard.
fn exact_tool(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("mcp__") else { return false };
    matches!(rest.split_once("__"), Some((up, tool)) if !up.is_empty() && !tool.is_empty())
        && !name.contains(['*', '?', '[', '('])
}

pub(crate) fn compile(
    raw: Vec<serde_json::Value>,
    agents: &BTreeMap<Arc<str>, super::agents::AgentSpec>,
    p: &mut Problems,
) -> Descriptions {
    let mut out = Descriptions::default();
    for (i, d) in raw.into_iter().enumerate() {
        let path = format!("tool_descriptions[{i}]");
        // Each entry on its own, so one bad entry does not hide the others' problems.
        let d: RawDescription = match serde_json::from_value(d) {
            Ok(d) => d,
            Err(e) => {
                p.add(path, e.to_string());
                continue;
            }
        };
        let mut ok = true;
        if !exact_tool(&d.tool) {
            p.add(
                format!("{path}.tool"),
                format!(
                    "{:?} is not one tool's name: write mcp__{{upstream}}__{{tool}}, without wildcards",
                    d.tool
                ),
            );
            ok = false;
        }
        if d.description.trim().is_empty() || d.description.len() > MAX_DESCRIPTION {
            p.add(format!("{path}.description"), format!("must be 1 to {MAX_DESCRIPTION} bytes of text"));
            ok = false;
        }
        let mut named = Vec::new();
        for (j, a) in d.agents.iter().enumerate() {
            match agents.get_key_value(a.as_str()) {
                Some((name, _)) => named.push(name.clone()),
                None => {
                    p.add(format!("{path}.agents[{j}]"), format!("{a:?} is not a configured agent"));
                    ok = false;
                }
            }
        }
        if !ok {
            continue;
        }
        let text: Arc<str> = d.description.into();
        let mut twice = false;
        if named.is_empty() {
            twice = out.everyone.insert(d.tool.clone(), text.clone()).is_some();
        }
        for a in named {
            twice |= out.by_agent.entry(a).or_default().insert(d.tool.clone(), text.clone()).is_some();
        }
        if twice {
            p.add(path, format!("{} is described twice for the same callers", d.tool));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    const AGENTS: &str = "agents: { ci: { token_env: CI_TOKEN }, dev: { token_env: DEV_TOKEN } }\n";

    #[test]
    fn an_agents_own_description_wins_over_everyones() {
        let c = Config::parse(
            &format!(
                "{AGENTS}tool_descriptions:\n  \
                   - {{ tool: mcp__fs__write, description: everyone }}\n  \
                   - {{ tool: mcp__fs__write, agents: [ci], description: ci only }}\n"
            ),
            "test",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let d = &c.policy.descriptions;
        assert_eq!(d.of(Some("ci"), "mcp__fs__write").map(|s| &**s), Some("ci only"));
        assert_eq!(d.of(Some("dev"), "mcp__fs__write").map(|s| &**s), Some("everyone"));
        assert_eq!(d.of(None, "mcp__fs__write").map(|s| &**s), Some("everyone"));
        assert_eq!(d.of(None, "mcp__fs__read"), None);
        assert!(d.apply_to(None));
    }

    #[test]
    fn every_bad_entry_is_reported_at_once() {
        let e = Config::parse(
            &format!(
                "{AGENTS}tool_descriptions:\n  \
                   - {{ tool: \"mcp__fs__*\", description: x }}\n  \
                   - {{ tool: write, description: x }}\n  \
                   - {{ tool: mcp__fs__a, description: \"  \" }}\n  \
                   - {{ tool: mcp__fs__b, agents: [nobody], description: x }}\n  \
                   - {{ tool: mcp__fs__c, agents: [ci], description: x }}\n  \
                   - {{ tool: mcp__fs__c, agents: [ci, dev], description: y }}\n  \
                   - {{ tool: mcp__fs__d, description: x, title: y }}\n"
            ),
            "test",
        )
        .unwrap_err();
        let paths: Vec<&str> = e.problems.iter().map(|p| p.path.as_str()).collect();
        for want in [
            "tool_descriptions[0].tool",
            "tool_descriptions[1].tool",
            "tool_descriptions[2].description",
            "tool_descriptions[3].agents[0]",
            "tool_descriptions[5]",
        ] {
            assert!(paths.contains(&want), "{want} not in {paths:?}");
        }
        assert!(paths.contains(&"tool_descriptions[6]") && e.to_string().contains("title"), "{e}");
    }
}
