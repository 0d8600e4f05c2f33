//! Where a shell command's path operands land: each spelling the effect model hands over
//! ([`PathEffect::spelled`]) resolved by the jail's one resolution ([`Jail::resolve`]), so
//! `cat link/../x`, `> link/../x`, `cd link && cat ../x` and `git -C link/.. …` are judged where
//! the kernel opens them, not where the text points.
//!
//! The effect model places `..` lexically (it does no I/O); the landing is added next to that
//! place, never instead of it, so every judge (the read-only proof, the deny and ask rules)
//! sees both. A walk the jail refuses — through a link into `/proc`, `/sys` or `/dev`, whose
//! entries are the process's own (`/proc/self/…`), a loop, an unreadable link — lands
//! [`Place::Anywhere`]: nobody can say what it opens, so nothing may be proven of it.

use std::path::Path;

use portcullis_shell::effects::{CommandEffects, PathEffect};
use portcullis_shell::place::Place;

use super::{Jail, Refusal};

impl Jail {
    /// Adds to each command's paths where its spelled operands land, when that is not the
    /// place the effect model read.
    pub fn land(&self, effects: &mut [CommandEffects]) {
        for fx in effects {
            let mut landed: Vec<PathEffect> = Vec::new();
            for p in &fx.paths {
                let Some(spelled) = p.spelled.as_deref() else { continue };
                let place = match self.resolve(Path::new(spelled)) {
                    Ok(resolved) => Place::Abs(resolved.display().to_string()),
                    // No link on the way: the spelling itself names the tree, and its lexical
                    // place (which is where it lands) is judged as it is.
                    Err(Refusal::HardDenied { via: None, .. }) => continue,
                    Err(_) => Place::Anywhere,
                };
                let known = |q: &PathEffect| q.place == place && q.access == p.access;
                if !fx.paths.iter().any(known) && !landed.iter().any(known) {
                    landed.push(PathEffect { place, ..p.clone() });
                }
            }
            fx.paths.extend(landed);
        }
    }
}

#[cfg(test)]
#[path = "landing_tests.rs"]
mod tests;
