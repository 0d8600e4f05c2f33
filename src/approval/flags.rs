//! The repeated-denial breaker: a session that keeps getting refused (3 in a row or 20 in all, by
//! default) is flagged — logged, counted, listed at `/status` — and every further call in it is
//! asked, waivers or not, until an operator clears it. A hijacked agent hammering the gate meets a
//! human, not an endless supply of retries.
//!
//! Session ids are the caller's to choose (`x-portcullis-session`, a fresh `Mcp-Session-Id`), so
//! streaks are kept per session *and* per caller — the principal, a digest of the
//! `Authorization` header, else the peer address. A flagged principal flags all of its sessions.
//! One principal holds at most [`SESSIONS_PER_PRINCIPAL`] sessions of its own; the sessions
//! beyond share one streak (`{principal}#more`), so fresh ids buy nothing.
//!
//! The table is bounded and fails safe: a flag is never evicted; an idle unflagged streak is
//! swept only after a day; and a key with no room left shares one streak with every other
//! such key (`#untracked`), which flags as one.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::telemetry::Metrics;

/// Sessions one principal may hold in the table before the rest share a streak.
pub const SESSIONS_PER_PRINCIPAL: usize = 64;
/// Streaks kept in all.
const CAPACITY: usize = 65_536;
/// How long an unflagged streak lives without a call.
const IDLE: Duration = Duration::from_secs(24 * 3600);
/// The key every streak shares when the table has no room.
const UNTRACKED: &str = "#untracked";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    consecutive: u32,
    total: u32,
    flagged: bool,
    last: Instant,
}

impl Default for Counts {
    fn default() -> Self {
        Counts { consecutive: 0, total: 0, flagged: false, last: Instant::now() }
    }
}

#[derive(Default)]
struct Table {
    streaks: HashMap<String, Counts>,
    /// Principal key → the sessions it holds (bounded).
    sessions_of: HashMap<String, HashSet<String>>,
    /// Session key → the principal first seen using it.
    principal_of: HashMap<String, String>,
    last_sweep: Option<Instant>,
}

pub struct Flags {
    table: Mutex<Table>,
    consecutive: u32,
    total: u32,
    capacity: usize,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.table.lock().map(|t| t.streaks.len()).unwrap_or(0);
        f.debug_struct("Flags").field("streaks", &n).finish()
    }
}

/// The table key of a principal (never the raw credential).
fn principal_key(principal: &str) -> String {
    use std::fmt::Write;
    let d: [u8; 32] = Sha256::digest(principal.as_bytes()).into();
    // One buffer: a `format!` per byte was eight allocations per lookup, twice per call.
    let mut key = String::with_capacity("caller:".len() + 16);
    key.push_str("caller:");
    d[..8].iter().for_each(|b| {
        let _ = write!(key, "{b:02x}");
    });
    key
}

/// The table key of a session id (one spelled like a principal key is kept apart from them).
fn session_key(session: &str) -> String {
    if session.starts_with("caller:") || session.starts_with('#') {
        format!("session:{session}")
    } else {
        session.to_owned()
    }
}

impl Flags {
    pub fn new(consecutive: u32, total: u32, metrics: Arc<Metrics>) -> Flags {
        Flags::with_capacity(consecutive, total, CAPACITY, metrics)
    }

    fn with_capacity(consecutive: u32, total: u32, capacity: usize, metrics: Arc<Metrics>) -> Flags {
        Flags { table: Mutex::default(), consecutive, total, capacity, metrics }
    }

    /// The keys whose streaks one call feeds and reads: its session's (bounded per principal)
    /// and its principal's. A session first seen with a principal stays that principal's, so
    /// a decision recorded later without one (an ask resolving) still counts against it.
    fn keys(&self, t: &mut Table, session: Option<&str>, principal: Option<&str>) -> Vec<String> {
        let mut keys = Vec::with_capacity(2);
        let pkey = principal.map(principal_key);
        if let Some(s) = session {
            let skey = session_key(s);
            let owner = match (&pkey, t.principal_of.get(&skey)) {
                (_, Some(owner)) => Some(owner.clone()),
                (Some(p), None) => {
                    let held = t.sessions_of.entry(p.clone()).or_default();
                    if held.len() < SESSIONS_PER_PRINCIPAL && t.principal_of.len() < self.capacity {
                        held.insert(skey.clone());
                        t.principal_of.insert(skey.clone(), p.clone());
                        Some(p.clone())
                    } else {
                        // Beyond its share, every further session of this caller is one.
                        keys.push(format!("{p}#more"));
                        None
                    }
                }
                (None, None) => None,
            };
            if keys.is_empty() {
                keys.push(skey);
            }
            if let Some(owner) = owner {
                if !keys.contains(&owner) {
                    keys.push(owner);
                }
            }
        }
        if let Some(p) = pkey {
            if !keys.contains(&p) {
                keys.push(p);
            }
        }
        keys
    }

    /// The streak under `key`, made room for: a table that is full sweeps idle unflagged
    /// streaks (at most once a minute) and otherwise hands out the shared untracked streak.
    fn streak<'t>(&self, t: &'t mut Table, key: String) -> &'t mut Counts {
        if !t.streaks.contains_key(&key) && t.streaks.len() >= self.capacity {
            let now = Instant::now();
            if t.last_sweep.is_none_or(|s| now.duration_since(s) > Duration::from_secs(60)) {
                t.last_sweep = Some(now);
                t.streaks.retain(|k, c| c.flagged || k == UNTRACKED || now.duration_since(c.last) < IDLE);
            }
            if t.streaks.len() >= self.capacity {
                return t.streaks.entry(UNTRACKED.to_owned()).or_default();
            }
        }
        t.streaks.entry(key).or_default()
    }

    /// Records one decided call: refused or let through. `principal` is who called (the
    /// transport's knowledge; `None` where it has none).
    pub fn record(&self, session: Option<&str>, principal: Option<&str>, refused: bool) {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let keys = self.keys(&mut t, session, principal);
        for key in keys {
            let c = self.streak(&mut t, key.clone());
            c.last = Instant::now();
            if !refused {
                c.consecutive = 0;
                continue;
            }
            c.consecutive = c.consecutive.saturating_add(1);
            c.total = c.total.saturating_add(1);
            if !c.flagged && (c.consecutive >= self.consecutive || c.total >= self.total) {
                c.flagged = true;
                self.metrics.session_flagged();
                tracing::warn!(
                    key,
                    consecutive = c.consecutive,
                    total = c.total,
                    "flagged after repeated refusals: every further call in it is asked until an operator clears it"
                );
            }
        }
    }

    /// True when the call's session or its principal is flagged.
    pub fn flagged(&self, session: Option<&str>, principal: Option<&str>) -> bool {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let keys = self.keys(&mut t, session, principal);
        let untracked = t.streaks.get(UNTRACKED).is_some_and(|c| c.flagged);
        keys.iter().any(|k| match t.streaks.get(k) {
            Some(c) => c.flagged,
            // A key the table had no room for reads the shared untracked streak.
            None => untracked && t.streaks.len() >= self.capacity,
        })
    }

    /// Clears a flagged key (a session id, or a `caller:…` key from the list); `false` if it
    /// was not flagged.
    pub fn clear(&self, key: &str) -> bool {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let key = if t.streaks.contains_key(key) { key.to_owned() } else { session_key(key) };
        let Some(c) = t.streaks.get_mut(&key) else { return false };
        let was = c.flagged;
        *c = Counts::default();
        if was {
            tracing::info!(key, "flag cleared by an operator");
        }
        was
    }

    /// The flagged sessions and principals, for `/status`.
    pub fn list(&self) -> Vec<(String, u32)> {
        let t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(String, u32)> =
            t.streaks.iter().filter(|(_, c)| c.flagged).map(|(k, c)| (k.clone(), c.total)).collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_key_is_the_first_eight_bytes_of_its_digest_in_lower_hex() {
        // The old spelling, a `format!` per byte, is the reference.
        let d: [u8; 32] = Sha256::digest(b"Bearer token").into();
        let expected: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(principal_key("Bearer token"), format!("caller:{expected}"));
        assert_eq!(principal_key("x").len(), "caller:".len() + 16);
    }

    #[test]
    fn three_in_a_row_or_twenty_in_all_flag_a_session_until_cleared() {
        let f = Flags::new(3, 20, Arc::new(Metrics::new()));
        for _ in 0..2 {
            f.record(Some("a"), None, true);
        }
        f.record(Some("a"), None, false);
        f.record(Some("a"), None, true);
        assert!(!f.flagged(Some("a"), None), "a success resets the run");
        f.record(Some("a"), None, true);
        f.record(Some("a"), None, true);
        assert!(f.flagged(Some("a"), None));
        assert!(!f.flagged(Some("b"), None) && !f.flagged(None, None));
        assert_eq!(f.list(), [("a".to_owned(), 5)]);
        assert!(f.clear("a") && !f.flagged(Some("a"), None));
        for i in 0..20 {
            f.record(Some("c"), None, i % 2 == 0);
            f.record(Some("c"), None, false);
        }
        assert!(!f.flagged(Some("c"), None), "10 refusals in all");
        for _ in 0..10 {
            f.record(Some("c"), None, true);
            f.record(Some("c"), None, false);
        }
        assert!(f.flagged(Some("c"), None), "20 in all");
    }

    #[test]
    fn thirty_denials_under_thirty_fresh_sessions_flag_the_caller_and_all_its_sessions() {
        let f = Flags::new(3, 20, Arc::new(Metrics::new()));
        let me = Some("Bearer agent-1");
        for i in 0..30 {
            let s = format!("fresh-{i}");
            assert!(i < 3 || f.flagged(Some(&s), me), "denial {i}: the caller is flagged by now");
            f.record(Some(&s), me, true);
        }
        assert!(f.flagged(Some("yet-another"), me), "every session of the caller");
        assert!(f.flagged(None, me), "and calls without a session");
        assert!(!f.flagged(Some("other"), Some("Bearer agent-2")), "another caller is not");
        let listed = f.list();
        let caller = listed.iter().find(|(k, _)| k.starts_with("caller:")).expect("the caller is listed");
        assert!(!caller.0.contains("agent-1"), "the credential is digested");
        assert!(f.clear(&caller.0));
        assert!(!f.flagged(Some("yet-another"), me), "cleared by an operator");
    }

    #[test]
    fn a_decision_recorded_without_a_principal_counts_against_the_sessions_caller() {
        let f = Flags::new(3, 20, Arc::new(Metrics::new()));
        let me = Some("peer:127.0.0.1");
        for i in 0..3 {
            let s = format!("s{i}");
            assert!(!f.flagged(Some(&s), me));
            f.record(Some(&s), None, true);
        }
        assert!(f.flagged(Some("s9"), me));
    }

    #[test]
    fn a_callers_sessions_beyond_its_share_are_one_streak() {
        let f = Flags::new(3, 1000, Arc::new(Metrics::new()));
        let me = Some("Bearer x");
        for i in 0..SESSIONS_PER_PRINCIPAL {
            f.record(Some(&format!("own-{i}")), me, false);
        }
        for i in 0..3 {
            f.record(Some(&format!("more-{i}")), me, true);
            // Interleaved successes elsewhere reset the caller's run, not the pooled one.
            f.record(Some("own-0"), me, false);
        }
        assert!(f.flagged(Some("more-99"), me), "the sessions beyond the share flag as one");
        assert!(!f.flagged(Some("own-1"), me), "its own sessions are not flagged");
    }

    #[test]
    fn a_full_table_never_evicts_a_flag_and_pools_what_it_cannot_hold() {
        let f = Flags::with_capacity(3, 20, 8, Arc::new(Metrics::new()));
        for _ in 0..3 {
            f.record(Some("hot"), None, true);
        }
        for i in 0..100 {
            f.record(Some(&format!("spray-{i}")), None, i % 2 == 0);
        }
        assert!(f.flagged(Some("hot"), None), "the flag survived the spray");
        for i in 0..3 {
            f.record(Some(&format!("late-{i}")), None, true);
        }
        assert!(f.flagged(Some("late-new"), None), "untracked keys share one streak, and it flagged");
    }
}
