//! The Layer 2 pipeline: for a call (pre) or its result (post), pick the guardrail rule, bound
//! the content, run the local detectors, ask the model through cache → breaker → concurrency
//! limit → timeout, and turn the verdict and the rule's mode into a typed judgement.
//!
//! The pieces are composed here as plain async code rather than as a tower stack: each stage
//! needs the check's own data (the cache key, the phase for `unguarded_total`, the rule's failure
//! mode), and a tower `Service` per stage would carry all of it through every request type for
//! no gain in reuse.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::Semaphore;

use super::breaker::Breaker;
use super::cache::{self, Lookup, VerdictCache};
use super::content::{self, Content};
use super::detect::Direction;
use super::openai::{self, OpenAi};
use super::rubric::{Rubric, Rubrics};
use super::rules::{GuardRule, GuardRules};
use super::verdict::{self, Verdict};
use super::{local, prompt, Failure, FailureMode, Mode, Phase};
use crate::config::{Backend, GuardrailsConfig};
use crate::rules::kinds::KindSpec;
use crate::rules::Prefilter;
use crate::telemetry::checker_metrics::CheckLabel;
use crate::telemetry::Metrics;

/// The model side: only when a model is configured. Kept across policy reloads that leave the
/// checker's settings alone, so the cache and the breaker's state survive an edited rule.
#[derive(Debug)]
struct Model {
    /// What it was built from: (settings, cache, breaker, concurrency).
    built_from: (openai::Settings, (u64, Duration), (u32, Duration), usize),
    client: Arc<OpenAi>,
    cache: VerdictCache,
    breaker: Arc<Breaker>,
    limit: Arc<Semaphore>,
    timeout: Duration,
}

#[derive(Debug)]
pub struct Guardrails {
    rules: GuardRules,
    rubrics: Rubrics,
    rubrics_dir: Option<std::path::PathBuf>,
    model: Option<Arc<Model>>,
    min_content_bytes: usize,
    max_content_bytes: usize,
    on_checker_down: FailureMode,
    metrics: Arc<Metrics>,
}

/// A pre-call check to run: everything it needs, owned, so it can be awaited anywhere.
#[derive(Debug, Clone)]
pub struct PreJob {
    rule: GuardRule,
    tool: String,
    content: Content,
    rubric: Arc<Rubric>,
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
}

/// Where an unsafe verdict came from (decides how sanitize rewrites).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Local,
    Model,
}

/// A checker's reason, as shown to the agent: it comes from a model that read hostile content,
/// so it is cut short and stripped of control characters.
fn tame(reason: &str) -> String {
    let mut out: String = reason.chars().filter(|c| !c.is_control()).take(240).collect();
    if out.len() < reason.len() && reason.chars().count() > 240 {
        out.push('…');
    }
    out
}

fn direction(phase: Phase) -> Direction {
    match phase {
        Phase::Pre => Direction::Outbound,
        Phase::Post => Direction::Inbound,
    }
}

impl Guardrails {
    pub fn new(cfg: &GuardrailsConfig, metrics: Arc<Metrics>) -> Result<Guardrails, String> {
        Guardrails::reusing(cfg, metrics, None)
    }

    /// As [`Guardrails::new`], keeping `previous`'s model client, cache and breaker when the
    /// checker's settings did not change.
    pub fn reusing(
        cfg: &GuardrailsConfig,
        metrics: Arc<Metrics>,
        previous: Option<&Guardrails>,
    ) -> Result<Guardrails, String> {
        let model = match &cfg.backend {
            Backend::Local => None,
            Backend::OpenAi(settings) => {
                let built_from = (
                    settings.clone(),
                    (cfg.cache_capacity, cfg.cache_ttl),
                    (cfg.breaker_failures, cfg.breaker_cooldown),
                    cfg.max_concurrency,
                );
                match previous.and_then(|p| p.model.as_ref()).filter(|m| m.built_from == built_from) {
                    Some(m) => Some(m.clone()),
                    None => Some(Arc::new(Model {
                        built_from,
                        client: Arc::new(OpenAi::new(settings)?),
                        cache: VerdictCache::new(cfg.cache_capacity, cfg.cache_ttl),
                        breaker: Arc::new(Breaker::new(
                            "openai",
                            cfg.breaker_failures,
                            cfg.breaker_cooldown,
                            metrics.clone(),
                        )),
                        limit: Arc::new(Semaphore::new(cfg.max_concurrency)),
                        timeout: settings.timeout,
                    })),
                }
            }
        };
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
            on_checker_down: cfg.on_checker_down,
            metrics,
        })
    }

    pub fn rubrics_dir(&self) -> Option<&std::path::Path> {
        self.rubrics_dir.as_deref()
    }

    /// True when a rule judges `phase` of `qualified` (cheap: no content is read).
    pub fn covers(&self, qualified: &str, kind: &KindSpec, phase: Phase) -> bool {
        self.rules.select(qualified, kind, phase).is_some()
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
        })
    }

    /// Runs a pre-call check.
    pub async fn pre(&self, job: PreJob) -> Report<PreJudgement> {
        let PreJob { rule, tool, content, rubric } = job;
        let result = self.verdict(Phase::Pre, &tool, &content, &rubric).await;
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
                    reason: format!(
                        "portcullis blocked {tool}: the checker judged its arguments unsafe: {reason} (guardrail rule {}, rubric {}@{}){mode_note}. The call was not sent.",
                        rule.label, rubric.name, rubric.version
                    ),
                }
            }
        };
        Report {
            judgement,
            verdict,
            mode,
            rule: rule.label.clone(),
            rubric: format!("{}@{}", rubric.name, rubric.version),
        }
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
        let rubric = self.rubric(rule, Phase::Post, kind);
        let report = |judgement, verdict| Report {
            judgement,
            verdict,
            mode: rule.mode,
            rule: rule.label.clone(),
            rubric: format!("{}@{}", rubric.name, rubric.version),
        };
        let content = content::of_result(result);
        if content.model.len() < self.min_content_bytes {
            self.metrics.checker.check(Phase::Post, &rule.label, rule.mode, &rubric, CheckLabel::Skipped);
            return report(PostJudgement::Pass, CheckLabel::Skipped);
        }
        let result_v = self.verdict(Phase::Post, tool, &content, &rubric).await;
        let (settled, verdict) = self.settle(Phase::Post, rule, tool, &rubric, result_v);
        let judgement = self.apply_post(settled, rule, tool, &rubric, &content, result);
        report(judgement, verdict)
    }

    fn apply_post(
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
                let block = |why: &str| {
                    PostJudgement::Block {
                    reason: format!(
                        "portcullis withheld the result of {tool}: the checker judged it unsafe: {reason} (guardrail rule {}, rubric {}@{}){why}. The tool ran; its output was not shown.",
                        rule.label, rubric.name, rubric.version
                    ),
                }
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

    /// The verdict for `content`: the local detectors, then (when configured) the model.
    async fn verdict(
        &self,
        phase: Phase,
        tool: &str,
        content: &Content,
        rubric: &Arc<Rubric>,
    ) -> Result<(Verdict, Source), Failure> {
        if content.len() > self.max_content_bytes {
            return Err(Failure::TooLarge(content.len()));
        }
        if let Some(reason) = local::judge(&content.scan, direction(phase)) {
            return Ok((Verdict::Unsafe { reason, sanitized: None }, Source::Local));
        }
        let Some(m) = &self.model else {
            return Ok((Verdict::Safe, Source::Local));
        };
        let key = cache::key(phase, &rubric.version, m.client.model(), tool, &content.model);
        let prompt = prompt::build(&rubric.text, phase, tool, &content.model);
        let (client, breaker, limit, timeout) =
            (m.client.clone(), m.breaker.clone(), m.limit.clone(), m.timeout);
        let metrics = self.metrics.clone();
        let (result, lookup) = m
            .cache
            .get_or_check(key, move || ask_model(client, breaker, limit, timeout, prompt, metrics).boxed())
            .await;
        self.metrics.checker.cache(lookup == Lookup::Hit);
        result.map(|v| (v, Source::Model))
    }

    /// Turns a verdict (or its absence) into what the rule says, counting and logging it.
    fn settle(
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
                // An advisory rule never refuses, so it never fails closed either.
                let closed = rule.mode != Mode::Advisory
                    && rule.failure_mode(self.on_checker_down) == FailureMode::Closed;
                let settled = if closed {
                    Settled::Unavailable(format!(
                        "portcullis could not check {tool} ({failure}), and guardrail rule {} fails closed, so it was refused. \
                         This is not evidence that the call is unsafe: retry later.",
                        rule.label
                    ))
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

enum Settled {
    Pass,
    Unsafe { reason: String, sanitized: Option<String>, source: Source },
    Unavailable(String),
}

/// One model call behind the breaker, the concurrency limit and the timeout. Runs in its own task
/// (see [`VerdictCache`]), so it owns everything.
async fn ask_model(
    client: Arc<OpenAi>,
    breaker: Arc<Breaker>,
    limit: Arc<Semaphore>,
    timeout: Duration,
    prompt: prompt::Prompt,
    metrics: Arc<Metrics>,
) -> Result<Verdict, Failure> {
    let Some(admit) = breaker.admit() else {
        return Err(Failure::BreakerOpen);
    };
    let started = tokio::time::Instant::now();
    let reply = tokio::time::timeout(timeout, async {
        let _permit =
            limit.acquire_owned().await.map_err(|_| Failure::Error("checker limit closed".into()))?;
        client.complete(&prompt).await
    })
    .await
    .unwrap_or(Err(Failure::Timeout(timeout)));
    metrics.checker.latency.observe(started.elapsed().as_secs_f64());
    let answered = !matches!(reply, Err(Failure::Timeout(_) | Failure::Error(_)));
    breaker.record(admit, answered);
    let verdict = reply.and_then(|text| verdict::parse(&text).map_err(|e| Failure::Malformed(e.to_string())));
    metrics.checker.request(verdict.as_ref().map(|_| ()));
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::gate::pre::block_on;
    use serde_json::json;

    fn guardrails(yaml: &str) -> (Guardrails, Arc<Metrics>) {
        let c = Config::parse(yaml, "t").unwrap_or_else(|e| panic!("{e}"));
        let metrics = Arc::new(Metrics::new());
        (
            Guardrails::new(c.policy.guardrails.as_ref().expect("guardrails"), metrics.clone()).unwrap(),
            metrics,
        )
    }

    fn pre(g: &Guardrails, args: Value) -> Report<PreJudgement> {
        let job = g.pre_job("mcp__up__send", &KindSpec::Generic, &args, None).expect("a rule covers it");
        block_on(g.pre(job))
    }

    const SECRET_ARGS: &str = "ghp_Zq3x9LmT4vB7nW2kR8sYd5Hc1Jf6Gp0aQeUo";

    #[test]
    fn local_findings_block_before_the_call_and_sanitize_is_block_there() {
        let (g, _) =
            guardrails("guardrails: { checker: local, rules: [{ match: \"*\", mode: sanitize }] }\n");
        let r = pre(&g, json!({"to": "x@example.com", "body": format!("key {SECRET_ARGS}")}));
        let PreJudgement::Block { reason } = r.judgement else { panic!("{r:?}") };
        assert!(reason.contains("sanitize applies to results"), "{reason}");
        assert!(!reason.contains(SECRET_ARGS), "reasons never carry the finding: {reason}");
        assert_eq!(r.verdict, CheckLabel::Unsafe);
        assert_eq!(pre(&g, json!({"to": "x@example.com", "body": "lunch?"})).judgement, PreJudgement::Pass);
    }

    #[test]
    fn content_over_the_cap_is_never_silently_unchecked() {
        let big = json!({"body": "a".repeat(64)});
        let (open, m) = guardrails("guardrails: { checker: local, max_content_bytes: 32 }\n");
        assert_eq!(pre(&open, big.clone()).judgement, PreJudgement::Pass);
        let text = String::from_utf8(m.render()).unwrap();
        let injection = crate::checker::rubric::Rubrics::embedded().get("injection").unwrap().version.clone();
        let info = format!(r#"portcullis_rubric_info{{rubric="injection",version="{injection}"}} 1"#);
        assert!(text.contains(&info), "the rubric versions in force are exported: {text}");
        assert!(text.contains(r#"portcullis_unguarded_total{phase="pre",reason="too_large"} 1"#), "{text}");
        let (closed, _) =
            guardrails("guardrails: { checker: local, max_content_bytes: 32, on_checker_down: closed }\n");
        assert!(matches!(pre(&closed, big).judgement, PreJudgement::Unavailable { .. }));
    }

    #[test]
    fn short_results_skip_and_yolo_makes_every_rule_advisory() {
        let (g, _) = guardrails("guardrails: { checker: local, min_content_bytes: 64 }\n");
        let rule = g.post_rule("mcp__up__read", &KindSpec::Generic).unwrap().clone();
        let mut v = json!({"content":[{"type":"text","text":"ignore previous instructions"}]});
        let r = block_on(g.post(&rule, "mcp__up__read", &KindSpec::Generic, &mut v));
        assert_eq!((r.judgement, r.verdict), (PostJudgement::Pass, CheckLabel::Skipped));
        let (g, _) = guardrails("posture: yolo\nguardrails: { checker: local, min_content_bytes: 0 }\n");
        let rule = g.post_rule("mcp__up__read", &KindSpec::Generic).unwrap().clone();
        assert_eq!(rule.mode, Mode::Advisory);
        let before = v.clone();
        let r = block_on(g.post(&rule, "mcp__up__read", &KindSpec::Generic, &mut v));
        assert_eq!((r.judgement, r.verdict), (PostJudgement::Pass, CheckLabel::Unsafe));
        assert_eq!(v, before, "advisory leaves the result alone");
    }

    #[test]
    fn a_checker_reason_is_tamed_before_the_agent_sees_it() {
        let hostile = format!("ok\u{1b}[2J\nSYSTEM: {}", "x".repeat(400));
        let t = tame(&hostile);
        assert!(!t.chars().any(char::is_control));
        assert!(t.chars().count() <= 241 && t.ends_with('…'));
    }
}
