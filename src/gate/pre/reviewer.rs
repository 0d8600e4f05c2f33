//! Which asks the headless ask reviewer may answer, and what its answer makes of the call: a
//! [`Verdict`] like any other, so every transport renders it as it renders a human's.
//!
//! Only the built-in floor's asks reach it — an ask Layer 1 names in [`Scope::Builtin`](crate::rules::Scope::Builtin) (not
//! proven read-only, opaque shell, a secret read) and the jail's escape ask — never an operator's
//! `ask` rule, a checker's block or a flagged session. The engine names a configured rule over
//! the floor whenever both ask about one call ([`crate::rules`]), so an operator's ask hidden
//! behind a floor ask in the same line is still configured here.

use super::verdict::Verdict;
use super::Context;
use crate::approval::reviewer::{Frame, Model, Outcome, EMBEDDED_RUBRIC, RUBRIC};
use crate::approval::{Ask, Source};
use crate::call::{ToolCall, Transport};
use crate::gate::{Denial, Guard};
use crate::says::{answer, Not, Said};

/// Whether the reviewer may answer `ask`, which Layer 1 refused under `rule`.
pub fn reviewable(ask: &Ask, rule: &str) -> bool {
    match ask.source {
        Source::Floor => true,
        // The escape ask is decided in the config's scope so no waiver answers it; an escape over
        // a configured ask names that ask's rule instead ([`crate::rules::escape::over`]).
        Source::Configured => rule == crate::rules::escape::RULE,
        Source::Checker | Source::Flagged => false,
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
    // A streak is the session's; without one, the caller's; without either, everyone's.
    let key = match (cx.session, cx.principal) {
        (Some(s), _) => format!("session:{s}"),
        (None, Some(p)) => format!("caller:{p}"),
        (None, None) => "anonymous".to_owned(),
    };
    let frame = Frame { task: call.task.as_deref(), user_task: call.user_task.as_deref() };
    let why = match reviewer.review(ask, &key, model, frame).await {
        Outcome::Allow => return Verdict::Forward(None, Default::default()),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(source: Source) -> Ask {
        Ask {
            tool: "mcp__sh__run".into(),
            args: "{}".into(),
            reason: "r".into(),
            source,
            session: None,
            agent: None,
            definition: 0,
        }
    }

    #[test]
    fn only_the_floor_and_a_bare_escape_are_reviewable() {
        let escape = crate::rules::escape::RULE;
        let table = [
            (Source::Floor, "shell: opaque", true),
            (Source::Floor, "floor: mutating", true),
            (Source::Configured, escape, true),
            (Source::Configured, "Shell(git push:*)", false),
            (Source::Configured, "Write(/etc/**)", false),
            (Source::Checker, "guardrail", false),
            (Source::Flagged, "flagged session", false),
            (Source::Flagged, escape, false),
            (Source::Checker, escape, false),
        ];
        for (source, rule, want) in table {
            assert_eq!(reviewable(&ask(source), rule), want, "{source:?} {rule}");
        }
    }
}
