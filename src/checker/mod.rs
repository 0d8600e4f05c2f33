//! Layer 2: the checker model — a separate, tool-less judge of the data crossing the tool
//! boundary, before a call (exfiltration in the arguments) and after it (injection in the result).
//!
//! Groundwork so far, pure and tested, not yet wired into the gate: the local detectors that need
//! no model ([`detect`]), the fenced prompt ([`prompt`]) and the strict verdict parser
//! ([`verdict`]). The client, rubrics, modes, cache and breakers arrive with the rest of the
//! Layer 2 issue.

pub mod detect;
pub mod prompt;
pub mod verdict;
