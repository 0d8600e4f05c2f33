//! The repeated-denial breaker: a session that keeps getting refused (3 in a row or 20 in all, by
//! default) is flagged — logged, counted, listed at `/status` — and every further call in it is
//! asked, waivers or not, until an operator clears it. A hijacked agent hammering the gate meets a
//! human, not an endless supply of retries.

use std::sync::{Arc, Mutex};

use crate::telemetry::Metrics;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    consecutive: u32,
    total: u32,
    flagged: bool,
}

pub struct Flags {
    sessions: moka::sync::Cache<String, Arc<Mutex<Counts>>>,
    consecutive: u32,
    total: u32,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flags").field("sessions", &self.sessions.entry_count()).finish()
    }
}

impl Flags {
    pub fn new(consecutive: u32, total: u32, metrics: Arc<Metrics>) -> Flags {
        let sessions = moka::sync::Cache::builder()
            .max_capacity(65_536)
            .time_to_idle(std::time::Duration::from_secs(24 * 3600))
            .build();
        Flags { sessions, consecutive, total, metrics }
    }

    fn counts(&self, session: &str) -> Arc<Mutex<Counts>> {
        self.sessions.get_with(session.to_owned(), Arc::default)
    }

    /// Records one decided call in `session`: refused or let through.
    pub fn record(&self, session: Option<&str>, refused: bool) {
        let Some(session) = session else { return };
        let counts = self.counts(session);
        let mut c = counts.lock().unwrap_or_else(|p| p.into_inner());
        if !refused {
            c.consecutive = 0;
            return;
        }
        c.consecutive += 1;
        c.total += 1;
        if !c.flagged && (c.consecutive >= self.consecutive || c.total >= self.total) {
            c.flagged = true;
            self.metrics.session_flagged();
            tracing::warn!(
                session,
                consecutive = c.consecutive,
                total = c.total,
                "session flagged after repeated refusals: every further call in it is asked until an operator clears it"
            );
        }
    }

    pub fn flagged(&self, session: Option<&str>) -> bool {
        session
            .and_then(|s| self.sessions.get(s))
            .is_some_and(|c| c.lock().map(|c| c.flagged).unwrap_or(true))
    }

    /// Clears a flagged session; `false` if it was not flagged.
    pub fn clear(&self, session: &str) -> bool {
        let Some(counts) = self.sessions.get(session) else { return false };
        let mut c = counts.lock().unwrap_or_else(|p| p.into_inner());
        let was = c.flagged;
        *c = Counts::default();
        if was {
            tracing::info!(session, "flagged session cleared by an operator");
        }
        was
    }

    /// The flagged sessions, for `/status`.
    pub fn list(&self) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = self
            .sessions
            .iter()
            .filter_map(|(s, c)| c.lock().ok().filter(|c| c.flagged).map(|c| ((*s).clone(), c.total)))
            .collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_in_a_row_or_twenty_in_all_flag_a_session_until_cleared() {
        let f = Flags::new(3, 20, Arc::new(Metrics::new()));
        for _ in 0..2 {
            f.record(Some("a"), true);
        }
        f.record(Some("a"), false);
        f.record(Some("a"), true);
        assert!(!f.flagged(Some("a")), "a success resets the run");
        f.record(Some("a"), true);
        f.record(Some("a"), true);
        assert!(f.flagged(Some("a")));
        assert!(!f.flagged(Some("b")) && !f.flagged(None));
        assert_eq!(f.list(), [("a".to_owned(), 5)]);
        assert!(f.clear("a") && !f.flagged(Some("a")));
        for i in 0..20 {
            f.record(Some("c"), i % 2 == 0);
            f.record(Some("c"), false);
        }
        assert!(!f.flagged(Some("c")), "10 refusals in all");
        for _ in 0..10 {
            f.record(Some("c"), true);
            f.record(Some("c"), false);
        }
        assert!(f.flagged(Some("c")), "20 in all");
    }
}
