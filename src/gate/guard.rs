//! The policy behind both interception points: the Layer 1 rule engine before a call, and the
//! `redact` list (until the checker takes it over) on its result.

use std::sync::Arc;

use serde_json::Value;

use super::{Denial, Outcome, PostOutcome};
use crate::call::ToolCall;
use crate::config::Policy;
use crate::mcp::result::replace_everywhere;
use crate::rules::{Decision, Effect, Engine};
use crate::telemetry::Metrics;

/// What replaces a redacted string.
pub const REDACTED: &str = "[guardrail: redacted]";

/// Decides calls and rewrites results. Built once from config; cheap to share.
#[derive(Debug)]
pub struct Guard {
    engine: Engine,
    redact: Vec<String>,
    metrics: Arc<Metrics>,
}

impl Default for Guard {
    fn default() -> Self {
        Guard::new(&Policy::default(), Arc::new(Metrics::new()))
    }
}

impl Guard {
    pub fn new(policy: &Policy, metrics: Arc<Metrics>) -> Guard {
        Guard { engine: policy.engine.clone(), redact: policy.redact.clone(), metrics }
    }

    /// Layer 1's decision for a call, as `portcullis check` reports it.
    pub fn decide(&self, call: &ToolCall) -> Decision {
        let args: Value = match call.args.as_deref() {
            Some(a) if self.engine.needs_args(&call.qualified) => {
                serde_json::from_str(a.get()).unwrap_or_else(|_| Value::Object(Default::default()))
            }
            _ => Value::Object(Default::default()),
        };
        self.engine.decide(&call.upstream, &call.qualified, &args)
    }

    /// The pre-call outcome. With no approval channel yet, `ask` is refused ("headless"), with a
    /// reason that says a human could have allowed it.
    pub fn pre(&self, call: &ToolCall) -> Outcome {
        let d = self.decide(call);
        self.metrics.rule_decision(d.effect, d.scope);
        let scope = d.scope.as_str();
        match d.effect {
            Effect::Allow => Outcome::Forward,
            Effect::Deny => Outcome::Refuse(Denial {
                reason: format!(
                    "portcullis denied {}: {} (rule {}, scope {scope}). The call was not sent.",
                    call.qualified, d.reason, d.rule
                ),
                rule: d.rule,
                effect: Effect::Deny,
            }),
            Effect::Ask => Outcome::Refuse(Denial {
                reason: format!(
                    "portcullis needs a human to approve {}: {} (rule {}, scope {scope}). No approval channel \
                     is configured (headless), so the call was refused and not sent; a permissions rule can allow it.",
                    call.qualified, d.reason, d.rule
                ),
                rule: d.rule,
                effect: Effect::Ask,
            }),
        }
    }

    /// True when results need to be held and inspected at all; lets the proxy skip the post path.
    pub fn inspects_results(&self) -> bool {
        !self.redact.is_empty()
    }

    /// The post-call decision: rewrites `result` in place.
    pub fn post(&self, _call: &ToolCall, result: &mut Value) -> PostOutcome {
        match replace_everywhere(result, &self.redact, REDACTED) {
            0 => PostOutcome::Pass,
            n => PostOutcome::Rewritten { replacements: n },
        }
    }

    /// The same rewrite over raw text (plain HTTP tools whose results are not JSON).
    pub fn post_text(&self, text: &str) -> Option<String> {
        let mut s = text.to_owned();
        let mut hit = false;
        for r in &self.redact {
            if s.contains(r.as_str()) {
                s = s.replace(r.as_str(), REDACTED);
                hit = true;
            }
        }
        hit.then_some(s)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::Config;
    use crate::mcp::era::Era;
    use serde_json::json;

    /// A guard from a YAML policy fragment.
    pub fn guard(yaml: &str) -> Guard {
        let c = Config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e}"));
        Guard::new(&c.policy, Arc::new(Metrics::new()))
    }

    #[test]
    fn denies_and_headless_asks_are_refusals_that_say_which() {
        let g = guard("permissions: { deny: [mcp__fs__delete], allow: [mcp__fs__read] }\n");
        let call = |n: &str| ToolCall::mcp("fs".into(), n, None, Era::Legacy);
        let Outcome::Refuse(d) = g.pre(&call("delete")) else { panic!() };
        assert_eq!(d.effect, Effect::Deny);
        assert!(d.reason.contains("mcp__fs__delete"), "{}", d.reason);
        assert_eq!(g.pre(&call("read")), Outcome::Forward);
        let Outcome::Refuse(d) = g.pre(&call("other")) else { panic!("no rule: ask, headless: refused") };
        assert_eq!(d.effect, Effect::Ask);
        assert!(d.reason.contains("headless"), "{}", d.reason);
    }

    #[test]
    fn post_rewrites_and_reports_pass_when_clean() {
        let g = guard("redact: [TOPSECRET]\n");
        let call = ToolCall::mcp("fs".into(), "read", None, Era::Legacy);
        let mut v = json!({"content":[{"type":"text","text":"a TOPSECRET b"}]});
        assert_eq!(g.post(&call, &mut v), PostOutcome::Rewritten { replacements: 1 });
        assert_eq!(v["content"][0]["text"], format!("a {REDACTED} b"));
        assert_eq!(g.post(&call, &mut v), PostOutcome::Pass);
        assert_eq!(g.post_text("x TOPSECRET"), Some(format!("x {REDACTED}")));
        assert_eq!(g.post_text("clean"), None);
    }
}
