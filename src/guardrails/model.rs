//! The model side of a check: the local detectors, then each window through cache → fair-share slot → breaker → timeout, combined into one verdict.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;

use super::breaker::{Attempt, Breaker};
use super::{direction, Decided, Guardrails, Source, Tier};
use crate::checker::cache::{self, Lookup, VerdictCache};
use crate::checker::content::Content;
use crate::checker::fair::FairLimiter;
use crate::checker::openai::{self, OpenAi};
use crate::checker::rubric::Rubric;
use crate::checker::verdict::{self, Verdict};
use crate::checker::{fit, local, prompt, Failure, Phase};
use crate::telemetry::otel::spans as otel;
use crate::telemetry::Metrics;
use tracing::Instrument;

/// What a [`Model`] was built from: (settings, cache, breaker, concurrency and queue wait).
pub(super) type BuiltFrom =
    (openai::Settings, (u64, Duration), (u32, Duration), (usize, Duration), Option<Duration>);

/// The breaker key probes go under (no caller can spell it: caller keys are `caller:…`,
/// `agent:…` or session ids the proxy scopes).
const PROBE_KEY: &str = "#probe";

/// Probes the checker every `every` while `model` is held: through the breaker like a call (an
/// open breaker lets the probe be its half-open attempt, so recovery is seen with no traffic),
/// but never counted as a check or a checker request — `checker_probes_total{result}` counts it.
pub(super) fn spawn_probe(model: &Arc<Model>, every: Duration, metrics: Arc<Metrics>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
    let model = Arc::downgrade(model);
    handle.spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(m) = model.upgrade() else { return };
            let Some(admit) = m.breaker.admit(PROBE_KEY) else { continue };
            let up = m.client.probe().await;
            metrics.checker.probe(up);
            // A listing carries no content that could be slow: no answer is the checker's fault.
            m.breaker.record(admit, PROBE_KEY, if up { Attempt::Answered } else { Attempt::Unreachable });
        }
    });
}

/// The model side: only when a model is configured. Kept across policy reloads that leave the
/// checker's settings alone, so the cache and the breaker's state survive an edited rule.
#[derive(Debug)]
pub(super) struct Model {
    pub(super) built_from: BuiltFrom,
    pub(super) client: Arc<OpenAi>,
    pub(super) cache: VerdictCache,
    pub(super) breaker: Arc<Breaker>,
    pub(super) limit: Arc<FairLimiter>,
    pub(super) queue_timeout: Duration,
    pub(super) timeout: Duration,
}

impl Model {
    /// The model for `settings` under `cfg`'s cache, breaker (named `breaker`) and limits:
    /// `kept` when it was built from the same, else a new one (probed every `probe`, if set).
    pub(super) fn built(
        settings: &openai::Settings,
        cfg: &crate::config::GuardrailsConfig,
        breaker: &'static str,
        probe: Option<Duration>,
        kept: Option<&Arc<Model>>,
        metrics: &Arc<Metrics>,
    ) -> Result<Arc<Model>, openai::ClientError> {
        let built_from = (
            settings.clone(),
            (cfg.cache_capacity, cfg.cache_ttl),
            (cfg.breaker_failures, cfg.breaker_cooldown),
            (cfg.max_concurrency, cfg.queue_timeout),
            probe,
        );
        if let Some(m) = kept.filter(|m| m.built_from == built_from) {
            return Ok(m.clone());
        }
        let model = Arc::new(Model {
            built_from,
            client: Arc::new(OpenAi::new(settings)?),
            cache: VerdictCache::new(cfg.cache_capacity, cfg.cache_ttl),
            breaker: Arc::new(Breaker::new(
                breaker,
                cfg.breaker_failures,
                cfg.breaker_cooldown,
                metrics.clone(),
            )),
            limit: FairLimiter::new(cfg.max_concurrency),
            queue_timeout: cfg.queue_timeout,
            timeout: settings.timeout,
        });
        Ok(Model::probed(model, probe, metrics.clone()))
    }

    /// `model`, probed every `every` (when set).
    pub(super) fn probed(model: Arc<Model>, every: Option<Duration>, metrics: Arc<Metrics>) -> Arc<Model> {
        if let Some(every) = every {
            spawn_probe(&model, every, metrics);
        }
        model
    }
}

/// A model and how much of the content it is shown: what [`Judge::verdict`] asks. Owned, so a
/// shadow judgement can run in its own task.
#[derive(Debug, Clone)]
pub(super) struct Judge {
    pub(super) model: Arc<Model>,
    pub(super) max_content_bytes: usize,
    pub(super) model_windows: usize,
    pub(super) context: fit::Context,
    pub(super) metrics: Arc<Metrics>,
}

impl Guardrails {
    /// `model` asked with this policy's windows.
    pub(super) fn judge(&self, model: Arc<Model>) -> Judge {
        Judge {
            model,
            max_content_bytes: self.max_content_bytes,
            model_windows: self.model_windows,
            context: self.context,
            metrics: self.metrics.clone(),
        }
    }

    /// The verdict for `content`: the local detectors over all of it, then (when configured and
    /// `ask_model`) the model over each window of it; with which tier answered.
    pub(super) async fn verdict(
        &self,
        q: &Asked<'_>,
        content: &Content,
        ask_model: bool,
    ) -> (Result<(Verdict, Source), Failure>, Decided) {
        if let Some(reason) = local::judge(&content.scan, direction(q.phase)) {
            return (Ok((Verdict::Unsafe { reason, sanitized: None }, Source::Local)), Decided::LOCAL);
        }
        let Some(m) = self.model.as_ref().filter(|_| ask_model) else {
            return (Ok((Verdict::Safe, Source::Local)), Decided::LOCAL);
        };
        let (result, decided) = self.judge(m.clone()).verdict(q, content).await;
        (result.map(|v| (v, Source::Model)), decided)
    }
}

/// What a model is asked, besides the content: the phase, the tool, the rubric, on whose
/// behalf (the fair-share key), and the prompt's framing (task, rewrite).
#[derive(Debug, Clone, Copy)]
pub(super) struct Asked<'a> {
    pub(super) phase: Phase,
    pub(super) tool: &'a str,
    pub(super) rubric: &'a Arc<Rubric>,
    pub(super) key: &'a str,
    pub(super) framing: prompt::Framing<'a>,
}

impl Judge {
    /// The model's verdict on each window of `content`, combined (the local detectors are the
    /// caller's), with whether the model or the cache answered.
    pub(super) async fn verdict(
        &self,
        q: &Asked<'_>,
        content: &Content,
    ) -> (Result<Verdict, Failure>, Decided) {
        let started = tokio::time::Instant::now();
        let missed = AtomicUsize::new(0);
        // Windows cut to the model's context: learned from the server once (nothing to
        // configure), re-cut once when an answer says a window did not fit (checker::fit).
        let overhead = prompt::build_framed(&q.rubric.text, q.phase, q.tool, "", q.framing).overhead();
        let shown = fit::Shown {
            max_bytes: self.max_content_bytes,
            max_windows: self.model_windows,
            overhead,
            context: self.context,
        };
        let result = fit::judge(&self.model.client, &content.model, shown, |w| self.ask(&missed, q, w)).await;
        let asked = missed.load(Ordering::Relaxed) > 0;
        let tier = match (&result, asked) {
            (Err(_), _) => Tier::Failed,
            (Ok(_), true) => Tier::Model,
            (Ok(_), false) => Tier::Cache,
        };
        (result, Decided { tier, model_latency: asked.then(|| started.elapsed()) })
    }

    async fn ask(&self, missed: &AtomicUsize, q: &Asked<'_>, window: &str) -> Result<Verdict, Failure> {
        let m = &self.model;
        let framing = q.framing.digest_part();
        let cache_key =
            cache::framed_key(q.phase, &q.rubric.version, m.client.model(), q.tool, &framing, window);
        let prompt = prompt::build_framed(&q.rubric.text, q.phase, q.tool, window, q.framing);
        let span = otel::checker(m.client.model(), q.phase.as_str());
        let (cache, asking) = (m.cache.clone(), span.clone());
        let (m, key, metrics) = (m.clone(), Arc::<str>::from(q.key), self.metrics.clone());
        let ask = move || ask_model(m, key, prompt, metrics).instrument(asking).boxed();
        let (result, lookup) = cache.get_or_check(cache_key, ask).instrument(span.clone()).await;
        let verdict = match &result {
            Ok(Verdict::Safe) => "safe",
            Ok(Verdict::Unsafe { .. }) => "unsafe",
            Err(_) => "failed",
        };
        otel::checked(&span, lookup.as_str(), verdict);
        self.metrics.checker.cache(lookup);
        if lookup == Lookup::Miss {
            missed.fetch_add(1, Ordering::Relaxed);
        }
        result
    }
}

/// One model call: a fair-share slot (waiting at most `queue_timeout`: load, shed without
/// touching the breaker), then the breaker, then the model under its timeout. Runs in its own
/// task (see [`VerdictCache`]), so it owns everything.
async fn ask_model(
    m: Arc<Model>,
    key: Arc<str>,
    prompt: prompt::Prompt,
    metrics: Arc<Metrics>,
) -> Result<Verdict, Failure> {
    // An open breaker refuses at once: nobody queues for a checker known to be down.
    if m.breaker.refusing(&key) {
        return Err(Failure::BreakerOpen);
    }
    let Ok(_slot) = tokio::time::timeout(m.queue_timeout, m.limit.acquire(&key)).await else {
        return Err(Failure::Overloaded(m.queue_timeout));
    };
    let Some(admit) = m.breaker.admit(&key) else {
        return Err(Failure::BreakerOpen);
    };
    // The model's timeout starts now: time spent waiting for the slot is not the checker's.
    let started = tokio::time::Instant::now();
    let reply = tokio::time::timeout(m.timeout, m.client.complete(&prompt))
        .await
        .unwrap_or(Err(Failure::Timeout(m.timeout)));
    metrics.checker.latency.observe(started.elapsed().as_secs_f64());
    // Only a checker that did not answer counts; a content failure proves it is up.
    let outcome = match &reply {
        Err(Failure::Timeout(_)) => Attempt::TimedOut,
        Err(f) if f.checker_down() => Attempt::Unreachable,
        _ => Attempt::Answered,
    };
    m.breaker.record(admit, &key, outcome);
    // An unsafe verdict is believed only with evidence from the data (or none at all, as models
    // asked before evidence was); an invented quote is read as safe and counted.
    let verdict = reply.and_then(|text| match verdict::parse_about(&text, prompt.data()) {
        Ok((v, verdict::Grounding::Invented)) => {
            metrics.checker.invented.inc();
            tracing::info!(model = %m.client.model(), "an unsafe verdict quoted words that are not in the data: not a finding");
            Ok(v)
        }
        Ok((v, _)) => Ok(v),
        Err(e) => Err(Failure::Malformed(e.to_string())),
    });
    metrics.checker.request(verdict.as_ref().map(|_| ()));
    verdict
}
