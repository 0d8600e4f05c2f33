//! The ask reviewer's per-session breaker: consecutive asks it did not allow, by session (or
//! caller). Three in a row trip it for good — the session's asks then go straight to deny, so an
//! agent cannot keep rephrasing a call until a model says yes; an allow before that resets it.

use std::collections::HashMap;
use std::sync::Mutex;

/// Non-allow outcomes in a row that trip a session's breaker.
pub const TRIP_AFTER: u8 = 3;
/// Sessions with a streak kept at once. A session that would not fit is treated as tripped
/// (fail-safe: its asks are denied without a review), never as fresh: dropping a streak to make
/// room would let an agent wash out its own by opening sessions.
pub const CAPACITY: usize = 16_384;

/// Whether the reviewer may be asked for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Closed,
    /// Three non-allow outcomes in a row (or no room to keep count): asks are denied unreviewed.
    Tripped,
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

    pub fn standing(&self, key: &str) -> Standing {
        let table = self.table();
        match table.get(key) {
            Some(n) if *n >= TRIP_AFTER => Standing::Tripped,
            Some(_) => Standing::Closed,
            None if table.len() >= self.capacity => Standing::Tripped,
            None => Standing::Closed,
        }
    }

    /// Records one reviewed ask: an allow resets the streak (unless already tripped: a tripped
    /// session is never reviewed again, so nothing can reset it), anything else extends it.
    pub fn record(&self, key: &str, allowed: bool) {
        let mut table = self.table();
        let room = table.len() < self.capacity;
        match (allowed, table.get(key).copied()) {
            (_, Some(n)) if n >= TRIP_AFTER => {}
            (true, Some(_)) => {
                table.remove(key);
            }
            (true, None) => {}
            (false, Some(n)) => {
                table.insert(key.to_owned(), n + 1);
            }
            (false, None) if room => {
                table.insert(key.to_owned(), 1);
            }
            (false, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_refusals_in_a_row_trip_and_an_allow_before_that_resets() {
        let s = Streaks::default();
        for allowed in [false, false, true, false, false] {
            s.record("a", allowed);
            assert_eq!(s.standing("a"), Standing::Closed);
        }
        s.record("a", false);
        assert_eq!(s.standing("a"), Standing::Tripped);
        s.record("a", true);
        assert_eq!(s.standing("a"), Standing::Tripped, "nothing resets a tripped session");
        assert_eq!(s.standing("b"), Standing::Closed, "per session");
    }

    #[test]
    fn a_session_that_does_not_fit_is_tripped_never_fresh() {
        let s = Streaks::with_capacity(2);
        s.record("a", false);
        s.record("b", false);
        assert_eq!(s.standing("c"), Standing::Tripped);
        s.record("a", true);
        assert_eq!(s.standing("c"), Standing::Closed, "room again once a streak is reset");
    }
}
