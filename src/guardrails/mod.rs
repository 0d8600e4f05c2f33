//! The Layer 2 pipeline: for a call (pre) or its result (post), pick the guardrail rule, run the
//! local detectors over all of the content, ask the model about each window of it (see
//! [`crate::checker::window`]) through cache → fair-share slot (bounded wait) → breaker → timeout, and
//! turn the verdicts and the rule's mode into a typed judgement.
//!
//! Nobody outside can switch the model off: waiting for a slot is load (shed by the rule's
//! failure mode after `queue_timeout`, breaker untouched), and a failure the content caused —
//! too long for the model's context, refused, garbage — never counts toward the breaker. A
//! malformed verdict under a blocking rule is not a pass (`on_malformed`, closed by default).
//!
//! The pieces are composed here as plain async code rather than as a tower stack: each stage
//! needs the check's own data (the cache key, the phase for `unguarded_total`, the rule's failure
//! mode), and a tower `Service` per stage would carry all of it through every request type for
//! no gain in reuse.

mod apply;
pub mod breaker;
mod decided;
mod model;
mod settle;
mod shadow;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::Value;

use self::model::{Asked, Model};
use self::settle::Settled;
use crate::checker::content::{self, Content};
use crate::checker::detect::Direction;
use crate::checker::openai::ClientError;
use crate::checker::prompt::Framing;
use crate::checker::rubric::{Rubric, Rubrics};
use crate::checker::rules::{GuardRule, GuardRules};
use crate::checker::verdict::Verdict;
use crate::checker::{FailureMode, Mode, Phase};
use crate::config::{Backend, GuardrailsConfig};
use crate::rules::kinds::KindSpec;
use crate::rules::Prefilter;
use crate::telemetry::checker_metrics::CheckLabel;
use crate::telemetry::Metrics;
pub use decided::{Decided, Tier};

#[derive(Debug)]
pub struct Guardrails {
    rules: GuardRules,
    rubrics: Rubrics,
    rubrics_dir: Option<std::path::PathBuf>,
    model: Option<Arc<Model>>,
    min_content_bytes: usize,
    max_content_bytes: usize,
    context: crate::checker::fit::Context,
    model_windows: usize,
    on_checker_down: FailureMode,
    on_malformed: FailureMode,
    metrics: Arc<Metrics>,
    /// The models rules' shadows name (other than the enforced one), kept across reloads.
    shadow_models: Vec<Arc<Model>>,
    /// Shadow judgements in flight at most (each holds its content): beyond, one is skipped
    /// and counted, never queued — a flood of large results must not pile up shadow tasks.
    shadow_room: Arc<tokio::sync::Semaphore>,
    /// Where shadow lines are written (the guard's audit log, set once it has one).
    audit: std::sync::OnceLock<Arc<crate::audit::Audit>>,
}

/// The fair-share key of a caller that did not say who it is.
pub const ANONYMOUS: &str = "";

/// A pre-call check to run: everything it needs, owned, so it can be awaited anywhere.
#[derive(Debug, Clone)]
pub struct PreJob {
    rule: GuardRule,
    tool: String,
    content: Content,
    rubric: Arc<Rubric>,
    /// Who is asking (session or principal): the fair share of checker slots is per key.
    key: Arc<str>,
    /// The user's task, when the client reported it ([`crate::call::ToolCall::task`]).
    task: Option<Arc<str>>,
    /// The user's own task, from a channel the agent does not control ([`crate::call::ToolCall::user_task`]).
    user_task: Option<Arc<str>>,
}

impl PreJob {
    /// The same job framed by the user's own `task` (recorded where the agent cannot write).
    pub fn with_user_task(mut self, task: Option<Arc<str>>) -> PreJob {
        self.user_task = task;
        self
    }

    /// The same job framed by the user's `task` (fenced for the checker, never instructions).
    pub fn with_task(mut self, task: Option<Arc<str>>) -> PreJob {
        self.task = task;
        self
    }

    /// The same job on behalf of `key` (a session or principal); unkeyed jobs share
    /// [`ANONYMOUS`].
    pub fn keyed(mut self, key: Option<&str>) -> PreJob {
        self.key = key.unwrap_or(ANONYMOUS).into();
        self
    }
}

/// What Layer 2 decided about a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreJudgement {
    Pass,
    /// Unsafe under a blocking rule: the call is vetoed.
    Block {
        reason: String,
    },
    /// No verdict and the rule fails closed: refused, retryable.
    Unavailable {
        reason: String,
    },
}

/// What Layer 2 decided about a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostJudgement {
    /// Release the bytes as received.
    Pass,
    /// The result value was rewritten in place (sanitize).
    Sanitized,
    /// Replace the result with an `isError` result carrying `reason`.
    Block { reason: String },
    /// No verdict and the rule fails closed.
    Unavailable { reason: String },
}

/// A judgement with what led to it, for `portcullis check` and the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report<J> {
    pub judgement: J,
    pub verdict: CheckLabel,
    pub mode: Mode,
    /// The guardrail rule's `match`.
    pub rule: String,
    /// The rubric as `name@version`.
    pub rubric: String,
    /// Which tier answered, and the model's time.
    pub decided: Decided,
}

/// Where an unsafe verdict came from (decides how sanitize rewrites).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Local,
    Model,
}

fn direction(phase: Phase) -> Direction {
    match phase {
        Phase::Pre => Direction::Outbound,
        Phase::Post => Direction::Inbound,
    }
}

impl Guardrails {
    pub fn new(cfg: &GuardrailsConfig, metrics: Arc<Metrics>) -> Result<Guardrails, ClientError> {
        Guardrails::reusing(cfg, metrics, None)
    }

    /// As [`Guardrails::new`], keeping `previous`'s model client, cache and breaker when the
    /// checker's settings did not change.
    pub fn reusing(
        cfg: &GuardrailsConfig,
        metrics: Arc<Metrics>,
        previous: Option<&Guardrails>,
    ) -> Result<Guardrails, ClientError> {
        let model = match &cfg.backend {
            Backend::Local => None,
            Backend::OpenAi(settings) => {
                let kept = previous.and_then(|p| p.model.as_ref());
                Some(Model::built(settings, cfg, "openai", cfg.probe, kept, &metrics)?)
            }
        };
        let mut shadow_models: Vec<Arc<Model>> = Vec::new();
        for rule in &cfg.rules.0 {
            let Some(shadow) = &rule.shadow else { continue };
            metrics.checker.shadow_rule(&rule.label);
            let Some(settings) = shadow.model.as_ref() else { continue };
            if shadow_models.iter().any(|m| &m.built_from.0 == settings) {
                continue;
            }
            let kept =
                previous.into_iter().flat_map(|p| &p.shadow_models).find(|m| &m.built_from.0 == settings);
            // A shadow is never probed: `checker_up` and its alert are the enforcing checker's.
            shadow_models.push(Model::built(settings, cfg, "shadow", None, kept, &metrics)?);
        }
        metrics.checker.rubrics(
            cfg.rubrics
                .names()
                .filter_map(|n| cfg.rubrics.get(n))
                .map(|r| (r.name.as_str(), r.version.as_str())),
        );
        Ok(Guardrails {
            rules: cfg.rules.clone(),
            rubrics: cfg.rubrics.clone(),
            rubrics_dir: cfg.rubrics_dir.clone(),
            model,
            min_content_bytes: cfg.min_content_bytes,
            max_content_bytes: cfg.max_content_bytes,
            context: match cfg.context_tokens {
                Some(_) => crate::checker::fit::Context::Configured,
                None => crate::checker::fit::Context::Learn,
            },
            model_windows: cfg.model_windows,
            on_checker_down: cfg.on_checker_down,
            on_malformed: cfg.on_malformed,
            metrics,
            shadow_models,
            shadow_room: Arc::new(tokio::sync::Semaphore::new(2 * cfg.max_concurrency)),
            audit: std::sync::OnceLock::new(),
        })
    }

    /// The checker model and the named rubric (the loaded set's, else `fallback`), for a caller
    /// that asks the model something of its own (the headless ask reviewer); `None` without a model.
    pub fn model_with_rubric(
        &self,
        name: &str,
        fallback: &str,
    ) -> Option<(Arc<crate::checker::openai::OpenAi>, Arc<str>)> {
        let model = self.model.as_ref()?;
        let rubric = self.rubrics.get(name).map_or(fallback, |r| r.text.as_str());
        Some((model.client.clone(), Arc::from(rubric)))
    }

    /// Writes shadow judgements' lines to `audit` (the first audit log given is kept).
    pub fn audit_to(&self, audit: Arc<crate::audit::Audit>) {
        let _ = self.audit.set(audit);
    }

    /// Puts `tier` (the store replicas share) behind the verdict cache; without a model there
    /// is no cache and nothing to share. A cache keeps the first tier it is given.
    pub fn share_verdicts(&self, tier: Arc<dyn crate::checker::cache::SharedTier>) {
        if let Some(m) = &self.model {
            m.cache.share(tier);
        }
    }

    pub fn rubrics_dir(&self) -> Option<&std::path::Path> {
        self.rubrics_dir.as_deref()
    }

    /// True when a rule judges `phase` of `qualified` (cheap: no content is read).
    pub fn covers(&self, qualified: &str, kind: &KindSpec, phase: Phase) -> bool {
        self.rules.select(qualified, kind, phase).is_some()
    }

    /// The rule judging `qualified`'s definition in a `tools/list` result, if any.
    pub fn tools_rule(&self, qualified: &str, kind: &KindSpec) -> Option<&GuardRule> {
        self.rules.select_tools(qualified, kind)
    }

    /// True when some rule judges tool definitions (`phases: [tools]`).
    pub fn judges_tools(&self) -> bool {
        self.rules.any_tools()
    }

    /// True when some rule may judge a result of a tool named under `head` (`mcp__{upstream}__`).
    pub fn may_judge_results_under(&self, head: &str) -> bool {
        self.rules.may_judge_results_under(head)
    }

    /// True when results must be held for a check at all.
    pub fn watches_results(&self) -> bool {
        self.rules.any(Phase::Post)
    }

    /// False while a fail-closed rule depends on a checker whose breaker is open: `/readyz`.
    pub fn ready(&self) -> bool {
        let Some(m) = &self.model else { return true };
        let closed =
            self.rules.0.iter().any(|r| {
                r.mode != Mode::Advisory && r.failure_mode(self.on_checker_down) == FailureMode::Closed
            });
        !(closed && m.breaker.is_down())
    }

    fn rubric(&self, rule: &GuardRule, phase: Phase, kind: &KindSpec) -> Arc<Rubric> {
        let name = rule.rubric_for(phase, kind);
        match self.rubrics.get(name) {
            Some(r) => r.clone(),
            // Validated at load; a missing name can only be a built-in default, which exists.
            None => Arc::new(Rubric::new(name, "")),
        }
    }

    /// The pre-call check for `call`, if a rule asks for one; a proven read-only shell command
    /// skips it (and is counted).
    pub fn pre_job(
        &self,
        qualified: &str,
        kind: &KindSpec,
        args: &Value,
        prefilter: Option<Prefilter>,
    ) -> Option<PreJob> {
        let rule = self.rules.select(qualified, kind, Phase::Pre)?;
        if matches!(kind, KindSpec::Shell { .. }) && prefilter == Some(Prefilter::Skip) {
            self.metrics.checker.prefilter_skips.inc();
            return None;
        }
        Some(PreJob {
            rubric: self.rubric(rule, Phase::Pre, kind),
            rule: rule.clone(),
            tool: qualified.to_owned(),
            content: content::of_args(kind, args),
            key: ANONYMOUS.into(),
            task: None,
            user_task: None,
        })
    }

    /// Runs a pre-call check.
    pub async fn pre(&self, job: PreJob) -> Report<PreJudgement> {
        let PreJob { rule, tool, content, rubric, key, task, user_task } = job;
        // A call is never rewritten (sanitize blocks it), so no rewrite is asked for.
        let framing = Framing { task: task.as_deref(), user_task: user_task.as_deref(), rewrite: false };
        let q = Asked { phase: Phase::Pre, tool: &tool, rubric: &rubric, key: &key, framing };
        let (result, decided) = self.verdict(&q, &content, true).await;
        self.shadow(shadow::ShadowJob {
            rule: &rule,
            q,
            content: &content,
            enforced: &result,
            ask_model: true,
        });
        let mode = rule.mode;
        let (settled, verdict) = self.settle(Phase::Pre, &rule, &tool, &rubric, result);
        let judgement = match settled {
            Settled::Pass => PreJudgement::Pass,
            Settled::Unavailable(reason) => PreJudgement::Unavailable { reason },
            // A rewritten call is a call the agent did not make: sanitize blocks before the call.
            Settled::Unsafe { reason, .. } => {
                let mode_note = match mode {
                    Mode::Sanitize => " (sanitize applies to results; a call is blocked)",
                    _ => "",
                };
                PreJudgement::Block {
                    reason: crate::says::Said::ArgumentsBlocked {
                        tool: &tool,
                        reason: &reason,
                        rule: &rule.label,
                        rubric: &format!("{}@{}", rubric.name, rubric.version),
                        note: mode_note,
                    }
                    .to_string(),
                }
            }
        };
        Report {
            judgement,
            verdict,
            mode,
            rule: rule.label.clone(),
            rubric: format!("{}@{}", rubric.name, rubric.version),
            decided,
        }
    }

    /// The rule judging `qualified`'s arguments, if any (what [`Guardrails::pre_job`] selects).
    pub fn pre_rule(&self, qualified: &str, kind: &KindSpec) -> Option<&GuardRule> {
        self.rules.select(qualified, kind, Phase::Pre)
    }

    /// The rule judging `qualified`'s results, if any.
    pub fn post_rule(&self, qualified: &str, kind: &KindSpec) -> Option<&GuardRule> {
        self.rules.select(qualified, kind, Phase::Post)
    }

    /// Checks a result (or error object) and, for sanitize, rewrites it in place.
    pub async fn post(
        &self,
        rule: &GuardRule,
        tool: &str,
        kind: &KindSpec,
        result: &mut Value,
    ) -> Report<PostJudgement> {
        self.post_keyed(rule, tool, kind, None, None, result).await
    }

    /// As [`Guardrails::post`], on behalf of `key` (a session or principal: the fair share of
    /// checker slots is per key; `None` is [`ANONYMOUS`]), framed by the user's `task` when the
    /// client reported it.
    pub async fn post_keyed(
        &self,
        rule: &GuardRule,
        tool: &str,
        kind: &KindSpec,
        key: Option<&str>,
        task: Option<&str>,
        result: &mut Value,
    ) -> Report<PostJudgement> {
        let rubric = self.rubric(rule, Phase::Post, kind);
        let report = |judgement, verdict, decided| Report {
            judgement,
            verdict,
            mode: rule.mode,
            rule: rule.label.clone(),
            rubric: format!("{}@{}", rubric.name, rubric.version),
            decided,
        };
        let content = content::of_result(result);
        // Short results skip the model, never the local detectors (they are cheap).
        let ask_model = content.model.len() >= self.min_content_bytes;
        let key = key.unwrap_or(ANONYMOUS);
        let framing = Framing { task, user_task: None, rewrite: rule.mode == Mode::Sanitize };
        let q = Asked { phase: Phase::Post, tool, rubric: &rubric, key, framing };
        let (result_v, decided) = self.verdict(&q, &content, ask_model).await;
        self.shadow(shadow::ShadowJob { rule, q, content: &content, enforced: &result_v, ask_model });
        if !ask_model && matches!(result_v, Ok((Verdict::Safe, _))) {
            self.metrics.checker.check(Phase::Post, &rule.label, rule.mode, &rubric, CheckLabel::Skipped);
            return report(PostJudgement::Pass, CheckLabel::Skipped, decided);
        }
        let (settled, verdict) = self.settle(Phase::Post, rule, tool, &rubric, result_v);
        let judgement = self.apply_post(settled, rule, tool, &rubric, &content, result);
        report(judgement, verdict, decided)
    }
}
