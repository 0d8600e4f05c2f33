//! The metrics registry is where the gate's `Counted` calls are
//! counted: `portcullis_tool_calls_total{upstream,tool,outcome}`, and per configured agent
//! `portcullis_agent_calls_total{agent,outcome}`.

use crate::outcome::{CallOutcome, Counter};

use super::Metrics;

impl Counter for Metrics {
    fn count(&self, upstream: &str, tool: &str, agent: Option<&str>, outcome: CallOutcome) {
        self.tool_call(upstream, tool, outcome);
        if let Some(agent) = agent {
            self.agent_call(agent, outcome);
        }
    }
}
