//! The ask reviewer's breaker: consecutive asks it did not allow, counted under the session
//! *and* the caller (the budget key: the agent, else the peer address). Three in a row under
//! either trip it for good — the session's or the caller's asks then go straight to deny, so an
//! agent can neither keep rephrasing a call until a model says yes nor open a new session to
//! start its count afresh; an allow before that resets both.
//!
//! The table is bounded twice: in all ([`CAPACITY`]) and per caller ([`SESSIONS_PER_CALLER`]
//! session streaks), so one caller cycling sessions between allows fills its own share, not the
//! table, and cannot get everyone else's asks denied unreviewed.

use std::collections::HashMap;
use std::sync::Mutex;

/// Non-allow outcomes in a row that trip a session's (or a caller's) breaker.
pub const TRIP_AFTER: u8 = 3;
/// Streaks kept at once, sessions and callers together. A key that would not fit is treated as
/// tripped (fail-safe: its asks are denied without a review), never as fresh: dropping a streak
/// to make room would let an agent wash out its own by opening sessions.
pub const CAPACITY: usize = 16_384;
/// Session streaks one caller may hold at once (as the flag table bounds sessions per
/// principal); a further session of that caller is treated as tripped until one is reset.
pub const SESSIONS_PER_CALLER: usize = 64;

/// Whether the reviewer may be asked for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Closed,
    /// Three non-allow outcomes in a row (or no room to keep count): asks are denied unreviewed.
    Tripped,
}

/// Whose streaks one review counts toward: the session's and the caller's, each when known
/// (neither: everyone's, one shared key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    session: Option<String>,
    /// The caller's key, already typed (`caller:…` digest, `agent:NAME`), or `anonymous`.
    caller: Option<String>,
}

impl Keys {
    pub fn of(session: Option<&str>, caller: Option<&str>) -> Keys {
        let session = session.map(|s| format!("session:{s}"));
        let caller = match (&session, caller) {
            (_, Some(c)) => Some(c.to_owned()),
            (None, None) => Some("anonymous".to_owned()),
            (Some(_), None) => None,
        };
        Keys { session, caller }
    }

    fn all(&self) -> impl Iterator<Item = &String> {
        self.session.iter().chain(self.caller.iter())
    }
}

#[derive(Debug, Default)]
struct Table {
    /// Streak length by key; only keys with at least one non-allow outcome are held.
    by_key: HashMap<String, u8>,
    /// The caller a held session streak was counted for.
    owner: HashMap<String, String>,
    /// Session streaks held per caller.
    held: HashMap<String, usize>,
}

impl Table {
    fn held(&self, caller: Option<&String>) -> usize {
        caller.and_then(|c| self.held.get(c)).copied().unwrap_or(0)
    }

    fn remove(&mut self, key: &str) {
        self.by_key.remove(key);
        if let Some(caller) = self.owner.remove(key) {
            if let Some(n) = self.held.get_mut(&caller) {
                *n -= 1;
                if *n == 0 {
                    self.held.remove(&caller);
                }
            }
        }
    }
}

/// Streaks by key, bounded in all and per caller.
#[derive(Debug)]
pub struct Streaks {
    table: Mutex<Table>,
    capacity: usize,
    per_caller: usize,
}

impl Default for Streaks {
    fn default() -> Self {
        Streaks::with_capacity(CAPACITY, SESSIONS_PER_CALLER)
    }
}

impl Streaks {
    pub fn with_capacity(capacity: usize, per_caller: usize) -> Streaks {
        Streaks { table: Mutex::new(Table::default()), capacity, per_caller }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tripped when any of `keys` is (or has no room to be counted: the table is full, or the
    /// session's caller holds its share of session streaks).
    pub fn standing(&self, keys: &Keys) -> Standing {
        let table = self.table();
        let full = table.by_key.len() >= self.capacity;
        let share_used = table.held(keys.caller.as_ref()) >= self.per_caller;
        let tripped = keys.all().any(|key| match table.by_key.get(key) {
            Some(n) => *n >= TRIP_AFTER,
            None => full || (share_used && Some(key) == keys.session.as_ref()),
        });
        match tripped {
            true => Standing::Tripped,
            false => Standing::Closed,
        }
    }

    /// Records one reviewed ask under every key: an allow resets each streak (unless already
    /// tripped: a tripped key is never reviewed again, so nothing can reset it), anything else
    /// extends it.
    pub fn record(&self, keys: &Keys, allowed: bool) {
        let mut table = self.table();
        for key in keys.all() {
            let is_session = Some(key) == keys.session.as_ref();
            let room = table.by_key.len() < self.capacity
                && !(is_session && table.held(keys.caller.as_ref()) >= self.per_caller);
            match (allowed, table.by_key.get(key.as_str()).copied()) {
                (_, Some(n)) if n >= TRIP_AFTER => {}
                (true, Some(_)) => table.remove(key),
                (true, None) => {}
                (false, Some(n)) => {
                    table.by_key.insert(key.clone(), n + 1);
                }
                (false, None) if room => {
                    table.by_key.insert(key.clone(), 1);
                    if let (true, Some(caller)) = (is_session, keys.caller.as_ref()) {
                        table.owner.insert(key.clone(), caller.clone());
                        *table.held.entry(caller.clone()).or_default() += 1;
                    }
                }
                (false, None) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(session: &str, caller: &str) -> Keys {
        Keys::of(Some(session), Some(caller))
    }

    #[test]
    fn three_refusals_in_a_row_trip_and_an_allow_before_that_resets() {
        let s = Streaks::default();
        let a = keys("a", "caller:x");
        for allowed in [false, false, true, false, false] {
            s.record(&a, allowed);
            assert_eq!(s.standing(&a), Standing::Closed);
        }
        s.record(&a, false);
        assert_eq!(s.standing(&a), Standing::Tripped);
        s.record(&a, true);
        assert_eq!(s.standing(&a), Standing::Tripped, "nothing resets a tripped session");
        assert_eq!(s.standing(&keys("b", "caller:y")), Standing::Closed, "another caller's session");
    }

    #[test]
    fn a_caller_rotating_sessions_trips_on_its_own_streak() {
        let s = Streaks::default();
        for session in ["a", "b", "c"] {
            assert_eq!(s.standing(&keys(session, "caller:x")), Standing::Closed, "{session}");
            s.record(&keys(session, "caller:x"), false);
        }
        assert_eq!(s.standing(&keys("d", "caller:x")), Standing::Tripped, "a fresh session of the caller");
        assert_eq!(s.standing(&keys("d", "caller:y")), Standing::Closed, "another caller");
        assert_eq!(s.standing(&Keys::of(Some("e"), None)), Standing::Closed, "a session alone");
    }

    #[test]
    fn one_allow_resets_the_session_and_the_caller() {
        let s = Streaks::default();
        let (a, b) = (keys("a", "caller:x"), keys("b", "caller:x"));
        s.record(&a, false);
        s.record(&b, false);
        s.record(&b, true);
        s.record(&a, false);
        assert_eq!(s.standing(&a), Standing::Closed, "the caller's streak was reset by b's allow");
        s.record(&a, false);
        assert_eq!(s.standing(&a), Standing::Tripped, "a's own streak: three in a row");
    }

    #[test]
    fn without_a_session_or_a_caller_every_ask_shares_one_streak() {
        let all = |k: &Keys| k.all().cloned().collect::<Vec<_>>();
        assert_eq!(all(&Keys::of(None, None)), ["anonymous"]);
        assert_eq!(all(&Keys::of(None, Some("agent:dev"))), ["agent:dev"]);
        assert_eq!(all(&Keys::of(Some("s"), None)), ["session:s"]);
    }

    #[test]
    fn a_key_that_does_not_fit_is_tripped_never_fresh() {
        let s = Streaks::with_capacity(2, SESSIONS_PER_CALLER);
        s.record(&Keys::of(Some("a"), None), false);
        s.record(&Keys::of(Some("b"), None), false);
        assert_eq!(s.standing(&Keys::of(Some("c"), None)), Standing::Tripped);
        assert_eq!(
            s.standing(&Keys::of(Some("a"), Some("caller:x"))),
            Standing::Tripped,
            "its caller has no room"
        );
        s.record(&Keys::of(Some("a"), None), true);
        assert_eq!(
            s.standing(&Keys::of(Some("c"), None)),
            Standing::Closed,
            "room again once a streak is reset"
        );
    }

    #[test]
    fn a_caller_cycling_sessions_between_allows_fills_its_own_share_not_the_table() {
        // Two refusals in fresh sessions, then an allow that resets the caller's streak: each
        // round leaves two session streaks behind. Past its share, the caller's new sessions are
        // tripped; another caller's are reviewed as before.
        let s = Streaks::with_capacity(1_000, 4);
        let mut n = 0;
        for _ in 0..10 {
            for _ in 0..2 {
                let k = keys(&format!("s{n}"), "caller:x");
                n += 1;
                if s.standing(&k) == Standing::Closed {
                    s.record(&k, false);
                }
            }
            let k = keys(&format!("s{n}"), "caller:x");
            n += 1;
            if s.standing(&k) == Standing::Closed {
                s.record(&k, true);
            }
        }
        assert_eq!(s.table().held.get("caller:x"), Some(&4), "the caller's share, no more");
        assert!(s.table().by_key.len() <= 5, "its sessions and itself");
        assert_eq!(s.standing(&keys("fresh", "caller:x")), Standing::Tripped, "over its share");
        assert_eq!(s.standing(&keys("s0", "caller:x")), Standing::Closed, "a held session of its own");
        assert_eq!(s.standing(&keys("other", "caller:y")), Standing::Closed, "another caller");
        s.record(&keys("s0", "caller:x"), true);
        assert_eq!(s.standing(&keys("fresh", "caller:x")), Standing::Closed, "room once one is reset");
    }
}
