//! The two interception points: before a call reaches its server (`pre`) and before its result
//! reaches the agent (`post`). The gate is transport-neutral: every call, whatever carried it,
//! goes through one door ([`pre::judge`]); a JSON-RPC payload comes in as bytes plus a
//! [`pre::Context`] — session, caller, era, what the client can do — and leaves as a plan; its
//! answer comes back as bytes and leaves as a release. The transports (HTTP layers, the stdio
//! relay, the hook) only carry plans out, rendering refusals in the words of [`crate::says`].
//!
//! The glossary — every decision is one of these values, named once:
//!
//! | type | what it says | made by |
//! |---|---|---|
//! | [`Outcome`] | Layer 1's verdict on one call: forward, refuse ([`Denial`]), or check with Layer 2 | [`Guard::pre`] |
//! | [`pre::judge::Verdict`] | the door's verdict on one call: forward, refuse, or ask a human (`via`) | [`pre::judge::judge`] |
//! | [`pre::judge::Decided`] | what a call's pre-call decision came to, as recorded (breaker, audit) | [`pre::judge::decided`] |
//! | [`pre::Plan`] | what to do with one JSON-RPC payload: forward (watching [`post::Watched`]), rewrite, refuse, ask ([`pre::Held`]) | [`pre::decide`] |
//! | [`pre::typed::CallPlan`] | the same for a typed call: forward, refuse, or ask an operator ([`pre::typed::Asked`]) | [`pre::typed::decide_typed`] |
//! | [`PostOutcome`] | what happened to one result: pass, rewritten, blocked, unavailable | [`Guard::post`], Layer 2 |
//! | [`post::Release`] | what of one upstream message may reach the agent | [`post::inspect`] |
//! | [`CallOutcome`] | the `outcome` label a finished call is counted with (and audited: [`crate::outcome::Recorded`]) | [`tally::Counted`], dropped |
//! | [`answer::refusal`] | a human's answer as the words the agent reads | every transport's asks |

pub mod answer;
mod checks;
pub mod guard;
pub mod post;
pub mod pre;
pub mod tally;
pub mod tool_name;

pub use guard::Guard;

/// What happens to a call before it runs.
#[derive(Debug)]
pub enum Outcome {
    /// Send it on unchanged.
    Forward,
    /// Refuse it; the upstream never sees it.
    Refuse(Denial),
    /// Layer 1 allows it; Layer 2 must judge its arguments first ([`guard::PreCheck::run`]).
    Check(Box<guard::PreCheck>),
}

/// Why a call was refused, in words the agent (and the model behind it) can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub reason: String,
    /// The rule that decided it.
    pub rule: String,
    /// The metrics label: denied, ask_refused (headless), blocked (checker), checker_down.
    pub outcome: CallOutcome,
    /// Set when a human may overrule the refusal (a Layer 1 ask, a checker block before the
    /// call); transports that cannot ask simply refuse.
    pub ask: Option<Box<crate::approval::Ask>>,
}

/// What happened to a result on its way back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostOutcome {
    Pass,
    /// Redacted or sanitized in place.
    Rewritten {
        replacements: usize,
    },
    /// Replaced by an `isError` result (a checker block).
    Blocked,
    /// Replaced by an `isError` result: no verdict, and the rule fails closed.
    Unavailable,
}

pub use crate::outcome::CallOutcome;

impl From<PostOutcome> for CallOutcome {
    fn from(p: PostOutcome) -> Self {
        match p {
            PostOutcome::Pass => CallOutcome::Forwarded,
            PostOutcome::Rewritten { .. } => CallOutcome::Rewritten,
            PostOutcome::Blocked => CallOutcome::Blocked,
            PostOutcome::Unavailable => CallOutcome::CheckerDown,
        }
    }
}
