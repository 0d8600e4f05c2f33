//! Which tier of the pipeline settled a check, and how long the model took: what `portcullis
//! eval` counts per tier and times.

use std::time::Duration;

/// The stage whose answer a check's verdict is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// The local detectors: they found something, or no model was configured or asked (content
    /// under `min_content_bytes`).
    Local,
    /// The model answered at least one window.
    Model,
    /// Every window's verdict came from the verdict cache (this process's or the shared tier).
    Cache,
    /// No verdict: the model failed, timed out, was shed or its breaker was open.
    Failed,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Local => "local",
            Tier::Model => "model",
            Tier::Cache => "cache",
            Tier::Failed => "failed",
        }
    }
}

/// How a check was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    pub tier: Tier,
    /// Wall time of the model stage (every window, waiting for a slot included), when the model
    /// was asked at all; `None` when the detectors or the cache answered.
    pub model_latency: Option<Duration>,
}

impl Decided {
    /// Decided by the local detectors, the model never asked.
    pub const LOCAL: Decided = Decided { tier: Tier::Local, model_latency: None };
}
