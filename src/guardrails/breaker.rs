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
//!
//! The streak is keyed by who is calling. Content can still make a model slow (a long prompt on
//! a small server) and so cause timeouts; if one caller's streak could open the breaker, that
//! caller could switch the checker off for everyone. So a streak opens the breaker for everyone
//! only when at least two callers (keys) failed in it, or the checker was unreachable (refused
//! connections, HTTP errors: nothing content causes); a streak of one caller's timeouts opens it
//! for that caller alone (its calls go straight to the failure policy for the cooldown, then one
//! probes), and everyone else is still judged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::telemetry::checker_metrics::BreakerLabel;
use crate::telemetry::Metrics;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Closed {
        failures: u32,
        /// The first caller in the streak, and whether another one failed too.
        first: Option<Arc<str>>,
        several: bool,
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
    /// Callers whose own streak opened the breaker for them alone, until when.
    benched: Mutex<HashMap<Arc<str>, Instant>>,
    metrics: Arc<Metrics>,
}

const CLOSED: State = State::Closed { failures: 0, first: None, several: false };

/// How an admitted call went, as the breaker counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The checker answered: a verdict, a malformed reply, a content failure.
    Answered,
    /// No connection, or an HTTP error: nothing the content can cause.
    Unreachable,
    /// No answer in time: a dead checker, or content slow enough to time the model out.
    TimedOut,
}

/// Leave to make one call; report how it went with [`Breaker::record`].
#[derive(Debug)]
#[must_use]
pub struct Admit(());

impl Breaker {
    pub fn new(name: &'static str, threshold: u32, cooldown: Duration, metrics: Arc<Metrics>) -> Breaker {
        metrics.checker.breaker(name, BreakerLabel::Closed);
        Breaker { name, threshold, cooldown, state: Mutex::new(CLOSED), benched: Mutex::default(), metrics }
    }

    fn set(&self, state: &mut State, new: State) {
        let label = match new {
            State::Closed { .. } => BreakerLabel::Closed,
            State::Open { .. } => BreakerLabel::Open,
            State::HalfOpen => BreakerLabel::HalfOpen,
        };
        *state = new;
        self.metrics.checker.breaker(self.name, label);
    }

    /// True while `key`'s own streak keeps it off the checker.
    fn benched(&self, key: &str) -> bool {
        let mut b = self.benched.lock().unwrap_or_else(|p| p.into_inner());
        match b.get(key) {
            Some(until) if Instant::now() < *until => true,
            Some(_) => {
                b.remove(key);
                false
            }
            None => false,
        }
    }

    /// `None` while open (for everyone, or for `key`): do not call the checker.
    pub fn admit(&self, key: &str) -> Option<Admit> {
        if self.benched(key) {
            return None;
        }
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

    /// Reports the admitted call made for `key`.
    pub fn record(&self, _admit: Admit, key: &str, outcome: Attempt) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let until = Instant::now() + self.cooldown;
        let ok = outcome == Attempt::Answered;
        match (s.clone(), ok) {
            (State::HalfOpen, true) => {
                tracing::warn!(checker = self.name, "checker recovered: tool I/O is guarded again");
                self.set(&mut s, CLOSED);
                drop(s);
                self.benched.lock().unwrap_or_else(|p| p.into_inner()).clear();
            }
            (State::Closed { .. }, true) => {
                *s = CLOSED;
                drop(s);
                self.benched.lock().unwrap_or_else(|p| p.into_inner()).clear();
            }
            (State::HalfOpen, false) => self.set(&mut s, State::Open { until }),
            (State::Closed { failures, first, several }, false) => {
                let failures = failures + 1;
                // An unreachable checker is the checker's fault whoever asked; a timeout may
                // be the caller's content, so it takes a second caller to be believed.
                let several =
                    several || outcome == Attempt::Unreachable || first.as_deref().is_some_and(|f| f != key);
                let first = first.or_else(|| Some(key.into()));
                if failures < self.threshold {
                    *s = State::Closed { failures, first, several };
                } else if several {
                    tracing::error!(
                        checker = self.name,
                        failures,
                        "checker DOWN — tool I/O unguarded (fail-open rules pass calls unchecked, fail-closed rules refuse them) until it recovers"
                    );
                    self.set(&mut s, State::Open { until });
                } else {
                    // One caller's streak: it may be that caller's content (a prompt slow enough
                    // to time out), so only that caller stops waiting on the checker.
                    *s = State::Closed { failures, first, several };
                    drop(s);
                    tracing::warn!(
                        checker = self.name,
                        failures,
                        "checker failing for one caller only: that caller's checks go to the failure policy for the cooldown"
                    );
                    let mut b = self.benched.lock().unwrap_or_else(|p| p.into_inner());
                    let now = Instant::now();
                    b.retain(|_, t| *t > now);
                    b.insert(key.into(), until);
                }
            }
            // A call admitted before the breaker opened, landing late: the state already says it.
            (State::Open { .. }, _) => {}
        }
    }

    /// True while [`Breaker::admit`] would refuse `key`: open with the cooldown still running, or
    /// a probe out, or `key` benched. Lets a caller skip queueing for a checker known to be down.
    pub fn refusing(&self, key: &str) -> bool {
        if self.benched(key) {
            return true;
        }
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
    use Attempt::{Answered, TimedOut, Unreachable};

    #[tokio::test(start_paused = true)]
    async fn opens_after_n_failures_probes_after_cooldown_and_recovers() {
        let m = Arc::new(Metrics::new());
        let b = Breaker::new("openai", 3, Duration::from_secs(30), m.clone());
        for _ in 0..2 {
            b.record(b.admit("a").unwrap(), "a", TimedOut);
        }
        b.record(b.admit("a").unwrap(), "a", Answered);
        for k in ["a", "b", "a"] {
            b.record(b.admit(k).unwrap(), k, TimedOut);
        }
        assert!(b.admit("c").is_none(), "open: no waiting on a dead checker");
        assert_eq!(m.checker.up.get(), 0);
        tokio::time::advance(Duration::from_secs(31)).await;
        let probe = b.admit("a").expect("half-open lets one probe through");
        assert!(b.admit("b").is_none(), "only one");
        b.record(probe, "a", Unreachable);
        assert!(b.admit("a").is_none(), "a failed probe reopens");
        tokio::time::advance(Duration::from_secs(31)).await;
        b.record(b.admit("a").unwrap(), "a", Answered);
        assert!(!b.is_down());
        assert_eq!(m.checker.up.get(), 1);
        let text = String::from_utf8(m.render()).unwrap();
        assert!(text.contains(r#"portcullis_breaker_state{checker="openai"} 0"#), "{text}");
    }

    #[tokio::test(start_paused = true)]
    async fn one_callers_streak_benches_that_caller_and_nobody_else() {
        let m = Arc::new(Metrics::new());
        let b = Breaker::new("openai", 3, Duration::from_secs(30), m.clone());
        for _ in 0..5 {
            if let Some(admit) = b.admit("flood") {
                b.record(admit, "flood", TimedOut);
            }
        }
        assert!(b.admit("flood").is_none() && b.refusing("flood"), "the caller's own checks stop waiting");
        assert!(!b.is_down() && !b.refusing("victim"), "everyone else is still judged");
        assert_eq!(m.checker.up.get(), 1);
        let victim = b.admit("victim").expect("judged");
        b.record(victim, "victim", TimedOut);
        assert!(b.is_down(), "a second caller failing too: the checker is down for everyone");
        tokio::time::advance(Duration::from_secs(31)).await;
        b.record(b.admit("victim").unwrap(), "victim", Answered);
        assert!(!b.is_down() && b.admit("flood").is_some(), "recovery clears the bench");
    }

    #[tokio::test(start_paused = true)]
    async fn an_unreachable_checker_is_down_for_everyone_even_with_one_caller() {
        let b = Breaker::new("openai", 2, Duration::from_secs(30), Arc::new(Metrics::new()));
        b.record(b.admit("solo").unwrap(), "solo", TimedOut);
        b.record(b.admit("solo").unwrap(), "solo", Unreachable);
        assert!(b.is_down(), "a refused connection is not the caller's doing");
    }
}
