//! Layer 2's metrics: what was checked and decided, how the checker itself is doing, and how
//! many calls passed without a completed verdict. Names follow ARCHITECTURE §5.

use prometheus::{
    Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
};

use crate::checker::cache::Lookup;
use crate::checker::{Failure, Mode, Phase};

/// A checked call's verdict label: `safe`, `unsafe`, `failed` (no verdict), `skipped`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckLabel {
    Safe,
    Unsafe,
    Failed,
    /// Under `min_content_bytes`.
    Skipped,
}

impl CheckLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckLabel::Safe => "safe",
            CheckLabel::Unsafe => "unsafe",
            CheckLabel::Failed => "failed",
            CheckLabel::Skipped => "skipped",
        }
    }
}

/// Breaker states as `breaker_state` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerLabel {
    Closed = 0,
    Open = 1,
    HalfOpen = 2,
}

#[derive(Debug)]
pub struct CheckerMetrics {
    checks: IntCounterVec,
    requests: IntCounterVec,
    pub latency: Histogram,
    pub up: IntGauge,
    breaker: IntGaugeVec,
    unguarded: IntCounterVec,
    pub prefilter_skips: IntCounter,
    cache: IntCounterVec,
    rubrics: IntGaugeVec,
    /// Unsafe verdicts whose quoted evidence is not in the data: read as safe.
    pub invented: IntCounter,
    probes: IntCounterVec,
    shadow_checks: IntCounterVec,
    shadow_disagreements: IntCounterVec,
}

const REQUEST_RESULTS: [&str; 6] = ["ok", "timeout", "error", "malformed", "context_length", "refused"];
const UNGUARDED_REASONS: [&str; 8] =
    ["timeout", "error", "malformed", "breaker_open", "too_large", "context_length", "refused", "overloaded"];

impl CheckerMetrics {
    pub fn register(registry: &Registry) -> CheckerMetrics {
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(Opts::new(name, help), labels).expect("static metric");
            registry.register(Box::new(c.clone())).expect("registered once");
            c
        };
        let checks = counter(
            "checks_total",
            "Layer 2 checks by phase, guardrail rule, mode, rubric and its version, and verdict",
            &["phase", "rule", "mode", "rubric", "rubric_version", "verdict"],
        );
        let requests = counter("checker_requests_total", "Model checker requests by result", &["result"]);
        let unguarded = counter(
            "unguarded_total",
            "Calls that passed without a completed verdict (fail-open), by phase and why",
            &["phase", "reason"],
        );
        let cache = counter("cache_requests_total", "Verdict cache lookups by result", &["result"]);
        let latency = Histogram::with_opts(
            HistogramOpts::new("checker_latency_seconds", "Model checker request latency")
                .buckets(vec![0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0]),
        )
        .expect("static metric");
        let up = IntGauge::new(
            "checker_up",
            "1 while the checker answers (breaker closed), 0 while its breaker is open or probing",
        )
        .expect("static metric");
        let breaker = IntGaugeVec::new(
            Opts::new("breaker_state", "Checker breaker: 0 closed, 1 open, 2 half-open"),
            &["checker"],
        )
        .expect("static metric");
        let prefilter_skips =
            IntCounter::new("prefilter_skips_total", "Shell calls proven read-only that skipped the checker")
                .expect("static metric");
        let invented = IntCounter::new(
            "checker_invented_evidence_total",
            "Unsafe verdicts whose quoted evidence is not in the data they judged, read as safe (a small model's invention)",
        )
        .expect("static metric");
        registry.register(Box::new(invented.clone())).expect("registered once");
        let probes = counter(
            "checker_probes_total",
            "Background probes of the model checker (GET /models), by result (up, down); never counted as checks",
            &["result"],
        );
        for r in ["up", "down"] {
            probes.with_label_values(&[r]);
        }
        let shadow_checks = counter(
            "shadow_checks_total",
            "Shadow judgements (a rule's `shadow:` rubric or model, never enforced), by guardrail rule and verdict",
            &["rule", "verdict"],
        );
        let shadow_disagreements = counter(
            "shadow_disagreements_total",
            "Shadow judgements that differ from the enforced verdict, by guardrail rule and direction (would_block, would_pass)",
            &["rule", "direction"],
        );
        registry.register(Box::new(latency.clone())).expect("registered once");
        registry.register(Box::new(up.clone())).expect("registered once");
        registry.register(Box::new(breaker.clone())).expect("registered once");
        registry.register(Box::new(prefilter_skips.clone())).expect("registered once");
        let rubrics = IntGaugeVec::new(
            Opts::new(
                "rubric_info",
                "The rubrics in force: 1 per (rubric, version); the version is a content hash",
            ),
            &["rubric", "version"],
        )
        .expect("static metric");
        registry.register(Box::new(rubrics.clone())).expect("registered once");
        // Zeros from the start, so alerts and dashboards see every series.
        for r in REQUEST_RESULTS {
            requests.with_label_values(&[r]);
        }
        for phase in [Phase::Pre, Phase::Post] {
            for r in UNGUARDED_REASONS {
                unguarded.with_label_values(&[phase.as_str(), r]);
            }
        }
        for r in Lookup::ALL {
            cache.with_label_values(&[r.as_str()]);
        }
        up.set(1);
        CheckerMetrics {
            checks,
            requests,
            latency,
            up,
            breaker,
            unguarded,
            prefilter_skips,
            cache,
            rubrics,
            invented,
            probes,
            shadow_checks,
            shadow_disagreements,
        }
    }

    /// One shadow judgement under guardrail rule `rule`, and how it differs from the enforced
    /// verdict (`None`: it agrees, or one side has no verdict).
    pub fn shadow(&self, rule: &str, verdict: CheckLabel, differs: Option<&'static str>) {
        self.shadow_checks.with_label_values(&[rule, verdict.as_str()]).inc();
        if let Some(direction) = differs {
            self.shadow_disagreements.with_label_values(&[rule, direction]).inc();
        }
    }

    /// Zero series for `rule`'s shadow, so a disagreement rate reads 0 rather than no data.
    pub fn shadow_rule(&self, rule: &str) {
        for d in ["would_block", "would_pass"] {
            self.shadow_disagreements.with_label_values(&[rule, d]);
        }
        for v in [CheckLabel::Safe, CheckLabel::Unsafe, CheckLabel::Failed, CheckLabel::Skipped] {
            self.shadow_checks.with_label_values(&[rule, v.as_str()]);
        }
    }

    /// Counts one background probe.
    pub fn probe(&self, up: bool) {
        self.probes.with_label_values(&[if up { "up" } else { "down" }]).inc();
    }

    /// One check. The rubric version is a label so a rubric edit shows as a before/after on
    /// the dashboard; versions change only when an operator edits a rubric, so it stays bounded.
    pub fn check(
        &self,
        phase: Phase,
        rule: &str,
        mode: Mode,
        rubric: &crate::checker::rubric::Rubric,
        verdict: CheckLabel,
    ) {
        let labels = [phase.as_str(), rule, mode.as_str(), &rubric.name, &rubric.version, verdict.as_str()];
        self.checks.with_label_values(&labels).inc();
    }

    /// One model request's result: `Ok` or the failure.
    pub fn request(&self, result: Result<(), &Failure>) {
        let label = match result {
            Ok(()) => "ok",
            Err(f) => f.as_str(),
        };
        self.requests.with_label_values(&[label]).inc();
    }

    pub fn unguarded(&self, phase: Phase, failure: &Failure) {
        self.unguarded.with_label_values(&[phase.as_str(), failure.as_str()]).inc();
    }

    /// Publishes the rubrics in force (after a load or a reload), dropping the ones replaced.
    pub fn rubrics<'a>(&self, set: impl Iterator<Item = (&'a str, &'a str)>) {
        self.rubrics.reset();
        for (name, version) in set {
            self.rubrics.with_label_values(&[name, version]).set(1);
        }
    }

    /// One verdict cache lookup: `hit` (this process), `shared_hit` (the store replicas
    /// share), `miss` (the model was asked, or a call already asking it was joined).
    pub fn cache(&self, lookup: Lookup) {
        self.cache.with_label_values(&[lookup.as_str()]).inc();
    }

    pub fn breaker(&self, checker: &str, state: BreakerLabel) {
        self.breaker.with_label_values(&[checker]).set(state as i64);
        // `checker_up` is the enforcing checker's: a shadow model that is down pages nobody.
        if checker != "openai" {
            return;
        }
        // A half-open breaker is probing a checker that has not answered yet: not up. Reading it
        // as up would restart an alert's `for:` timer at every probe while the checker stays dead.
        self.up.set(i64::from(state == BreakerLabel::Closed));
    }
}
