//! The hook's decisions, made by the same [`Guard`] as every other transport's: Layer 1, then
//! Layer 2 where a guardrail rule covers the call (a proven read-only `Bash` command skips it, as
//! a shell tool's does), and after the call the `redact` list and the post check. Only the words
//! are the hook's: what Claude Code is told (see [`super::answer`]).

use serde_json::Value;

use super::answer::{Answer, Permission};
use crate::call::ToolCall;
use crate::gate::{CallOutcome, Denial, Guard, Outcome, PostOutcome};
use crate::guardrails::PostJudgement;
use crate::mcp::era::Era;
use crate::mcp::result::refusal_value;
use crate::rules::Decision;

use crate::says::{Not, Said, BUILT_IN_BLOCKED, WITHHELD};

/// Layer 1's answer, or the Layer 2 check it asks for first (with Layer 1's decision, which an
/// allow after the check reports): Layer 1 is evaluated once.
pub fn layer1(
    guard: &Guard,
    call: &ToolCall,
) -> Result<Answer, (Box<crate::gate::guard::PreCheck>, Decision)> {
    match guard.pre_explained(call) {
        (Outcome::Check(check), d) => Err((check, d)),
        (other, d) => Ok(settled(call, other, &d)),
    }
}

/// The answer to a settled pre-call outcome; `d`: Layer 1's decision.
pub fn settled(call: &ToolCall, outcome: Outcome, d: &Decision) -> Answer {
    match outcome {
        Outcome::Forward => allowed(call, d),
        Outcome::Refuse(d) => refused(call, d),
        // A check that asks for another is refused, never allowed.
        Outcome::Check(_) => Answer::Pre {
            permission: Permission::Deny,
            reason: Said::Unfinished { tool: &call.qualified, not: Not::Run }.to_string(),
        },
    }
}

/// An allow, with the rule that allowed it (Claude Code logs the reason).
pub fn allowed(call: &ToolCall, d: &Decision) -> Answer {
    Answer::Pre {
        permission: Permission::Allow,
        reason: Said::HookAllows { tool: &call.qualified, reason: &d.reason, rule: &d.rule }.to_string(),
    }
}

/// A refusal as Claude Code's answer: a Layer 1 ask becomes Claude Code's own ask (its user
/// decides); a deny, a checker block and a fail-closed check stay denials.
pub fn refused(call: &ToolCall, d: Denial) -> Answer {
    match (d.outcome, d.ask) {
        (CallOutcome::AskRefused, Some(ask)) => Answer::Pre {
            permission: Permission::Ask,
            reason: Said::HookAsks {
                tool: &call.qualified,
                reason: &ask.reason,
                rule: Some(&d.rule),
                operator: None,
            }
            .to_string(),
        },
        (CallOutcome::AskRefused, None) => Answer::Pre { permission: Permission::Ask, reason: d.reason },
        _ => Answer::Pre { permission: Permission::Deny, reason: d.reason },
    }
}

/// What happened to a result: the redact list's count and, when a rule covers it, Layer 2's
/// judgement (with `result` rewritten in place by a sanitize).
pub fn post_answer(
    call: &ToolCall,
    redacted: PostOutcome,
    judgement: Option<PostJudgement>,
    result: Value,
) -> Answer {
    let mcp = call.qualified.starts_with("mcp__");
    match judgement {
        Some(PostJudgement::Block { reason } | PostJudgement::Unavailable { reason }) if mcp => {
            Answer::Block { replacement: Some(refusal_value(&reason, Era::Legacy)), reason }
        }
        // A built-in tool's output cannot be replaced: the model is told not to use it.
        Some(PostJudgement::Block { reason } | PostJudgement::Unavailable { reason }) => Answer::Block {
            reason: match reason.strip_suffix(WITHHELD) {
                Some(head) => format!("{head}{BUILT_IN_BLOCKED}"),
                None => format!("{reason} {BUILT_IN_BLOCKED}"),
            },
            replacement: None,
        },
        Some(PostJudgement::Sanitized) => rewritten(call, result, mcp),
        _ if redacted != PostOutcome::Pass => rewritten(call, result, mcp),
        _ => Answer::Pass,
    }
}

fn rewritten(call: &ToolCall, result: Value, mcp: bool) -> Answer {
    if mcp {
        return Answer::Rewritten {
            reason: Said::HookCleaned { tool: &call.qualified }.to_string(),
            replacement: Some(result),
        };
    }
    let text: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    Answer::Rewritten {
        reason: Said::HookDisregard { tool: &call.qualified, cleaned: &text.join("\n") }.to_string(),
        replacement: None,
    }
}

/// The outcome the audit line of a post answer records, in the vocabulary every transport uses.
pub fn post_outcome(answer: &Answer) -> CallOutcome {
    match answer {
        Answer::Block { .. } => CallOutcome::Blocked,
        Answer::Rewritten { .. } => CallOutcome::Rewritten,
        _ => CallOutcome::Forwarded,
    }
}
