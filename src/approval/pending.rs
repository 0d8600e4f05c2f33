//! Parked asks: calls waiting for an operator's decision at the admin API. A parked ask is
//! withdrawn when its [`Parked`] handle drops — the decision came, it timed out, or the agent
//! went away — so the list never shows a call nobody waits for.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::Serialize;
use tokio::sync::oneshot;

use super::{Ask, Choice};
use crate::telemetry::Metrics;

struct Entry {
    ask: Ask,
    since: SystemTime,
    decide: oneshot::Sender<Choice>,
}

impl super::Source {
    /// How the API and announcements name it.
    pub fn as_str(self) -> &'static str {
        match self {
            super::Source::Floor => "floor",
            // Shown (and matched by the fleet) as what it is to a human: allow once only.
            super::Source::Configured | super::Source::Escape | super::Source::Unread => "configured",
            super::Source::Checker => "checker",
            super::Source::Flagged => "flagged",
        }
    }
}

/// What the API shows of a parked ask.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct View {
    pub id: u64,
    pub tool: String,
    pub args: String,
    pub reason: String,
    pub session: Option<String>,
    /// The agent asking, when agents are configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Seconds since the Unix epoch.
    pub since: u64,
    /// `floor`, `configured` or `checker`: a configured ask cannot be allowed for the session.
    pub source: std::borrow::Cow<'static, str>,
}

type Table = Arc<Mutex<BTreeMap<u64, Entry>>>;

pub struct Parking {
    table: Table,
    next: AtomicU64,
    /// At most this many asks wait at once (`approvals.max_pending`); beyond it an ask is
    /// refused, never parked, and nothing already parked is dropped to make room.
    max: usize,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Parking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parking").field("parked", &self.table.lock().map(|t| t.len()).unwrap_or(0)).finish()
    }
}

/// Withdraws its ask on drop.
pub struct Parked {
    id: u64,
    table: Table,
    metrics: Arc<Metrics>,
}

impl Parked {
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        t.remove(&self.id);
        self.metrics.approvals_pending(t.len());
    }
}

/// Why a decision could not be delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecideError {
    #[error("no parked call with id {0} (decided, timed out or withdrawn)")]
    NotFound(u64),
    #[error("call {0} was asked by a configured rule or in a flagged session: it can be allowed once, not for the session")]
    NotWaivable(u64),
}

impl Parking {
    pub fn new(max: usize, metrics: Arc<Metrics>) -> Parking {
        Parking { table: Arc::default(), next: AtomicU64::new(1), max, metrics }
    }

    /// Parks `ask`; the receiver gets the operator's decision. `None` when `max` asks already
    /// wait: the call is refused rather than an older ask withdrawn.
    pub fn park(&self, ask: Ask) -> Option<(Parked, oneshot::Receiver<Choice>)> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.park_as(id, ask)
    }

    /// Parks `ask` under `id` (a fleet-wide id the shared store handed out).
    pub fn park_as(&self, id: u64, ask: Ask) -> Option<(Parked, oneshot::Receiver<Choice>)> {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() >= self.max || t.contains_key(&id) {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        t.insert(id, Entry { ask, since: SystemTime::now(), decide: tx });
        self.metrics.approvals_pending(t.len());
        Some((Parked { id, table: self.table.clone(), metrics: self.metrics.clone() }, rx))
    }

    /// What the API shows of parked ask `id`.
    pub fn view(&self, id: u64) -> Option<View> {
        self.list().into_iter().find(|v| v.id == id)
    }

    pub fn list(&self) -> Vec<View> {
        let t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        t.iter()
            .map(|(id, e)| View {
                id: *id,
                tool: e.ask.tool.clone(),
                args: e.ask.args.clone(),
                reason: e.ask.reason.clone(),
                session: e.ask.session.clone(),
                agent: e.ask.agent.as_ref().map(|a| a.id.to_string()),
                since: e.since.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
                source: std::borrow::Cow::Borrowed(e.ask.source.as_str()),
            })
            .collect()
    }

    /// Delivers a decision to the parked call `id`.
    pub fn decide(&self, id: u64, decision: Choice) -> Result<(), DecideError> {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let Some(e) = t.get(&id) else { return Err(DecideError::NotFound(id)) };
        if decision == Choice::AllowSession
            && matches!(
                e.ask.source,
                super::Source::Configured
                    | super::Source::Escape
                    | super::Source::Unread
                    | super::Source::Flagged
            )
        {
            return Err(DecideError::NotWaivable(id));
        }
        let e = t.remove(&id).ok_or(DecideError::NotFound(id))?;
        self.metrics.approvals_pending(t.len());
        e.decide.send(decision).map_err(|_| DecideError::NotFound(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(n: usize) -> Ask {
        Ask {
            tool: "mcp__sh__run".into(),
            args: format!("{{\"n\":{n}}}"),
            reason: "r".into(),
            source: super::super::Source::Floor,
            session: None,
            definition: 0,
            agent: None,
        }
    }

    #[test]
    fn a_full_table_refuses_new_asks_and_keeps_every_parked_one() {
        let p = Parking::new(3, Arc::new(Metrics::new()));
        let parked: Vec<_> = (0..3).map(|n| p.park(ask(n)).expect("room")).collect();
        assert!(p.park(ask(3)).is_none(), "the fourth is refused");
        assert_eq!(p.list().len(), 3, "nothing parked was dropped to make room");
        let first = parked[0].0.id();
        drop(parked);
        assert!(p.list().is_empty());
        assert!(p.park(ask(4)).is_some(), "room again once the waits end");
        assert_eq!(p.decide(first, Choice::AllowOnce), Err(DecideError::NotFound(first)));
    }
}
