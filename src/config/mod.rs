//! Configuration: strict YAML in, a validated [`Config`] out, every problem reported at once.
//!
//! Two stages, as in ripgrep and vector: `raw` mirrors the file (unknown keys are errors), and
//! `compile` turns it into typed values — socket addresses, URIs, durations — collecting every
//! problem it finds instead of stopping at the first.

pub mod agents;
pub mod approvals;
pub mod audit;
pub mod authority;
pub mod child_env;
#[cfg(test)]
mod child_env_tests;
pub mod claude_import;
pub mod descriptions;
pub mod egress;
#[cfg(test)]
mod engine_tests;
pub mod env_vars;
pub mod flows;
mod guardrails;
mod home;
pub mod hosts;
pub mod layered;
pub mod per_agent_limits;
pub(crate) mod permissions;
pub mod pins;
pub mod presets;
mod problems;
mod raw;
pub mod secrets;
pub mod state;
pub mod subagent;
mod suggest;
pub mod telemetry;
pub mod tiers;
mod tiers_read;
#[cfg(test)]
mod tiers_tests;
pub mod units;
mod upstream_auth;
mod upstreams;
pub mod validate;
pub mod workspace;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use http::Uri;
use serde::de::DeserializeOwned;

pub use agents::Identity;
pub use child_env::{Built, ChildEnv, GuardSecrets, StdioServer};
pub use guardrails::{Backend, GuardrailsConfig};
pub use layered::Layer;
pub(crate) use problems::Problems;
pub use problems::{Chain, ConfigError, Problem};
pub use upstream_auth::{ClientCredentials, EnvName, UpstreamAuth};
use upstreams::Upstreams;

/// The embedded default, used by `serve` without `--config` and by `demo`.
pub const DEFAULT_YAML: &str = include_str!("../../config/portcullis.yaml");

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// The `Host` / `Origin` names the agent listener answers (DNS-rebinding protection); the
    /// listen address is added when the stack is built.
    pub allowed_hosts: hosts::AllowedHosts,
    pub admin: Admin,
    pub upstreams: BTreeMap<String, Upstream>,
    /// The stdio servers' settings (`upstreams` entries without `url:`), by the name `wrap
    /// --name` runs them under.
    pub stdio_servers: BTreeMap<String, StdioServer>,
    pub policy: Policy,
    pub limits: Limits,
    /// How asks reach a human.
    pub approvals: approvals::Settings,
    /// Where the decision log goes (off unless configured).
    pub audit: audit::Settings,
    /// Where state replicas share lives (`memory` unless configured).
    pub state: state::StateSettings,
    /// Where traces go (`telemetry:`; off unless configured).
    pub telemetry: telemetry::Settings,
    /// Things that are legal but probably not meant (a rule that can never match).
    pub warnings: Vec<Problem>,
}

#[derive(Debug, Clone)]
pub struct Admin {
    pub listen: SocketAddr,
    /// Name of the env var holding the admin bearer token (the token itself is never in a file).
    pub token_env: Option<String>,
}

/// Where an upstream lives.
#[derive(Debug, Clone)]
pub struct Upstream {
    pub name: String,
    pub url: Uri,
    /// What crosses to it in `Authorization`.
    pub auth: UpstreamAuth,
}

/// What decides calls: the Layer 1 rule engine, and (until the checker takes it over) the
/// `redact` list applied to results.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub engine: crate::rules::Engine,
    /// Strings replaced in every result before the agent sees it (before any checker sees it).
    pub redact: Vec<String>,
    /// Layer 2; `None` when no `guardrails:` section is configured.
    pub guardrails: Option<GuardrailsConfig>,
    /// Who may call, and each agent's engine (anonymous by default).
    pub identity: Identity,
    /// The pinned tool definitions (`pins:`); `None` when no lock file is configured.
    pub pins: Option<std::sync::Arc<crate::config::pins::Pins>>,
    /// The operator's descriptions of tools in `tools/list` answers (`tool_descriptions:`).
    pub descriptions: descriptions::Descriptions,
    /// The flow index's settings (`flows:`); `None` when no `flows:` section is configured.
    pub flows: Option<flows::FlowSettings>,
    /// Credentials the proxy holds; the agent sees sentinels (`secrets:`, [`crate::secrets`]).
    pub secrets: secrets::Secrets,
    /// What vets a call the rule engine allowed (`authority:`; local by default).
    pub authority: authority::Evaluator,
}

#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body accepted (bytes); larger ones are refused and nothing is forwarded.
    pub max_body: usize,
    /// Largest result held for inspection (bytes); a larger watched result is replaced by an error.
    pub max_response: usize,
    /// Requests in flight at once; further ones wait.
    pub concurrency: usize,
    pub connect_timeout: Duration,
    /// Upstream: time to the response head.
    pub header_timeout: Duration,
    /// Upstream: longest silence inside a response body.
    pub idle_timeout: Duration,
    /// Client: time to send the request head (slowloris guard).
    pub client_header_timeout: Duration,
    /// Shutdown: how long in-flight calls may drain.
    pub shutdown_grace: Duration,
    /// Single-threaded workers sharing the listening port (default: one per CPU).
    pub workers: usize,
    /// Calls each agent may make to the tools a pattern names (`limits.per_agent`).
    pub per_agent: Vec<per_agent_limits::PerAgentLimit>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: 4 << 20,
            max_response: 16 << 20,
            concurrency: 1024,
            connect_timeout: Duration::from_secs(5),
            header_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(300),
            client_header_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(30),
            workers: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            per_agent: Vec::new(),
        }
    }
}

const TOP_KEYS: &[&str] = &[
    "listen",
    "allowed_hosts",
    "admin",
    "upstreams",
    "posture",
    "tools",
    "permissions",
    "jail",
    "redact",
    "guardrails",
    "approvals",
    "audit",
    "limits",
    "agents",
    "auth",
    "delegation",
    "state",
    "pins",
    "tool_descriptions",
    "egress",
    "flows",
    "secrets",
    "authority",
    "telemetry",
];

/// A config file's name (for its problems) and text.
pub(crate) fn read_file(path: &Path) -> Result<(String, String), ConfigError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        source_name: name.clone(),
        problems: vec![Problem { path: "(file)".into(), message: e.to_string() }],
    })?;
    Ok((name, text))
}

impl Config {
    /// Loads and validates a file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let (name, text) = read_file(path)?;
        Config::parse(&text, &name)
    }

    /// The embedded default.
    pub fn embedded() -> Config {
        Config::parse(DEFAULT_YAML, "embedded config/portcullis.yaml")
            .expect("the embedded default config is validated by a test")
    }

    /// Parses and validates YAML text; `source_name` labels the errors.
    pub fn parse(text: &str, source_name: &str) -> Result<Config, ConfigError> {
        Config::parse_layered(text, source_name, &[])
    }

    /// As [`Config::parse`], without reading the `pins:` lock file: `portcullis pin` writes it.
    pub fn parse_for_pinning(text: &str, source_name: &str) -> Result<Config, ConfigError> {
        Config::parse_with(text, source_name, &[], false)
    }

    /// Parses the main config with extra permission layers; every layer's problems are reported.
    pub fn parse_layered(text: &str, source_name: &str, layers: &[Layer]) -> Result<Config, ConfigError> {
        Config::parse_with(text, source_name, layers, true)
    }

    fn parse_with(
        text: &str,
        source_name: &str,
        layers: &[Layer],
        read_lock: bool,
    ) -> Result<Config, ConfigError> {
        let fail = |problems| ConfigError { source_name: source_name.to_owned(), problems };
        let doc: raw::Document = match serde_saphyr::from_str(text) {
            Ok(Some(doc)) => doc,
            Ok(None) => raw::Document::new(),
            Err(e) => return Err(fail(vec![Problem { path: "(yaml)".into(), message: e.to_string() }])),
        };
        let mut c = Compiler { read_lock, ..Compiler::default() };
        let mut extra = Vec::new();
        for layer in layers {
            match serde_saphyr::from_str::<Option<permissions::RawPermissionFile>>(&layer.text) {
                Ok(f) => {
                    extra.push((layer.scope, format!("{}: ", layer.name), f.unwrap_or_default().permissions))
                }
                Err(e) => c.p.add(&layer.name, e.to_string()),
            }
        }
        let config = c.compile(doc, extra);
        match config {
            Some(config) if c.p.problems.is_empty() => Ok(config),
            _ => Err(fail(c.p.problems)),
        }
    }

    /// The upstream called `name`.
    pub fn upstream(&self, name: &str) -> Option<&Upstream> {
        self.upstreams.get(name)
    }
}

#[derive(Default)]
struct Compiler {
    p: Problems,
    /// Read the `pins:` lock file (everything but `portcullis pin`).
    read_lock: bool,
    /// Where each stdio server's kept `env:` names stood in the file (invalid ones are dropped),
    /// so problems found later name the entry as written.
    env_positions: BTreeMap<String, Vec<usize>>,
}

impl Compiler {
    fn problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.p.add(path, message);
    }

    fn section<T: DeserializeOwned + Default>(&mut self, doc: &mut raw::Document, key: &str) -> T {
        match doc.remove(key) {
            None | Some(serde_json::Value::Null) => T::default(),
            Some(v) => self.decode(key, v).unwrap_or_default(),
        }
    }

    fn decode<T: DeserializeOwned>(&mut self, path: &str, v: serde_json::Value) -> Option<T> {
        match serde_json::from_value(v) {
            Ok(t) => Some(t),
            Err(e) => {
                self.problem(path, e.to_string());
                None
            }
        }
    }

    fn compile(
        &mut self,
        mut doc: raw::Document,
        layers: Vec<(crate::rules::Scope, String, permissions::RawPermissions)>,
    ) -> Option<Config> {
        for key in doc.keys() {
            if key == "deny_tools" {
                self.problem(
                    key,
                    "deny_tools was the proxy core's placeholder: write permissions: { deny: [...] }",
                );
            } else if !TOP_KEYS.contains(&key.as_str()) {
                let known = TOP_KEYS.join(", ");
                let hint = match suggest::closest(key, TOP_KEYS.iter().copied()) {
                    Some(best) => format!(" — did you mean `{best}`?"),
                    None => String::new(),
                };
                self.problem(key, format!("unknown key (known keys: {known}){hint}"));
            }
        }
        let listen: Option<String> = self.section(&mut doc, "listen");
        let allowed_hosts: Option<Vec<String>> = self.section(&mut doc, "allowed_hosts");
        let admin: raw::Admin = self.section(&mut doc, "admin");
        let upstreams: BTreeMap<String, serde_json::Value> = self.section(&mut doc, "upstreams");
        let posture: Option<String> = self.section(&mut doc, "posture");
        let tools: Vec<serde_json::Value> = self.section(&mut doc, "tools");
        let mut perms: permissions::RawPermissions = self.section(&mut doc, "permissions");
        let subagent = perms.subagent.take();
        let jail: permissions::RawJail = self.section(&mut doc, "jail");
        let resolve = jail.resolve.clone();
        let relative = jail.relative.clone();
        let redact: Vec<String> = self.section(&mut doc, "redact");
        let limits: raw::Limits = self.section(&mut doc, "limits");
        let guardrails: Option<guardrails::Raw> = self.section(&mut doc, "guardrails");
        let approvals: approvals::Raw = self.section(&mut doc, "approvals");
        let audit: Option<audit::Raw> = self.section(&mut doc, "audit");
        let agents: BTreeMap<String, serde_json::Value> = self.section(&mut doc, "agents");
        let auth: agents::RawAuth = self.section(&mut doc, "auth");
        let delegation: agents::RawDelegation = self.section(&mut doc, "delegation");
        let state: state::Raw = self.section(&mut doc, "state");
        let pins: Option<pins::Raw> = self.section(&mut doc, "pins");
        let described: Vec<serde_json::Value> = self.section(&mut doc, "tool_descriptions");
        let egress: egress::Raw = self.section(&mut doc, "egress");
        let flows: Option<flows::Raw> = self.section(&mut doc, "flows");
        let secrets: Vec<secrets::Raw> = self.section(&mut doc, "secrets");
        let authority: authority::Raw = self.section(&mut doc, "authority");
        let telemetry = telemetry::compile(self.section(&mut doc, "telemetry"), &mut self.p);
        let yolo = posture.as_deref() == Some("yolo");

        let listen = self.addr("listen", listen.as_deref().unwrap_or("127.0.0.1:8686"));
        let admin_listen = self.addr("admin.listen", admin.listen.as_deref().unwrap_or("127.0.0.1:8687"));
        if let Some(env) = &admin.token_env {
            if env.is_empty() || !env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                self.problem("admin.token_env", format!("{env:?} is not an environment variable name"));
            }
        }
        let Upstreams { http: upstreams, stdio: stdio_servers, profiles, egress: upstream_egress, presets } =
            self.upstreams(upstreams);
        // A preset only classifies, after the operator's own entries (first match wins).
        let tools = tools.into_iter().chain(presets.tools).collect();
        let mut all_perms = vec![(crate::rules::Scope::Config, String::new(), perms)];
        all_perms.extend(layers);
        let sections = permissions::Sections { posture, tools, jail, profiles, permissions: all_perms };
        let top_egress = egress::compile(egress, "egress", crate::rules::Scope::Config, None, &mut self.p);
        let engine =
            permissions::compile(sections, &mut self.p).with_egress(top_egress).with_egress(upstream_egress);
        // Before the agents' engines are made from it: each carries the rules to its children.
        let engine = match subagent {
            Some(raw) => {
                let root = engine.jail_root().map(|r| r.display().to_string());
                let rules = subagent::compile(raw, engine.kinds(), root.as_deref(), &mut self.p);
                engine.with_subagent(rules)
            }
            None => engine,
        };
        let identity = agents::compile(agents, auth, delegation, &engine, &mut self.p);
        let inputs = authority::Inputs {
            jail_root: engine.jail_root(),
            resolve: resolve.as_deref(),
            relative: relative.as_deref(),
            require_auth: identity.require,
        };
        let authority = authority::compile(authority, inputs, &mut self.p);
        for (i, r) in redact.iter().enumerate() {
            if r.is_empty() {
                self.problem(format!("redact[{i}]"), "empty string would match everywhere");
            }
        }
        let agent_names = identity.agents.keys().map(|k| &**k).collect();
        let limits = self.limits(limits, &agent_names);
        let guardrails = guardrails.and_then(|g| guardrails::compile(g, yolo, &mut self.p));
        let approvals = approvals::compile(approvals, &mut self.p);
        let audit = audit::compile(audit, &mut self.p);
        let state = state::compile(state, &mut self.p);
        let pins = pins::compile(pins, self.read_lock, &mut self.p);
        let descriptions = descriptions::compile(described, &identity.agents, &mut self.p);
        let flows = flows::compile(flows, presets.private, &mut self.p);
        let bases = upstreams.iter().map(|(n, u)| (n.clone(), u.url.to_string())).collect();
        let secrets = secrets::compile(secrets, bases, &|var| std::env::var_os(var), &mut self.p);
        if state.shared() && approvals.seal_key_env.is_none() {
            self.problem(
                "approvals.seal_key_env",
                "a shared state backend needs one sealing key for every replica: name the variable holding it (32+ random bytes, e.g. openssl rand -hex 32)",
            );
        }
        let allowed_hosts = match allowed_hosts {
            None => hosts::AllowedHosts::loopback(),
            Some(list) => hosts::AllowedHosts::from_list(&list).unwrap_or_else(|errors| {
                for e in errors {
                    self.problem("allowed_hosts", e);
                }
                hosts::AllowedHosts::loopback()
            }),
        };
        let config = Config {
            listen: listen?,
            allowed_hosts,
            admin: Admin { listen: admin_listen?, token_env: admin.token_env },
            upstreams,
            stdio_servers,
            policy: Policy {
                engine,
                redact,
                guardrails,
                identity,
                pins,
                descriptions,
                flows,
                secrets,
                authority,
            },
            limits,
            approvals,
            audit,
            state,
            telemetry,
            warnings: std::mem::take(&mut self.p.warnings),
        };
        self.no_credential_allowed(&config);
        Some(config)
    }

    fn addr(&mut self, path: &str, s: &str) -> Option<SocketAddr> {
        match s.parse::<SocketAddr>() {
            Ok(a) => Some(a),
            Err(_) => {
                self.problem(path, format!("{s:?} is not an address like 127.0.0.1:8686"));
                None
            }
        }
    }

    fn limits(&mut self, raw: raw::Limits, agents: &std::collections::BTreeSet<&str>) -> Limits {
        let d = Limits::default();
        let limits = Limits {
            max_body: self.p.size("limits.max_body", raw.max_body, d.max_body),
            max_response: self.p.size("limits.max_response", raw.max_response, d.max_response),
            concurrency: raw.concurrency.map(|n| n as usize).unwrap_or(d.concurrency),
            connect_timeout: self.p.duration(
                "limits.connect_timeout",
                raw.connect_timeout,
                d.connect_timeout,
            ),
            header_timeout: self.p.duration("limits.header_timeout", raw.header_timeout, d.header_timeout),
            idle_timeout: self.p.duration("limits.idle_timeout", raw.idle_timeout, d.idle_timeout),
            client_header_timeout: self.p.duration(
                "limits.client_header_timeout",
                raw.client_header_timeout,
                d.client_header_timeout,
            ),
            shutdown_grace: self.p.duration("limits.shutdown_grace", raw.shutdown_grace, d.shutdown_grace),
            workers: raw.workers.map(|n| n as usize).unwrap_or(d.workers),
            per_agent: per_agent_limits::compile(raw.per_agent.unwrap_or_default(), agents, &mut self.p),
        };
        if limits.workers == 0 || limits.workers > 256 {
            self.problem("limits.workers", "must be between 1 and 256");
        }
        if limits.concurrency == 0 {
            self.problem("limits.concurrency", "must be at least 1");
        }
        if limits.max_body == 0 {
            self.problem("limits.max_body", "must be at least 1 byte");
        }
        limits
    }
}

#[cfg(test)]
mod tests;
