//! Shipped `tools:` presets: what each tool of a common MCP server *is* (shell, file read or
//! write, fetch, or generic; a private source; a sink) and which argument carries its path, URL
//! or command, chosen with `preset: NAME` on an upstream.
//!
//! A preset only classifies: its entries go after the operator's own `tools:` (first match wins,
//! so an operator's entry overrides one), and nothing in it allows a call — the rules and the
//! strict default then decide with the subject the preset names (a read inside the jail passes
//! the read-only floor; a write asks). Its `private:` tools join `flows.private` when a `flows:`
//! section is configured (a preset never turns the flow index on), and its `sinks:` join that
//! upstream's `egress.sinks`: both only ever restrict. The files live in
//! `config/presets/*.yaml`, embedded here, each naming the server version its tool names were
//! taken from.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

/// Every shipped preset: its name and its YAML.
pub const PRESETS: &[(&str, &str)] = &[
    ("everything", include_str!("../../config/presets/everything.yaml")),
    ("fetch", include_str!("../../config/presets/fetch.yaml")),
    ("filesystem", include_str!("../../config/presets/filesystem.yaml")),
    ("git", include_str!("../../config/presets/git.yaml")),
    ("github", include_str!("../../config/presets/github.yaml")),
    ("memory", include_str!("../../config/presets/memory.yaml")),
    ("playwright", include_str!("../../config/presets/playwright.yaml")),
    ("slack", include_str!("../../config/presets/slack.yaml")),
    ("time", include_str!("../../config/presets/time.yaml")),
];

/// One preset file: the server it was read from and its tools by name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// The server and version the tool names and arguments were taken from.
    pub server: String,
    /// Tool name → its `tools:` entry without `match:` (kind and pointers).
    pub tools: BTreeMap<String, Map<String, Value>>,
    /// Tools whose results are private (mail, files, messages of the user's organisation).
    #[serde(default)]
    pub private: Vec<String>,
    /// Tools through which data leaves (a post, a comment, a form typed into a page).
    #[serde(default)]
    pub sinks: Vec<String>,
}

/// What the upstreams' presets give the policy, each entry addressed to its upstream's tools.
#[derive(Debug, Default)]
pub struct Given {
    /// `tools:` entries, after the operator's own.
    pub tools: Vec<Value>,
    /// Qualified names whose results are private (joined to `flows.private` when it is on).
    pub private: Vec<String>,
    /// Sinks: `(qualified name, upstream)`.
    pub sinks: Vec<(String, String)>,
}

/// Why `preset:` names nothing usable.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    #[error("{0:?} is not a preset (known: {known})", known = names().join(", "))]
    Unknown(String),
    #[error("the shipped preset {name} does not load: {why}")]
    Broken { name: String, why: String },
    #[error("the shipped preset {name} marks {tool:?}, which it does not list under tools:")]
    Unlisted { name: String, tool: String },
}

/// The names of the shipped presets.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The preset called `name`, parsed; every tool it marks private or a sink is one it lists.
pub fn load(name: &str) -> Result<Preset, PresetError> {
    let (_, text) =
        PRESETS.iter().find(|(n, _)| *n == name).ok_or_else(|| PresetError::Unknown(name.into()))?;
    let preset: Preset = serde_saphyr::from_str(text)
        .map_err(|e| PresetError::Broken { name: name.into(), why: e.to_string() })?;
    if let Some(tool) = preset.private.iter().chain(&preset.sinks).find(|t| !preset.tools.contains_key(*t)) {
        return Err(PresetError::Unlisted { name: name.into(), tool: tool.clone() });
    }
    Ok(preset)
}

/// What preset `name` gives the tools of `upstream` (`mcp__{upstream}__{tool}`), added to `out`.
pub fn give(upstream: &str, name: &str, out: &mut Given) -> Result<(), PresetError> {
    let preset = load(name)?;
    let qualified = |tool: &str| format!("mcp__{upstream}__{tool}");
    out.private.extend(preset.private.iter().map(|t| qualified(t)));
    out.sinks.extend(preset.sinks.iter().map(|t| (qualified(t), upstream.to_owned())));
    out.tools.extend(preset.tools.into_iter().map(|(tool, mut entry)| {
        entry.insert("match".into(), json!(qualified(&tool)));
        Value::Object(entry)
    }));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn every_shipped_preset_loads_and_classifies_each_tool_of_an_upstream_as_written() {
        let files =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/config/presets")).unwrap().count();
        assert_eq!(names().len(), files, "every file under config/presets is embedded");
        for name in names() {
            let preset = load(name).unwrap();
            assert!(!preset.server.is_empty() && !preset.tools.is_empty(), "{name}");
            let text = format!("upstreams:\n  up: {{ url: \"http://127.0.0.1:1/mcp\", preset: {name} }}\n");
            let config = Config::parse(&text, "preset.yaml").unwrap_or_else(|e| panic!("{name}: {e}"));
            for (tool, entry) in &preset.tools {
                let kind = config.policy.engine.kinds().kind_of(&format!("mcp__up__{tool}")).name();
                assert_eq!(Some(kind), entry["kind"].as_str(), "{name}.{tool}");
            }
        }
    }

    #[test]
    fn an_operators_own_entry_wins_over_the_preset_and_an_unknown_preset_is_a_problem() {
        let text = "tools:\n  - { match: mcp__up__read_file, kind: generic }\n\
                    upstreams:\n  up: { url: \"http://127.0.0.1:1/mcp\", preset: filesystem }\n";
        let config = Config::parse(text, "p.yaml").unwrap();
        let kinds = config.policy.engine.kinds();
        assert_eq!(kinds.kind_of("mcp__up__read_file").name(), "generic");
        assert_eq!(kinds.kind_of("mcp__up__write_file").name(), "file");
        let bad = "upstreams:\n  up: { url: \"http://127.0.0.1:1/mcp\", preset: nope }\n";
        let err = Config::parse(bad, "p.yaml").unwrap_err().to_string();
        assert!(err.contains("upstreams.up.preset") && err.contains("filesystem"), "{err}");
    }

    #[test]
    fn a_presets_private_tools_join_flows_only_when_it_is_on_and_its_sinks_join_that_upstreams_egress() {
        let up = "upstreams:\n  gh: { url: \"http://127.0.0.1:1/mcp\", preset: github }\n  other: { url: \"http://127.0.0.1:2/mcp\" }\n";
        let off = Config::parse(up, "p.yaml").unwrap();
        assert!(off.policy.flows.is_none(), "a preset never turns the flow index on");
        let on = Config::parse(&format!("{up}flows: {{ private: [\"mcp__mail__*\"] }}\n"), "p.yaml").unwrap();
        let flows = on.policy.flows.as_ref().unwrap();
        assert!(flows.is_private("mcp__gh__get_file_contents") && flows.is_private("mcp__mail__read"));
        assert!(
            !flows.is_private("mcp__gh__create_issue") && !flows.is_private("mcp__other__get_file_contents")
        );
        let egress = on.policy.engine.egress();
        assert!(egress.sink("gh", "mcp__gh__create_issue").is_some());
        assert!(egress.sink("gh", "mcp__gh__get_file_contents").is_none(), "a read is not a sink");
        assert!(egress.sink("other", "mcp__gh__create_issue").is_none(), "limited to its upstream");
    }
}
