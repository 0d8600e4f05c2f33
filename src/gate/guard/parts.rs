//! A guard's parts, as the transports, the tool-list screen and the admin listener read them.

use std::sync::Arc;

use super::Guard;
use crate::guardrails::Guardrails;
use crate::telemetry::Metrics;

impl Guard {
    /// The rubrics directory the policy was loaded with, if any.
    pub fn rubrics_dir(&self) -> Option<&std::path::Path> {
        self.guardrails.as_ref().and_then(|g| g.rubrics_dir())
    }

    pub fn guardrails(&self) -> Option<&Arc<Guardrails>> {
        self.guardrails.as_ref()
    }

    /// The pinned tool definitions, if a lock file is configured.
    pub fn pins(&self) -> Option<&crate::config::pins::Pins> {
        self.pins.as_deref()
    }

    /// Listed tool definitions: what `tools/list` screening withheld ([`crate::tooldefs`]).
    pub fn tool_defs(&self) -> &crate::tooldefs::ToolDefs {
        &self.tool_defs
    }

    /// What of this policy the tool-definition screen reads.
    pub fn screening(&self) -> crate::tooldefs::Policy<'_> {
        crate::tooldefs::Policy {
            pins: self.pins.as_deref(),
            guardrails: self.guardrails.as_ref(),
            kinds: self.engine.kinds(),
            metrics: &self.metrics,
        }
    }

    /// True when `tools/list` results must be held and screened.
    pub fn screens_tools(&self) -> bool {
        self.screening().screens()
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}
