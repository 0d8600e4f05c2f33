//! Shadow judgements: a guardrail rule's `shadow:` rubric (and optionally its own model) judges
//! the same content as the enforced check, on live traffic, and is never enforced. It is how an
//! operator learns what a rubric or model would do before promoting it.
//!
//! The call never waits for it: the shadow runs in its own task after the enforced verdict, as
//! one fair-share caller (`#shadow`), so it can take no more than its share of checker slots
//! from real callers; at most twice `max_concurrency` shadows are in flight, and one more is
//! skipped (`shadow_checks_total{verdict="skipped"}`), never queued. A finding of the local detectors is not shadowed — they do not depend on
//! the rubric, so both sides would agree by construction; under `checker: local` a shadow with
//! its own model judges what the detectors passed (what would a model add?). What it records:
//! `shadow_checks_total{rule,verdict}`, `shadow_disagreements_total{rule,direction}` (the
//! shadow `would_block` what was passed, or `would_pass` what was found unsafe), and a `shadow`
//! audit line carrying both verdicts.

use std::sync::Arc;

use super::model::{Asked, Judge, Model};
use super::settle::tame;
use super::{Guardrails, Source};
use crate::audit::{Judged, ShadowVerdicts, Stage};
use crate::checker::content::Content;
use crate::checker::prompt::Framing;
use crate::checker::rules::GuardRule;
use crate::checker::verdict::Verdict;
use crate::checker::Failure;
use crate::telemetry::checker_metrics::CheckLabel;

/// The fair-share (and breaker) key shadows are asked under: no caller can spell it.
const SHADOW_KEY: &str = "#shadow";

/// How a shadow verdict differs from the enforced one: the `direction` label.
pub fn disagreement(enforced: CheckLabel, shadow: CheckLabel) -> Option<&'static str> {
    match (enforced, shadow) {
        (CheckLabel::Safe, CheckLabel::Unsafe) => Some("would_block"),
        (CheckLabel::Unsafe, CheckLabel::Safe) => Some("would_pass"),
        // A side with no verdict neither agrees nor disagrees.
        _ => None,
    }
}

/// A verdict (or its absence) as a label and a reason for the audit line.
fn said(result: &Result<Verdict, Failure>) -> (CheckLabel, Option<String>) {
    match result {
        Ok(Verdict::Safe) => (CheckLabel::Safe, None),
        Ok(Verdict::Unsafe { reason, .. }) => (CheckLabel::Unsafe, Some(tame(reason))),
        Err(f) => (CheckLabel::Failed, Some(f.to_string())),
    }
}

/// What a shadow judgement needs, owned.
pub(super) struct ShadowJob<'a> {
    pub rule: &'a GuardRule,
    /// What the enforced check asked (its rubric, the task).
    pub q: Asked<'a>,
    pub content: &'a Content,
    /// What the enforced check said.
    pub enforced: &'a Result<(Verdict, Source), Failure>,
    /// False when the content was too short to show a model: nor is the shadow's.
    pub ask_model: bool,
}

impl Guardrails {
    /// The model a shadow asks: its own, else the enforced checker's.
    fn shadow_model(&self, own: Option<&crate::checker::openai::Settings>) -> Option<Arc<Model>> {
        match own {
            None => self.model.clone(),
            Some(s) => self.shadow_models.iter().find(|m| &m.built_from.0 == s).cloned(),
        }
    }

    /// Starts `job`'s shadow judgement, if its rule has one and the model decided (or failed to).
    pub(super) fn shadow(&self, job: ShadowJob<'_>) {
        let Some(shadow) = &job.rule.shadow else { return };
        let (enforced_label, enforced_reason) = match job.enforced {
            _ if !job.ask_model => return,
            Ok((Verdict::Unsafe { .. }, Source::Local)) => return,
            Ok((v, _)) => said(&Ok(v.clone())),
            Err(f) => said(&Err(f.clone())),
        };
        let (Some(model), Some(rubric)) =
            (self.shadow_model(shadow.model.as_ref()), self.rubrics.get(&shadow.rubric))
        else {
            return;
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        let Ok(room) = self.shadow_room.clone().try_acquire_owned() else {
            self.metrics.checker.shadow(&job.rule.label, CheckLabel::Skipped, None);
            return;
        };
        let judge: Judge = self.judge(model.clone());
        let enforced = Judged {
            rubric: format!("{}@{}", job.q.rubric.name, job.q.rubric.version),
            model: self.model.as_ref().map_or_else(|| "local".to_owned(), |m| m.client.model().to_owned()),
            verdict: enforced_label.as_str(),
            reason: enforced_reason,
        };
        let (rubric, phase, tool, content) =
            (rubric.clone(), job.q.phase, job.q.tool.to_owned(), job.content.clone());
        let task: Option<Arc<str>> = job.q.framing.task.map(Arc::from);
        let user_task: Option<Arc<str>> = job.q.framing.user_task.map(Arc::from);
        let (label, metrics, audit) =
            (job.rule.label.clone(), self.metrics.clone(), self.audit.get().cloned());
        handle.spawn(async move {
            let _room = room;
            let started = std::time::Instant::now();
            // A shadow never rewrites anything, so it is not asked to.
            let framing = Framing { task: task.as_deref(), user_task: user_task.as_deref(), rewrite: false };
            let q = Asked { phase, tool: &tool, rubric: &rubric, key: SHADOW_KEY, framing };
            let (result, _) = judge.verdict(&q, &content).await;
            let (verdict, reason) = said(&result);
            let differs = disagreement(enforced_label, verdict);
            metrics.checker.shadow(&label, verdict, differs);
            if let Some(direction) = differs {
                tracing::info!(tool, rule = %label, direction, rubric = %rubric.name, "shadow disagrees");
            }
            let Some(audit) = audit.filter(|a| a.is_on()) else { return };
            let verdicts = ShadowVerdicts {
                enforced,
                shadow: Judged {
                    rubric: format!("{}@{}", rubric.name, rubric.version),
                    model: model.client.model().to_owned(),
                    verdict: verdict.as_str(),
                    reason,
                },
            };
            let subject = serde_json::Value::String(content.model);
            audit.record(crate::audit::Entry {
                phase: Stage::Shadow,
                upstream: tool.split("__").nth(1).unwrap_or(""),
                tool: &tool,
                session: None,
                agent: None,
                outcome: differs.unwrap_or(match verdict {
                    CheckLabel::Failed => "failed",
                    _ => "agree",
                }),
                rule: Some(&label),
                reason: None,
                subject: Some(&subject),
                channel: None,
                latency: started.elapsed(),
                verdicts: Some(&verdicts),
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_opposite_verdicts_disagree() {
        use CheckLabel::*;
        assert_eq!(disagreement(Safe, Unsafe), Some("would_block"));
        assert_eq!(disagreement(Unsafe, Safe), Some("would_pass"));
        for (a, b) in [(Safe, Safe), (Unsafe, Unsafe), (Failed, Unsafe), (Safe, Failed), (Failed, Failed)] {
            assert_eq!(disagreement(a, b), None, "{a:?} vs {b:?}");
        }
    }
}
