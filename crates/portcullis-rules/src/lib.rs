//! Layer 1: the permission rule engine. Deterministic, always on, no network: every call gets
//! an [`Effect`] — allow, ask or deny — naming the rule, its scope and a reason.
//!
//! Resolution, in one paragraph: a call is split into *units* (each segment of a shell line, the
//! jailed path of a file tool, the URL of a fetch, the arguments of anything else). For each unit
//! every matching rule in every scope is found; **deny dominates ask dominates allow** whatever
//! the scope, and scope only picks which rule is named. With no matching rule the built-in floor
//! decides — proven read-only allows, anything else asks — and the posture or the upstream's
//! profile may loosen that floor (never a configured ask, never a deny). Opaque shell (command
//! substitution, subshells, `eval`, …) is floored at ask whatever an allow says. The worst unit
//! decides the call.

#![forbid(unsafe_code)]
// clippy.toml's disallowed methods are for the product; tests may set variables and sleep.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod allowlist;
#[cfg(test)]
mod ask_origin_tests;
pub mod destination;
mod effect_match;
pub mod egress;
mod engine;
pub mod escape;
#[cfg(test)]
mod escape_tests;
pub mod glob;
pub mod grants;
#[cfg(test)]
mod grants_tests;
pub mod jail;
pub mod kinds;
#[cfg(test)]
mod plan_tests;
pub mod resource;
#[cfg(test)]
mod resource_tests;
#[cfg(test)]
mod secret_floor_tests;
pub mod spec;
pub mod subagent;
#[cfg(test)]
mod subagent_tests;
pub mod subject;

pub use engine::{Engine, EngineParts, Layered};

/// Layer 1's answer. Ordered: `Allow < Ask < Deny`, so `max` is "worst wins".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    Allow,
    Ask,
    Deny,
}

impl Effect {
    pub const ALL: [Effect; 3] = [Effect::Allow, Effect::Ask, Effect::Deny];

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
}

/// Where a rule comes from. Ordered by precedence (`Builtin` lowest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The built-in floor, jail and hard denials.
    Builtin,
    /// The main config file.
    Config,
    /// An agent's own `permissions` (and a delegated agent's narrowing), layered on the config's.
    Agent,
    /// `--permission-config` files.
    Cli,
    /// The managed file (`PORTCULLIS_MANAGED_CONFIG`), set by an administrator.
    Managed,
}

impl Scope {
    pub const ALL: [Scope; 5] = [Scope::Builtin, Scope::Config, Scope::Agent, Scope::Cli, Scope::Managed];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Builtin => "builtin",
            Scope::Config => "config",
            Scope::Agent => "agent",
            Scope::Cli => "cli",
            Scope::Managed => "managed",
        }
    }
}

/// How much the built-in floor trusts the agent. Deny dominance holds at every posture. Ordered
/// by trust (`Strict` lowest), so `min` is "the narrower of the two".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Posture {
    /// Proven read-only allows; everything else asks.
    #[default]
    Strict,
    /// Also allows file writes inside the jail, fetches and generic tools; mutating shell asks.
    Trusted,
    /// The floor allows everything; configured asks, opaque shell and parse errors still ask.
    Auto,
    /// As `auto`, and opaque shell is allowed too (guardrail rules become advisory once they
    /// exist). Parse errors still ask; denies still deny.
    Yolo,
}

impl Posture {
    pub fn as_str(self) -> &'static str {
        match self {
            Posture::Strict => "strict",
            Posture::Trusted => "trusted",
            Posture::Auto => "auto",
            Posture::Yolo => "yolo",
        }
    }

    pub fn parse(s: &str) -> Option<Posture> {
        Some(match s {
            "strict" => Posture::Strict,
            "trusted" => Posture::Trusted,
            "auto" => Posture::Auto,
            "yolo" => Posture::Yolo,
            _ => return None,
        })
    }
}

/// A named permission bundle for one upstream or agent. Ordered by trust (`Readonly` lowest), so
/// `min` is "the narrower of the two".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Profile {
    /// The agent is planning (never configured: the call says so, [`Engine::decide_planning`]):
    /// as `Readonly`, and the refusal tells the agent to present its plan first.
    Plan,
    /// Anything not proven read-only is denied.
    Readonly,
    /// The posture's floor.
    #[default]
    Standard,
    /// The floor allows mutating calls (as `auto`), configured rules still apply.
    Privileged,
}

impl Profile {
    pub fn parse(s: &str) -> Option<Profile> {
        Some(match s {
            "readonly" => Profile::Readonly,
            "standard" => Profile::Standard,
            "privileged" => Profile::Privileged,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Plan => "plan",
            Profile::Readonly => "readonly",
            Profile::Standard => "standard",
            Profile::Privileged => "privileged",
        }
    }
}

/// Whether the read-only pre-filter may skip the checker for a shell call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefilter {
    /// Proven read-only: no checker call needed.
    Skip,
    /// Anything else is inspected.
    Inspect,
}

impl Prefilter {
    pub fn as_str(self) -> &'static str {
        match self {
            Prefilter::Skip => "skip",
            Prefilter::Inspect => "inspect",
        }
    }
}

/// A decision, with everything a human needs to understand it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub effect: Effect,
    /// The rule that decided (its source text, or the built-in that did).
    pub rule: String,
    pub scope: Scope,
    pub reason: String,
    /// For shell calls: whether the read-only pre-filter would skip the checker.
    pub prefilter: Option<Prefilter>,
}

/// One configured rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub spec: spec::RuleSpec,
    pub effect: Effect,
    pub scope: Scope,
}
