//! The Prometheus registry and every metric portcullis exports. Names live here and nowhere else;
//! label values come from enums (`CallOutcome::as_str`) or from bounded sets (configured upstream
//! names, a capped set of tool names).

use std::sync::{Arc, Mutex, OnceLock};

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts, Registry, TextEncoder,
};

use crate::outcome::CallOutcome;
use crate::read_mostly::ReadMostly;
use crate::rules::{Effect, Scope};

/// Distinct tool names kept as label values before the rest fold into `other`.
const MAX_TOOL_LABELS: usize = 256;
const OTHER: &str = "other";
/// Every `upstream_errors_total{kind}` ([`crate::proxy::error::ProxyError::upstream_failure`]).
const UPSTREAM_ERROR_KINDS: [&str; 7] =
    ["connect", "timeout", "failed", "too_large", "uninspectable", "unauthorized", "credential"];

#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// `process_*`, unprefixed, and the heap's series (see `telemetry/process_metrics.rs`).
    pub process: super::process_metrics::ProcessMetrics,
    tool_calls: IntCounterVec,
    /// Resolved once: `[effect][scope]`, so the hot path does no label hashing.
    rule_decisions: Vec<prometheus::IntCounter>,
    upstream_latency: HistogramVec,
    overhead: Histogram,
    /// The admitted tool labels (at most [`MAX_TOOL_LABELS`]) and their counters.
    tools: ReadMostly<Arc<ToolSeries>>,
    /// `upstream_latency_seconds` by upstream (configured names: bounded), observed without
    /// prometheus's label lookup and its lock once an upstream has been seen.
    latency: ReadMostly<prometheus::Histogram>,
    /// The counters of every tool folded into `other`.
    other: ToolSeries,
    /// Taken to admit a tool label, so the cap holds.
    admit: Mutex<()>,
    /// Layer 2's metrics, in the same registry.
    pub checker: super::checker_metrics::CheckerMetrics,
    /// `limits.per_agent`'s metrics, in the same registry.
    pub limits: super::limit_metrics::LimitMetrics,
    /// The headless ask reviewer's and the approval announcements' metrics, in the same registry.
    pub reviewer: super::reviewer_metrics::ReviewerMetrics,
    pub notify: super::notify_metrics::NotifyMetrics,
    /// The flow index's metrics (`flows:`), in the same registry.
    pub flows: super::flow_metrics::FlowMetrics,
    /// Layer 1 decisions by rule, in the same registry.
    pub rules: super::rule_metrics::RuleMetrics,
    approvals: IntCounterVec,
    approvals_pending: prometheus::IntGauge,
    sessions_flagged: prometheus::IntCounter,
    waivers_active: prometheus::IntGauge,
    approval_wait: HistogramVec,
    audit_dropped: prometheus::IntCounter,
    upstream_errors: IntCounterVec,
    /// By configured agent (names from config: bounded) and outcome.
    agent_calls: IntCounterVec,
    auth_refusals: IntCounterVec,
    state_backend_up: prometheus::IntGauge,
    /// Tool definitions that differ from their pinned (or first-seen) one, by upstream.
    tool_definition_changes: IntCounterVec,
}

/// One tool label's counters by upstream (configured names: bounded) and outcome, each made
/// on first use so only series that counted something are exported.
#[derive(Debug)]
struct ToolSeries {
    label: Box<str>,
    by_upstream: ReadMostly<Arc<[OnceLock<IntCounter>; CallOutcome::ALL.len()]>>,
}

impl ToolSeries {
    fn new(label: &str) -> ToolSeries {
        ToolSeries { label: label.into(), by_upstream: ReadMostly::new(1) }
    }

    /// `with_label_values` hashes the labels and reads a lock on every call: resolved once here.
    fn inc(&self, vec: &IntCounterVec, upstream: &str, outcome: CallOutcome) {
        let outcomes = match self.by_upstream.get(upstream) {
            Some(o) => o,
            None => self.by_upstream.get_or_insert_with(upstream, Arc::default),
        };
        outcomes[outcome as usize]
            .get_or_init(|| vec.with_label_values(&[upstream, &self.label, outcome.as_str()]))
            .inc();
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new_custom(Some("portcullis".into()), None).expect("static prefix is valid");
        let tool_calls = IntCounterVec::new(
            Opts::new("tool_calls_total", "Tool calls by upstream, tool and what happened to them"),
            &["upstream", "tool", "outcome"],
        )
        .expect("static metric");
        let rule_decisions = IntCounterVec::new(
            Opts::new(
                "rule_decisions_total",
                "Layer 1 decisions by effect and the scope of the deciding rule",
            ),
            &["effect", "scope"],
        )
        .expect("static metric");
        let upstream_latency = HistogramVec::new(
            HistogramOpts::new(
                "upstream_latency_seconds",
                "Time from sending a request upstream to its response head",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                60.0,
            ]),
            &["upstream"],
        )
        .expect("static metric");
        let overhead = Histogram::with_opts(
            HistogramOpts::new(
                "proxy_overhead_seconds",
                "Time the proxy adds to a request: total time to the response head minus the upstream's",
            )
            .buckets(vec![
                0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1.0,
            ]),
        )
        .expect("static metric");
        for m in [&tool_calls, &rule_decisions] {
            registry.register(Box::new(m.clone())).expect("registered once");
        }
        let rule_decisions_vec = rule_decisions;
        registry.register(Box::new(upstream_latency.clone())).expect("registered once");
        registry.register(Box::new(overhead.clone())).expect("registered once");
        // Every label combination exists from the start, so dashboards and alerts see zeros.
        let rule_decisions = Effect::ALL
            .iter()
            .flat_map(|e| Scope::ALL.iter().map(move |s| (e, s)))
            .map(|(e, s)| rule_decisions_vec.with_label_values(&[e.as_str(), s.as_str()]))
            .collect();
        let checker = super::checker_metrics::CheckerMetrics::register(&registry);
        let limits = super::limit_metrics::LimitMetrics::register(&registry);
        let reviewer = super::reviewer_metrics::ReviewerMetrics::register(&registry);
        let flows = super::flow_metrics::FlowMetrics::register(&registry);
        let rules = super::rule_metrics::RuleMetrics::register(&registry);
        super::process_metrics::register_build_info(&registry);
        let approvals = IntCounterVec::new(
            Opts::new(
                "approvals_total",
                "Asks resolved, by decision (allow_once, allow_session, deny, cancel, timeout, headless)",
            ),
            &["decision"],
        )
        .expect("static metric");
        let approvals_pending =
            prometheus::IntGauge::new("approvals_pending", "Calls parked for an operator's decision")
                .expect("static metric");
        let waivers_active =
            prometheus::IntGauge::new("waivers_active", "Session waivers armed (allow for the session)")
                .expect("static metric");
        registry.register(Box::new(approvals.clone())).expect("registered once");
        registry.register(Box::new(approvals_pending.clone())).expect("registered once");
        registry.register(Box::new(waivers_active.clone())).expect("registered once");
        let sessions_flagged = prometheus::IntCounter::new(
            "sessions_flagged_total",
            "Sessions flagged by the repeated-denial breaker (every further call asks)",
        )
        .expect("static metric");
        registry.register(Box::new(sessions_flagged.clone())).expect("registered once");
        let approval_wait = HistogramVec::new(
            HistogramOpts::new(
                "approval_wait_seconds",
                "How long asks waited for a human, by channel (elicitation, api) and decision",
            )
            .buckets(vec![1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0]),
            &["channel", "decision"],
        )
        .expect("static metric");
        registry.register(Box::new(approval_wait.clone())).expect("registered once");
        let audit_dropped = prometheus::IntCounter::new(
            "audit_dropped_total",
            "Audit lines dropped because the writer could not keep up",
        )
        .expect("static metric");
        registry.register(Box::new(audit_dropped.clone())).expect("registered once");
        let upstream_errors = IntCounterVec::new(
            Opts::new(
                "upstream_errors_total",
                "Requests an upstream failed, by kind (connect, timeout, failed, too_large, uninspectable)",
            ),
            &["upstream", "kind"],
        )
        .expect("static metric");
        registry.register(Box::new(upstream_errors.clone())).expect("registered once");
        let agent_calls = IntCounterVec::new(
            Opts::new("agent_calls_total", "Tool calls by the configured agent that made them (delegated ones under their root agent) and outcome"),
            &["agent", "outcome"],
        )
        .expect("static metric");
        registry.register(Box::new(agent_calls.clone())).expect("registered once");
        let auth_refusals = IntCounterVec::new(
            Opts::new(
                "auth_refusals_total",
                "Agent requests refused before routing, by reason (missing, invalid, keys_unavailable)",
            ),
            &["reason"],
        )
        .expect("static metric");
        registry.register(Box::new(auth_refusals.clone())).expect("registered once");
        let state_backend_up = prometheus::IntGauge::new(
            "state_backend_up",
            "1 when the shared state store (state.backend: redis) answered its last check; always 1 for memory",
        )
        .expect("static metric");
        state_backend_up.set(1);
        registry.register(Box::new(state_backend_up.clone())).expect("registered once");
        let tool_definition_changes = IntCounterVec::new(
            Opts::new(
                "tool_definition_changes_total",
                "Tool definitions an upstream listed that differ from the pinned one (or, without a lock file, from the first one seen), each distinct definition once",
            ),
            &["upstream"],
        )
        .expect("static metric");
        registry.register(Box::new(tool_definition_changes.clone())).expect("registered once");
        for d in ["allow_once", "allow_session", "deny", "cancel", "timeout"] {
            approvals.with_label_values(&[d]);
        }
        Metrics {
            notify: super::notify_metrics::NotifyMetrics::register(&registry),
            registry,
            process: super::process_metrics::ProcessMetrics::new(),
            tool_calls,
            rule_decisions,
            upstream_latency,
            overhead,
            tools: ReadMostly::new(4),
            latency: ReadMostly::new(1),
            other: ToolSeries::new(OTHER),
            admit: Mutex::default(),
            checker,
            limits,
            reviewer,
            flows,
            rules,
            approvals,
            approvals_pending,
            sessions_flagged,
            waivers_active,
            approval_wait,
            audit_dropped,
            upstream_errors,
            agent_calls,
            auth_refusals,
            state_backend_up,
            tool_definition_changes,
        }
    }

    /// Exports a configured `upstream`'s series at 0 — its definition changes and each kind of
    /// its errors — so a rate or ratio alert sees zeros, not an absent series.
    pub fn upstream_series_start(&self, upstream: &str) {
        self.tool_definition_changes.with_label_values(&[upstream]);
        for kind in UPSTREAM_ERROR_KINDS {
            self.upstream_errors.with_label_values(&[upstream, kind]);
        }
    }

    /// Counts one changed (or unpinned) tool definition of `upstream` (a configured name).
    pub fn tool_definition_change(&self, upstream: &str) {
        self.tool_definition_changes.with_label_values(&[upstream]).inc();
    }

    /// Whether the shared state store is reachable.
    pub fn state_backend_up(&self, up: bool) {
        self.state_backend_up.set(i64::from(up));
    }

    /// Counts one tool call of a configured agent.
    pub fn agent_call(&self, agent: &str, outcome: CallOutcome) {
        self.agent_calls.with_label_values(&[agent, outcome.as_str()]).inc();
    }

    /// Counts one request refused for its credential.
    pub fn auth_refused(&self, e: &crate::identity::AuthError) {
        let reason = match e {
            crate::identity::AuthError::Missing => "missing",
            crate::identity::AuthError::Invalid(_) => "invalid",
            crate::identity::AuthError::KeysUnavailable(_) => "keys_unavailable",
        };
        self.auth_refusals.with_label_values(&[reason]).inc();
    }

    /// Counts one finished (or refused) tool call. A label seen before is counted without a
    /// lock or an allocation.
    pub fn tool_call(&self, upstream: &str, tool: &str, outcome: CallOutcome) {
        let count = |series: &ToolSeries| series.inc(&self.tool_calls, upstream, outcome);
        if self.tools.read(tool, |s| s.map(|s| count(s))).is_none() {
            match self.admit(tool) {
                Some(series) => count(&series),
                None => count(&self.other),
            }
        }
    }

    /// Counts one Layer 1 decision, made by `rule`.
    pub fn rule_decision(&self, effect: Effect, scope: Scope, rule: &str) {
        self.rule_decisions[effect as usize * Scope::ALL.len() + scope as usize].inc();
        self.rules.hit(rule, scope, effect);
    }

    /// Counts one resolved ask (`headless` ones are counted as `ask_refused` tool calls instead).
    pub fn approvals(&self, decision: &str) {
        if decision != "headless" {
            self.approvals.with_label_values(&[decision]).inc();
        }
    }

    /// One request an upstream failed (`upstream` is a configured name: bounded).
    pub fn upstream_error(&self, upstream: &str, kind: &str) {
        self.upstream_errors.with_label_values(&[upstream, kind]).inc();
    }

    pub fn audit_dropped(&self) {
        self.audit_dropped.inc();
    }

    /// How long one ask waited for a human (`channel`: elicitation or api).
    pub fn approval_wait(&self, channel: &str, decision: &str, secs: f64) {
        self.approval_wait.with_label_values(&[channel, decision]).observe(secs);
    }

    pub fn approvals_pending(&self, n: usize) {
        self.approvals_pending.set(n as i64);
    }

    pub fn session_flagged(&self) {
        self.sessions_flagged.inc();
    }

    pub fn waivers_active(&self, n: u64) {
        self.waivers_active.set(n as i64);
    }

    /// Observes one upstream round trip (`upstream` is a configured name: bounded).
    pub fn upstream_latency(&self, upstream: &str, secs: f64) {
        if self.latency.read(upstream, |h| h.map(|h| h.observe(secs))).is_none() {
            let h = self.upstream_latency.with_label_values(&[upstream]);
            h.observe(secs);
            self.latency.insert(upstream, h);
        }
    }

    pub fn overhead(&self, secs: f64) {
        self.overhead.observe(secs);
    }

    /// Admits a tool label not seen before while there is room (`None`: it counts as `other`).
    fn admit(&self, tool: &str) -> Option<Arc<ToolSeries>> {
        let sane = tool.len() <= 128 && tool.chars().all(|c| c.is_ascii_graphic());
        if !sane || self.tools.len() >= MAX_TOOL_LABELS {
            return None;
        }
        let _admit = self.admit.lock().unwrap_or_else(|p| p.into_inner());
        if self.tools.len() >= MAX_TOOL_LABELS {
            // Full now; another call may have admitted this very label first.
            return self.tools.get(tool);
        }
        Some(self.tools.get_or_insert_with(tool, || Arc::new(ToolSeries::new(tool))))
    }

    /// The text exposition format for `/metrics`.
    pub fn render(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut families = self.registry.gather();
        families.extend(self.process.gather());
        if let Err(e) = TextEncoder::new().encode(&families, &mut out) {
            tracing::error!(error = %e, "encoding metrics failed");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_upstream_round_trip_is_observed_under_its_own_upstream() {
        let m = Metrics::new();
        for (up, secs) in [("fs", 0.01), ("fs", 0.02), ("web", 0.5)] {
            m.upstream_latency(up, secs);
        }
        let text = String::from_utf8(m.render()).unwrap();
        assert!(text.contains("portcullis_upstream_latency_seconds_count{upstream=\"fs\"} 2"), "{text}");
        assert!(text.contains("portcullis_upstream_latency_seconds_count{upstream=\"web\"} 1"), "{text}");
    }

    #[test]
    fn exports_the_contract_names_with_the_prefix() {
        let m = Metrics::new();
        m.tool_call("fs", "mcp__fs__read", CallOutcome::Denied);
        m.upstream_latency("fs", 0.01);
        m.overhead(0.0001);
        m.rule_decision(Effect::Deny, Scope::Cli, "Shell(rm:*)");
        let text = String::from_utf8(m.render()).unwrap();
        assert!(
            text.contains(
                r#"portcullis_tool_calls_total{outcome="denied",tool="mcp__fs__read",upstream="fs"} 1"#
            ),
            "{text}"
        );
        assert!(text.contains("portcullis_upstream_latency_seconds_bucket"));
        assert!(text.contains("portcullis_proxy_overhead_seconds_count 1"));
        assert!(text.contains(r#"portcullis_rule_decisions_total{effect="deny",scope="cli"} 1"#), "{text}");
        assert!(text.contains(r#"portcullis_rule_decisions_total{effect="allow",scope="managed"} 0"#));
        assert!(
            text.contains(r#"portcullis_rule_hits_total{effect="deny",rule="Shell(rm:*)",scope="cli"} 1"#)
        );
        assert!(
            text.contains(&format!(r#"portcullis_build_info{{version="{}"}} 1"#, env!("CARGO_PKG_VERSION")))
        );
        // The process collector's series, unprefixed as every exporter names them.
        assert!(
            text.contains("\nprocess_resident_memory_bytes ") && text.contains("\nprocess_open_fds "),
            "{text}"
        );
        // Layer 2's series exist from the start, so alerts see zeros rather than nothing.
        for series in [
            r#"portcullis_checker_requests_total{result="timeout"} 0"#,
            r#"portcullis_unguarded_total{phase="post",reason="breaker_open"} 0"#,
            r#"portcullis_cache_requests_total{result="hit"} 0"#,
            "portcullis_prefilter_skips_total 0",
            "portcullis_checker_up 1",
            "portcullis_checker_latency_seconds_count 0",
        ] {
            assert!(text.contains(series), "missing {series}");
        }
    }

    #[test]
    fn tool_labels_are_capped() {
        let m = Metrics::new();
        for i in 0..(MAX_TOOL_LABELS + 10) {
            m.tool_call("fs", &format!("t{i}"), CallOutcome::Forwarded);
        }
        m.tool_call("fs", "bad name\n", CallOutcome::Forwarded);
        let text = String::from_utf8(m.render()).unwrap();
        assert!(text.contains(r#"tool="other""#));
        assert!(!text.contains("bad name"));
    }

    #[test]
    fn an_outcome_indexes_its_counters_by_its_place_in_all() {
        for (i, o) in CallOutcome::ALL.into_iter().enumerate() {
            assert_eq!(o as usize, i, "{o:?}");
        }
    }

    #[test]
    fn a_label_seen_before_counts_into_the_same_series_per_upstream_and_outcome() {
        let m = Metrics::new();
        for _ in 0..3 {
            m.tool_call("fs", "mcp__fs__read", CallOutcome::Forwarded);
        }
        m.tool_call("sh", "mcp__fs__read", CallOutcome::Forwarded);
        m.tool_call("fs", "mcp__fs__read", CallOutcome::Failed);
        let text = String::from_utf8(m.render()).unwrap();
        for series in [
            r#"{outcome="forwarded",tool="mcp__fs__read",upstream="fs"} 3"#,
            r#"{outcome="forwarded",tool="mcp__fs__read",upstream="sh"} 1"#,
            r#"{outcome="failed",tool="mcp__fs__read",upstream="fs"} 1"#,
        ] {
            assert!(text.contains(&format!("portcullis_tool_calls_total{series}")), "{series} in {text}");
        }
        assert!(!text.contains(r#"outcome="denied""#), "an outcome never counted exports no series");
    }

    #[test]
    fn a_tool_named_other_and_the_overflow_share_one_series() {
        let m = Metrics::new();
        m.tool_call("fs", "other", CallOutcome::Forwarded);
        for i in 0..MAX_TOOL_LABELS {
            m.tool_call("fs", &format!("t{i}"), CallOutcome::Forwarded);
        }
        m.tool_call("fs", "one-too-many", CallOutcome::Forwarded);
        let text = String::from_utf8(m.render()).unwrap();
        assert!(
            text.contains(r#"portcullis_tool_calls_total{outcome="forwarded",tool="other",upstream="fs"} 3"#)
        );
        assert!(!text.contains(&format!("t{}", MAX_TOOL_LABELS - 1)), "the cap counts the admitted `other`");
    }
}
