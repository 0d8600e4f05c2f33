//! `rule_hits_total{rule, scope, effect}`: Layer 1 decisions by the rule that made them. Every
//! configured rule (the config's, each agent's, `--permission-config` files', the managed file's)
//! is exported at zero from the start and after each reload, so an alert on one rule sees no gap;
//! a reload drops the series of rules no longer configured. Built-in rules (`jail`, `egress: …`,
//! the floor's) and rules from workspace tier files are admitted as they decide while fewer than
//! [`MAX_RULE_LABELS`] names are held (configured ones included); beyond that they count under
//! `rule="other"`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use prometheus::{IntCounter, IntCounterVec, Opts, Registry};

use crate::read_mostly::ReadMostly;
use crate::rules::{Effect, Rule, Scope};

/// Distinct rule names kept as label values before the rest fold into `other`.
pub const MAX_RULE_LABELS: usize = 512;
const OTHER: &str = "other";

/// One rule name's counters, by scope and effect, each made on first use.
type Series = Arc<[[OnceLock<IntCounter>; Effect::ALL.len()]; Scope::ALL.len()]>;

#[derive(Debug)]
pub struct RuleMetrics {
    hits: IntCounterVec,
    by_rule: ReadMostly<Series>,
    other: Series,
    /// The label sets exported for the configured rules in force, so a reload can drop the
    /// ones it removed; taken to admit a name, so the cap holds.
    configured: Mutex<HashSet<(String, Scope, Effect)>>,
}

impl RuleMetrics {
    pub fn register(registry: &Registry) -> RuleMetrics {
        let hits = IntCounterVec::new(
            Opts::new(
                "rule_hits_total",
                "Layer 1 decisions by the rule that decided, its scope and the effect (configured rules exported at zero)",
            ),
            &["rule", "scope", "effect"],
        )
        .expect("static metric");
        registry.register(Box::new(hits.clone())).expect("registered once");
        RuleMetrics {
            hits,
            by_rule: ReadMostly::new(16),
            other: Series::default(),
            configured: Mutex::default(),
        }
    }

    /// Exports every rule in `rules` at zero and drops the series of configured rules that are
    /// no longer among them (their counts go with them, as a removed rule's should).
    pub fn in_force<'a>(&self, rules: impl IntoIterator<Item = &'a Rule>) {
        let now: HashSet<(String, Scope, Effect)> =
            rules.into_iter().map(|r| (r.spec.source.clone(), r.scope, r.effect)).collect();
        let mut configured = self.configured.lock().unwrap_or_else(|p| p.into_inner());
        for (rule, scope, effect) in configured.difference(&now) {
            let _ = self.hits.remove_label_values(&[rule, scope.as_str(), effect.as_str()]);
            self.by_rule.remove(rule);
        }
        // Configured rules are bounded by the config itself: each gets its series whatever the
        // cap (which bounds only the names admitted as they decide).
        for (rule, scope, effect) in &now {
            let series = self.by_rule.get_or_insert_with(rule, Series::default);
            Self::counter(&self.hits, &series, rule, *scope, *effect);
        }
        *configured = now;
    }

    /// Counts one decision `rule` made. A name seen before is counted without a lock.
    pub fn hit(&self, rule: &str, scope: Scope, effect: Effect) {
        match self.by_rule.read(rule, |s| s.map(|s| Self::counter(&self.hits, s, rule, scope, effect).inc()))
        {
            Some(()) => {}
            None => match self.series(rule) {
                Some(series) => Self::counter(&self.hits, &series, rule, scope, effect).inc(),
                None => Self::counter(&self.hits, &self.other, OTHER, scope, effect).inc(),
            },
        }
    }

    /// `rule`'s series, admitted when the cap allows.
    fn series(&self, rule: &str) -> Option<Series> {
        if let Some(s) = self.by_rule.get(rule) {
            return Some(s);
        }
        if self.by_rule.len() >= MAX_RULE_LABELS || rule == OTHER {
            return None;
        }
        Some(self.by_rule.get_or_insert_with(rule, Series::default))
    }

    fn counter<'s>(
        hits: &IntCounterVec,
        series: &'s Series,
        rule: &str,
        scope: Scope,
        effect: Effect,
    ) -> &'s IntCounter {
        series[scope as usize][effect as usize]
            .get_or_init(|| hits.with_label_values(&[rule, scope.as_str(), effect.as_str()]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::spec::RuleSpec;

    fn rule(source: &str, effect: Effect) -> Rule {
        Rule { spec: RuleSpec::parse(source).unwrap(), effect, scope: Scope::Config }
    }

    fn exported(registry: &Registry) -> String {
        let mut out = Vec::new();
        prometheus::Encoder::encode(&prometheus::TextEncoder::new(), &registry.gather(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn configured_rules_are_exported_at_zero_and_a_reload_drops_the_ones_it_removed() {
        let registry = Registry::new();
        let m = RuleMetrics::register(&registry);
        let push = rule("Shell(git push:*)", Effect::Deny);
        let ls = rule("Shell(ls:*)", Effect::Allow);
        m.in_force([&push, &ls]);
        let text = exported(&registry);
        assert!(
            text.contains(r#"rule_hits_total{effect="deny",rule="Shell(git push:*)",scope="config"} 0"#),
            "{text}"
        );
        assert!(
            text.contains(r#"rule_hits_total{effect="allow",rule="Shell(ls:*)",scope="config"} 0"#),
            "{text}"
        );
        m.hit("Shell(git push:*)", Scope::Config, Effect::Deny);
        m.hit("jail", Scope::Builtin, Effect::Deny);
        m.in_force([&ls]);
        let text = exported(&registry);
        assert!(!text.contains("git push"), "a removed rule's series is gone: {text}");
        assert!(text.contains(r#"rule_hits_total{effect="deny",rule="jail",scope="builtin"} 1"#), "{text}");
        // Counting a name the reload removed makes its series again (the name decided).
        m.hit("Shell(git push:*)", Scope::Config, Effect::Deny);
        assert!(exported(&registry).contains(r#"rule="Shell(git push:*)",scope="config"} 1"#));
    }

    #[test]
    fn every_configured_rule_is_exported_even_past_the_cap() {
        let registry = Registry::new();
        let m = RuleMetrics::register(&registry);
        let rules: Vec<Rule> =
            (0..MAX_RULE_LABELS + 5).map(|i| rule(&format!("mcp__up__tool{i}"), Effect::Deny)).collect();
        m.in_force(&rules);
        let text = exported(&registry);
        let series = text.lines().filter(|l| l.starts_with("rule_hits_total{")).count();
        assert_eq!(series, MAX_RULE_LABELS + 5, "one zero series per configured rule");
        m.hit("jail", Scope::Builtin, Effect::Deny);
        assert!(
            exported(&registry).contains(r#"rule="other",scope="builtin"} 1"#),
            "the cap binds built-ins"
        );
    }

    #[test]
    fn names_past_the_cap_count_as_other() {
        let registry = Registry::new();
        let m = RuleMetrics::register(&registry);
        for i in 0..MAX_RULE_LABELS + 10 {
            m.hit(&format!("egress: host{i}"), Scope::Builtin, Effect::Deny);
        }
        let text = exported(&registry);
        let series = text.lines().filter(|l| l.starts_with("rule_hits_total{")).count();
        assert_eq!(series, MAX_RULE_LABELS + 1, "capped, plus other");
        assert!(text.contains(r#"rule_hits_total{effect="deny",rule="other",scope="builtin"} 10"#), "{text}");
    }
}
