//! The headless ask reviewer's metrics: `ask_reviewer_total{outcome}`, one count per ask it
//! settled (labels from [`Outcome`], every one exported from the start).

use prometheus::{IntCounterVec, Opts, Registry};

#[derive(Debug)]
pub struct ReviewerMetrics {
    settled: IntCounterVec,
}

impl ReviewerMetrics {
    pub fn register(registry: &Registry) -> ReviewerMetrics {
        let settled = IntCounterVec::new(
            Opts::new(
                "ask_reviewer_total",
                "Floor asks the headless ask reviewer settled, by outcome (allow, deny, malformed, error, timeout, overloaded, unavailable, tripped)",
            ),
            &["outcome"],
        )
        .expect("static metric");
        registry.register(Box::new(settled.clone())).expect("registered once");
        for o in Outcome::ALL {
            settled.with_label_values(&[o.as_str()]);
        }
        ReviewerMetrics { settled }
    }

    /// Counts one ask the reviewer settled.
    pub fn settled(&self, outcome: Outcome) {
        self.settled.with_label_values(&[outcome.as_str()]).inc();
    }
}

/// How one review ended: the `ask_reviewer_total{outcome}` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A well-formed `safe` verdict: this one call goes on.
    Allow,
    /// A well-formed `unsafe` verdict.
    Deny,
    /// An answer that is not a verdict (or a refusal to judge).
    Malformed,
    /// The model server failed (a 5xx, no connection, a reply that is not a completion).
    Error,
    Timeout,
    /// No review slot came free in time.
    Overloaded,
    /// No checker model is configured in the policy in force (a reload removed it).
    Unavailable,
    /// The session's breaker is open: not reviewed.
    Tripped,
}

impl Outcome {
    pub const ALL: [Outcome; 8] = [
        Outcome::Allow,
        Outcome::Deny,
        Outcome::Malformed,
        Outcome::Error,
        Outcome::Timeout,
        Outcome::Overloaded,
        Outcome::Unavailable,
        Outcome::Tripped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Deny => "deny",
            Outcome::Malformed => "malformed",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
            Outcome::Overloaded => "overloaded",
            Outcome::Unavailable => "unavailable",
            Outcome::Tripped => "tripped",
        }
    }
}
