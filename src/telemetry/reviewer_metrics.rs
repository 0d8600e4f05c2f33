//! The headless ask reviewer's metrics: `ask_reviewer_total{outcome}`, one count per ask it
//! settled (labels from [`crate::approval::reviewer::Outcome`], every one exported from the start).

use prometheus::{IntCounterVec, Opts, Registry};

use crate::approval::reviewer::Outcome;

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
