//! Where a decision's effect comes from — the built-in floor, the jail's escape row, or a
//! configured rule — and the one way two decisions are combined, which keeps it.
//!
//! Naming and provenance are separate questions. When units, readings, a line's commands,
//! egress, flows (anything) meet, one decision is *named* (the worse effect, then the higher
//! scope, then the first). But whoever answers an ask on the proxy's behalf (a session waiver,
//! the headless ask reviewer) must know whether *any* ask that went into it was an operator's,
//! whichever one got named: a jail escape ask of equal rank named over an operator's egress ask
//! is still the operator's ask. So at equal effect the origins combine, configured winning.

use crate::{Decision, Scope};

/// Who asked (or allowed, or denied). Ordered so that `max` is "configured wins": the origin of
/// two decisions of equal effect is the greater of theirs, so an ask is [`Origin::Floor`] only
/// when every ask that contributed to it was the floor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// The built-in floor: not proven read-only, opaque shell, a secret read.
    Floor,
    /// The jail's escape row: a path outside the jail's root, asked once (never waived).
    Escape,
    /// The floor, on a command it could not read (a shell parse error): nothing about what it
    /// does is proven, so a human may allow it once, and neither a waiver nor the headless ask
    /// reviewer (a model reading the same unparsed text) answers it.
    Unread,
    /// A configured rule of any scope: a permission rule, an `egress:` entry, a `flows:` refusal,
    /// a workspace tier, a profile.
    Configured,
}

impl Origin {
    /// The origin of a rule of `scope`: [`Scope::Builtin`] is the floor's, every other scope's
    /// is configured.
    pub fn of(scope: Scope) -> Origin {
        match scope {
            Scope::Builtin => Origin::Floor,
            _ => Origin::Configured,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Floor => "floor",
            Origin::Escape => "escape",
            Origin::Unread => "unread",
            Origin::Configured => "configured",
        }
    }
}

impl Decision {
    /// The worse of `self` and `other`: the worse effect is named, at equal effect the higher
    /// scope, and of equals the first (`self`, whose reason is the plainest). At equal effect
    /// the named decision's origin is the greater of both, so no configured ask is lost behind
    /// a floor or escape ask that got named.
    pub fn worse(self, other: Decision) -> Decision {
        let equal = self.effect == other.effect;
        let (mut named, rest) = match outranks(&other, &self) {
            true => (other, self),
            false => (self, other),
        };
        if equal {
            named.origin = named.origin.max(rest.origin);
        }
        named
    }
}

/// Whether `d` is named over `other` when two decisions are combined (units, readings, a line's
/// commands): the worse effect, and at equal effect the higher scope. Naming only: whether any
/// configured rule asked is the decision's [`Origin`], folded by [`Decision::worse`], which
/// whoever answers an ask on the proxy's behalf (the headless ask reviewer, a waiver) reads.
pub(crate) fn outranks(d: &Decision, other: &Decision) -> bool {
    (d.effect, d.scope) > (other.effect, other.scope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Effect;

    fn d(effect: Effect, scope: Scope, origin: Origin, rule: &str) -> Decision {
        Decision { effect, rule: rule.into(), scope, reason: String::new(), prefilter: None, origin }
    }

    #[test]
    fn at_equal_effect_configured_wins_whichever_decision_is_named() {
        use Origin::{Configured, Escape, Floor, Unread};
        let table = [
            (Floor, Unread, Unread),
            (Unread, Escape, Unread),
            (Escape, Unread, Unread),
            (Unread, Configured, Configured),
            (Floor, Floor, Floor),
            (Floor, Escape, Escape),
            (Escape, Floor, Escape),
            (Floor, Configured, Configured),
            (Configured, Floor, Configured),
            (Escape, Configured, Configured),
            (Configured, Escape, Configured),
        ];
        // Every pairing of scopes, so the fold holds whichever one is named.
        for (a, b, want) in table {
            for sa in Scope::ALL {
                for sb in Scope::ALL {
                    let got = d(Effect::Ask, sa, a, "a").worse(d(Effect::Ask, sb, b, "b"));
                    assert_eq!(got.origin, want, "{a:?}@{sa:?} + {b:?}@{sb:?}: {got:?}");
                    assert_eq!(got.worse(d(Effect::Ask, sa, a, "c")).origin, want);
                }
            }
        }
    }

    #[test]
    fn the_worse_effect_is_named_with_its_own_origin_and_the_first_of_equals_is_kept() {
        let floor_ask = d(Effect::Ask, Scope::Builtin, Origin::Floor, "floor");
        let allow = d(Effect::Allow, Scope::Managed, Origin::Configured, "allowed");
        let got = allow.clone().worse(floor_ask.clone());
        assert_eq!((got.rule.as_str(), got.origin), ("floor", Origin::Floor), "an allow adds no ask");
        let deny = d(Effect::Deny, Scope::Builtin, Origin::Floor, "deny");
        assert_eq!(floor_ask.clone().worse(deny.clone()).rule, "deny");
        let escape = d(Effect::Ask, Scope::Config, Origin::Escape, "escape");
        let operator = d(Effect::Ask, Scope::Config, Origin::Configured, "operator");
        let got = escape.clone().worse(operator.clone());
        assert_eq!((got.rule.as_str(), got.origin), ("escape", Origin::Configured), "the first named");
        assert_eq!(operator.worse(escape).rule, "operator");
        assert_eq!(floor_ask.worse(allow).rule, "floor");
    }
}
