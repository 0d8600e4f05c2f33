//! The config file as written: serde types that refuse unknown keys. Nothing here is trusted;
//! `config::compile` turns it into a [`Config`](super::Config).

use std::collections::BTreeMap;

use serde::Deserialize;

/// Either a number or a string with a unit (`4MiB`, `10s`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Int(u64),
    Text(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Admin {
    pub listen: Option<String>,
    pub token_env: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upstream {
    pub url: Option<String>,
    pub stdio: Option<Vec<String>>,
    /// `readonly`, `standard` or `privileged`.
    pub profile: Option<String>,
    /// What crosses in `Authorization` (compiled by `config::upstream_auth`).
    pub auth: Option<serde_json::Value>,
    /// A stdio server's environment allowlist (see `config::child_env`).
    pub env: Option<Vec<String>>,
    /// Egress entries and sinks for this upstream's calls only (see `config::egress`).
    pub egress: Option<serde_json::Value>,
    /// A shipped `tools:` preset for this server's tools (see `config::presets`).
    pub preset: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_body: Option<Scalar>,
    pub max_response: Option<Scalar>,
    pub concurrency: Option<u64>,
    pub workers: Option<u64>,
    pub connect_timeout: Option<Scalar>,
    pub header_timeout: Option<Scalar>,
    pub idle_timeout: Option<Scalar>,
    pub client_header_timeout: Option<Scalar>,
    pub shutdown_grace: Option<Scalar>,
    /// Calls per agent and tool pattern (`config::per_agent_limits`).
    pub per_agent: Option<Vec<super::per_agent_limits::Raw>>,
}

/// Top-level keys, each kept as a YAML value so that one bad section does not hide the problems
/// of the others: every section is decoded on its own and every failure is reported.
pub type Document = BTreeMap<String, serde_json::Value>;
