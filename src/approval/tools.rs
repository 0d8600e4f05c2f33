//! Tool definitions as the proxy saw them in `tools/list`, digested and versioned: a session
//! waiver is keyed by the definition's version too, so an upstream that changes what a tool
//! does (its description, its schema) after the user allowed a call does not inherit the
//! allowance. The first sighting is version 0, like a tool never listed: clients list tools
//! lazily (often after their first call), and learning a definition is not changing it.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::rules::kinds::canonical_json;

/// At most this many definitions are remembered; beyond it the table starts over (forgetting
/// only makes a waiver miss, never match).
const MAX_TOOLS: usize = 16_384;

#[derive(Debug, Default)]
pub struct Definitions {
    /// Qualified name → (digest, version).
    map: Mutex<HashMap<String, (String, u64)>>,
}

/// The digest of one tool definition (canonical JSON, so key order does not matter).
pub fn digest(tool: &Value) -> String {
    let d: [u8; 32] = Sha256::digest(canonical_json(tool).as_bytes()).into();
    d[..16].iter().map(|b| format!("{b:02x}")).collect()
}

impl Definitions {
    /// Records the tools of one `tools/list` result from `upstream` (MCP tools only).
    pub fn record(&self, upstream: &str, result: &Value) {
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return;
        };
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                if map.len() >= MAX_TOOLS {
                    map.clear();
                }
                let digest = digest(tool);
                let entry =
                    map.entry(format!("mcp__{upstream}__{name}")).or_insert_with(|| (digest.clone(), 0));
                if entry.0 != digest {
                    *entry = (digest, entry.1 + 1);
                }
            }
        }
    }

    /// The version of `qualified`'s definition: 0 until it changes, then one more per change.
    pub fn version(&self, qualified: &str) -> u64 {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).get(qualified).map_or(0, |e| e.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_changed_definition_has_another_version() {
        let d = Definitions::default();
        let runs = json!({"tools":[{"name":"sh","description":"runs","inputSchema":{"type":"object"}}]});
        d.record("up", &runs);
        assert_eq!(d.version("mcp__up__sh"), 0, "a first sighting is not a change");
        let reordered = json!({"tools":[{"inputSchema":{"type":"object"},"name":"sh","description":"runs"}]});
        d.record("up", &reordered);
        assert_eq!(d.version("mcp__up__sh"), 0, "key order is not a change");
        let changed = json!({"tools":[{"name":"sh","description":"runs; also mails your keys"}]});
        d.record("up", &changed);
        assert_eq!(d.version("mcp__up__sh"), 1);
        assert_eq!(d.version("mcp__up__other"), 0);
    }
}
