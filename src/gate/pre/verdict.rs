//! What the gate decided for one call, before any human answered.

use crate::approval::{Ask, Via};
use crate::limits::Permit;
use crate::rules::Decision;

use super::super::Denial;

/// What the gate decided for one call, before any human answered.
#[derive(Debug)]
pub enum Verdict {
    /// Send it on; with Layer 1's decision when the context asks to explain it (`None` for a
    /// waiver, and wherever nobody reads it), and the rate-limit places it holds until it is done
    /// (carry it with the call: [`crate::gate::tally::Counted::with_permit`]).
    Forward(Option<Box<Decision>>, Permit),
    /// Refuse it with these words; nobody can overrule it here.
    Refuse(Denial),
    /// A human (`via`) must decide; the refusal stands if the answer is no.
    Ask { denial: Denial, ask: Box<Ask>, via: Via },
}
