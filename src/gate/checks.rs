//! The Layer 2 checks a [`Guard`](super::Guard) hands back to its caller: pending, so the caller
//! decides where to await them (the proxy's pre gate, `portcullis check`, the hook), and typed, so
//! their outcome is an [`Outcome`] or a [`PostOutcome`], never a string.

use std::sync::Arc;

use serde_json::Value;

use super::{CallOutcome, Denial, Outcome, PostOutcome};
use crate::approval::{Ask, Source};
use crate::call::ToolCall;
use crate::checker::rules::GuardRule;
use crate::guardrails::{Guardrails, PostJudgement, PreJob, PreJudgement, Report};
use crate::rules::kinds::{canonical_json, KindSpec};

/// A pending Layer 2 check of a call's arguments.
#[derive(Debug)]
pub struct PreCheck {
    pub(super) guardrails: Arc<Guardrails>,
    pub(super) job: PreJob,
    pub(super) tool: String,
    /// For an ask, should the checker block.
    pub(super) args: Value,
    /// The arguments' exact spelling an ask is keyed by ([`crate::call::ToolCall::exact_args`]).
    pub(super) key_args: Option<String>,
    pub(super) session: Option<String>,
    pub(super) agent: Option<Arc<crate::identity::Agent>>,
}

impl PreCheck {
    fn ask(&self, reason: &str) -> Box<Ask> {
        Box::new(Ask {
            tool: self.tool.clone(),
            args: self.key_args.clone().unwrap_or_else(|| canonical_json(&self.args)),
            reason: reason.to_owned(),
            source: Source::Checker,
            session: self.session.clone(),
            definition: 0,
            agent: self.agent.clone(),
        })
    }

    /// The judgement with its verdict, mode and rule (for `portcullis check`).
    pub async fn report(self) -> Report<PreJudgement> {
        self.guardrails.pre(self.job).await
    }

    /// Judges the arguments: forward, or refuse (blocked, or fail-closed with no verdict).
    pub async fn run(self) -> Outcome {
        let judgement = self.guardrails.pre(self.job.clone()).await.judgement;
        self.outcome(judgement)
    }

    /// [`Self::run`], leaving the checker's judgement of a refused call for its audit line.
    pub async fn run_noted(self, id: crate::decision::DecisionId, audit: &crate::audit::Audit) -> Outcome {
        let report = self.guardrails.pre(self.job.clone()).await;
        if report.judgement != PreJudgement::Pass {
            audit.note(id, crate::audit::why::Note::Checked(super::pre::why::checked(&report)));
        }
        self.outcome(report.judgement)
    }

    fn outcome(self, judgement: PreJudgement) -> Outcome {
        match judgement {
            PreJudgement::Pass => Outcome::Forward,
            // A human may overrule the checker, once or for the session.
            PreJudgement::Block { reason } => Outcome::Refuse(Denial {
                ask: Some(self.ask(&reason)),
                reason,
                rule: "guardrail".into(),
                outcome: CallOutcome::Blocked,
            }),
            PreJudgement::Unavailable { reason } => Outcome::Refuse(Denial {
                reason,
                rule: "guardrail".into(),
                outcome: CallOutcome::CheckerDown,
                ask: None,
            }),
        }
    }
}

/// A pending Layer 2 check of a result.
#[derive(Debug, Clone)]
pub struct PostCheck {
    pub(super) guardrails: Arc<Guardrails>,
    pub(super) rule: GuardRule,
    pub(super) kind: KindSpec,
}

impl PostCheck {
    /// The judgement with its verdict, mode and rule (for `portcullis check`); sanitize
    /// rewrites `result` in place.
    pub async fn report(&self, call: &ToolCall, result: &mut Value) -> Report<PostJudgement> {
        self.guardrails
            .post_keyed(
                &self.rule,
                &call.qualified,
                &self.kind,
                call.share_key(),
                call.task.as_deref(),
                result,
            )
            .await
    }

    /// Judges `result` (a `result` or `error` value), rewriting it in place as the rule says.
    /// `refusal` builds the `isError` result that replaces a blocked one.
    pub async fn run(
        &self,
        call: &ToolCall,
        result: &mut Value,
        refusal: impl Fn(&str) -> Value,
    ) -> PostOutcome {
        match self.report(call, result).await.judgement {
            PostJudgement::Pass => PostOutcome::Pass,
            PostJudgement::Sanitized => PostOutcome::Rewritten { replacements: 1 },
            PostJudgement::Block { reason } => {
                *result = refusal(&reason);
                PostOutcome::Blocked
            }
            PostJudgement::Unavailable { reason } => {
                *result = refusal(&reason);
                PostOutcome::Unavailable
            }
        }
    }
}
