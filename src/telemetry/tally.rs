//! The metrics registry is where the gate's [`Counted`](crate::gate::tally::Counted) calls are
//! counted: `portcullis_tool_calls_total{upstream,tool,outcome}`.

use crate::gate::tally::Counter;
use crate::gate::CallOutcome;

use super::Metrics;

impl Counter for Metrics {
    fn count(&self, upstream: &str, tool: &str, outcome: CallOutcome) {
        self.tool_call(upstream, tool, outcome);
    }
}
