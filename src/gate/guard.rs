//! The proxy core's placeholder policy: `deny_tools` and `redact`. The rule engine and the checker
//! replace it behind the same two calls.

use std::collections::HashSet;

use serde_json::Value;

use super::{Denial, Outcome, PostOutcome};
use crate::call::ToolCall;
use crate::config::Policy;
use crate::mcp::result::replace_everywhere;

/// What replaces a redacted string.
pub const REDACTED: &str = "[guardrail: redacted]";

/// Decides calls and rewrites results. Cheap to share: built once from config.
#[derive(Debug, Default)]
pub struct Guard {
    deny: HashSet<String>,
    redact: Vec<String>,
}

impl Guard {
    pub fn new(policy: &Policy) -> Guard {
        Guard {
            deny: policy.deny_tools.iter().cloned().collect(),
            redact: policy.redact.clone(),
        }
    }

    /// The pre-call decision.
    pub fn pre(&self, call: &ToolCall) -> Outcome {
        if self.deny.contains(&call.qualified) {
            return Outcome::Refuse(Denial {
                reason: format!(
                    "portcullis refused {}: this tool is denied by the proxy's policy (deny_tools); the call was not sent",
                    call.qualified
                ),
                rule: format!("deny_tools: {}", call.qualified),
            });
        }
        Outcome::Forward
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
mod tests {
    use super::*;
    use crate::mcp::era::Era;
    use serde_json::json;

    fn guard() -> Guard {
        Guard::new(&Policy {
            deny_tools: vec!["mcp__fs__delete".into()],
            redact: vec!["TOPSECRET".into()],
        })
    }

    #[test]
    fn denies_only_the_exact_qualified_name() {
        let g = guard();
        let call = |n: &str| ToolCall::mcp("fs".into(), n, None, Era::Legacy);
        assert!(matches!(g.pre(&call("delete")), Outcome::Refuse(_)));
        assert_eq!(g.pre(&call("delete2")), Outcome::Forward);
        assert_eq!(
            g.pre(&ToolCall::mcp("other".into(), "delete", None, Era::Legacy)),
            Outcome::Forward
        );
    }

    #[test]
    fn post_rewrites_and_reports_pass_when_clean() {
        let g = guard();
        let call = ToolCall::mcp("fs".into(), "read", None, Era::Legacy);
        let mut v = json!({"content":[{"type":"text","text":"a TOPSECRET b"}]});
        assert_eq!(
            g.post(&call, &mut v),
            PostOutcome::Rewritten { replacements: 1 }
        );
        assert_eq!(v["content"][0]["text"], format!("a {REDACTED} b"));
        assert_eq!(g.post(&call, &mut v), PostOutcome::Pass);
        assert_eq!(g.post_text("x TOPSECRET"), Some(format!("x {REDACTED}")));
        assert_eq!(g.post_text("clean"), None);
    }
}
