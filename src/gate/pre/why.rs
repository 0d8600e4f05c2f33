//! Why a refused or asked call came out as it did, as its audit line keeps it for `portcullis
//! explain`: Layer 1's decision and every configured rule the call met, from the engine the call
//! was decided with (this guard's: the policy in force when it was decided, never the one in
//! force when someone asks). Built only for refusals and asks: the allow path never pays for it.

use crate::audit::why::{Checked, Layer1, Met, Why};
use crate::call::ToolCall;
use crate::gate::Guard;
use crate::guardrails::{PreJudgement, Report};

/// Layer 1's decision for `call` and every rule it meets, under `guard`'s policy, with what the
/// gate noted on the way (Layer 1's refusal, the checker's judgement, the waiver lookup).
pub(super) fn why(call: &ToolCall, guard: &Guard) -> Why {
    let mut why = Why::default();
    guard.audit().take_notes(call.decision, &mut why);
    // Layer 1 allowed it (something after it refused: the checker, a flag, a limit): say so.
    if why.layer1.is_none() {
        why.layer1 = Some(layer1(&guard.decide(call)));
    }
    let args = call
        .args
        .as_deref()
        .and_then(|a| serde_json::from_str(a.get()).ok())
        .unwrap_or_else(|| serde_json::Value::Object(Default::default()));
    let matched = match guard.engine_keyed(call.agent.as_deref(), &call.upstream, call.spawn) {
        Ok((_, engine)) => engine
            .matched(&call.qualified, &args)
            .into_iter()
            .map(|m| Met {
                effect: m.effect.as_str(),
                rule: m.rule,
                scope: m.scope.as_str(),
                unit: m.unit,
                effect_seen: m.effect_seen,
                possibly: m.possibly,
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    why.matched = matched;
    why
}

/// Layer 1's decision as a line keeps it (its reason cut: it names the command, which may be
/// long, and it waits in memory for its line).
pub(crate) fn layer1(d: &crate::rules::Decision) -> Layer1 {
    let mut reason = d.reason.clone();
    crate::audit::clip(&mut reason, 4096);
    Layer1 { effect: d.effect.as_str(), rule: d.rule.clone(), scope: d.scope.as_str(), reason }
}

/// The checker's judgement as a line keeps it.
pub(crate) fn checked(r: &Report<PreJudgement>) -> Checked {
    use crate::guardrails::Tier;
    Checked {
        rule: r.rule.clone(),
        rubric: r.rubric.clone(),
        verdict: r.verdict.as_str(),
        mode: r.mode.as_str(),
        tier: r.decided.tier.as_str(),
        cache_hit: r.decided.tier == Tier::Cache,
        latency_ms: r.decided.model_latency.map(|l| (l.as_secs_f64() * 1e6).round() / 1e3),
    }
}
