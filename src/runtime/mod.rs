//! The runtime: everything a transport needs besides its sockets — metrics, the audit sink, the
//! guard (policy and checker), approvals, the session table, the upstream targets and the
//! concurrency budget — built once from a [`Config`], and the one place these parts are made.
//!
//! `serve` and `demo` build a [`Runtime`] and hand it to [`crate::app`]; `wrap` builds its parts
//! with [`Runtime::relay`]; `check` takes [`Runtime::offline`]'s guard. Every way start-up can
//! fail is a [`StartError`] variant that says what, and where (a variable's name, an address),
//! never a secret.

use crate::identity::Identities;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::approval::Approvals;
use crate::audit::{Audit, Destination};
use crate::checker::openai::ClientError;
use crate::config::Config;
use crate::gate::Guard;
use crate::limits::Limiter;
use crate::session::table::Sessions;
use crate::telemetry::Metrics;

/// Why portcullis could not start. Each variant names what failed; the checker's says which
/// API key variable (never its value).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A guardrail is backed by a model, and its client cannot be built.
    #[error("the checker cannot start")]
    Checker(#[from] ClientError),
    /// An agent's token is unset, or the JWT key file cannot be read.
    #[error("agent identities cannot be set up")]
    Identity(#[from] crate::identity::IdentityError),
    /// A secret an upstream's `auth` names cannot be read (the variable is named, never its value).
    #[error("an upstream's credential cannot be read")]
    UpstreamCredential(#[from] crate::oauth::secret::SecretError),
    /// The shared state store's URL variable is unset or not a URL.
    #[error("the state store cannot be set up")]
    State(#[from] crate::state::StoreSetupError),
    /// `admin.token_env` names a variable that is unset, empty or too short: the operator API
    /// (and every ask's human) would be silently off.
    #[error("{}: {}", .0.path, .0.message)]
    AdminToken(crate::config::Problem),
    /// `approvals.seal_key_env` is unset, empty or too short.
    #[error("approvals.seal_key_env: the environment variable {0} is unset or shorter than 32 characters")]
    SealKey(String),
    /// An `approvals.notify` target cannot start (a Slack variable unset; never its value).
    #[error("approval announcements cannot start: {0}")]
    Notify(#[from] crate::approval::notify::NotifyError),
    #[error("the audit log cannot be opened")]
    Audit(#[source] std::io::Error),
    /// `telemetry.otlp` is set and its exporter cannot be built.
    #[error("traces cannot be exported")]
    Telemetry(#[from] crate::telemetry::otel::StartError),
    /// A listener could not be bound (in use, not an address of this host, not permitted).
    #[error("cannot listen on {addr} ({what})")]
    Bind {
        what: &'static str,
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// A worker thread or its runtime could not be started.
    #[error("cannot start worker {index}")]
    Worker {
        index: usize,
        #[source]
        source: std::io::Error,
    },
}

pub use crate::config::Chain;

mod shared;
pub mod targets;

pub use shared::Shared;
use targets::Targets;

/// What one proxy shares across its workers, built once from its config.
pub struct Runtime {
    /// The config the runtime was built from; [`crate::app::start`] records the bound address.
    pub config: Config,
    pub metrics: Arc<Metrics>,
    /// The policy, approvals and session table; a reload swaps `shared.guard`.
    pub shared: Arc<Shared>,
    pub targets: Arc<Targets>,
    pub in_flight: Arc<Semaphore>,
    /// The admin bearer token; without one the token-protected endpoints are disabled.
    pub token: Option<String>,
}

/// The parts the stdio relay owns: it swaps no policy and serves no admin API.
pub struct RelayParts {
    pub metrics: Arc<Metrics>,
    pub guard: Guard,
    pub approvals: Approvals,
}

impl Runtime {
    /// The runtime for `serve` and `demo`. `token`: the admin token (see [`admin_token`]); with
    /// one, parked asks can be answered.
    pub fn new(config: &Config, token: Option<String>) -> Result<Runtime, StartError> {
        let metrics = Arc::new(Metrics::new());
        // Before the first call: a call made before it would have no span.
        crate::telemetry::otel::start(&config.telemetry)?;
        // Every upstream's series exists from the start, so the first change is an increase.
        for name in config.upstreams.keys() {
            metrics.upstream_series_start(name);
        }
        let audit = Arc::new(Audit::start(&config.audit, metrics.clone()).map_err(StartError::Audit)?);
        let delegations = Arc::new(crate::identity::delegation::Delegations::default());
        let in_flight = Arc::new(Semaphore::new(config.limits.concurrency));
        let store = crate::state::Store::open(&config.state, metrics.clone())?;
        let limits = Limiter::new(&config.limits.per_agent, store.shared().cloned(), Some(metrics.clone()));
        let guard = Guard::new(&config.policy, metrics.clone())?
            .with_audit(audit.clone())
            .with_delegations(delegations.clone())
            .with_limits(Arc::new(limits));
        share_verdicts(&guard, &store);
        let seal_key = match &config.approvals.seal_key_env {
            None => None,
            Some(var) => Some(
                std::env::var(var)
                    .ok()
                    .filter(|k| k.trim().len() >= 32)
                    .ok_or_else(|| StartError::SealKey(var.clone()))?,
            ),
        };
        let approvals = Approvals::new(&config.approvals, token.is_some(), metrics.clone())
            .with_audit(audit)
            .with_store(&store, seal_key.as_deref().map(str::as_bytes))
            .with_notify(&config.approvals)?;
        let shared = Arc::new(Shared {
            store,
            guard: arc_swap::ArcSwap::from_pointee(guard),
            delegations,
            identities: arc_swap::ArcSwap::from_pointee(Identities::build(&config.policy.identity, None)?),
            metrics: metrics.clone(),
            counter: metrics.clone(),
            approvals,
            sessions: Sessions::default(),
            stream_order: Default::default(),
            limits: config.limits.clone(),
        });
        Ok(Runtime {
            config: config.clone(),
            targets: Arc::new(Targets::from_config(config)?),
            in_flight,
            metrics,
            shared,
            token,
        })
    }

    /// The parts for `wrap`. The agent reads the protocol on this process's stdout, so audit
    /// lines configured for stdout go to stderr; there is no admin API, so an ask reaches a
    /// human only through the client (elicitation) and is refused when the client cannot elicit.
    pub fn relay(config: &Config) -> Result<RelayParts, StartError> {
        let metrics = Arc::new(Metrics::new());
        // Before the first message: one made before it would have no span.
        crate::telemetry::otel::start(&config.telemetry)?;
        let mut audit_settings = config.audit.clone();
        if audit_settings.target == Destination::Stdout {
            audit_settings.target = Destination::Stderr;
        }
        let audit = Arc::new(Audit::start(&audit_settings, metrics.clone()).map_err(StartError::Audit)?);
        // One relay serves one client: its limits are this process's counters.
        let limits = Limiter::new(&config.limits.per_agent, None, Some(metrics.clone()));
        let guard = Guard::new(&config.policy, metrics.clone())?
            .with_audit(audit.clone())
            .with_limits(Arc::new(limits));
        let approvals = Approvals::new(&config.approvals, false, metrics.clone()).with_audit(audit);
        Ok(RelayParts { metrics, guard, approvals })
    }

    /// The guard for `check`: offline decisions record no audit lines and no metrics anyone reads.
    pub fn offline(config: &Config) -> Result<Guard, StartError> {
        Ok(Guard::new(&config.policy, Arc::new(Metrics::new()))?)
    }
}

/// Shares the flow index through the store (when replicas share one), and puts the shared tier
/// behind `guard`'s verdict cache, when replicas share a store and a model
/// is configured. Called when the guard is built and after each reload (a reload that keeps the
/// cache keeps its tier; one that builds a new cache gets the tier here).
pub fn share_verdicts(guard: &Guard, store: &crate::state::Store) {
    guard.share_flows(store);
    if let (Some(g), Some(s)) = (guard.guardrails(), store.shared()) {
        g.share_verdicts(Arc::new(crate::state::verdicts::SharedVerdicts::new(s.clone())));
    }
}

/// The admin bearer token, from the variable `admin.token_env` names (never from the file);
/// `None` when no `admin.token_env` is configured (the token-protected endpoints are off). A
/// configured variable that is unset, empty or shorter than 16 bytes is a start error, not a
/// quiet "no human": every ask would become a headless deny.
pub fn admin_token(config: &Config) -> Result<Option<String>, StartError> {
    let Some(var) = config.admin.token_env.as_deref() else { return Ok(None) };
    let setting = crate::config::env_vars::EnvSetting {
        setting: "admin.token_env".into(),
        var: var.to_owned(),
        holds: crate::config::env_vars::Holds::Token,
    };
    let value = std::env::var(var).ok();
    match crate::config::env_vars::unusable(&setting, value.as_deref()) {
        Some(problem) => Err(StartError::AdminToken(problem)),
        None => Ok(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECKED: &str = "guardrails:\n  checker: { base_url: \"http://127.0.0.1:1/v1\", model: m, api_key_env: PORTCULLIS_UNIT_RUNTIME_UNSET_KEY_4c1d, timeout: 1s }\n  rules:\n    - { match: \"mcp__*\", phases: [post], mode: block }\n";

    #[test]
    fn a_missing_checker_key_is_a_start_error_naming_its_variable() {
        let config = match Config::parse(CHECKED, "t") {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let err = Runtime::new(&config, None).err().expect("no key, no runtime");
        assert!(
            matches!(&err, StartError::Checker(ClientError::KeyUnset { var }) if var == "PORTCULLIS_UNIT_RUNTIME_UNSET_KEY_4c1d"),
            "{err:?}"
        );
        assert_eq!(
            Chain(&err).to_string(),
            "the checker cannot start: the checker's API key variable PORTCULLIS_UNIT_RUNTIME_UNSET_KEY_4c1d is not set"
        );
        assert!(matches!(Runtime::relay(&config), Err(StartError::Checker(_))));
        assert!(matches!(Runtime::offline(&config), Err(StartError::Checker(_))));
    }

    #[test]
    fn the_embedded_default_builds_a_runtime() {
        let config = Config::parse(crate::config::DEFAULT_YAML, "embedded").unwrap_or_else(|e| panic!("{e}"));
        let runtime = Runtime::new(&config, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(runtime.in_flight.available_permits(), config.limits.concurrency);
        assert!(runtime.token.is_none());
    }
}
