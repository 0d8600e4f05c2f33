//! The metrics registry is where the gate's `Counted` calls are
//! counted: `portcullis_tool_calls_total{upstream,tool,outcome}`.

use crate::outcome::{CallOutcome, Counter};

use super::Metrics;

impl Counter for Metrics {
    fn count(&self, upstream: &str, tool: &str, outcome: CallOutcome) {
        self.tool_call(upstream, tool, outcome);
    }
}
