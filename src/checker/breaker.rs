//! The checker's circuit breaker: after `threshold` consecutive failures it opens, and calls stop
//! waiting on a dead checker (they go straight to the failure policy). After `cooldown` one probe
//! is let through (half-open); its success closes the breaker, its failure reopens it.
//!
//! The operator hears about it twice, not once per call: one sticky "checker DOWN" warning when
//! it opens, one recovery line when it closes. `checker_up` and `breaker_state` follow it.
//!
//! Only transport failures (timeouts, connection and HTTP errors) count. A malformed reply, a
//! context-length or content-filter refusal, all come from a checker that is up; counting them
//! would let content crafted to confuse (or overflow) the model open the breaker and so switch
//! the checker off for everyone. Waiting for a concurrency slot is never seen here at all: a
//! call is admitted only once it holds its slot, so load cannot open the breaker either.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::telemetry::checker_metrics::BreakerLabel;
use crate::telemetry::Metrics;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// A probe is out; everyone else is refused until it lands.
    HalfOpen,
}

#[derive(Debug)]
pub struct Breaker {
    name: &'static str,
    threshold: u32,
    cooldown: Duration,
    state: Mutex<State>,
    metrics: Arc<Metrics>,
}

/// Leave to make one call; report how it went with [`Breaker::record`].
#[derive(Debug)]
#[must_use]
pub struct Admit(());

impl Breaker {
    pub fn new(name: &'static str, threshold: u32, cooldown: Duration, metrics: Arc<Metrics>) -> Breaker {
        metrics.checker.breaker(name, BreakerLabel::Closed);
        Breaker { name, threshold, cooldown, state: Mutex::new(State::Closed { failures: 0 }), metrics }
    }

    fn set(&self, state: &mut State, new: State) {
        *state = new;
        let label = match new {
            State::Closed { .. } => BreakerLabel::Closed,
            State::Open { .. } => BreakerLabel::Open,
            State::HalfOpen => BreakerLabel::HalfOpen,
        };
        self.metrics.checker.breaker(self.name, label);
    }

    /// `None` while open: do not call the checker.
    pub fn admit(&self) -> Option<Admit> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *s {
            State::Closed { .. } => Some(Admit(())),
            State::Open { until } if Instant::now() >= until => {
                self.set(&mut s, State::HalfOpen);
                Some(Admit(()))
            }
            State::Open { .. } | State::HalfOpen => None,
        }
    }

    /// Reports the admitted call. `ok` is "the checker answered" (a verdict or a malformed reply).
    pub fn record(&self, _admit: Admit, ok: bool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match (*s, ok) {
            (State::HalfOpen, true) => {
                tracing::warn!(checker = self.name, "checker recovered: tool I/O is guarded again");
                self.set(&mut s, State::Closed { failures: 0 });
            }
            (State::Closed { .. }, true) => *s = State::Closed { failures: 0 },
            (State::HalfOpen, false) => {
                self.set(&mut s, State::Open { until: Instant::now() + self.cooldown })
            }
            (State::Closed { failures }, false) if failures + 1 >= self.threshold => {
                tracing::error!(
                    checker = self.name,
                    failures = failures + 1,
                    "checker DOWN — tool I/O unguarded (fail-open rules pass calls unchecked, fail-closed rules refuse them) until it recovers"
                );
                self.set(&mut s, State::Open { until: Instant::now() + self.cooldown });
            }
            (State::Closed { failures }, false) => *s = State::Closed { failures: failures + 1 },
            // A call admitted before the breaker opened, landing late: the state already says it.
            (State::Open { .. }, _) => {}
        }
    }

    /// True while [`Breaker::admit`] would refuse: open with the cooldown still running, or a
    /// probe out. Lets a caller skip queueing for a checker known to be down.
    pub fn refusing(&self) -> bool {
        match *self.state.lock().unwrap_or_else(|p| p.into_inner()) {
            State::Closed { .. } => false,
            State::Open { until } => Instant::now() < until,
            State::HalfOpen => true,
        }
    }

    /// True while calls are being refused (open or probing).
    pub fn is_down(&self) -> bool {
        !matches!(*self.state.lock().unwrap_or_else(|p| p.into_inner()), State::Closed { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_after_n_failures_probes_after_cooldown_and_recovers() {
        let m = Arc::new(Metrics::new());
        let b = Breaker::new("openai", 3, Duration::from_secs(30), m.clone());
        for _ in 0..2 {
            b.record(b.admit().unwrap(), false);
        }
        b.record(b.admit().unwrap(), true);
        for _ in 0..3 {
            b.record(b.admit().unwrap(), false);
        }
        assert!(b.admit().is_none(), "open: no waiting on a dead checker");
        assert_eq!(m.checker.up.get(), 0);
        tokio::time::advance(Duration::from_secs(31)).await;
        let probe = b.admit().expect("half-open lets one probe through");
        assert!(b.admit().is_none(), "only one");
        b.record(probe, false);
        assert!(b.admit().is_none(), "a failed probe reopens");
        tokio::time::advance(Duration::from_secs(31)).await;
        b.record(b.admit().unwrap(), true);
        assert!(!b.is_down());
        assert_eq!(m.checker.up.get(), 1);
        let text = String::from_utf8(m.render()).unwrap();
        assert!(text.contains(r#"portcullis_breaker_state{checker="openai"} 0"#), "{text}");
    }
}
