//! Approvals: when Layer 1 says *ask* (or the checker blocks a call before it runs), a human
//! decides — deny, allow once, or allow for the session — instead of the proxy refusing outright.
//!
//! ```text
//!  Ask ─▶ waiver for (session, tool, arguments)? ─ yes ─▶ forward (built-in asks, checker blocks only)
//!   │ no
//!   ▼
//!  channel: api ─▶ parked at GET /approvals ─▶ POST /approvals/{id} │ timeout ─▶ Resolution
//!           none ─▶ headless: refused, with a reason that says a human could have allowed it
//! ```
//!
//! Waivers and parked asks live here, not in the policy, so a policy reload keeps both.

pub mod cli;
pub mod flags;
pub mod pending;
pub mod waivers;

use std::sync::Arc;
use std::time::Duration;

use crate::telemetry::Metrics;

pub use pending::{Parked, Pending};
pub use waivers::Waivers;

/// What a human decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Deny,
    AllowOnce,
    /// Allow, and arm a waiver: the same call in the same session is not asked again.
    AllowSession,
}

impl Decision {
    pub const ALL: [Decision; 3] = [Decision::Deny, Decision::AllowOnce, Decision::AllowSession];

    pub fn parse(s: &str) -> Option<Decision> {
        Some(match s {
            "deny" => Decision::Deny,
            "allow_once" => Decision::AllowOnce,
            "allow_session" => Decision::AllowSession,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Deny => "deny",
            Decision::AllowOnce => "allow_once",
            Decision::AllowSession => "allow_session",
        }
    }
}

/// How asks reach a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Channel {
    /// The operator API when an admin token is configured, else headless.
    #[default]
    Auto,
    /// Parked at the admin API until decided or timed out.
    Api,
    /// Nobody can be asked: every ask is refused.
    None,
}

impl Channel {
    pub fn parse(s: &str) -> Option<Channel> {
        Some(match s {
            "auto" => Channel::Auto,
            "api" => Channel::Api,
            "none" => Channel::None,
            _ => return None,
        })
    }
}

/// Why a call is asked, which decides whether a waiver may answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The built-in floor ("not proven read-only"): waivable.
    Floor,
    /// A configured `ask` rule: a human may allow it once, a waiver never answers it.
    Configured,
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
}

/// How an ask ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Allowed(Decision),
    Denied,
    TimedOut,
    /// Nobody could be asked.
    Headless,
}

/// Validated `approvals:` settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub channel: Channel,
    pub timeout: Duration,
    pub waiver_capacity: u64,
    pub waiver_idle: Duration,
    /// Refusals in a row that flag a session.
    pub flag_consecutive: u32,
    /// Refusals in all that flag a session.
    pub flag_total: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            channel: Channel::Auto,
            timeout: Duration::from_secs(120),
            waiver_capacity: 10_000,
            waiver_idle: Duration::from_secs(3600),
            flag_consecutive: 3,
            flag_total: 20,
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
    pub waivers: Waivers,
    pub pending: Pending,
    pub flags: flags::Flags,
    metrics: Arc<Metrics>,
}

impl Approvals {
    /// `operator` is whether an admin token is configured (someone can answer the API).
    pub fn new(settings: &Settings, operator: bool, metrics: Arc<Metrics>) -> Approvals {
        let channel = match (settings.channel, operator) {
            (Channel::Auto, true) => Channel::Api,
            (Channel::Auto, false) => Channel::None,
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
            waivers: Waivers::new(settings.waiver_capacity, settings.waiver_idle, metrics.clone()),
            pending: Pending::new(metrics.clone()),
            flags: flags::Flags::new(settings.flag_consecutive, settings.flag_total, metrics.clone()),
            metrics,
        }
    }

    /// Nobody can be asked.
    pub fn headless() -> Approvals {
        Approvals::new(
            &Settings { channel: Channel::None, ..Settings::default() },
            false,
            Arc::new(Metrics::new()),
        )
    }

    /// True when an ask can reach a human (the transport then holds the call while it waits).
    pub fn can_ask(&self) -> bool {
        self.channel != Channel::None
    }

    /// True when `session` is flagged and the flag is enforced. Without an operator nobody could
    /// clear it, so a flag is then logged and counted but does not lock the session for good.
    pub fn flagged(&self, session: Option<&str>) -> bool {
        self.operator && self.flags.flagged(session)
    }

    /// True when a waiver answers `ask` (never for a configured ask).
    pub fn waived(&self, ask: &Ask) -> bool {
        matches!(ask.source, Source::Floor | Source::Checker) && self.waivers.covers(ask)
    }

    /// Asks a human and waits, at most `approvals.timeout`. Dropping the future (the agent went
    /// away) withdraws the ask.
    pub async fn ask(&self, ask: Ask) -> Resolution {
        if !self.can_ask() {
            return Resolution::Headless;
        }
        let (parked, decided) = self.pending.park(ask.clone());
        tracing::info!(id = parked.id(), tool = %ask.tool, "call parked for approval");
        let started = tokio::time::Instant::now();
        let resolution = match tokio::time::timeout(self.timeout, decided).await {
            Ok(Ok(Decision::Deny)) => Resolution::Denied,
            Ok(Ok(d)) => Resolution::Allowed(d),
            // The sender went away without a decision: only a withdrawn park does that.
            Ok(Err(_)) => Resolution::Denied,
            Err(_) => Resolution::TimedOut,
        };
        drop(parked);
        let label = match &resolution {
            Resolution::Allowed(d) => d.as_str(),
            Resolution::Denied => "deny",
            Resolution::TimedOut => "timeout",
            Resolution::Headless => "headless",
        };
        self.metrics.approvals(label);
        tracing::info!(tool = %ask.tool, decision = label, waited_ms = started.elapsed().as_millis() as u64, "approval resolved");
        self.flags.record(ask.session.as_deref(), !matches!(resolution, Resolution::Allowed(_)));
        if resolution == Resolution::Allowed(Decision::AllowSession)
            && matches!(ask.source, Source::Floor | Source::Checker)
        {
            self.waivers.arm(&ask);
        }
        resolution
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
                a.flags.record(Some("s"), true);
            }
            assert!(a.flags.flagged(Some("s")), "always flagged, logged and counted");
            assert_eq!(a.flagged(Some("s")), operator);
        }
    }
}
