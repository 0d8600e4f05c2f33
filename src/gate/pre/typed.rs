//! The gate for a call that arrives already typed — a plain HTTP tool call, whose body is its
//! arguments — taking the same steps as a `tools/call`: Layer 1, the repeated-denial breaker,
//! session waivers, Layer 2, then the breaker's count and the audit line. It ends in a [`CallPlan`];
//! the transport only carries it out (forward, answer the refusal, or hold the call while an
//! operator decides and then [`Asked::resolve`] it).

use crate::approval::{Ask, Resolution, Source, Via};

use super::judge::{decided, judge, Decided, Verdict};
use crate::call::ToolCall;
use crate::gate::tally::Counted;
use crate::gate::{Denial, Guard};
use crate::says::Said;

use super::Context;

/// What to do with a typed call.
#[derive(Debug)]
pub enum CallPlan {
    /// Send it on; its outcome is counted when the answer is done with. With Layer 1's decision
    /// when the context asked to explain it.
    Forward(Counted, Option<Box<crate::rules::Decision>>),
    /// Refuse it with `denial`'s reason; counted as the call is dropped.
    Refuse(Counted, Denial),
    /// Hold it while an operator decides ([`Asked`]).
    Ask(Asked),
}

/// A typed call an operator must decide.
#[derive(Debug)]
pub struct Asked {
    pub call: Counted,
    pub ask: Ask,
    /// The refusal if the answer is no, completed with what happened.
    denial: Denial,
}

impl Asked {
    /// The call once the operator's answer (`resolution`) is in, with no denial (forward it) or
    /// the refusal, in the one table's words for what happened ([`crate::gate::answer`]). The
    /// approvals table has already fed the breaker and written the approval's audit line.
    pub fn resolve(self, resolution: &Resolution) -> (Counted, Option<Denial>) {
        let Asked { mut call, ask, mut denial } = self;
        let Some((why, outcome)) = crate::gate::answer::refusal(resolution, Via::Operator) else {
            return (call, None);
        };
        denial.reason = match ask.source {
            Source::Checker => format!("{} {why}", denial.reason),
            _ => Said::Asked { tool: &ask.tool, reason: &ask.reason, answer: Some(why) }.to_string(),
        };
        denial.reason.push_str(&call.decision.cite());
        denial.outcome = outcome;
        call.settle(outcome);
        (call, Some(denial))
    }
}

/// Decides `call` through the same door as a JSON-RPC call ([`super::judge`]). Nothing but an
/// operator can be asked about a typed call (its client cannot elicit), so an ask nobody can
/// answer is refused, as headless.
pub async fn decide_typed(call: ToolCall, cx: &Context<'_>, guard: &Guard) -> CallPlan {
    let started = std::time::Instant::now();
    let plan = match judge(&call, cx, guard, false).await {
        Verdict::Forward(d, permit) => CallPlan::Forward(cx.counted(call).with_permit(permit), d),
        Verdict::Ask { denial, ask, via: Via::Operator } => {
            CallPlan::Ask(Asked { call: cx.counted(call), ask: *ask, denial })
        }
        // Only an operator is reachable without elicitation; were anyone else routed, the
        // refusal stands.
        Verdict::Ask { denial: d, .. } | Verdict::Refuse(d) => {
            let outcome = d.outcome;
            CallPlan::Refuse(cx.refused(call, outcome), d)
        }
    };
    let what = match &plan {
        CallPlan::Forward(..) => Decided::Forwarded,
        CallPlan::Refuse(_, d) => Decided::Refused { rule: &d.rule, reason: &d.reason, outcome: d.outcome },
        CallPlan::Ask(a) => Decided::Asked { reason: Some(&a.ask.reason) },
    };
    let call = match &plan {
        CallPlan::Forward(c, _) | CallPlan::Refuse(c, _) => c,
        CallPlan::Ask(a) => &a.call,
    };
    decided(call, what, cx, guard, started);
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::Approvals;
    use crate::gate::pre::{block_on, decide, Plan};
    use crate::gate::tally::tests::Recorded;
    use crate::gate::tally::SharedCounter;
    use crate::gate::CallOutcome;
    use crate::mcp::era::Era;
    use std::sync::Arc;

    const POLICY: &str = "permissions: { allow: [\"http__up__*\", \"mcp__up__*\"], deny: [\"http__up__rm\", \"mcp__up__rm\"] }\n";

    /// Runs `f` with a headless context on upstream `up` under [`POLICY`].
    fn with_gate<R>(counter: Option<&SharedCounter>, f: impl FnOnce(&Context<'_>, &Guard) -> R) -> R {
        let guard = crate::gate::guard::tests::guard(POLICY);
        let approvals = Approvals::headless();
        let up: Arc<str> = "up".into();
        let cx = Context { counter, ..Context::headless(&up, &approvals, Era::Legacy) };
        f(&cx, &guard)
    }

    fn plan(path: &str, counter: &SharedCounter) -> CallPlan {
        with_gate(Some(counter), |cx, guard| {
            block_on(decide_typed(ToolCall::http(cx.upstream.clone(), path, None), cx, guard))
        })
    }

    #[test]
    fn a_typed_call_is_forwarded_or_refused_and_counted_once_when_done_with() {
        let rec = Arc::new(Recorded::default());
        let counter: SharedCounter = rec.clone();
        let CallPlan::Forward(mut call, _) = plan("/ls", &counter) else { panic!("allowed") };
        call.settle(CallOutcome::Forwarded);
        drop(call);
        let CallPlan::Refuse(call, d) = plan("/rm", &counter) else { panic!("denied") };
        assert_eq!(d.outcome, CallOutcome::Denied);
        assert!(d.reason.contains("http__up__rm"), "{}", d.reason);
        drop(call);
        assert_eq!(
            rec.taken(),
            vec![
                ("http__up__ls".into(), CallOutcome::Forwarded),
                ("http__up__rm".into(), CallOutcome::Denied)
            ]
        );
    }

    #[test]
    fn a_typed_call_and_a_tools_call_denied_by_the_same_rule_read_the_same_reason() {
        let counter: SharedCounter = Arc::new(Recorded::default());
        let CallPlan::Refuse(_, typed) = plan("/rm", &counter) else { panic!("denied") };
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm"}}"#;
        let payload = crate::mcp::jsonrpc::parse(body).unwrap();
        let Plan::Refuse(r) = with_gate(None, |cx, guard| block_on(decide(&payload, cx, guard))) else {
            panic!("denied")
        };
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        let mcp = v["result"]["content"][0]["text"].as_str().unwrap();
        // The same words but for the tool's name, which says how it was reached.
        let masked = crate::decision::ids_masked;
        assert_eq!(masked(&typed.reason.replace("http__up__rm", "mcp__up__rm")), masked(mcp));
    }
}
