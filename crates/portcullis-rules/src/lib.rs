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
mod implied;
pub mod jail;
pub mod kinds;
mod launder;
#[cfg(test)]
mod launder_corpus_tests;
pub mod origin;
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

pub use engine::{Engine, EngineParts, Layered, Matched};
pub use origin::Origin;

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

/// Where a rule comes from. Ordered by precedence (`Builtin` lowest): Managed > Cli > the
/// operator's own files (Agent, Config) > LocalProject > SharedProject > User > Builtin.
///
/// Precedence only names the rule among equal effects: deny dominates ask dominates allow in
/// every scope, so no scope's allow lifts another's deny or ask. The workspace tiers (`User`,
/// `SharedProject`, `LocalProject`) sit below every operator scope, so among equals an
/// operator's rule is the one a decision names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The built-in floor, jail and hard denials.
    Builtin,
    /// The user's own file (`$XDG_CONFIG_HOME/portcullis/settings.yaml`).
    User,
    /// A workspace's `.portcullis/settings.yaml`, shared with the repository (attacker-writable:
    /// its allows apply only in a trusted workspace).
    SharedProject,
    /// A workspace's `.portcullis/settings.local.yaml`, personal (same trust rule).
    LocalProject,
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
    /// Every scope, in order (metrics index by position).
    pub const ALL: [Scope; 8] = [
        Scope::Builtin,
        Scope::User,
        Scope::SharedProject,
        Scope::LocalProject,
        Scope::Config,
        Scope::Agent,
        Scope::Cli,
        Scope::Managed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Builtin => "builtin",
            Scope::User => "user",
            Scope::SharedProject => "project",
            Scope::LocalProject => "project-local",
            Scope::Config => "config",
            Scope::Agent => "agent",
            Scope::Cli => "cli",
            Scope::Managed => "managed",
        }
    }

    /// Whether rules of this scope come from a workspace (a cloned repository may have
    /// written them): their allows need the workspace to be trusted.
    pub fn is_project(self) -> bool {
        matches!(self, Scope::SharedProject | Scope::LocalProject)
    }
}

#[cfg(test)]
mod scope_tests {
    use super::Scope;

    #[test]
    fn every_scope_is_listed_once_in_precedence_order_so_metrics_can_index_by_position() {
        for (i, s) in Scope::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "{s:?}");
        }
        assert!(Scope::ALL.windows(2).all(|w| w[0] < w[1]));
        let names: std::collections::BTreeSet<_> = Scope::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names.len(), Scope::ALL.len());
    }

    #[test]
    fn the_design_precedence_holds_managed_cli_local_shared_user_builtin() {
        let order = [
            Scope::Managed,
            Scope::Cli,
            Scope::LocalProject,
            Scope::SharedProject,
            Scope::User,
            Scope::Builtin,
        ];
        assert!(order.windows(2).all(|w| w[0] > w[1]));
        assert!(Scope::Config > Scope::LocalProject && Scope::Config < Scope::Cli);
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
    /// Who asked (allowed, denied): at equal effect the origins of every decision combined into
    /// this one, configured winning ([`Decision::worse`]), whichever rule is named.
    pub origin: Origin,
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
