//! The index across replicas: what this replica records is written to the shared store
//! ([`super::shared`]) after the result is recorded here, and a call with outward reach first
//! merges what the other replicas recorded for its caller. Without a shared store both are no-ops.

use std::sync::Arc;

use serde_json::Value;

use super::record::Recorded;
use super::shared::{self, Pulled, SharedFlows};
use super::store::Lookup;
use super::{Flows, Reaches};
use crate::call::ToolCall;
use crate::rules::egress::Reach;
use crate::rules::Engine;
use crate::state::RedisStore;

impl Flows {
    /// Shares the index through `store` from now on (the first call wins: the store is the
    /// process's, kept across reloads).
    pub fn share_through(&self, store: Arc<RedisStore>) {
        let l = self.settings.limits;
        let _ = self.store.shared.set(SharedFlows::new(store, l.shared_ttl, l.shared_records));
    }

    /// Whether a shared store is connected.
    pub fn is_shared(&self) -> bool {
        self.store.shared.get().is_some()
    }

    /// The caller's list name on the shared store (the same on every replica).
    fn digest(call: &ToolCall) -> String {
        let session = call.caller.as_deref().or(call.session.as_deref());
        shared::digest(call.agent.as_deref().map(|a| &*a.id), session)
    }

    /// Writes what one result added to the shared store, for the other replicas.
    pub async fn share(&self, call: &ToolCall, recorded: Recorded) {
        let Some(shared) = self.store.shared.get() else { return };
        if recorded.prints.is_empty() && !recorded.forgot {
            return;
        }
        shared.push(&Self::digest(call), &recorded.prints, recorded.forgot).await;
    }

    /// Before `call`'s pre phase: merges what other replicas recorded for its caller, when it
    /// has outward reach under `engine` (one round trip; none for other calls, none without a
    /// shared store). `args`: the parsed arguments of a tool whose reach depends on them (a
    /// shell), `None` for one whose kind says ([`Reaches`]). A store that cannot be read marks
    /// the session for this call.
    pub async fn pull(&self, call: &ToolCall, args: Option<&Value>, engine: &Engine) {
        let Some(shared) = self.store.shared.get() else { return };
        let outward = match args {
            None => Reaches::of(engine, call) == Reaches::Always,
            Some(args) => matches!(
                Reach::of(engine.kinds(), engine.egress(), &call.upstream, &call.qualified, args, None),
                Reach::Outward(_)
            ),
        };
        if !outward {
            return;
        }
        let key = self.key(call);
        let from = match self.store.lookup(key) {
            Lookup::Held(ix) => ix.lock().unwrap_or_else(|p| p.into_inner()).merged,
            Lookup::Nothing | Lookup::Evicted => 0,
        };
        match shared.pull(&Self::digest(call), from).await {
            Pulled::Entries { prints, read, over } => {
                if read == 0 {
                    if let Lookup::Held(ix) = self.store.lookup(key) {
                        ix.lock().unwrap_or_else(|p| p.into_inner()).unreachable = false;
                    }
                    return;
                }
                let forgot = over || prints.iter().any(|(_, o)| *o);
                let prints: Vec<_> = prints.into_iter().map(|(p, _)| p).collect();
                self.add(key, &prints, forgot);
                let ix = self.store.entry(key);
                let mut ix = ix.lock().unwrap_or_else(|p| p.into_inner());
                ix.merged = from + read;
                ix.unreachable = false;
            }
            Pulled::Unreachable => {
                let ix = self.store.entry(key);
                ix.lock().unwrap_or_else(|p| p.into_inner()).unreachable = true;
            }
        }
    }
}
