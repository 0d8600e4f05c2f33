//! The label a finished tool call is counted with, and where it is counted: a leaf that both the
//! gate (which settles outcomes) and telemetry (which counts them) import, so neither imports the
//! other's module for it. The gate re-exports both as part of its glossary.

/// The label a finished call carries in metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// Reached the upstream; the result passed unchanged.
    Forwarded,
    /// Reached the upstream; the result was rewritten.
    Rewritten,
    /// Refused before the upstream.
    Denied,
    /// Layer 1 said ask and no human could be asked: refused before the upstream.
    AskRefused,
    /// Refused as malformed or unsafe to parse (before the upstream).
    Invalid,
    /// The checker judged it unsafe: refused before the upstream, or its result withheld.
    Blocked,
    /// No verdict could be had and the guardrail rule fails closed: refused (retryable).
    CheckerDown,
    /// The upstream failed, timed out, or the stream ended without a result.
    Failed,
    /// A `limits.per_agent` bound was reached: refused before the upstream (retry later).
    RateLimited,
}

impl CallOutcome {
    pub const ALL: [CallOutcome; 9] = [
        CallOutcome::Forwarded,
        CallOutcome::Rewritten,
        CallOutcome::Denied,
        CallOutcome::AskRefused,
        CallOutcome::Invalid,
        CallOutcome::Blocked,
        CallOutcome::CheckerDown,
        CallOutcome::Failed,
        CallOutcome::RateLimited,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Forwarded => "forwarded",
            CallOutcome::Rewritten => "rewritten",
            CallOutcome::Denied => "denied",
            CallOutcome::AskRefused => "ask_refused",
            CallOutcome::Invalid => "invalid",
            CallOutcome::Blocked => "blocked",
            CallOutcome::CheckerDown => "checker_down",
            CallOutcome::Failed => "failed",
            CallOutcome::RateLimited => "rate_limited",
        }
    }
}

/// What an audit line of a call records: the call's outcome in the vocabulary above, or that a
/// human was asked (how the ask ended is recorded by the approvals table). Metrics, audit lines
/// and the hook's audit agree because each takes its label from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Outcome(CallOutcome),
    Asked,
}

impl Recorded {
    pub fn as_str(self) -> &'static str {
        match self {
            Recorded::Outcome(o) => o.as_str(),
            Recorded::Asked => "ask",
        }
    }
}

impl From<CallOutcome> for Recorded {
    fn from(o: CallOutcome) -> Self {
        Recorded::Outcome(o)
    }
}

/// Where outcomes are counted (the metrics registry). A trait so the gate settles outcomes
/// without knowing the registry.
pub trait Counter: Send + Sync + std::fmt::Debug {
    /// `agent`: the configured agent that called (the root of a delegated chain), if any.
    fn count(&self, upstream: &str, tool: &str, agent: Option<&str>, outcome: CallOutcome);
}
