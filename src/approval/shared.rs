//! Approval state shared across replicas through the state store (`state.backend: redis`).
//!
//! - **Flags**: every replica keeps enforcing flags from its own table (read on every call, so
//!   never a round trip); a flag raised on one replica is added to the set `{prefix}flags` and
//!   published, and every replica marks it; an operator's clear at any replica removes it from
//!   the set and is published the same way. On (re)subscribing a replica reloads the whole set,
//!   so a flag raised while it was cut off is not lost. Streaks are counted per replica: a
//!   session refused on three replicas in turn needs up to three times the threshold (the
//!   documented price of keeping refusals off the store's path).
//! - **Waivers** ([`super::waivers`]) live under `{prefix}waiver:{digest}` with the idle TTL, and
//!   a clear of every waiver is published.
//! - **Sealed states** ([`super::mrtr`]) spend their nonce with `SET NX`.
//! - **Parked asks** ([`super::fleet`]) are listed and decided at any replica.
//!
//! When the store is unreachable: flags already known stay enforced and new refusals still
//! flag locally (the safe side that keeps allowed calls flowing); a flag raised meanwhile is
//! published once the store is back only if it is raised again — the set is the record, and
//! the resync after an outage reloads it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::state::RedisStore;

/// One event on the store's channel, as JSON.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub(super) enum Message {
    Flag {
        key: String,
    },
    Unflag {
        key: String,
    },
    WaiversCleared,
    /// An operator decided a parked ask held by `owner` (see [`super::fleet`]).
    Decided {
        id: u64,
        decision: String,
    },
}

impl Message {
    pub(super) fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// Records a flag raised (`true`) or cleared (`false`) here in the shared set and tells the
/// other replicas; in the background (it is never on a call's path).
pub(super) fn publish_flag(store: Arc<RedisStore>, key: String, flagged: bool) {
    tokio::spawn(async move {
        let set = store.key("flags");
        let cmd = if flagged { "SADD" } else { "SREM" };
        let recorded = store.run::<i64>(redis::cmd(cmd).arg(&set).arg(&key)).await;
        let msg = if flagged { Message::Flag { key } } else { Message::Unflag { key } };
        if recorded.is_err() || store.publish(&msg.bytes()).await.is_err() {
            tracing::warn!(
                "a flag change could not be shared: the state store is unreachable (it stays in force here)"
            );
        }
    });
}

/// Tells the other replicas every waiver was cleared.
pub(super) fn publish_waivers_cleared(store: Arc<RedisStore>) {
    tokio::spawn(async move {
        let _ = store.publish(&Message::WaiversCleared.bytes()).await;
    });
}
