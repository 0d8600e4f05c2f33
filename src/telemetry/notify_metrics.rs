//! The approval announcements' metrics: `notify_total{outcome}`, one count per delivery that
//! ended (labels from [`Outcome`], every one exported from the start).

use prometheus::{IntCounterVec, Opts, Registry};

#[derive(Debug)]
pub struct NotifyMetrics {
    sent: IntCounterVec,
}

impl NotifyMetrics {
    pub fn register(registry: &Registry) -> NotifyMetrics {
        let sent = IntCounterVec::new(
            Opts::new(
                "notify_total",
                "Announcements of parked asks (approvals.notify), by outcome (delivered, retried, failed, dropped)",
            ),
            &["outcome"],
        )
        .expect("static metric");
        registry.register(Box::new(sent.clone())).expect("registered once");
        for o in Outcome::ALL {
            sent.with_label_values(&[o.as_str()]);
        }
        NotifyMetrics { sent }
    }

    /// Counts one delivery outcome.
    pub fn count(&self, outcome: Outcome) {
        self.sent.with_label_values(&[outcome.as_str()]).inc();
    }
}

/// What became of one announcement to one target: the `notify_total{outcome}` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver answered 2xx.
    Delivered,
    /// One attempt failed and another follows (counted per retry).
    Retried,
    /// Every attempt failed: the announcement is given up.
    Failed,
    /// The target's queue was full: never sent.
    Dropped,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [Outcome::Delivered, Outcome::Retried, Outcome::Failed, Outcome::Dropped];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Retried => "retried",
            Outcome::Failed => "failed",
            Outcome::Dropped => "dropped",
        }
    }
}
