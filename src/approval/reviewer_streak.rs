//! The ask reviewer's breaker: consecutive asks it did not allow, counted under the session
//! *and* the caller (the budget key: the agent, else the peer address). Three in a row under
//! either trip it for good — the session's or the caller's asks then go straight to deny, so an
//! agent can neither keep rephrasing a call until a model says yes nor open a new session to
//! start its count afresh; an allow before that resets both.

use std::collections::HashMap;
use std::sync::Mutex;

/// Non-allow outcomes in a row that trip a session's (or a caller's) breaker.
pub const TRIP_AFTER: u8 = 3;
/// Streaks kept at once, sessions and callers together. A key that would not fit is treated as
/// tripped (fail-safe: its asks are denied without a review), never as fresh: dropping a streak
/// to make room would let an agent wash out its own by opening sessions.
pub const CAPACITY: usize = 16_384;

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
pub struct Keys(Vec<String>);

impl Keys {
    pub fn of(session: Option<&str>, caller: Option<&str>) -> Keys {
        let mut keys: Vec<String> = session.map(|s| format!("session:{s}")).into_iter().collect();
        // The caller's key is already typed (`caller:…` digest, `agent:NAME`).
        keys.extend(caller.map(str::to_owned));
        if keys.is_empty() {
            keys.push("anonymous".to_owned());
        }
        Keys(keys)
    }
}

/// Streaks by key; only keys with at least one non-allow outcome are held.
#[derive(Debug)]
pub struct Streaks {
    by_key: Mutex<HashMap<String, u8>>,
    capacity: usize,
}

impl Default for Streaks {
    fn default() -> Self {
        Streaks::with_capacity(CAPACITY)
    }
}

impl Streaks {
    pub fn with_capacity(capacity: usize) -> Streaks {
        Streaks { by_key: Mutex::new(HashMap::new()), capacity }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, u8>> {
        self.by_key.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tripped when any of `keys` is (or has no room to be counted).
    pub fn standing(&self, keys: &Keys) -> Standing {
        let table = self.table();
        let full = table.len() >= self.capacity;
        let tripped = keys.0.iter().any(|key| match table.get(key) {
            Some(n) => *n >= TRIP_AFTER,
            None => full,
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
        for key in &keys.0 {
            let room = table.len() < self.capacity;
            match (allowed, table.get(key.as_str()).copied()) {
                (_, Some(n)) if n >= TRIP_AFTER => {}
                (true, Some(_)) => {
                    table.remove(key.as_str());
                }
                (true, None) => {}
                (false, Some(n)) => {
                    table.insert(key.clone(), n + 1);
                }
                (false, None) if room => {
                    table.insert(key.clone(), 1);
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
        assert_eq!(Keys::of(None, None), Keys(vec!["anonymous".to_owned()]));
        assert_eq!(Keys::of(None, Some("agent:dev")), Keys(vec!["agent:dev".to_owned()]));
    }

    #[test]
    fn a_key_that_does_not_fit_is_tripped_never_fresh() {
        let s = Streaks::with_capacity(2);
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
}
