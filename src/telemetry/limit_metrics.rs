//! The per-agent rate limits' metrics: refusals by the entry that refused (its `agent` and `tool`
//! as configured — bounded, never a name from the wire) and bound, and checks the shared store
//! could not answer (decided by this replica's counters instead).

use prometheus::{IntCounter, IntCounterVec, Opts, Registry};

#[derive(Debug)]
pub struct LimitMetrics {
    refused: IntCounterVec,
    fallbacks: IntCounter,
}

impl LimitMetrics {
    pub fn register(registry: &Registry) -> LimitMetrics {
        let refused = IntCounterVec::new(
            Opts::new(
                "rate_limited_total",
                "Calls refused by limits.per_agent, by the entry's agent and tool as configured and the bound (per_minute, concurrent, per_day)",
            ),
            &["agent", "tool", "limit"],
        )
        .expect("static metric");
        let fallbacks = IntCounter::new(
            "rate_limit_store_fallbacks_total",
            "Rate-limit checks the shared state store did not answer in time, decided by this replica's own counters",
        )
        .expect("static metric");
        registry.register(Box::new(refused.clone())).expect("registered once");
        registry.register(Box::new(fallbacks.clone())).expect("registered once");
        LimitMetrics { refused, fallbacks }
    }

    /// The refusal counter of one configured entry's bound, exported at 0 from now on (resolved
    /// once, so a refusal does no label lookup).
    pub fn refused(&self, agent: &str, tool: &str, limit: &str) -> IntCounter {
        self.refused.with_label_values(&[agent, tool, limit])
    }

    /// Counts one check decided locally because the store did not answer.
    pub fn fallback(&self) {
        self.fallbacks.inc();
    }
}
