//! Which asks the headless ask reviewer may answer, and what its answer makes of the call: a
//! [`Verdict`] like any other, so every transport renders it as it renders a human's.
//!
//! Only the built-in floor's asks reach it — an ask every part of which the floor made (not
//! proven read-only, opaque shell, a secret read) or the jail's escape row — never an ask an
//! operator's rule contributed to (an `ask` rule, `egress: ask`, `flows: {mode: ask}`), a
//! checker's block or a flagged session. Which rule a refusal *names* does not decide it: an
//! operator's ask tied with a floor or escape ask may be named as theirs, and is still the
//! operator's ([`crate::rules::Origin`], carried on the ask as its [`Source`]).

use super::verdict::Verdict;
use super::Context;
use crate::approval::reviewer::{Frame, Keys, Model, Outcome, EMBEDDED_RUBRIC, RUBRIC};
use crate::approval::{Ask, Source};
use crate::call::{ToolCall, Transport};
use crate::gate::{Denial, Guard};
use crate::says::{answer, Not, Said};

/// Whether the reviewer may answer `ask`: only when every ask that went into it was the floor's
/// or the jail escape's.
pub fn reviewable(ask: &Ask) -> bool {
    match ask.source {
        Source::Floor | Source::Escape => true,
        Source::Unread | Source::Configured | Source::Checker | Source::Flagged => false,
    }
}

/// Puts `ask` to the reviewer, which is on; `d` is the refusal that stands unless it allows.
pub(super) async fn reviewed(
    d: Denial,
    ask: &Ask,
    call: &ToolCall,
    cx: &Context<'_>,
    guard: &Guard,
    reviewer: &crate::approval::reviewer::Reviewer,
) -> Verdict {
    let model = guard
        .guardrails()
        .and_then(|g| g.model_with_rubric(RUBRIC, EMBEDDED_RUBRIC))
        .map(|(client, rubric)| Model { client, rubric });
    // A streak is kept under the session and under the caller (the budget key: an agent, else
    // the peer address), so opening sessions does not start a caller afresh.
    let keys = Keys::of(cx.session, call.caller.as_deref());
    let frame = Frame { task: call.task.as_deref(), user_task: call.user_words() };
    let why = match reviewer.review(ask, &keys, model, frame).await {
        // A yes is a Layer 1 allow: the operator's guardrail rule still checks the call.
        Outcome::Allow => return allowed(call, guard).await,
        Outcome::Deny => answer::REVIEWER_DENIED,
        Outcome::Tripped => answer::REVIEWER_TRIPPED,
        Outcome::Malformed
        | Outcome::Error
        | Outcome::Timeout
        | Outcome::Overloaded
        | Outcome::Unavailable => answer::REVIEWER_FAILED,
    };
    let not = match call.transport {
        Transport::Hook => Not::Run,
        _ => Not::Sent,
    };
    let reason = Said::Reviewed { tool: &call.qualified, reason: &ask.reason, answer: why, not }.to_string();
    Verdict::Refuse(Denial { reason, ..d })
}

/// What the reviewer's allow of `call` comes to: forwarded, unless the operator's guardrail
/// check that covers it refuses (then no one else is asked: it is headless, and a checker's
/// block is not the reviewer's to answer).
async fn allowed(call: &ToolCall, guard: &Guard) -> Verdict {
    let outcome = match guard.after_review(call) {
        crate::gate::Outcome::Check(check) => check.run().await,
        other => other,
    };
    let not = match call.transport {
        Transport::Hook => Not::Run,
        _ => Not::Sent,
    };
    match outcome {
        crate::gate::Outcome::Forward => Verdict::Forward(None, Default::default()),
        crate::gate::Outcome::Refuse(d) => Verdict::Refuse(Denial { ask: None, ..d }),
        // A check never asks for another; were it to, refusing is the safe reading.
        crate::gate::Outcome::Check(_) => Verdict::Refuse(Denial {
            reason: Said::Unfinished { tool: &call.qualified, not }.to_string(),
            rule: "guardrail".into(),
            outcome: crate::gate::CallOutcome::CheckerDown,
            ask: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(source: Source, reason: &str) -> Ask {
        Ask {
            tool: "mcp__sh__run".into(),
            args: "{}".into(),
            reason: reason.into(),
            source,
            session: None,
            agent: None,
            definition: 0,
        }
    }

    #[test]
    fn only_the_floor_and_a_bare_escape_are_reviewable_whatever_rule_is_named() {
        let escape = crate::rules::escape::RULE;
        let table = [
            (Source::Floor, true),
            (Source::Escape, true),
            (Source::Configured, false),
            (Source::Unread, false),
            (Source::Checker, false),
            (Source::Flagged, false),
        ];
        for (source, want) in table {
            assert_eq!(reviewable(&ask(source, escape)), want, "{source:?}");
            assert_eq!(reviewable(&ask(source, "shell: opaque")), want, "{source:?}");
        }
    }
}
