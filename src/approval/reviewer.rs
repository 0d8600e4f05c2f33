//! The headless ask reviewer (`serve --ask-reviewer`): where no human can be asked, a built-in
//! floor ask (not proven read-only, a substitution, an escape from the jail) goes to the checker's
//! model — tool-less, one turn, under its own rubric (`rubrics/ask_reviewer.md`) — before it is
//! refused.
//!
//! ```text
//!  floor ask, nobody to ask ─▶ session or caller tripped? ─ yes ─▶ deny (tripped)
//!        │ no
//!        ▼
//!  checker model configured? ─ no ─▶ deny (unavailable)
//!        ▼
//!  a review slot within 2 s? ─ no ─▶ deny (overloaded)
//!        ▼
//!  one completion, strict verdict ─ safe ─▶ allow THIS call (never a waiver, never learned)
//!        └─ unsafe │ malformed │ error │ timeout ─▶ deny, and the session's and the caller's
//!                                                   streaks grow
//! ```
//!
//! Fail-safe everywhere: only a well-formed `safe` verdict allows. It is never consulted for a
//! configured ask (an operator's `ask` rule): the gate decides which asks it may see
//! ([`crate::gate::pre::judge`]). The model's reason goes to the audit line, never to the agent,
//! so a model talked into saying something cannot say it to the agent through the refusal.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

pub use super::reviewer_streak::Keys;
use super::reviewer_streak::{Standing, Streaks};
use super::Ask;
use crate::checker::openai::OpenAi;
use crate::checker::prompt::{build_framed, Framing};
use crate::checker::verdict::{self, Verdict};
use crate::checker::{Failure, Phase};
use crate::telemetry::Metrics;

/// Reviews in flight at once, all sessions together (each is a model call on a call's path).
const MAX_CONCURRENT: usize = 8;
/// How long an ask waits for a review slot before it is refused as overloaded.
const SLOT_WAIT: Duration = Duration::from_secs(2);
/// The rubric's name in a `guardrails.rubrics` directory, which may override the built-in text.
pub const RUBRIC: &str = "ask_reviewer";
/// The built-in rubric.
pub const EMBEDDED_RUBRIC: &str = include_str!("../../rubrics/ask_reviewer.md");

pub use crate::telemetry::reviewer_metrics::Outcome;

/// Whether the model was asked and answered or failed: what the session's and the caller's
/// streaks count.
fn reviewed(o: Outcome) -> bool {
    !matches!(o, Outcome::Tripped | Outcome::Unavailable | Outcome::Overloaded)
}

/// The model a review is asked of: the checker's client and the rubric, from the policy in force.
#[derive(Debug, Clone)]
pub struct Model {
    pub client: Arc<OpenAi>,
    pub rubric: Arc<str>,
}

/// What the reviewer is shown besides the ask: the tasks the checker is shown too.
#[derive(Debug, Clone, Copy, Default)]
pub struct Frame<'a> {
    pub task: Option<&'a str>,
    pub user_task: Option<&'a str>,
}

/// The reviewer's state: streaks by session and by caller, and the slots, for the life of the
/// process.
#[derive(Debug)]
pub struct Reviewer {
    streaks: Streaks,
    slots: Semaphore,
    metrics: Arc<Metrics>,
    audit: Arc<crate::audit::Audit>,
}

impl Reviewer {
    pub fn new(metrics: Arc<Metrics>, audit: Arc<crate::audit::Audit>) -> Reviewer {
        Reviewer { streaks: Streaks::default(), slots: Semaphore::new(MAX_CONCURRENT), metrics, audit }
    }

    /// Reviews `ask` (its streak kept under `keys`: the session's and the caller's) with
    /// `model`; counted, logged and audited once.
    pub async fn review(&self, ask: &Ask, keys: &Keys, model: Option<Model>, frame: Frame<'_>) -> Outcome {
        let started = tokio::time::Instant::now();
        let (outcome, why) = self.decide(ask, keys, model, frame).await;
        if reviewed(outcome) {
            self.streaks.record(keys, outcome == Outcome::Allow);
        }
        self.settle(ask, outcome, why.as_deref(), started.elapsed());
        outcome
    }

    async fn decide(
        &self,
        ask: &Ask,
        keys: &Keys,
        model: Option<Model>,
        frame: Frame<'_>,
    ) -> (Outcome, Option<String>) {
        if self.streaks.standing(keys) == Standing::Tripped {
            return (Outcome::Tripped, None);
        }
        let Some(model) = model else { return (Outcome::Unavailable, None) };
        let Ok(Ok(_slot)) = tokio::time::timeout(SLOT_WAIT, self.slots.acquire()).await else {
            return (Outcome::Overloaded, None);
        };
        let content = serde_json::json!({
            "tool": ask.tool,
            "arguments": serde_json::from_str::<serde_json::Value>(&ask.args).unwrap_or(serde_json::Value::Null),
            "asked_because": ask.reason,
        });
        let framing = Framing { task: frame.task, user_task: frame.user_task, rewrite: false };
        let prompt = build_framed(&model.rubric, Phase::Pre, &ask.tool, &content.to_string(), framing);
        match model.client.complete(&prompt).await {
            Ok(reply) => match verdict::parse(&reply) {
                Ok(Verdict::Safe) => (Outcome::Allow, None),
                Ok(Verdict::Unsafe { reason, .. }) => (Outcome::Deny, Some(reason)),
                Err(e) => (Outcome::Malformed, Some(e.to_string())),
            },
            Err(f) => (failed(&f), Some(f.to_string())),
        }
    }

    fn settle(&self, ask: &Ask, outcome: Outcome, why: Option<&str>, took: Duration) {
        self.metrics.reviewer.settled(outcome);
        let args = serde_json::from_str::<serde_json::Value>(&ask.args).ok();
        self.audit.record(crate::audit::Entry {
            phase: crate::audit::Stage::Approval,
            upstream: ask.tool.split("__").nth(1).unwrap_or(""),
            tool: &ask.tool,
            session: ask.session.as_deref(),
            agent: ask.agent.as_deref(),
            outcome: outcome.as_str(),
            rule: Some(RUBRIC),
            reason: Some(why.unwrap_or(&ask.reason)),
            subject: args.as_ref(),
            channel: Some(CHANNEL),
            latency: took,
            verdicts: None,
        });
        tracing::info!(
            tool = %ask.tool,
            session = ask.session.as_deref().unwrap_or("-"),
            channel = CHANNEL,
            outcome = outcome.as_str(),
            took_ms = took.as_millis() as u64,
            "ask reviewer settled an ask"
        );
    }
}

/// Why `--ask-reviewer` refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--ask-reviewer needs a checker model to review asks with, and guardrails.checker is not configured \
     (add guardrails: {{ checker: {{ base_url, model }} }}, or start without --ask-reviewer)"
)]
pub struct NoModel;

/// `Ok` when `config` configures the checker model the reviewer asks.
pub fn requires_model(config: &crate::config::Config) -> Result<(), NoModel> {
    match config.policy.guardrails.as_ref().map(|g| &g.backend) {
        Some(crate::config::Backend::OpenAi(_)) => Ok(()),
        _ => Err(NoModel),
    }
}

/// The audit line's `channel` for a review.
pub const CHANNEL: &str = "ask_reviewer";

fn failed(f: &Failure) -> Outcome {
    match f {
        Failure::Timeout(_) => Outcome::Timeout,
        f if f.unjudged_answer() => Outcome::Malformed,
        _ => Outcome::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_answers_of_the_model_count_toward_a_streak() {
        let counted: Vec<&str> = Outcome::ALL.iter().filter(|o| reviewed(**o)).map(|o| o.as_str()).collect();
        assert_eq!(counted, ["allow", "deny", "malformed", "error", "timeout"]);
    }

    #[test]
    fn every_failure_is_a_refusing_outcome() {
        let failures = [
            Failure::Timeout(Duration::from_secs(1)),
            Failure::Error("500".into()),
            Failure::Malformed("prose".into()),
            Failure::Refused("filter".into()),
            Failure::BreakerOpen,
            Failure::ContextLength("big".into()),
            Failure::TooLarge(1),
            Failure::Overloaded(Duration::from_secs(1)),
        ];
        for f in failures {
            assert_ne!(failed(&f), Outcome::Allow, "{f:?}");
        }
    }

    #[test]
    fn the_built_in_rubric_is_not_empty_and_asks_for_caution() {
        assert!(EMBEDDED_RUBRIC.contains("answer unsafe"), "{EMBEDDED_RUBRIC}");
    }
}
