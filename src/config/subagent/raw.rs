//! `permissions.subagent` as written: the rules every delegated child meets beyond its root's.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSubagent {
    #[serde(default)]
    pub allow: Vec<Value>,
    #[serde(default)]
    pub ask: Vec<Value>,
    #[serde(default)]
    pub deny: Vec<Value>,
}
