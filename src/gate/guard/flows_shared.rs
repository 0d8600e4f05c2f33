//! The guard's side of the flow index across replicas ([`crate::flows::shared`]): connecting
//! it to the state store, and merging the other replicas' records before a call's pre phase.

use serde_json::Value;

use super::Guard;
use crate::call::ToolCall;
use crate::flows::Reaches;

impl Guard {
    /// Shares the flow index through `store` when it is a shared one (called with
    /// `share_verdicts`, at start and after each reload; the index is kept across reloads).
    pub fn share_flows(&self, store: &crate::state::Store) {
        if let (Some(f), Some(s)) = (&self.flows, store.shared()) {
            f.share_through(s.clone());
        }
    }

    /// Whether results are recorded in a flow index shared across replicas (recording then
    /// waits on the store, so a result is not released on the poll it arrives).
    pub fn shares_flows(&self) -> bool {
        self.flows.as_ref().is_some_and(|f| f.is_shared())
    }

    /// Before `call`'s pre phase: what other replicas recorded for its caller, merged into
    /// this replica's index (one round trip, only for a call with outward reach, only with a
    /// shared store). Returns the call's arguments when it had to parse them (a shell tool's
    /// reach depends on its line), for [`Guard::pre_parsed`]: they are parsed once.
    pub async fn pull_flows(&self, call: &ToolCall) -> Option<Value> {
        let f = self.flows.as_ref().filter(|f| f.is_shared())?;
        let engine = self.engine_for(call).ok()?;
        let args = match Reaches::of(&engine, call) {
            Reaches::Never => return None,
            Reaches::Always => None,
            Reaches::ByArguments => Some(self.args(call, true).ok()?),
        };
        // Boxed: only a shared store pulls, and every call's future would carry the store's.
        Box::pin(f.pull(call, args.as_ref(), &engine)).await;
        args
    }
}
