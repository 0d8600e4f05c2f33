//! Out-of-workspace escapes: what a file tool's path that resolves outside the jail's root gets,
//! by posture, access and lineage.
//!
//! | access | strict | trusted | auto | yolo |
//! | --- | --- | --- | --- | --- |
//! | read (and search) | ask once | ask once | allow | allow |
//! | write | ask once | ask once | ask once | allow |
//! | any, from a delegated child | deny | deny | deny | deny |
//!
//! The row is a floor laid over the ordinary decision of the resolved path, never under it:
//! configured denies and asks, the secret floor and a `readonly` profile still decide the path as
//! they would inside. `/proc`, `/sys`, `/dev` and the jail's denied names never get here (the
//! jail refuses them at every posture, [`crate::jail::Placed::Refused`]). An ask for an escape is
//! allow-once only: it is decided in [`crate::Scope::Config`] (the jail's root is configured)
//! with [`crate::Origin::Escape`], which the proxy never answers with a session waiver (the
//! headless ask reviewer may answer it, unless a configured ask met the call too).
//!
//! A delegated child never gets a relaxed row: it is denied, not asked. A child is minted by an
//! agent to do less than its parent; a human asked to let it out of the workspace would be
//! judging a call composed two agents away from them, which is what delegation exists to avoid.

use crate::kinds::Access;
use crate::{Decision, Effect, Origin, Posture, Scope};

/// The rule an escape decision names.
pub const RULE: &str = "jail: outside";

/// Whose engine decides: a configured (or anonymous) agent's own, or a delegated child's
/// ([`crate::Engine::narrowed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lineage {
    #[default]
    Own,
    Delegated,
}

/// The escape table's answer for one path outside the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// The path is decided as if it were inside.
    Allow,
    /// Asked, and allowed once only if a human says so (never learned for the session).
    AskOnce,
    Deny,
}

impl Escape {
    /// The escape row for `access` at `posture`, for `lineage`.
    pub fn row(posture: Posture, access: Access, lineage: Lineage) -> Escape {
        if lineage == Lineage::Delegated {
            return Escape::Deny;
        }
        match (access.reads(), posture) {
            (_, Posture::Yolo) | (true, Posture::Auto) => Escape::Allow,
            (true, Posture::Strict | Posture::Trusted) | (false, _) => Escape::AskOnce,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Escape::Allow => "allow",
            Escape::AskOnce => "ask once",
            Escape::Deny => "deny",
        }
    }
}

/// Lays the escape row of `(posture, access, lineage)` over `inner`, the decision the resolved
/// path gets as if it were inside the jail. `unit` says what the call does ("read /etc/hosts");
/// `root` is the jail's root.
pub(crate) fn over(
    inner: Decision,
    unit: &str,
    root: &str,
    (posture, access, lineage): (Posture, Access, Lineage),
) -> Decision {
    let row = Escape::row(posture, access, lineage);
    let escape = |effect, reason| Decision {
        effect,
        rule: RULE.into(),
        scope: Scope::Config,
        origin: Origin::Escape,
        reason,
        prefilter: None,
    };
    match (row, inner.effect) {
        (Escape::Allow, _) | (_, Effect::Deny) => inner,
        (Escape::Deny, _) => escape(
            Effect::Deny,
            format!("{unit} resolves outside the jail {root}, and a delegated agent never leaves it"),
        ),
        (Escape::AskOnce, effect) => {
            let also = match effect {
                Effect::Ask => format!(" ({})", inner.reason),
                _ => String::new(),
            };
            let reason = format!(
                "{unit} resolves outside the jail {root}; at posture {} that is asked, and allowed once only{also}",
                posture.as_str()
            );
            // A configured ask on the path stays named, and configured: whoever may answer an
            // escape on the proxy's behalf (the ask reviewer) must see that an operator asked
            // too. A floor ask on the path is folded into the escape's (allowed once only).
            match (effect, inner.origin) {
                (Effect::Ask, Origin::Configured) => Decision { reason, ..inner },
                _ => escape(Effect::Ask, reason),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_escape_table_is_exactly_as_written() {
        use Escape::{Allow, AskOnce, Deny};
        let postures = [Posture::Strict, Posture::Trusted, Posture::Auto, Posture::Yolo];
        let table: &[(Access, Lineage, [Escape; 4])] = &[
            (Access::Read, Lineage::Own, [AskOnce, AskOnce, Allow, Allow]),
            (Access::Search, Lineage::Own, [AskOnce, AskOnce, Allow, Allow]),
            (Access::Write, Lineage::Own, [AskOnce, AskOnce, AskOnce, Allow]),
            (Access::Read, Lineage::Delegated, [Deny, Deny, Deny, Deny]),
            (Access::Search, Lineage::Delegated, [Deny, Deny, Deny, Deny]),
            (Access::Write, Lineage::Delegated, [Deny, Deny, Deny, Deny]),
        ];
        for (access, lineage, want) in table {
            for (posture, want) in postures.iter().zip(want) {
                assert_eq!(
                    Escape::row(*posture, *access, *lineage),
                    *want,
                    "{access:?} {lineage:?} {posture:?}"
                );
            }
        }
    }
}
