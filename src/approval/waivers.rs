//! Session waivers: "allow for this session" remembered as the exact call — session, tool and
//! canonical arguments, digested — never a substring or a per-tool bypass. In memory (moka,
//! bounded, idle TTL): gone on restart.

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::Ask;
use crate::telemetry::Metrics;

pub struct Waivers {
    cache: moka::sync::Cache<[u8; 32], ()>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Waivers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waivers").field("entries", &self.cache.entry_count()).finish()
    }
}

fn key(session: &str, ask: &Ask) -> [u8; 32] {
    let mut h = Sha256::new();
    let definition = ask.definition.to_string();
    for part in [session, &ask.tool, &ask.args, &definition] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}

impl Waivers {
    pub fn new(capacity: u64, idle: Duration, metrics: Arc<Metrics>) -> Waivers {
        Waivers {
            cache: moka::sync::Cache::builder().max_capacity(capacity).time_to_idle(idle).build(),
            metrics,
        }
    }

    /// Arms a waiver for exactly this call in its session (no session, no waiver; no waiver
    /// for a tool whose definition the proxy could not track).
    pub fn arm(&self, ask: &Ask) {
        if ask.definition == super::tools::UNTRACKED {
            return;
        }
        if let Some(s) = &ask.session {
            self.cache.insert(key(s, ask), ());
            self.cache.run_pending_tasks();
            self.metrics.waivers_active(self.cache.entry_count());
        }
    }

    pub fn covers(&self, ask: &Ask) -> bool {
        ask.definition != super::tools::UNTRACKED
            && ask.session.as_deref().is_some_and(|s| self.cache.get(&key(s, ask)).is_some())
    }

    /// Forgets every waiver (on `DELETE` of a session the proxy cannot enumerate, or by operator).
    pub fn clear(&self) {
        self.cache.invalidate_all();
        self.cache.run_pending_tasks();
        self.metrics.waivers_active(self.cache.entry_count());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::Source;

    fn ask(session: Option<&str>, args: &str) -> Ask {
        Ask {
            tool: "mcp__sh__run".into(),
            args: args.into(),
            reason: "r".into(),
            source: Source::Floor,
            session: session.map(str::to_owned),
            definition: 0,
            agent: None,
        }
    }

    #[test]
    fn a_waiver_covers_exactly_the_call_it_was_armed_for() {
        let w = Waivers::new(100, Duration::from_secs(60), Arc::new(Metrics::new()));
        w.arm(&ask(Some("s1"), r#"{"command":"make build"}"#));
        assert!(w.covers(&ask(Some("s1"), r#"{"command":"make build"}"#)));
        assert!(!w.covers(&ask(Some("s1"), r#"{"command":"make build "}"#)), "any change misses");
        assert!(!w.covers(&ask(Some("s1"), r#"{"command":"make"}"#)), "never a prefix");
        assert!(!w.covers(&ask(Some("s2"), r#"{"command":"make build"}"#)), "another session");
        let mut other_tool = ask(Some("s1"), r#"{"command":"make build"}"#);
        other_tool.tool = "mcp__sh__run2".into();
        assert!(!w.covers(&other_tool));
        w.arm(&ask(None, "{}"));
        assert!(!w.covers(&ask(None, "{}")), "no session, no waiver");
        w.clear();
        assert!(!w.covers(&ask(Some("s1"), r#"{"command":"make build"}"#)));
        let mut untracked = ask(Some("s1"), "{}");
        untracked.definition = crate::approval::tools::UNTRACKED;
        w.arm(&untracked);
        assert!(!w.covers(&untracked), "an untracked definition gets no waiver");
    }
}
