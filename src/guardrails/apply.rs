//! Applying a settled post-call verdict to the result: pass, block, or sanitize it in place.

use serde_json::Value;

use super::settle::Settled;
use super::{Guardrails, PostJudgement, Source};
use crate::checker::content::{self, Content};
use crate::checker::detect::Direction;
use crate::checker::local;
use crate::checker::rubric::Rubric;
use crate::checker::rules::GuardRule;
use crate::checker::Mode;

impl Guardrails {
    pub(super) fn apply_post(
        &self,
        settled: Settled,
        rule: &GuardRule,
        tool: &str,
        rubric: &Rubric,
        content: &Content,
        result: &mut Value,
    ) -> PostJudgement {
        match settled {
            Settled::Pass => PostJudgement::Pass,
            Settled::Unavailable(reason) => PostJudgement::Unavailable { reason },
            Settled::Unsafe { reason, sanitized, source } => {
                let block = |why: &str| PostJudgement::Block {
                    reason: crate::says::Said::ResultWithheld {
                        tool,
                        reason: &reason,
                        rule: &rule.label,
                        rubric: &format!("{}@{}", rubric.name, rubric.version),
                        why,
                    }
                    .to_string(),
                };
                if rule.mode != Mode::Sanitize {
                    return block("");
                }
                match source {
                    Source::Local => {
                        let mut copy = result.clone();
                        match local::sanitize(&mut copy, Direction::Inbound) {
                            true => {
                                *result = copy;
                                PostJudgement::Sanitized
                            }
                            false => block("; it could not be sanitized"),
                        }
                    }
                    Source::Model => match sanitized.filter(|s| self.usable_rewrite(s, content)) {
                        Some(s) => {
                            content::apply_rewrite(result, &s);
                            PostJudgement::Sanitized
                        }
                        None => block("; the checker's rewrite was empty, oversized or still unsafe"),
                    },
                }
            }
        }
    }

    /// A rewrite is used only when it is non-empty, not much longer than what it replaces, and
    /// clean to the local detectors — a checker talked into "sanitizing" by echoing the payload
    /// does not get it through.
    fn usable_rewrite(&self, rewrite: &str, original: &Content) -> bool {
        !rewrite.trim().is_empty()
            && rewrite.len() <= original.model.len() + 1024
            && local::judge(rewrite, Direction::Inbound).is_none()
    }
}
