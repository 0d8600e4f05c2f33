//! `portcullis hook pre|post --config F`: the decision in this process, from the config.
//!
//! It must start and answer fast (Claude Code runs it around every tool call), so it builds only
//! what the call needs: the rule engine always; the checker's client only when a guardrail rule
//! covers this call in this phase; a single-threaded runtime only to await that checker. A
//! Layer 1 decision awaits nothing and opens no socket.

use std::sync::Arc;

use super::answer::{Answer, Permission};
use super::envelope::{Envelope, Event};
use super::{decide, map};
use crate::checker::Phase;
use crate::config::Config;
use crate::gate::Guard;
use crate::identity::Agent;
use crate::shell::Dialect;
use crate::telemetry::Metrics;

/// Decides `env` under `config`, as the configured agent `agent` when one is named, its `Bash`
/// commands run by `shell`. Errors are the reason for a conservative answer.
pub fn decide(config: Config, env: &Envelope, agent: Option<&str>, shell: Dialect) -> Result<Answer, String> {
    let agent = match agent {
        None => None,
        Some(name) => Some(Arc::new(Agent::named(&config.policy.identity, name).map_err(|e| e.to_string())?)),
    };
    let call = map::call_in(env, shell)
        .map_err(|e| e.to_string())?
        .with_session(env.session.clone())
        .with_agent(agent);
    let phase = match env.event {
        Event::Pre => Phase::Pre,
        Event::Post => Phase::Post,
    };
    let mut policy = config.policy;
    // No checker client (TLS set-up, a key from the environment) unless this call needs one.
    let kind = policy.engine.kinds().kind_of(&call.qualified);
    if policy.guardrails.as_ref().is_some_and(|g| g.rules.select(&call.qualified, kind, phase).is_none()) {
        policy.guardrails = None;
    }
    let guard = Guard::new(&policy, Arc::new(Metrics::new()))
        .map_err(|e| format!("{}", crate::runtime::Chain(&e)))?;
    match env.event {
        Event::Pre => Ok(match decide::layer1(&guard, &call) {
            Ok(answer) => answer,
            Err((check, d)) => {
                let outcome = block_on(check.run())?;
                decide::settled(&call, outcome, &d)
            }
        }),
        Event::Post => {
            let response = env.response.as_ref().ok_or("a PostToolUse input carries tool_response")?;
            let mut result = map::result(&call, response);
            let (redacted, report) = block_on(guard.judge_result(&call, &mut result))?;
            let judgement = report.map(|r| r.judgement);
            Ok(decide::post_answer(&call, redacted, judgement, result))
        }
    }
}

/// Awaits `f` on a single-threaded runtime (made only when a checker must be awaited).
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the checker's runtime: {e}"))?;
    Ok(rt.block_on(f))
}

/// The answer when `decide` could not: `permission` before the call, a block after it.
pub fn fallback(event: Event, why: &str) -> Answer {
    Answer::cannot_decide(event, Permission::Deny, why)
}
