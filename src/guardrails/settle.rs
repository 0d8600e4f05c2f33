//! Settling a verdict (or its absence) into what the guardrail rule says, counted and logged.

use super::{Guardrails, Source};
use crate::checker::rubric::Rubric;
use crate::checker::rules::GuardRule;
use crate::checker::verdict::Verdict;
use crate::checker::{Failure, FailureMode, Mode, Phase};
use crate::telemetry::checker_metrics::CheckLabel;

pub(super) enum Settled {
    Pass,
    Unsafe { reason: String, sanitized: Option<String>, source: Source },
    Unavailable(String),
}

/// A checker's reason, as shown to the agent: it comes from a model that read hostile content,
/// so it is cut short and stripped of control characters.
pub(super) fn tame(reason: &str) -> String {
    let mut out: String = reason.chars().filter(|c| !c.is_control()).take(240).collect();
    if out.len() < reason.len() && reason.chars().count() > 240 {
        out.push('…');
    }
    out
}

impl Guardrails {
    /// Turns a verdict (or its absence) into what the rule says, counting and logging it.
    pub(super) fn settle(
        &self,
        phase: Phase,
        rule: &GuardRule,
        tool: &str,
        rubric: &Rubric,
        result: Result<(Verdict, Source), Failure>,
    ) -> (Settled, CheckLabel) {
        let m = &self.metrics.checker;
        match result {
            Ok((Verdict::Safe, _)) => {
                m.check(phase, &rule.label, rule.mode, rubric, CheckLabel::Safe);
                (Settled::Pass, CheckLabel::Safe)
            }
            Ok((Verdict::Unsafe { reason, sanitized }, source)) => {
                m.check(phase, &rule.label, rule.mode, rubric, CheckLabel::Unsafe);
                let reason = tame(&reason);
                tracing::warn!(
                    phase = phase.as_str(), tool, rule = %rule.label, mode = rule.mode.as_str(),
                    rubric = %rubric.name, rubric_version = %rubric.version, %reason,
                    "guardrail finding"
                );
                let settled = match rule.mode {
                    Mode::Advisory => Settled::Pass,
                    _ => Settled::Unsafe { reason, sanitized, source },
                };
                (settled, CheckLabel::Unsafe)
            }
            Err(failure) => {
                m.check(phase, &rule.label, rule.mode, rubric, CheckLabel::Failed);
                let rule_closed = rule.failure_mode(self.on_checker_down) == FailureMode::Closed;
                // A checker that answered with garbage (or refused to judge) may have been made
                // to by the content: that is not a pass under a rule that blocks.
                let malformed_closed = failure.unjudged_answer() && self.on_malformed == FailureMode::Closed;
                // An advisory rule never refuses, so it never fails closed either.
                let closed = rule.mode != Mode::Advisory && (rule_closed || malformed_closed);
                let settled = if closed {
                    let why = match rule_closed {
                        true => format!("guardrail rule {} fails closed", rule.label),
                        false => "a checker answer that is not a verdict is not a pass (guardrails.on_malformed: closed)".into(),
                    };
                    Settled::Unavailable(
                        crate::says::Said::Unchecked { tool, failure: &failure.to_string(), why: &why }
                            .to_string(),
                    )
                } else {
                    m.unguarded(phase, &failure);
                    tracing::debug!(phase = phase.as_str(), tool, %failure, "passed unguarded (fail-open)");
                    Settled::Pass
                };
                (settled, CheckLabel::Failed)
            }
        }
    }
}
