//! The flow index shared through the state store, when replicas share one: what one replica
//! records for a caller is read by the others on that caller's outward calls, so reading on one
//! replica and posting through another is the same session.
//!
//! Each caller has one list, `{prefix}flows:v1:{digest}` (the digest a SHA-256 of the agent
//! and the caller, the same on every replica); each recorded result appends one entry — the
//! hashes [`Print`] holds, never the text — and the list expires `flows.shared.ttl` after its
//! last write. A list is bounded: past `flows.shared.records` entries an overflow marker is
//! written instead and readers mark the session overflowed (judged by the model rule). A replica
//! reads the entries it has not merged yet, and only for a call with outward reach: the allow path
//! of other calls makes no round trip. A store that cannot be read fails safe (see
//! [`Pulled::Unreachable`]).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::print::{Print, Source, SourceKind, TokenPrint};
use crate::state::RedisStore;

/// Appends one entry unless the list is full (then the overflow marker, once), and renews the
/// list's expiry. KEYS[1] the list; ARGV: the entry, the bound, the TTL in milliseconds.
const PUSH: &str = "local n = redis.call('LLEN', KEYS[1]) \
    if n < tonumber(ARGV[2]) then redis.call('RPUSH', KEYS[1], ARGV[1]) \
    elseif n == tonumber(ARGV[2]) then redis.call('RPUSH', KEYS[1], 'over') end \
    redis.call('PEXPIRE', KEYS[1], ARGV[3]) return n";

/// The marker a full list ends with.
const OVER: &[u8] = b"over";

/// The shared side of the index.
#[derive(Debug)]
pub struct SharedFlows {
    store: Arc<RedisStore>,
    ttl: Duration,
    records: usize,
    /// This replica, so it does not merge its own entries twice.
    replica: u64,
}

/// One entry as stored.
#[derive(Debug, Serialize, Deserialize)]
struct Wire {
    r: u64,
    t: String,
    u: String,
    k: String,
    b: usize,
    s: Vec<u64>,
    f: Vec<u64>,
    x: Vec<(u64, u32, u64)>,
    /// The writer forgot part of this result (past its read budget).
    o: bool,
}

/// What a read of the shared list found.
#[derive(Debug)]
pub enum Pulled {
    /// Entries other replicas wrote, with whether they forgot part of them, and how many list
    /// entries were read (to start after them next time).
    Entries { prints: Vec<(Print, bool)>, read: usize, over: bool },
    /// The store could not be read: what other replicas recorded cannot be ruled out, so the
    /// call is judged as an overflowed session's would be.
    Unreachable,
}

impl SharedFlows {
    pub fn new(store: Arc<RedisStore>, ttl: Duration, records: usize) -> SharedFlows {
        let mut seed = [0u8; 8];
        let _ = getrandom::fill(&mut seed);
        SharedFlows { store, ttl, records, replica: u64::from_le_bytes(seed) }
    }

    fn list(&self, digest: &str) -> String {
        self.store.key(&format!("flows:v1:{digest}"))
    }

    /// Appends what one result added; a failure is logged (other replicas will not see it).
    pub async fn push(&self, digest: &str, prints: &[Print], forgot: bool) {
        for (i, p) in prints.iter().enumerate() {
            let wire = Wire {
                r: self.replica,
                t: p.source.tool.to_string(),
                u: p.source.upstream.to_string(),
                k: match &p.source.kind {
                    SourceKind::Private => "private".into(),
                    SourceKind::Redacted => "redacted".into(),
                    SourceKind::Secret(d) => format!("secret:{d}"),
                },
                b: p.source.bytes,
                s: p.shingles.clone(),
                f: p.fine.clone(),
                x: p.tokens.iter().map(|t| (t.head, t.len, t.hash)).collect(),
                o: forgot && i == 0,
            };
            let Ok(body) = serde_json::to_vec(&wire) else { continue };
            let ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let cmd = redis::cmd("EVAL")
                .arg(PUSH)
                .arg(1)
                .arg(self.list(digest))
                .arg(body)
                .arg(self.records)
                .arg(ms)
                .take();
            if let Err(e) = self.store.run::<i64>(&cmd).await {
                tracing::warn!(error = %e, "a flow record was not shared with the other replicas");
                return;
            }
        }
    }

    /// The entries after the first `from` of the caller's list.
    pub async fn pull(&self, digest: &str, from: usize) -> Pulled {
        let cmd = redis::cmd("LRANGE").arg(self.list(digest)).arg(from).arg(-1).take();
        let entries = match self.store.run::<Vec<Vec<u8>>>(&cmd).await {
            Ok(e) => e,
            Err(_) => return Pulled::Unreachable,
        };
        let read = entries.len();
        let mut over = false;
        let mut prints = Vec::new();
        for e in entries {
            if e == OVER {
                over = true;
                continue;
            }
            // An entry this version cannot read is something recorded that cannot be matched.
            let Ok(w) = serde_json::from_slice::<Wire>(&e) else {
                over = true;
                continue;
            };
            if w.r == self.replica {
                continue;
            }
            prints.push(from_wire(w));
        }
        Pulled::Entries { prints, read, over }
    }
}

fn from_wire(w: Wire) -> (Print, bool) {
    let kind = match w.k.as_str() {
        "private" => SourceKind::Private,
        "redacted" => SourceKind::Redacted,
        other => SourceKind::Secret(other.strip_prefix("secret:").unwrap_or(other).into()),
    };
    let source = Source { tool: w.t.into(), upstream: w.u.into(), kind, bytes: w.b };
    let tokens = w.x.into_iter().map(|(head, len, hash)| TokenPrint { head, len, hash }).collect();
    (Print { source, shingles: w.s, fine: w.f, tokens }, w.o)
}

/// The caller's list name, the same on every replica: SHA-256 of the agent and the caller.
pub fn digest(agent: Option<&str>, session: Option<&str>) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for part in [agent, session] {
        match part {
            Some(p) => {
                h.update([1u8]);
                h.update((p.len() as u64).to_le_bytes());
                h.update(p.as_bytes());
            }
            None => h.update([0u8]),
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
