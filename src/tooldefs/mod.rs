//! Tool definitions, in one home: what each listed definition is (its digest and version, which
//! session waivers are keyed by: [`versions`]), whether the agent may see it and call it (pins and
//! a guardrail rule's `tools` phase: [`screen`]), and which of them each caller is shown (the
//! tools Layer 1 denies it by name are withheld: [`visible`]). The lock file itself is a setting
//! ([`crate::config::pins`]); `portcullis pin` writes it.

pub mod screen;
pub mod versions;
pub mod visible;

pub use screen::{Policy, ToolDefs, Withheld};
pub use versions::{digest, Definitions, UNTRACKED};
