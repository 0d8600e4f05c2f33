//! Parked asks across replicas: an ask parked at replica A can be listed and decided at any
//! replica's admin API or console; A learns the decision at once over pub/sub.
//!
//! - Ids are fleet-wide (`INCR {prefix}ask_id`); the ask's view is stored under
//!   `{prefix}ask:{id}` (with its owner replica), indexed in the set `{prefix}asks`, and expires
//!   with `approvals.timeout` (plus a minute) in any case.
//! - Each replica renews `{prefix}replica:{rid}` every second (5 s TTL). A list drops the asks of
//!   replicas that stopped renewing (killed: their agents' connections died with them), and a
//!   decision for such an ask is answered 410 Gone, never silently lost.
//! - A decision for another replica's ask is published; the owner delivers it to the waiting
//!   call, once (the local park table hands each decision out at most once).
//! - Parking needs the store: an ask that cannot be recorded is refused as if headless, with a
//!   reason that names the store (nobody else could ever see it to decide it).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::pending::{DecideError, Parked, Parking, View};
use super::shared::Message;
use super::{Ask, Choice};
use crate::state::{RedisStore, StoreError};

const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
const HEARTBEAT_TTL_MS: u64 = 5_000;

/// What the store keeps of a parked ask.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    owner: String,
    view: View,
}

/// The fleet-wide park: this replica's park table, shared through the store.
pub struct Fleet {
    store: Arc<RedisStore>,
    /// This replica's id (random, per process).
    replica: String,
    local: Arc<Parking>,
    /// How long a parked ask may wait (its store entry outlives it by a minute).
    timeout: Duration,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet").field("replica", &self.replica).finish_non_exhaustive()
    }
}

/// Why a fleet-wide decision did not land.
#[derive(Debug, thiserror::Error)]
pub enum FleetDecideError {
    #[error(transparent)]
    Local(#[from] DecideError),
    #[error("call {0} is held by a replica that is gone (its agent's connection went with it)")]
    Gone(u64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A parked ask that leaves the store when it is dropped (decided, timed out, withdrawn).
pub struct FleetParked {
    parked: Parked,
    store: Arc<RedisStore>,
}

impl FleetParked {
    pub fn id(&self) -> u64 {
        self.parked.id()
    }
}

impl Drop for FleetParked {
    fn drop(&mut self) {
        let (store, id) = (self.store.clone(), self.parked.id());
        tokio::spawn(async move {
            let _ = store.run::<i64>(redis::cmd("DEL").arg(store.key(&format!("ask:{id}")))).await;
            let _ = store.run::<i64>(redis::cmd("SREM").arg(store.key("asks")).arg(id)).await;
        });
    }
}

impl Fleet {
    pub fn new(store: Arc<RedisStore>, local: Arc<Parking>, timeout: Duration) -> Arc<Fleet> {
        let replica = crate::checker::prompt::random_token();
        let fleet = Arc::new(Fleet { store, replica, local, timeout });
        tokio::spawn(heartbeat(Arc::downgrade(&fleet)));
        fleet
    }

    fn alive_key(&self, replica: &str) -> String {
        self.store.key(&format!("replica:{replica}"))
    }

    /// Parks `ask` under a fleet-wide id. `Ok(None)`: `approvals.max_pending` asks already wait
    /// here. `Err`: the store could not record it.
    pub async fn park(
        &self,
        ask: Ask,
    ) -> Result<Option<(FleetParked, tokio::sync::oneshot::Receiver<Choice>)>, StoreError> {
        let id: u64 = self.store.run(redis::cmd("INCR").arg(self.store.key("ask_id"))).await?;
        let Some((parked, decided)) = self.local.park_as(id, ask) else { return Ok(None) };
        let view = self.local.view(id).ok_or_else(|| StoreError::Protocol("parked ask vanished".into()))?;
        let stored = serde_json::to_string(&Stored { owner: self.replica.clone(), view })
            .map_err(|e| StoreError::Protocol(e.to_string()))?;
        let ttl = (self.timeout + Duration::from_secs(60)).as_millis() as u64;
        let key = self.store.key(&format!("ask:{id}"));
        let parked = FleetParked { parked, store: self.store.clone() };
        self.store.run::<Option<String>>(redis::cmd("SET").arg(&key).arg(stored).arg("PX").arg(ttl)).await?;
        self.store.run::<i64>(redis::cmd("SADD").arg(self.store.key("asks")).arg(id)).await?;
        Ok(Some((parked, decided)))
    }

    /// Every replica's parked asks whose replica is alive (a dead replica's are dropped).
    pub async fn list(&self) -> Result<Vec<View>, StoreError> {
        let ids: Vec<u64> = self.store.run(redis::cmd("SMEMBERS").arg(self.store.key("asks"))).await?;
        let mut out = Vec::new();
        for id in ids {
            match self.stored(id).await? {
                Some(s) if self.alive(&s.owner).await? => out.push(s.view),
                Some(_) | None => {
                    let _ =
                        self.store.run::<i64>(redis::cmd("SREM").arg(self.store.key("asks")).arg(id)).await;
                }
            }
        }
        out.sort_by_key(|v| v.id);
        Ok(out)
    }

    async fn stored(&self, id: u64) -> Result<Option<Stored>, StoreError> {
        let raw: Option<String> =
            self.store.run(redis::cmd("GET").arg(self.store.key(&format!("ask:{id}")))).await?;
        Ok(raw.and_then(|r| serde_json::from_str(&r).ok()))
    }

    async fn alive(&self, replica: &str) -> Result<bool, StoreError> {
        if replica == self.replica {
            return Ok(true);
        }
        let n: i64 = self.store.run(redis::cmd("EXISTS").arg(self.alive_key(replica))).await?;
        Ok(n == 1)
    }

    /// Decides ask `id` wherever it is parked.
    pub async fn decide(&self, id: u64, decision: Choice) -> Result<(), FleetDecideError> {
        match self.local.decide(id, decision) {
            Err(DecideError::NotFound(_)) => {}
            done => return done.map_err(Into::into),
        }
        let Some(stored) = self.stored(id).await? else { return Err(DecideError::NotFound(id).into()) };
        if decision == Choice::AllowSession && matches!(&*stored.view.source, "configured" | "flagged") {
            return Err(DecideError::NotWaivable(id).into());
        }
        if !self.alive(&stored.owner).await? {
            return Err(FleetDecideError::Gone(id));
        }
        let msg = Message::Decided { id, decision: decision.as_str().to_owned() };
        self.store.publish(&serde_json::to_vec(&msg).unwrap_or_default()).await?;
        Ok(())
    }

    /// A decision published by another replica: delivered if the ask is parked here.
    pub fn decided_elsewhere(&self, id: u64, decision: &str) {
        if let Some(choice) = Choice::parse(decision) {
            // Not here (another replica's, or already decided): nothing to do.
            let _ = self.local.decide(id, choice);
        }
    }
}

/// Renews this replica's liveness key every second while the fleet is held.
async fn heartbeat(fleet: std::sync::Weak<Fleet>) {
    loop {
        let Some(f) = fleet.upgrade() else { return };
        let set =
            redis::cmd("SET").arg(f.alive_key(&f.replica)).arg(1).arg("PX").arg(HEARTBEAT_TTL_MS).to_owned();
        let _ = f.store.run::<Option<String>>(&set).await;
        drop(f);
        tokio::time::sleep(HEARTBEAT_EVERY).await;
    }
}
