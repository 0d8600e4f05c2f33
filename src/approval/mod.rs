//! Approvals: when Layer 1 says *ask* (or the checker blocks a call before it runs), a human
//! decides — deny, allow once, or allow for the session — instead of the proxy refusing outright.
//!
//! ```text
//!  Ask ─▶ waiver for (session, tool, arguments)? ─ yes ─▶ forward (built-in asks, checker blocks only)
//!   │ no
//!   ▼
//!  client elicits ─▶ the agent's user answers an MCP elicitation form ─┐
//!  operator API   ─▶ parked at GET /approvals ─▶ POST /approvals/{id} ─┴─ or timeout ─▶ Resolution
//!  nobody         ─▶ headless: refused, with a reason that says a human could have allowed it
//! ```
//!
//! Waivers and parked asks live here, not in the policy, so a policy reload keeps both.

pub mod always;
pub mod always_cli;
pub mod always_file;
pub mod callers;
pub mod cli;
pub mod elicit;
pub mod flags;
pub mod fleet;
mod listen;
pub mod mrtr;
pub mod notify;
pub mod notify_payload;
pub mod pending;
pub mod reviewer;
mod reviewer_streak;
mod shared;
pub mod waivers;

use std::sync::Arc;
use std::time::Duration;

use crate::telemetry::Metrics;

pub use pending::{Parked, Parking};
pub use waivers::Waivers;

pub use crate::config::approvals::{Channel, Settings};

/// What a human decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Deny,
    AllowOnce,
    /// Allow, and arm a waiver: the same call in the same session is not asked again.
    AllowSession,
}

impl Choice {
    pub const ALL: [Choice; 3] = [Choice::Deny, Choice::AllowOnce, Choice::AllowSession];

    pub fn parse(s: &str) -> Option<Choice> {
        Some(match s {
            "deny" => Choice::Deny,
            "allow_once" => Choice::AllowOnce,
            "allow_session" => Choice::AllowSession,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Choice::Deny => "deny",
            Choice::AllowOnce => "allow_once",
            Choice::AllowSession => "allow_session",
        }
    }
}

/// Who is asked about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The agent's user, through MCP elicitation (the client declared the capability).
    Client,
    /// An operator, at the admin API.
    Operator,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Client => "elicitation",
            Via::Operator => "api",
        }
    }
}

/// Why a call is asked, which decides whether a waiver may answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The built-in floor ("not proven read-only"): waivable.
    Floor,
    /// A configured `ask` rule (any ask an operator's rule contributed to): a human may allow it
    /// once, a waiver never answers it.
    Configured,
    /// The jail's escape row alone (or with the floor): allowed once only like a configured ask
    /// (no waiver), and the only other ask the headless ask reviewer may answer.
    Escape,
    /// The floor on a command it could not parse: allowed once only by a human (no waiver), and
    /// never put to the headless ask reviewer.
    Unread,
    /// A checker block before the call: waivable.
    Checker,
    /// The session was flagged by the repeated-denial breaker: every call asks, no waiver answers.
    Flagged,
}

/// One call waiting for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// `mcp__{upstream}__{tool}`.
    pub tool: String,
    /// The arguments, canonical JSON (what the human sees and what a waiver matches).
    pub args: String,
    /// Why it is asked (the rule's or the checker's reason).
    pub reason: String,
    pub source: Source,
    /// The session it belongs to; without one, "allow for the session" allows once.
    pub session: Option<String>,
    /// The agent asking, when agents are configured.
    pub agent: Option<Arc<crate::identity::Agent>>,
    /// The version of the tool's definition as seen in `tools/list` ([`crate::tooldefs::Definitions`]):
    /// a waiver armed for one definition does not answer for another.
    pub definition: u64,
}

/// How an ask ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Allowed(Choice),
    Denied,
    /// The user dismissed the form without choosing (elicitation `cancel`, or a client error).
    Cancelled,
    TimedOut,
    /// Nobody could be asked.
    Headless,
    /// `approvals.max_pending` asks already wait for a human: refused without parking.
    Overloaded,
    /// The shared approval store could not record the ask (refused as headless).
    StoreDown,
}

/// A parked ask: in this replica's table, or in the fleet's (leaving the store when dropped).
enum Held {
    Here(pending::Parked),
    Fleet(fleet::FleetParked),
}

impl Held {
    fn id(&self) -> u64 {
        match self {
            Held::Here(p) => p.id(),
            Held::Fleet(p) => p.id(),
        }
    }
}

/// The approval state of one proxy.
#[derive(Debug)]
pub struct Approvals {
    channel: Channel,
    /// An admin token is configured: someone can clear a flagged session.
    operator: bool,
    timeout: Duration,
    keepalive: Duration,
    pub waivers: Arc<Waivers>,
    /// Tool definitions seen in `tools/list`, by qualified name.
    pub tools: crate::tooldefs::Definitions,
    pub pending: Arc<Parking>,
    /// The parked asks of every replica, when replicas share a store.
    pub fleet: Option<Arc<fleet::Fleet>>,
    pub elicitations: elicit::Elicitations,
    /// The modern era's sealed `requestState`s.
    pub seals: mrtr::Seals,
    pub flags: Arc<flags::Flags>,
    /// Who the breaker's `caller:…` keys are, for the operator.
    pub callers: callers::Callers,
    /// What the user asked per session, from channels the agent does not control.
    pub user_tasks: crate::session::tasks::UserTasks,
    /// Which tool each task the proxy saw created runs (its answers are judged as that tool).
    pub task_ids: crate::session::task_ids::TaskIds,
    metrics: Arc<Metrics>,
    audit: Arc<crate::audit::Audit>,
    /// The headless ask reviewer, once `serve --ask-reviewer` enabled it.
    reviewer: std::sync::OnceLock<Arc<reviewer::Reviewer>>,
    /// Announcements (`approvals.notify`) and the "allow always" rule file.
    reach: notify::Reach,
}

impl Approvals {
    /// `operator` is whether an admin token is configured (someone can answer the API).
    pub fn new(settings: &Settings, operator: bool, metrics: Arc<Metrics>) -> Approvals {
        let channel = match (settings.channel, operator) {
            // Nobody could ever answer: say so once rather than park every ask until it times out.
            (Channel::Api, false) => {
                tracing::warn!("approvals.channel is api but no admin token is configured: asks are refused");
                Channel::None
            }
            (c, _) => c,
        };
        Approvals {
            channel,
            operator,
            timeout: settings.timeout,
            keepalive: settings.keepalive,
            waivers: Arc::new(Waivers::new(settings.waiver_capacity, settings.waiver_idle, metrics.clone())),
            tools: crate::tooldefs::Definitions::default(),
            pending: Arc::new(Parking::new(settings.max_pending, metrics.clone())),
            fleet: None,
            elicitations: elicit::Elicitations::new(settings.max_pending),
            seals: mrtr::Seals::new(settings.timeout),
            flags: Arc::new(
                flags::Flags::new(settings.flag_consecutive, settings.flag_total, metrics.clone())
                    .with_address(settings.flag_address),
            ),
            callers: callers::Callers::default(),
            user_tasks: crate::session::tasks::UserTasks::default(),
            task_ids: crate::session::task_ids::TaskIds::default(),
            metrics,
            audit: Arc::new(crate::audit::Audit::off()),
            reviewer: std::sync::OnceLock::new(),
            reach: notify::Reach::new(settings),
        }
    }

    /// Turns the headless ask reviewer on (`serve --ask-reviewer`), counting into these
    /// approvals' metrics and audit log; the first call's reviewer is kept.
    pub fn enable_reviewer(&self) -> &Arc<reviewer::Reviewer> {
        self.reviewer
            .get_or_init(|| Arc::new(reviewer::Reviewer::new(self.metrics.clone(), self.audit.clone())))
    }

    /// The headless ask reviewer, when it is on.
    pub fn reviewer(&self) -> Option<&Arc<reviewer::Reviewer>> {
        self.reviewer.get()
    }

    /// The same approvals, keeping what replicas must agree on in `store` when it is shared,
    /// and sealing modern-era states with `seal_key` (every replica's must be the same; without
    /// one, a key is drawn for this process).
    pub fn with_store(mut self, store: &crate::state::Store, seal_key: Option<&[u8]>) -> Approvals {
        self.seals = mrtr::Seals::with(self.timeout, seal_key, store.shared().cloned());
        if let Some(s) = store.shared() {
            self.flags.share(s.clone());
            self.waivers.share(s.clone());
            let fleet = fleet::Fleet::new(s.clone(), self.pending.clone(), self.timeout);
            listen::listen(s, self.flags.clone(), self.waivers.clone(), fleet.clone());
            self.fleet = Some(fleet);
        }
        self
    }

    /// Every replica's parked asks (this replica's alone without a shared store).
    pub async fn list_parked(&self) -> Result<Vec<pending::View>, crate::state::StoreError> {
        match &self.fleet {
            Some(f) => f.list().await,
            None => Ok(self.pending.list()),
        }
    }

    /// Decides parked ask `id`, at whichever replica holds it.
    pub async fn decide_parked(&self, id: u64, decision: Choice) -> Result<(), fleet::FleetDecideError> {
        match &self.fleet {
            Some(f) => f.decide(id, decision).await,
            None => self.pending.decide(id, decision).map_err(Into::into),
        }
    }

    /// The same approvals, writing each decision to `audit`.
    pub fn with_audit(mut self, audit: Arc<crate::audit::Audit>) -> Approvals {
        self.audit = audit;
        self
    }

    /// Nobody can be asked.
    pub fn headless() -> Approvals {
        Approvals::new(
            &Settings { channel: Channel::None, ..Settings::default() },
            false,
            Arc::new(Metrics::new()),
        )
    }

    /// How long an ask waits for a human (`approvals.timeout`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How often a waiting call's stream says it is still there.
    pub fn keepalive(&self) -> Duration {
        self.keepalive
    }

    /// Who can be asked about a call from a client that can (or cannot) elicit; `None` when
    /// nobody can (headless).
    pub fn route(&self, client_elicits: bool) -> Option<Via> {
        match (self.channel, client_elicits) {
            (Channel::Auto | Channel::Elicitation, true) => Some(Via::Client),
            (Channel::Auto, false) => self.operator.then_some(Via::Operator),
            (Channel::Api, _) => Some(Via::Operator),
            (Channel::Elicitation | Channel::None, _) => None,
        }
    }

    /// True when `session` or the caller (`principal`) is flagged and the flag is enforced.
    /// Without an operator nobody could clear it, so a flag is then logged and counted but does
    /// not lock the session for good.
    pub fn flagged(&self, session: Option<&str>, principal: Option<&str>) -> bool {
        self.operator && self.flags.flagged(session, principal)
    }

    /// True when a waiver answers `ask` (never for a configured ask).
    pub async fn waived(&self, ask: &Ask) -> bool {
        matches!(ask.source, Source::Floor | Source::Checker) && self.waivers.covers(ask).await
    }

    /// Asks an operator and waits, at most `approvals.timeout`. Dropping the future (the agent
    /// went away) withdraws the ask.
    pub async fn ask(&self, ask: Ask) -> Resolution {
        if self.route(false) != Some(Via::Operator) {
            return Resolution::Headless;
        }
        let parked = match &self.fleet {
            None => Ok(self.pending.park(ask.clone()).map(|(p, d)| (Held::Here(p), d))),
            Some(f) => f.park(ask.clone()).await.map(|o| o.map(|(p, d)| (Held::Fleet(p), d))),
        };
        let (parked, decided) = match parked {
            Ok(Some(p)) => p,
            Ok(None) => {
                tracing::warn!(tool = %ask.tool, "approvals.max_pending asks already wait: this one is refused");
                let resolution = Resolution::Overloaded;
                self.settle(&ask, Via::Operator, &resolution, Duration::ZERO, true);
                return resolution;
            }
            Err(e) => {
                tracing::warn!(tool = %ask.tool, error = %e, "the approval store cannot record this ask: refused");
                let resolution = Resolution::StoreDown;
                self.settle(&ask, Via::Operator, &resolution, Duration::ZERO, true);
                return resolution;
            }
        };
        tracing::info!(id = parked.id(), tool = %ask.tool, "call parked for approval");
        self.announce(parked.id(), &ask);
        let resolution = self
            .resolve(&ask, Via::Operator, async move {
                match decided.await {
                    Ok(Choice::Deny) => Resolution::Denied,
                    Ok(d) => Resolution::Allowed(d),
                    // The sender went away without a decision: only a withdrawn park does that.
                    Err(_) => Resolution::Denied,
                }
            })
            .await;
        drop(parked);
        resolution
    }

    /// Opens an elicitation of `ask` for the client to answer, or — when `approvals.max_pending`
    /// already wait — refuses it as [`Resolution::Overloaded`] (counted and logged like an
    /// operator queue that is full), before anything is sent to the client.
    pub fn open_elicitation(
        &self,
        ask: &Ask,
    ) -> Result<(elicit::Open, tokio::sync::oneshot::Receiver<elicit::Reply>), Resolution> {
        self.elicitations.open(ask.session.as_deref()).ok_or_else(|| {
            tracing::warn!(tool = %ask.tool, "approvals.max_pending elicitations already wait: this ask is refused");
            self.settle(ask, Via::Client, &Resolution::Overloaded, Duration::ZERO, true);
            Resolution::Overloaded
        })
    }

    /// Waits, at most `approvals.timeout`, for the client's answer to an elicitation the
    /// transport sent (see [`Approvals::open_elicitation`]).
    pub async fn ask_client(
        &self,
        ask: &Ask,
        reply: tokio::sync::oneshot::Receiver<elicit::Reply>,
    ) -> Resolution {
        self.resolve(ask, Via::Client, async move {
            match reply.await {
                Ok(elicit::Reply::Accept(Choice::Deny) | elicit::Reply::Decline) => Resolution::Denied,
                Ok(elicit::Reply::Accept(d)) => Resolution::Allowed(d),
                Ok(elicit::Reply::Cancel | elicit::Reply::Failed) | Err(_) => Resolution::Cancelled,
            }
        })
        .await
    }

    /// Records a decision that arrived outside a wait (an MRTR retry carries the user's answer).
    /// The caller feeds the repeated-denial breaker, as for any other call it forwards or refuses.
    pub fn decided(&self, ask: &Ask, resolution: &Resolution, waited: Duration) {
        self.settle(ask, Via::Client, resolution, waited, false);
    }

    async fn resolve(
        &self,
        ask: &Ask,
        via: Via,
        decided: impl std::future::Future<Output = Resolution>,
    ) -> Resolution {
        let started = tokio::time::Instant::now();
        let span = crate::telemetry::otel::spans::approval(via.as_str());
        let waited =
            tracing::Instrument::instrument(tokio::time::timeout(self.timeout, decided), span.clone());
        let resolution = waited.await.unwrap_or(Resolution::TimedOut);
        span.record("portcullis.approval.decision", resolution.as_str());
        self.settle(ask, via, &resolution, started.elapsed(), true);
        resolution
    }

    /// Counts, logs (the audit line of who decided what, how, and how long it took), feeds the
    /// repeated-denial breaker, and arms the waiver an "allow for the session" asks for.
    fn settle(&self, ask: &Ask, via: Via, resolution: &Resolution, waited: Duration, flags: bool) {
        let label = resolution.as_str();
        self.metrics.approvals(label);
        self.metrics.approval_wait(via.as_str(), label, waited.as_secs_f64());
        let args = serde_json::from_str::<serde_json::Value>(&ask.args).ok();
        self.audit.record(crate::audit::Entry {
            phase: crate::audit::Stage::Approval,
            upstream: ask.tool.split("__").nth(1).unwrap_or(""),
            tool: &ask.tool,
            session: ask.session.as_deref(),
            agent: ask.agent.as_deref(),
            outcome: label,
            rule: None,
            reason: Some(&ask.reason),
            subject: args.as_ref(),
            channel: Some(via.as_str()),
            latency: waited,
            verdicts: None,
        });
        tracing::info!(
            tool = %ask.tool,
            session = ask.session.as_deref().unwrap_or("-"),
            channel = via.as_str(),
            decision = label,
            waited_ms = waited.as_millis() as u64,
            "approval resolved"
        );
        if flags {
            // The session's caller was learnt when the gate checked the flag before asking.
            self.flags.record(ask.session.as_deref(), None, !matches!(resolution, Resolution::Allowed(_)));
        }
        if *resolution == Resolution::Allowed(Choice::AllowSession)
            && matches!(ask.source, Source::Floor | Source::Checker)
        {
            self.waivers.arm(ask);
        }
    }
}

impl Resolution {
    /// The `approvals_total{decision}` label.
    pub fn as_str(&self) -> &'static str {
        match self {
            Resolution::Allowed(d) => d.as_str(),
            Resolution::Denied => "deny",
            Resolution::Cancelled => "cancel",
            Resolution::TimedOut => "timeout",
            Resolution::Headless => "headless",
            Resolution::Overloaded => "overloaded",
            Resolution::StoreDown => "store_down",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_enforced_only_where_an_operator_can_clear_it() {
        for operator in [false, true] {
            let a = Approvals::new(&Settings::default(), operator, Arc::new(Metrics::new()));
            for _ in 0..3 {
                a.flags.record(Some("s"), None, true);
            }
            assert!(a.flags.flagged(Some("s"), None), "always flagged, logged and counted");
            assert_eq!(a.flagged(Some("s"), None), operator);
        }
    }
}
