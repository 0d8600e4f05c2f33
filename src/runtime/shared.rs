//! The process state every transport shares: the policy snapshot (swapped whole by a reload),
//! identities, the state store, delegations, approvals, sessions and the counters. Built once by
//! [`super::Runtime`]; the HTTP layers, the stdio relay, the hook server, the admin API and
//! reloads read it, and none of them owns it.

use std::sync::Arc;

use crate::config::Limits;
use crate::gate::Guard;
use crate::telemetry::Metrics;

/// What every layer of one proxy shares. Built once; read-only but for the session table and the
/// policy, which a reload swaps whole (readers take a snapshot without locking).
#[derive(Debug)]
pub struct Shared {
    pub guard: arc_swap::ArcSwap<Guard>,
    /// The credentials agents authenticate with; a reload swaps them with the policy.
    pub identities: arc_swap::ArcSwap<crate::identity::Identities>,
    /// Where state replicas share lives (this process's memory unless `state.backend` says).
    pub store: crate::state::Store,
    /// Delegated credentials (`POST /delegations`); kept across reloads, like the sessions.
    pub delegations: Arc<crate::identity::delegation::Delegations>,
    pub metrics: Arc<Metrics>,
    /// The metrics, as the gate counts call outcomes ([`crate::gate::tally`]).
    pub counter: crate::gate::tally::SharedCounter,
    /// Parked asks and session waivers; kept across policy reloads.
    pub approvals: crate::approval::Approvals,
    pub sessions: crate::session::Sessions,
    /// Holds a session's POSTs while its GET stream is being attached upstream.
    pub stream_order: crate::session::stream_order::StreamOrder,
    pub limits: Limits,
}

impl Shared {
    /// The counter the gate counts call outcomes with.
    pub fn counter(&self) -> Option<&crate::gate::tally::SharedCounter> {
        Some(&self.counter)
    }

    /// Takes in what the post gate saw in one answer: a call's outcome (counted as the call is
    /// dropped here), a session's version and capabilities, a server's tool definitions.
    pub fn saw(&self, seen: crate::gate::post::Seen, session: Option<&str>) {
        use crate::gate::post::Seen;
        match seen {
            Seen::Call { call } => {
                tracing::Span::current().record("outcome", call.outcome().as_str());
            }
            Seen::Initialized { version, elicits } => {
                if let Some(s) = session {
                    self.sessions.record(s, version, elicits);
                }
            }
            Seen::Listed { upstream, result } => self.approvals.tools.record(&upstream, &result),
            Seen::TaskCreated { upstream, task, tool } => {
                self.approvals.task_ids.created(&upstream, &task, &tool)
            }
        }
    }
}
