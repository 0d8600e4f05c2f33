//! Session waivers: "allow for this session" remembered as the exact call — session, tool and
//! canonical arguments, digested — never a substring or a per-tool bypass. In memory (moka,
//! bounded, idle TTL): gone on restart. With a shared store, also under
//! `{prefix}waiver:{digest}` with the same idle TTL, so a waiver granted at one replica answers
//! at every replica; the memory tier is a cache of it. A store that cannot be reached is a miss:
//! the call is asked again (never waved through on a guess).

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::Ask;
use crate::telemetry::Metrics;

pub struct Waivers {
    cache: moka::sync::Cache<[u8; 32], ()>,
    metrics: Arc<Metrics>,
    idle: Duration,
    store: std::sync::OnceLock<Arc<crate::state::RedisStore>>,
}

fn hex(d: &[u8; 32]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
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
            idle,
            store: std::sync::OnceLock::new(),
        }
    }

    /// Shares waivers through `store` from now on.
    pub(super) fn share(&self, store: Arc<crate::state::RedisStore>) {
        let _ = self.store.set(store);
    }

    fn shared_key(store: &crate::state::RedisStore, k: &[u8; 32]) -> String {
        store.key(&format!("waiver:{}", hex(k)))
    }

    /// Arms a waiver for exactly this call in its session (no session, no waiver; no waiver
    /// for a tool whose definition the proxy could not track).
    pub fn arm(&self, ask: &Ask) {
        if ask.definition == crate::tooldefs::UNTRACKED {
            return;
        }
        if let Some(s) = &ask.session {
            let k = key(s, ask);
            self.cache.insert(k, ());
            self.cache.run_pending_tasks();
            self.metrics.waivers_active(self.cache.entry_count());
            if let Some(store) = self.store.get().cloned() {
                let idle = self.idle.as_millis().max(1) as u64;
                tokio::spawn(async move {
                    let set = redis::cmd("SET")
                        .arg(Waivers::shared_key(&store, &k))
                        .arg(1)
                        .arg("PX")
                        .arg(idle)
                        .to_owned();
                    if store.run::<Option<String>>(&set).await.is_err() {
                        tracing::warn!("a session waiver could not be shared: the state store is unreachable (it holds on this replica only)");
                    }
                });
            }
        }
    }

    /// Whether a waiver answers `ask`: this replica's memory first, then the shared store (whose
    /// idle TTL a hit renews). A store that cannot answer is a miss.
    pub async fn covers(&self, ask: &Ask) -> bool {
        if ask.definition == crate::tooldefs::UNTRACKED {
            return false;
        }
        let Some(s) = ask.session.as_deref() else { return false };
        let k = key(s, ask);
        if self.cache.get(&k).is_some() {
            return true;
        }
        let Some(store) = self.store.get() else { return false };
        let idle = self.idle.as_millis().max(1) as u64;
        let get = redis::cmd("GETEX").arg(Waivers::shared_key(store, &k)).arg("PX").arg(idle).to_owned();
        match store.run::<Option<String>>(&get).await {
            Ok(Some(_)) => {
                self.cache.insert(k, ());
                true
            }
            Ok(None) | Err(_) => false,
        }
    }

    /// Forgets every waiver (on `DELETE` of a session the proxy cannot enumerate, or by operator),
    /// at every replica.
    pub fn clear(&self) {
        self.clear_local();
        if let Some(store) = self.store.get().cloned() {
            tokio::spawn({
                let store = store.clone();
                async move {
                    let pattern = store.key("waiver:*");
                    let mut cursor: u64 = 0;
                    loop {
                        let scan = redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(&pattern)
                            .arg("COUNT")
                            .arg(500)
                            .to_owned();
                        let Ok((next, keys)) = store.run::<(u64, Vec<String>)>(&scan).await else { return };
                        if !keys.is_empty() {
                            let _ = store.run::<i64>(redis::cmd("DEL").arg(keys)).await;
                        }
                        if next == 0 {
                            return;
                        }
                        cursor = next;
                    }
                }
            });
            super::shared::publish_waivers_cleared(store);
        }
    }

    /// Forgets this replica's memory of waivers (another replica cleared them).
    pub(super) fn clear_local(&self) {
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

    fn covers(w: &Waivers, a: &Ask) -> bool {
        crate::gate::pre::block_on(w.covers(a))
    }

    #[test]
    fn a_waiver_covers_exactly_the_call_it_was_armed_for() {
        let w = Waivers::new(100, Duration::from_secs(60), Arc::new(Metrics::new()));
        w.arm(&ask(Some("s1"), r#"{"command":"make build"}"#));
        assert!(covers(&w, &ask(Some("s1"), r#"{"command":"make build"}"#)));
        assert!(!covers(&w, &ask(Some("s1"), r#"{"command":"make build "}"#)), "any change misses");
        assert!(!covers(&w, &ask(Some("s1"), r#"{"command":"make"}"#)), "never a prefix");
        assert!(!covers(&w, &ask(Some("s2"), r#"{"command":"make build"}"#)), "another session");
        let mut other_tool = ask(Some("s1"), r#"{"command":"make build"}"#);
        other_tool.tool = "mcp__sh__run2".into();
        assert!(!covers(&w, &other_tool));
        w.arm(&ask(None, "{}"));
        assert!(!covers(&w, &ask(None, "{}")), "no session, no waiver");
        w.clear();
        assert!(!covers(&w, &ask(Some("s1"), r#"{"command":"make build"}"#)));
        let mut untracked = ask(Some("s1"), "{}");
        untracked.definition = crate::tooldefs::UNTRACKED;
        w.arm(&untracked);
        assert!(!covers(&w, &untracked), "an untracked definition gets no waiver");
    }
}
