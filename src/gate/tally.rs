//! A tool call's outcome, counted exactly once, in one place: when its [`Counted`] is dropped.
//!
//! Every transport used to count outcomes itself — sixteen calls in six files, with the parked
//! path and a client hanging up mid-stream never counting at all. Now a call that is let through
//! travels as a [`Counted`] (in the watch table of its response, or in a parked ask), and a call
//! refused before it runs is a [`Counted`] settled at once. Whatever happens to it afterwards,
//! the count happens when it is dropped: with the outcome it was settled with, or
//! [`CallOutcome::Failed`] when nothing settled it (the upstream failed, the stream ended without
//! a result, the client went away). `impl Drop for Counted` is the only caller of
//! [`Counter::count`].

use std::sync::Arc;

use super::CallOutcome;
use crate::call::ToolCall;

pub use crate::outcome::Counter;

/// A shared counter.
pub type SharedCounter = Arc<dyn Counter>;

/// A tool call whose outcome will be counted once, when it is dropped.
#[derive(Debug)]
pub struct Counted {
    call: ToolCall,
    counter: Option<SharedCounter>,
    outcome: Option<CallOutcome>,
    /// The `limits.per_agent` places in flight it holds, freed as it is dropped.
    permit: crate::limits::Permit,
}

impl Counted {
    /// A call that is on its way; counted as [`CallOutcome::Failed`] unless settled. With no
    /// counter (offline `check`, unit tests) nothing is counted.
    pub fn new(call: ToolCall, counter: Option<SharedCounter>) -> Counted {
        Counted { call, counter, outcome: None, permit: Default::default() }
    }

    /// A call whose outcome is already known (a refusal): counted when dropped.
    pub fn settled(call: ToolCall, counter: Option<SharedCounter>, outcome: CallOutcome) -> Counted {
        Counted { call, counter, outcome: Some(outcome), permit: Default::default() }
    }

    /// The call, holding `permit` until it is dropped (the upstream answered, the stream ended,
    /// or the client went away).
    pub fn with_permit(mut self, permit: crate::limits::Permit) -> Counted {
        self.permit = permit;
        self
    }

    /// Records how the call ended; the last word before the drop is the one counted.
    pub fn settle(&mut self, outcome: CallOutcome) {
        self.outcome = Some(outcome);
    }

    /// The outcome it will be counted with if dropped now.
    pub fn outcome(&self) -> CallOutcome {
        self.outcome.unwrap_or(CallOutcome::Failed)
    }

    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The counter, for a call this one's answer brings in (another id on the same stream).
    pub fn counter(&self) -> Option<&SharedCounter> {
        self.counter.as_ref()
    }
}

impl std::ops::Deref for Counted {
    type Target = ToolCall;
    fn deref(&self) -> &ToolCall {
        &self.call
    }
}

/// A copy is a view of the call and is never counted (nor holds a place): only the original counts. (`Clone` exists
/// because request extensions must be `Clone`; nothing in the proxy clones a watch table.)
impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted { call: self.call.clone(), counter: None, outcome: self.outcome, permit: Default::default() }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        // The answer to a request no route names (`initialize`, `ping`) is a tool call only when
        // the gate changed it: plumbing that passed is not counted beside the session's calls.
        let plumbing = self.call.method == crate::call::Method::Unrouted
            && matches!(self.outcome(), CallOutcome::Forwarded | CallOutcome::Failed);
        if plumbing {
            return;
        }
        if let Some(counter) = &self.counter {
            counter.count(
                &self.call.upstream,
                &self.call.qualified,
                self.call.agent.as_ref().map(|a| &*a.name),
                self.outcome(),
            );
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mcp::era::Era;
    use std::sync::Mutex;

    /// A counter that remembers what it counted.
    #[derive(Debug, Default)]
    pub struct Recorded(pub Mutex<Vec<(String, CallOutcome)>>);

    impl Counter for Recorded {
        fn count(&self, _upstream: &str, tool: &str, _agent: Option<&str>, outcome: CallOutcome) {
            self.0.lock().unwrap().push((tool.to_owned(), outcome));
        }
    }

    impl Recorded {
        pub fn taken(&self) -> Vec<(String, CallOutcome)> {
            std::mem::take(&mut *self.0.lock().unwrap())
        }
    }

    fn call() -> ToolCall {
        ToolCall::mcp("up".into(), "read", None, Era::Legacy)
    }

    #[test]
    fn a_call_nobody_settled_counts_once_as_failed_when_dropped() {
        let rec = Arc::new(Recorded::default());
        let c = Counted::new(call(), Some(rec.clone()));
        assert!(rec.taken().is_empty(), "nothing is counted while the call is on its way");
        drop(c);
        assert_eq!(rec.taken(), vec![("mcp__up__read".into(), CallOutcome::Failed)]);
    }

    #[test]
    fn a_settled_call_counts_its_last_outcome_once_and_a_copy_never_counts() {
        let rec = Arc::new(Recorded::default());
        let mut c = Counted::new(call(), Some(rec.clone()));
        c.settle(CallOutcome::Forwarded);
        c.settle(CallOutcome::Rewritten);
        drop(c.clone());
        assert!(rec.taken().is_empty(), "a copy is a view");
        drop(c);
        assert_eq!(rec.taken(), vec![("mcp__up__read".into(), CallOutcome::Rewritten)]);
        drop(Counted::settled(call(), Some(rec.clone()), CallOutcome::Denied));
        assert_eq!(rec.taken().len(), 1);
    }
}
