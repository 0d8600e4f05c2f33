//! The responses an exchange waits for, and why it waits for each (a call's result, the
//! negotiated version, a tool list).

use serde_json::value::RawValue;

use super::super::tally::{Counted, SharedCounter};
use super::Envelope;
use crate::call::ToolCall;
use crate::mcp::jsonrpc::IdKey;

/// Who asked for a tool list, and of which upstream: what the answer is filtered for.
#[derive(Debug, Clone)]
pub struct Lister {
    pub upstream: std::sync::Arc<str>,
    /// The authenticated agent; `None` for an anonymous caller (the config's policy).
    pub agent: Option<std::sync::Arc<crate::identity::Agent>>,
}

impl Lister {
    pub fn new(
        upstream: std::sync::Arc<str>,
        agent: Option<std::sync::Arc<crate::identity::Agent>>,
    ) -> Lister {
        Lister { upstream, agent }
    }
}

/// Why a response is watched.
#[derive(Debug, Clone)]
pub enum Watch {
    /// The result of this call is inspected before the agent sees it; its outcome is counted
    /// when the watch is dropped ([`Counted`]).
    Call(Counted),
    /// The negotiated protocol version is recorded (it decides whether batches are legal), with
    /// whether the client declared it can elicit (its user can be asked to approve calls); the
    /// answer itself (`instructions`, which clients give their model) is judged as `answer`.
    Initialize { elicits: bool, answer: Counted },
    /// A `tools/list` result for this caller of this upstream: its definitions are recorded,
    /// screened, and what the caller may not call taken out ([`crate::tooldefs::visible`]).
    List(Lister),
}

/// The responses an exchange waits for. Usually one, so a small vector beats a map. The counter
/// counts calls the exchange takes in later (answers on this stream to another stream's calls).
#[derive(Debug, Clone, Default)]
pub struct Watched(pub(super) Vec<(IdKey, Watch)>, Option<SharedCounter>);

impl FromIterator<(IdKey, Watch)> for Watched {
    fn from_iter<T: IntoIterator<Item = (IdKey, Watch)>>(iter: T) -> Self {
        Watched(iter.into_iter().collect(), None)
    }
}

impl Watched {
    /// Nothing watched yet; calls taken in later are counted by `counter`.
    pub fn counting(counter: Option<SharedCounter>) -> Watched {
        Watched(Vec::new(), counter)
    }

    /// Sets the counter for calls taken in later.
    pub fn with_counter(mut self, counter: Option<SharedCounter>) -> Watched {
        self.1 = counter;
        self
    }

    /// Watches `call`'s answer under `id`, counted by this table's counter.
    pub fn insert_call(&mut self, id: IdKey, call: ToolCall) {
        let counted = Counted::new(call, self.1.clone());
        self.0.push((id, Watch::Call(counted)));
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn insert(&mut self, id: IdKey, watch: Watch) {
        self.0.push((id, watch));
    }

    /// The watch for `id`, left in place.
    pub fn peek(&self, id: &RawValue) -> Option<&Watch> {
        if self.0.is_empty() {
            return None;
        }
        let key = IdKey::new(id);
        self.0.iter().find(|(k, _)| key.answers(k)).map(|(_, w)| w)
    }

    /// Moves out the watches that responses in `answer` answer (so they can be inspected without
    /// holding a lock on the rest).
    pub fn extract(&mut self, answer: &Envelope<'_>) -> Watched {
        let mut out = Watched::counting(self.1.clone());
        for id in answer.response_ids() {
            if let Some(w) = self.take(id) {
                out.insert(IdKey::new(id), w);
            }
        }
        out
    }

    /// Puts back what `other` still holds.
    pub fn merge(&mut self, other: Watched) {
        self.0.extend(other.0);
    }

    /// Removes and returns the watch for `id`.
    pub fn take(&mut self, id: &RawValue) -> Option<Watch> {
        if self.0.is_empty() {
            return None;
        }
        let key = IdKey::new(id);
        let i = self.0.iter().position(|(k, _)| key.answers(k))?;
        Some(self.0.swap_remove(i).1)
    }

    /// The entries, to merge into a longer-lived table (the stdio relay's).
    pub fn into_entries(self) -> impl Iterator<Item = (IdKey, Watch)> {
        self.0.into_iter()
    }

    /// The watched calls with their ids.
    pub fn calls(&self) -> impl Iterator<Item = (&IdKey, &ToolCall)> {
        self.0.iter().filter_map(|(k, w)| match w {
            Watch::Call(c) => Some((k, c.call())),
            Watch::Initialize { .. } | Watch::List(_) => None,
        })
    }

    /// The `tools/list` requests watched, with who asked.
    pub fn lists(&self) -> impl Iterator<Item = (&IdKey, &Lister)> {
        self.0.iter().filter_map(|(k, w)| match w {
            Watch::List(lister) => Some((k, lister)),
            _ => None,
        })
    }

    /// True when an answer the proxy learns from (`initialize`, `tools/list`) is awaited.
    pub fn has_initialize(&self) -> bool {
        self.0.iter().any(|(_, w)| matches!(w, Watch::Initialize { .. } | Watch::List(_)))
    }

    /// Settles every watched call (their outcome is counted when the table is dropped).
    pub fn settle_calls(&mut self, outcome: crate::gate::CallOutcome) {
        for (_, w) in &mut self.0 {
            if let Watch::Call(c) = w {
                c.settle(outcome);
            }
        }
    }

    /// What is still unanswered (at the end of a stream: calls that never got a result).
    pub fn drain(&mut self) -> impl Iterator<Item = (IdKey, Watch)> + '_ {
        self.0.drain(..)
    }
}
