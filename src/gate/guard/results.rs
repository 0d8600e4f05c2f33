//! What the transports ask a guard about results before they hold one (is anything watching,
//! which Layer 2 check covers it), and the last step before forwarding: held secrets swapped in.

use std::sync::Arc;

use super::{Guard, PostCheck};
use crate::call::ToolCall;
use crate::checker::Phase;

impl Guard {
    /// True when results need to be held and inspected at all; lets the proxy skip the post path.
    pub fn inspects_results(&self) -> bool {
        self.redacts()
            || self.flows.is_some()
            || self.guardrails.as_ref().is_some_and(|g| g.watches_results())
    }

    /// True when some answer of MCP upstream `upstream` may be inspected: `redact`, `secrets:`
    /// or `flows:` read every answer; else a guardrail rule that may judge a result of one of
    /// its tools (`mcp__{upstream}__…`, a kind, `*`). False proves none is: a stray answer on
    /// one of its exchanges names only its own calls, which nothing judges.
    pub fn inspects_results_on(&self, upstream: &str) -> bool {
        if self.redacts() || self.flows.is_some() {
            return true;
        }
        self.guardrails.as_ref().filter(|g| g.watches_results()).is_some_and(|g| {
            let head = format!("mcp__{upstream}__");
            g.may_judge_results_under(&head)
        })
    }

    /// True when the answer to `call` must be held and inspected: every answer is when a
    /// `redact` list, `secrets:` or `flows:` is configured (each reads every result); otherwise
    /// only an answer a guardrail rule judges. A proxy holds no other.
    pub fn inspects_result_of(&self, call: &ToolCall) -> bool {
        self.redacts() || self.flows.is_some() || self.checks_result_of(call)
    }

    /// True when the answers on a stream of `upstream` carrying `calls` must be held: one of the
    /// calls' results is inspected ([`Self::inspects_result_of`]), or a server-to-client message
    /// on it would be judged — under a watched call a rule covers, else under the upstream's
    /// catch-all name ([`crate::gate::post::server::counted_as`]). With none of these, the
    /// stream is relayed as it comes, as with no post rule at all.
    pub fn holds_answers<'c>(&self, upstream: &str, mut calls: impl Iterator<Item = &'c ToolCall>) -> bool {
        if self.redacts() || self.flows.is_some() {
            return true;
        }
        let Some(g) = self.guardrails.as_ref().filter(|g| g.watches_results()) else { return false };
        if calls.any(|c| self.checks_result_of(c)) {
            return true;
        }
        let catch_all = crate::gate::post::server::counted_as(upstream);
        g.covers(&catch_all, self.engine.kinds().kind_of(&catch_all), Phase::Post)
    }

    /// True when `a`'s result is judged where `b`'s is not: a guardrail rule reads `a`'s and not
    /// `b`'s, or `a` is a `flows.private` tool and `b` is not.
    pub fn judges_more(&self, a: &ToolCall, b: &ToolCall) -> bool {
        let private = |c: &ToolCall| self.flows.as_ref().is_some_and(|f| f.settings.is_private(&c.qualified));
        (self.checks_result_of(a) && !self.checks_result_of(b)) || (private(a) && !private(b))
    }

    /// True when results are recorded in the flow index (`flows:`).
    pub fn records_flows(&self) -> bool {
        self.flows.is_some()
    }

    /// True when a guardrail rule judges `call`'s result (no allocation: asked per SSE event).
    pub fn checks_result_of(&self, call: &ToolCall) -> bool {
        let kind = self.engine.kinds().kind_of(&call.qualified);
        self.guardrails.as_ref().is_some_and(|g| g.covers(&call.qualified, kind, Phase::Post))
    }

    /// True when a `redact` list or a `secrets:` section is configured: every result is
    /// rewritten before anyone reads it.
    pub fn redacts(&self) -> bool {
        !self.redact.is_empty() || self.secrets.is_some()
    }

    /// The held secrets, when `secrets:` is configured.
    pub fn secrets(&self) -> Option<&crate::secrets::Held> {
        self.secrets.as_deref()
    }

    /// A decided JSON-RPC payload for `upstream` with held values swapped in for the sentinels
    /// its calls may carry: the transports' last step before forwarding
    /// ([`crate::secrets::forward`]). `None` when nothing changes or no secret is held.
    pub fn unmask_payload(
        &self,
        upstream: &Arc<str>,
        era: crate::mcp::era::Era,
        body: &[u8],
    ) -> Option<Vec<u8>> {
        crate::secrets::forward::unmask_payload(self.secrets.as_deref()?, self.kinds(), upstream, era, body)
    }

    /// [`Self::unmask_payload`] for a plain HTTP tool's body.
    pub fn unmask_http(&self, call: &ToolCall, body: &[u8]) -> Option<Vec<u8>> {
        crate::secrets::forward::unmask_http(self.secrets.as_deref()?, self.kinds(), call, body)
    }

    /// The Layer 2 check for `call`'s result, if a rule covers it.
    pub fn post_check(&self, call: &ToolCall) -> Option<PostCheck> {
        let g = self.guardrails.as_ref()?;
        let kind = self.engine.kinds().kind_of(&call.qualified);
        let rule = g.post_rule(&call.qualified, kind)?;
        Some(PostCheck { guardrails: g.clone(), rule: rule.clone(), kind: kind.clone() })
    }
}
