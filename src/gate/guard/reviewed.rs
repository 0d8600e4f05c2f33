//! The Layer 2 check an allowed call meets: a Layer 1 allow, and the headless ask reviewer's
//! allow alike — a guardrail rule that covers the call is the operator's own check, and no
//! other model's yes stands in for it.

use std::sync::Arc;

use serde_json::Value;

use super::{Guard, PreCheck};
use crate::call::ToolCall;
use crate::checker::Phase;
use crate::gate::Outcome;
use crate::guardrails::Guardrails;
use crate::rules::kinds::KindSpec;
use crate::rules::Prefilter;

impl Guard {
    /// What a call the headless ask reviewer allowed comes to: as a Layer 1 allow, forwarded,
    /// or first checked when a guardrail rule covers it (never skipped by the read-only
    /// pre-filter: the call was asked, so nothing proved it harmless).
    pub fn after_review(&self, call: &ToolCall) -> Outcome {
        let kind = self.engine.kinds().kind_of(&call.qualified);
        let Some(g) = self.guardrails.as_ref().filter(|g| g.covers(&call.qualified, kind, Phase::Pre)) else {
            return Outcome::Forward;
        };
        match self.args(call, true) {
            Ok(args) => Self::checked(g, call, kind, args, Some(Prefilter::Inspect)),
            Err(unreadable) => Self::denied(call, unreadable),
        }
    }

    /// An allowed call under the guardrail rules `g` (which cover it): forwarded when the rule
    /// selected needs no check of these arguments, else the check to run.
    pub(super) fn checked(
        g: &Arc<Guardrails>,
        call: &ToolCall,
        kind: &KindSpec,
        args: Value,
        prefilter: Option<Prefilter>,
    ) -> Outcome {
        match g.pre_job(&call.qualified, kind, &args, prefilter) {
            None => Outcome::Forward,
            Some(job) => Outcome::Check(Box::new(PreCheck {
                guardrails: g.clone(),
                // The fair share of checker slots is per caller (else per session).
                job: job
                    .keyed(call.share_key())
                    .with_task(call.task.clone())
                    .with_user_task(call.user_task.as_ref().map(|t| t.text.clone())),
                tool: call.qualified.clone(),
                args,
                key_args: call.exact_args(),
                session: call.session.clone(),
                agent: call.agent.clone(),
            })),
        }
    }
}
