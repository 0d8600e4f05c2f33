//! Flow fingerprints: what was read must not leave. Each session (of each agent) keeps a
//! bounded index of what it was shown that must not leave — the results of tools `flows.private`
//! names (winnowed rolling-hash shingles and fine grams of their text as [`fold`] normalises it,
//! [`shingle`], [`print`](mod@print)), the spans the
//! local detectors mark as secrets in any result and the `redact` entries a result held (exact
//! tokens) — tagged with the tool and upstream it came from ([`record`], in the post phase).
//!
//! Every call with outward reach (an `egress.sinks` tool, a fetch tool, a shell line that
//! connects: [`crate::rules::egress::Reach`]) from a session that read something is scanned for
//! it, as written, decoded ([`decode`], [`unescape`]), reversed, joined across arguments and
//! to what the session already sent ([`pieces`]) ([`check`], in the pre phase
//! beside egress); a copy bound for a destination no egress `allow` names is refused (or asked,
//! `flows.mode`) before any model, with a reason naming the source.
//!
//! Memory is bounded per session, in sessions and in total ([`store`]); a session past a bound
//! fails safe: what it holds still refuses, and its other sink calls go to the model rule
//! (counted in `portcullis_flow_checks_total{result="overflowed"}`). Replicas behind a shared
//! state store share it ([`shared`]): each writes what it records, and merges the others' before
//! a call with outward reach.

pub mod check;
mod decide;
pub mod decode;
pub mod fold;
pub mod index;
pub mod pieces;
pub mod print;
pub mod provenance;
pub mod record;
mod replicas;
pub mod shared;
pub mod shingle;
pub mod store;
pub mod unescape;

use std::sync::Arc;

pub use crate::telemetry::flow_metrics::{FlowMetrics, Judged};
pub use check::Flow;
pub use decide::{Reaches, Watched};

use crate::call::ToolCall;
use crate::config::flows::{FlowLimits, FlowSettings};
use index::Bounds;
use store::{SessionKey, Store, StoreBounds};

/// The flow index and the policy it is read under. The store is the process's, kept across
/// reloads; the settings are the policy's.
#[derive(Debug)]
pub struct Flows {
    pub settings: FlowSettings,
    store: Arc<Store>,
    metrics: FlowMetrics,
}

fn bounds(l: FlowLimits) -> StoreBounds {
    StoreBounds {
        session: Bounds { per_session: l.per_session, sources: l.sources_per_session },
        sessions: l.sessions,
        total: l.total,
        evicted: l.evicted,
    }
}

impl Flows {
    pub fn new(settings: FlowSettings, metrics: FlowMetrics) -> Flows {
        let store = Arc::new(Store::new(bounds(settings.limits)));
        Flows { settings, store, metrics }
    }

    /// The same index under a reloaded policy (new bounds take effect at the next start).
    pub fn reloaded(&self, settings: FlowSettings) -> Flows {
        Flows { settings, store: self.store.clone(), metrics: self.metrics.clone() }
    }

    /// A call's session as the index keys it: its agent, and its caller as budgets count it
    /// (an agent, else the address it calls from), else its session (stdio, the hook). Never the
    /// session id alone where there is a caller: the client picks it, and a fresh one after a
    /// read would post what the first one read (red team R6-4).
    fn key(&self, call: &ToolCall) -> SessionKey {
        let session = call.caller.as_deref().or(call.session.as_deref());
        self.store.key(call.agent.as_deref().map(|a| &*a.id), session)
    }
}
