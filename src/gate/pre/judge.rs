//! The one door every call goes through before it runs, whatever carried it — a `tools/call` or a
//! resource request in JSON-RPC (HTTP or stdio), a plain HTTP tool's typed call, a hook's call:
//! Layer 1; the repeated-denial breaker (a flagged session or caller needs a human for every
//! call, and spends no checker call on one); the Layer 2 check Layer 1 asked for; then, for a
//! refusal a human may overrule, a session waiver for the exact call, else whoever can be asked;
//! last, for a call that would be forwarded, the per-agent rate limits ([`crate::limits`]), so
//! only calls that reach the upstream spend a budget. The transports only render the [`Verdict`]; the breaker's count and the audit line of what was
//! decided are written by [`decided`], once per call.

use std::time::Instant;

use super::Context;
use crate::approval::{Ask, Source};
use crate::audit::why::{Note, Waiver};
use crate::audit::{Explained, Stage};
use crate::call::{ToolCall, Transport};
use crate::gate::{CallOutcome, Denial, Guard, Outcome};
use crate::limits::{Limited, Permit};
use crate::outcome::Recorded;
use crate::says::{Not, Said, FLAGGED};

pub use super::verdict::Verdict;

/// Decides `call`. `elicits`: the client that sent it can be asked (elicitation); without it only
/// an operator can be.
pub async fn judge(call: &ToolCall, cx: &Context<'_>, guard: &Guard, elicits: bool) -> Verdict {
    let flagged = cx.approvals.flagged(cx.session, cx.principal);
    // What other replicas recorded for this caller (flows across a shared store); the
    // arguments, when that parsed them, are not parsed again.
    let parsed = guard.pull_flows(call).await;
    let layer1 = crate::telemetry::otel::spans::layer1();
    let (pre, allowed) = layer1.in_scope(|| match cx.explain {
        true => {
            let (o, d) = guard.pre_explained_parsed(call, parsed);
            (o, Some(Box::new(d)))
        }
        false => (guard.pre_parsed(call, parsed), None),
    });
    if !layer1.is_none() {
        let (decision, rule) = match &pre {
            Outcome::Forward => ("allow", None),
            Outcome::Check(_) => ("check", None),
            Outcome::Refuse(d) => ("refuse", Some(d.rule.as_str())),
        };
        crate::telemetry::otel::spans::layer1_decided(&layer1, decision, rule);
    }
    let outcome = match (pre, flagged) {
        // A flagged session: nothing passes without a human, whatever the rules allow — and a
        // human decides anyway, so no checker call is spent first.
        (Outcome::Forward | Outcome::Check(_), true) => Outcome::Refuse(flagged_denial(call)),
        (Outcome::Refuse(mut d), true) => {
            if let Some(ask) = d.ask.as_mut() {
                ask.source = Source::Flagged;
            }
            Outcome::Refuse(d)
        }
        // Boxed, as the refusal's human below: a checker call's future is large, and every
        // allowed call's future would carry its space (and be copied with it) if it were inline.
        (Outcome::Check(check), false) => Box::pin(check.run_noted(call.decision, guard.audit())).await,
        (other, false) => other,
    };
    let verdict = match outcome {
        Outcome::Forward => Verdict::Forward(allowed, Permit::default()),
        Outcome::Refuse(d) => Box::pin(human(d, call, cx, guard, elicits)).await,
        // A check never asks for another; were it to, refusing is the safe reading.
        Outcome::Check(_) => Verdict::Refuse(Denial {
            reason: Said::Unfinished { tool: &call.qualified, not: Not::Sent }.to_string(),
            rule: "guardrail".into(),
            outcome: CallOutcome::CheckerDown,
            ask: None,
        }),
    };
    let verdict = match verdict {
        Verdict::Forward(d, _) => match guard.limits().admit(call).await {
            Ok(permit) => Verdict::Forward(d, permit),
            Err(limited) => Verdict::Refuse(rate_limited(call, &limited)),
        },
        other => other,
    };
    // The one place a refusal cites its decision: every transport renders these words.
    match verdict {
        Verdict::Refuse(mut d) => {
            d.reason.push_str(&call.decision.cite());
            Verdict::Refuse(d)
        }
        other => other,
    }
}

/// The refusal of a call a rate limit stopped: no human is asked (a human's yes would not make
/// room), and it says when to try again.
fn rate_limited(call: &ToolCall, l: &Limited) -> Denial {
    let not = match call.transport {
        Transport::Hook => Not::Run,
        _ => Not::Sent,
    };
    Denial {
        reason: Said::RateLimited {
            tool: &call.qualified,
            limit: l.limit,
            per: l.bound.per(),
            pattern: &l.tool,
            retry_after: l.retry_after,
            not,
        }
        .to_string(),
        rule: format!("limits.per_agent[{}].{}", l.entry, l.bound.as_str()),
        outcome: CallOutcome::RateLimited,
        ask: None,
    }
}

/// A refusal, unless a human may overrule it: a session waiver for the exact call forwards it, a
/// reachable human is asked, and otherwise — nobody to ask — the headless ask reviewer may answer
/// a floor ask when it is on ([`super::reviewer`]), else the refusal stands (headless).
async fn human(mut d: Denial, call: &ToolCall, cx: &Context<'_>, guard: &Guard, elicits: bool) -> Verdict {
    let Some(mut ask) = d.ask.take() else { return Verdict::Refuse(d) };
    ask.definition = cx.approvals.tools.version(&ask.tool);
    if cx.approvals.waived(&ask).await {
        tracing::info!(tool = %ask.tool, "session waiver: forwarded without asking");
        return Verdict::Forward(None, Permit::default());
    }
    guard.audit().note(call.decision, Note::Waiver(Waiver { consulted: true, found: false }));
    match (cx.approvals.route(elicits), cx.approvals.reviewer()) {
        (Some(via), _) => Verdict::Ask { denial: d, ask, via },
        (None, Some(r)) if super::reviewer::reviewable(&ask) => {
            super::reviewer::reviewed(d, &ask, call, cx, guard, r).await
        }
        (None, _) => Verdict::Refuse(d),
    }
}

/// The ask every call of a flagged session or caller becomes.
fn flagged_denial(call: &ToolCall) -> Denial {
    let args = call.exact_args().unwrap_or_else(|| "{}".into());
    Denial {
        reason: Said::Flagged { tool: &call.qualified }.to_string(),
        rule: "flagged session".into(),
        outcome: CallOutcome::AskRefused,
        ask: Some(Box::new(Ask {
            tool: call.qualified.clone(),
            args,
            reason: FLAGGED.into(),
            source: Source::Flagged,
            session: call.session.clone(),
            definition: 0,
            agent: call.agent.clone(),
        })),
    }
}

/// What one call's pre-call decision came to, as recorded.
#[derive(Debug, Clone, Copy)]
pub enum Decided<'a> {
    /// Let through (a waiver, an approved retry and an allow alike).
    Forwarded,
    /// Refused before the upstream.
    Refused { rule: &'a str, reason: &'a str, outcome: CallOutcome },
    /// Waiting on a human; its end is recorded by the approvals table.
    Asked { reason: Option<&'a str> },
}

/// The one place a pre-call decision is recorded: the repeated-denial breaker's count (decided
/// calls only: a stream of lists must not wash out a streak of refusals; an ask counts when it
/// resolves; a rate-limit refusal counts neither way — it says how fast, not what, the caller
/// asked, and must not flag a session for a human, nor wash out a streak) and the audit line. The outcome metric is the call's own ([`super::super::tally`]).
pub fn decided(call: &ToolCall, what: Decided<'_>, cx: &Context<'_>, guard: &Guard, started: Instant) {
    match what {
        Decided::Forwarded if call.method.decided() => {
            cx.approvals.flags.record(cx.session, cx.principal, false)
        }
        Decided::Refused { outcome: CallOutcome::RateLimited, .. } => {}
        Decided::Refused { .. } => cx.approvals.flags.record(cx.session, cx.principal, true),
        _ => {}
    }
    let audit = guard.audit();
    let refused = !matches!(what, Decided::Forwarded);
    if !audit.wants(refused) {
        return;
    }
    let latency = started.elapsed();
    // Why, for a refusal or an ask only: the allow path carries its id and the policy version.
    let x = Explained {
        id: Some(call.decision),
        policy: Some(guard.policy_version().clone()),
        why: refused.then(|| super::why::why(call, guard)),
    };
    let said = match what {
        Decided::Forwarded => (CallOutcome::Forwarded.into(), None, None),
        Decided::Refused { rule, reason, outcome } => (outcome.into(), Some(rule), Some(reason)),
        Decided::Asked { reason } => (Recorded::Asked, None, reason),
    };
    audit.call_explained(Stage::Pre, call, said, None, latency, x);
}
