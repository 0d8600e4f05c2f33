//! The flow index's (`crate::flows`) metrics: sink calls it judged, by what it found (label values from
//! [`Judged::as_str`]), and the fingerprints it holds.

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts, Registry};

/// What the flow check made of one sink call from a session that read something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// Private text was on its way to an unallowed destination: refused (or asked).
    Leak,
    /// Too large to scan within bounds: refused (or asked) as if it held a copy.
    Unscanned,
    /// The session's index overflowed or was evicted, nothing it holds was found: the model
    /// rule judges the call (or, with none, the flow mode refuses it).
    Overflowed,
}

impl Judged {
    pub const ALL: [Judged; 3] = [Judged::Leak, Judged::Unscanned, Judged::Overflowed];

    pub fn as_str(self) -> &'static str {
        match self {
            Judged::Leak => "leak",
            Judged::Unscanned => "unscanned",
            Judged::Overflowed => "overflowed",
        }
    }
}

#[derive(Debug, Clone)]
pub struct FlowMetrics {
    judged: [IntCounter; 3],
    /// Fingerprints held over every session.
    pub held: IntGauge,
}

impl FlowMetrics {
    pub fn register(registry: &Registry) -> FlowMetrics {
        let vec = IntCounterVec::new(
            Opts::new(
                "flow_checks_total",
                "Sink calls from sessions that read private text, by what the flow index found (leak, unscanned, overflowed)",
            ),
            &["result"],
        )
        .expect("static metric");
        let held = IntGauge::new("flow_fingerprints", "Fingerprints the flow index holds over every session")
            .expect("static metric");
        registry.register(Box::new(vec.clone())).expect("registered once");
        registry.register(Box::new(held.clone())).expect("registered once");
        let judged = Judged::ALL.map(|j| vec.with_label_values(&[j.as_str()]));
        FlowMetrics { judged, held }
    }

    pub fn judged(&self, j: Judged) {
        self.judged[j as usize].inc();
    }
}
