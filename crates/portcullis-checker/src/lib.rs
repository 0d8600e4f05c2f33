//! Layer 2: the checker model — a separate, tool-less judge of the data crossing the tool
//! boundary, before a call (exfiltration in the arguments) and after it (injection in the result).
//!
//! ```text
//!  Guardrails::pre / ::post ── rule for (tool, phase)? ── no ──▶ pass (no work)
//!        │ yes
//!        ▼
//!  content (all a client shows) ─▶ local detectors, over all of it ─ finding ─▶ verdict
//!        │ clean, and a model is configured
//!        ▼
//!  windows of max_content_bytes ─▶ per window: cache (moka, single-flight) ─▶ fair-share slot
//!        (bounded wait: load, not failure) ─▶ breaker ─▶ timeout ─▶ OpenAI-compatible call
//!        ▼
//!  Judgement (pass │ block │ sanitize │ advisory │ unguarded │ refuse-retryable)
//! ```
//!
//! Every value that crosses this module's boundary is typed: [`Mode`], [`FailureMode`],
//! [`verdict::Verdict`], [`Failure`]; metric labels come from their `as_str`.

#![forbid(unsafe_code)]
// clippy.toml's disallowed methods are for the product; tests may set variables and sleep.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod cache;
pub mod content;
pub mod context;
pub mod detect;
pub mod fair;
pub mod fit;
pub mod local;
pub mod openai;
pub mod prompt;
pub mod rubric;
pub mod rules;
pub mod verdict;
pub mod window;

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
///
/// Two kinds, and the difference is what keeps anyone outside from switching the checker off:
/// a *checker* failure ([`Failure::Timeout`], [`Failure::Error`]) says the model server is not
/// answering and counts toward the breaker; a *content* failure (too long for the model, refused
/// by its filter, answered with garbage, more than the model can be shown) and *load*
/// ([`Failure::Overloaded`]) come from a checker that is up, so they never count — content
/// crafted to fail would otherwise open the breaker for everyone.
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
    /// More content than the model is shown (`max_content_bytes` × the window count): the
    /// local detectors read all of it, the model only its windows.
    #[error("the content is {0} bytes, more than the checker model is shown")]
    TooLarge(usize),
    /// The model server said the content does not fit its context window.
    #[error("the content does not fit the checker model's context: {0}")]
    ContextLength(String),
    /// The model (or its server's content filter) refused to judge the content.
    #[error("the checker model refused the content: {0}")]
    Refused(String),
    /// No checker slot came free within `queue_timeout`: load, not a checker failure.
    #[error("no checker capacity within {0:?} (overloaded)")]
    Overloaded(std::time::Duration),
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
            Failure::ContextLength(_) => "context_length",
            Failure::Refused(_) => "refused",
            Failure::Overloaded(_) => "overloaded",
        }
    }

    /// True only for failures that say the checker itself is not answering: what the breaker
    /// counts. Everything else came from a checker that answered (or was never asked).
    pub fn checker_down(&self) -> bool {
        matches!(self, Failure::Timeout(_) | Failure::Error(_))
    }

    /// True when the checker answered but not with a verdict: garbage, or a refusal to judge.
    /// Decided by `on_malformed`, not by the rule's checker-down policy.
    pub fn unjudged_answer(&self) -> bool {
        matches!(self, Failure::Malformed(_) | Failure::Refused(_))
    }
}
