//! State replicas share: in this process (`state.backend: memory`, the default), or in Redis /
//! Valkey (`redis`), so that several proxies behind one load balancer agree on parked asks,
//! waivers, flagged sessions, spent approval states, checker verdicts and the flow index
//! ([`crate::flows::shared`]: written when a result is recorded, read before a call with outward
//! reach).
//!
//! What stays per replica, and why:
//! - the checker breaker: each replica's view of its own path to the model (a replica whose
//!   network to the model is down should fail over on its own, not make the others do so);
//! - metrics: each replica exports its own; Prometheus sums them;
//! - the verdict cache's first tier (in process), in front of the shared second tier.
//!
//! The allow path touches nothing remote: a plain allowed call makes no round trip to the store —
//! except a call a `limits.per_agent` entry names, whose windows are counted in the store (one
//! script, bounded by `state.timeout`; see [`crate::limits`]).
//! What each kind does when the store is unreachable is decided where that kind lives, and
//! listed in `docs/deploy.md`.

pub mod redis;
pub mod verdicts;

use std::sync::Arc;

use crate::config::state::{Backend, StateSettings};
use crate::telemetry::Metrics;

pub use self::redis::{Event, RedisStore, StoreError};

/// Where shared state lives: `None` is this process's memory.
#[derive(Debug, Clone, Default)]
pub struct Store {
    shared: Option<Arc<RedisStore>>,
}

/// The store cannot be set up (its URL variable is unset or not a URL).
#[derive(Debug, thiserror::Error)]
pub enum StoreSetupError {
    #[error("state.url_env: the environment variable {0} is unset or empty")]
    UrlUnset(String),
    #[error("state.url_env: the URL in {var} is not a redis:// or rediss:// URL ({why})")]
    BadUrl { var: String, why: String },
}

impl Store {
    /// This process's memory.
    pub fn memory() -> Store {
        Store { shared: None }
    }

    /// The configured backend. For Redis, nothing is connected yet: the connection is made in
    /// the background and remade whenever it is lost (a proxy starts, and serves allowed calls,
    /// with its store down). Must run on a tokio runtime.
    pub fn open(settings: &StateSettings, metrics: Arc<Metrics>) -> Result<Store, StoreSetupError> {
        match &settings.backend {
            Backend::Memory => Ok(Store::memory()),
            Backend::Redis { url_env } => {
                let url = std::env::var(url_env)
                    .ok()
                    .filter(|u| !u.trim().is_empty())
                    .ok_or_else(|| StoreSetupError::UrlUnset(url_env.clone()))?;
                let store = RedisStore::open(&url, settings, metrics)
                    .map_err(|why| StoreSetupError::BadUrl { var: url_env.clone(), why })?;
                Ok(Store { shared: Some(store) })
            }
        }
    }

    /// A store shared through `redis` (for callers that hold the URL themselves: benches).
    pub fn redis(redis: Arc<RedisStore>) -> Store {
        Store { shared: Some(redis) }
    }

    /// The shared store, when replicas share one.
    pub fn shared(&self) -> Option<&Arc<RedisStore>> {
        self.shared.as_ref()
    }
}
