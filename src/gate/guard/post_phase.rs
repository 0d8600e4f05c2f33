//! The post phase of the [`Guard`]: the `redact` list, then the Layer 2 check a rule asks
//! for, composed here once for every transport and entrance.

use serde_json::Value;

use super::{Guard, REDACTED};
use crate::call::ToolCall;
use crate::gate::PostOutcome;
use crate::mcp::result::replace_everywhere;

impl Guard {
    /// The post phase on one result, in its one order, for every transport and entrance: the
    /// `redact` list first (so the checker never sees what the operator listed as secret), then
    /// the Layer 2 check a rule asks for. `result` is rewritten in place (redactions, a
    /// sanitize); returns what `redact` did and the check's report.
    pub async fn judge_result(
        &self,
        call: &ToolCall,
        result: &mut Value,
    ) -> (PostOutcome, Option<crate::guardrails::Report<crate::guardrails::PostJudgement>>) {
        // What the agent is shown is recorded before the redact list rewrites it: a value the
        // operator listed as secret is watched for on its way out too.
        if let Some(flows) = &self.flows {
            let recorded = flows.record(call, result, &self.redact);
            flows.share(call, recorded).await;
        }
        let redacted = self.post(call, result);
        let report = match self.post_check(call) {
            Some(check) => Some(check.report(call, result).await),
            None => None,
        };
        (redacted, report)
    }

    /// [`Self::judge_result`] as one outcome: a block or a result that could not be judged under
    /// a closed rule puts `refusal(reason)` in the result's place.
    pub async fn result_outcome(
        &self,
        call: &ToolCall,
        result: &mut Value,
        refusal: impl Fn(&str) -> Value,
    ) -> PostOutcome {
        use crate::guardrails::PostJudgement;
        let (redacted, report) = self.judge_result(call, result).await;
        match report.map(|r| r.judgement) {
            None | Some(PostJudgement::Pass) => redacted,
            Some(PostJudgement::Sanitized) if redacted == PostOutcome::Pass => {
                PostOutcome::Rewritten { replacements: 1 }
            }
            Some(PostJudgement::Sanitized) => redacted,
            Some(PostJudgement::Block { reason }) => {
                *result = refusal(&reason);
                PostOutcome::Blocked
            }
            Some(PostJudgement::Unavailable { reason }) => {
                *result = refusal(&reason);
                PostOutcome::Unavailable
            }
        }
    }

    /// The synchronous part of the post-call decision: the `redact` list, in place.
    pub fn post(&self, _call: &ToolCall, result: &mut Value) -> PostOutcome {
        // Held secrets first: nothing after this (redact, detectors, the checker, the audit
        // line) ever reads a held value, only its sentinel.
        let masked = self.secrets.as_ref().map_or(0, |s| s.mask_result(result));
        if self.redact.is_empty() {
            return match masked {
                0 => PostOutcome::Pass,
                n => PostOutcome::Rewritten { replacements: n },
            };
        }
        // A text blob (an embedded resource, a resource read) is redacted where a client decodes it.
        let mut in_blobs = 0;
        crate::checker::content::rewrite_text_blobs(result, &mut |text| {
            let mut v = Value::String(text.to_owned());
            match (replace_everywhere(&mut v, &self.redact, REDACTED), v) {
                (0, _) => Some(None),
                (n, Value::String(new)) => {
                    in_blobs += n;
                    Some(Some(new))
                }
                _ => Some(None),
            }
        });
        match masked + in_blobs + replace_everywhere(result, &self.redact, REDACTED) {
            0 => PostOutcome::Pass,
            n => PostOutcome::Rewritten { replacements: n },
        }
    }

    /// The same rewrite over raw text (plain HTTP tools whose results are not JSON).
    pub fn post_text(&self, text: &str) -> Option<String> {
        let masked = self.secrets.as_ref().and_then(|s| s.mask_str(text));
        let mut hit = masked.is_some();
        let mut s = masked.unwrap_or_else(|| text.to_owned());
        for r in &self.redact {
            if s.contains(r.as_str()) {
                s = s.replace(r.as_str(), REDACTED);
                hit = true;
            }
        }
        hit.then_some(s)
    }
}
