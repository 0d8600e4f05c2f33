//! Layer 2: the checker model — a separate, tool-less judge of the data crossing the tool
//! boundary, before a call (exfiltration in the arguments) and after it (injection in the result).
//!
//! ```text
//!  Guardrails::pre / ::post ── rule for (tool, phase)? ── no ──▶ pass (no work)
//!        │ yes
//!        ▼
//!  content (args │ result text) ─▶ bounds ─▶ local detectors ─ finding ─▶ verdict
//!        │ clean, and a model is configured
//!        ▼
//!  cache (moka, single-flight) ─▶ breaker ─▶ concurrency limit ─▶ timeout ─▶ OpenAI-compatible call
//!        ▼
//!  Judgement (pass │ block │ sanitize │ advisory │ unguarded │ refuse-retryable)
//! ```
//!
//! Every value that crosses this module's boundary is typed: [`Mode`], [`FailureMode`],
//! [`verdict::Verdict`], [`Failure`]; metric labels come from their `as_str`.

pub mod breaker;
pub mod cache;
pub mod content;
pub mod detect;
pub mod guardrails;
pub mod local;
pub mod openai;
pub mod prompt;
pub mod rubric;
pub mod rules;
pub mod verdict;

pub use prompt::Phase;

/// What a guardrail rule does with an unsafe verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Pre: veto the call. Post: rewrite the result to `isError: true`.
    #[default]
    Block,
    /// Replace the content with the checker's rewrite; an unusable rewrite falls back to block.
    Sanitize,
    /// Pass byte-for-byte; log and count the finding.
    Advisory,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Block, Mode::Sanitize, Mode::Advisory];

    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "block" => Mode::Block,
            "sanitize" => Mode::Sanitize,
            "advisory" => Mode::Advisory,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Block => "block",
            Mode::Sanitize => "sanitize",
            Mode::Advisory => "advisory",
        }
    }
}

/// What happens to a call when no verdict could be had (checker down, timeout, malformed reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FailureMode {
    /// Pass it, counted in `portcullis_unguarded_total`.
    #[default]
    Open,
    /// Refuse it with a retryable reason that says it is not evidence of danger.
    Closed,
}

/// Why no verdict was had. A failure is never a finding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("the checker did not answer within {0:?}")]
    Timeout(std::time::Duration),
    #[error("the checker failed: {0}")]
    Error(String),
    #[error("the checker's reply was not a verdict: {0}")]
    Malformed(String),
    #[error("the checker is down (breaker open)")]
    BreakerOpen,
    #[error("the content is {0} bytes, over the checker's cap")]
    TooLarge(usize),
}

impl Failure {
    /// The `checker_requests_total{result}` / `unguarded_total{reason}` label.
    pub fn as_str(&self) -> &'static str {
        match self {
            Failure::Timeout(_) => "timeout",
            Failure::Error(_) => "error",
            Failure::Malformed(_) => "malformed",
            Failure::BreakerOpen => "breaker_open",
            Failure::TooLarge(_) => "too_large",
        }
    }
}
