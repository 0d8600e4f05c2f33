//! Rules against what a shell command does: path rules on every path it may touch, however it
//! was spelled; prefix rules on its canonical form (`git -C . push` is `git push`).
//!
//! A match is certain ([`Hit::Yes`]) or possible ([`Hit::Possibly`]): a path nobody could
//! place (`cd "$D" && cat x`), a home directory whose location is unknown, a recursive read of a
//! directory above the rule's tree, a subcommand behind an option nobody understood. A possible
//! match of a deny or an ask asks; it never allows.

use portcullis_shell::effects::{Access, Canonical, CommandEffects, PathEffect};
use portcullis_shell::place::Place;

use super::destination::{read_url, DomainPattern, HostMatch};
use super::glob::Glob;
use super::spec::{CommandPattern, Subject};

/// How surely a rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Hit {
    Possibly,
    Yes,
}

/// Whether a path rule of `subject` speaks about this access.
pub(crate) fn subject_covers(subject: &Subject, access: Access) -> bool {
    match subject {
        Subject::Read => access.may_read(),
        Subject::Write => access.may_write(),
        Subject::File => true,
        _ => false,
    }
}

/// Whether the path glob `rule` matches the place of `effect`.
pub(crate) fn path_hit(rule: &Glob, effect: &PathEffect) -> Option<Hit> {
    let tree = matches!(effect.access, Access::ReadTree | Access::Any | Access::Repository);
    match &effect.place {
        Place::Abs(p) => {
            if rule.matches(p) {
                return Some(Hit::Yes);
            }
            // A word bash expands as a glob (`/e?c/hostname`, `/*/hostname`, after `cd /e*`)
            // may name any path its fixed prefix leads to.
            if let Some(at) = p.find(['*', '?', '[']) {
                let (fixed, rule_fixed) = (&p[..at], literal_prefix(rule));
                if rule_fixed.starts_with(fixed) || fixed.starts_with(rule_fixed) {
                    return Some(Hit::Possibly);
                }
            }
            // A recursive reader of `/etc` reads `/etc/shadow`; one nobody understood may be.
            if !tree {
                return None;
            }
            let dir = p.trim_end_matches('/');
            let inside = literal_prefix(rule).strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
                || rule.matches_parts(&[dir, "/\u{2026}"]);
            match (inside, effect.access) {
                (true, Access::ReadTree | Access::Repository) => Some(Hit::Yes),
                (true, _) => Some(Hit::Possibly),
                _ => None,
            }
        }
        Place::Home(rest) => {
            let rest: [&str; 2] = if rest == "." { ["", ""] } else { ["/", rest] };
            ["/root", "/home/\u{2026}", "/Users/\u{2026}"]
                .iter()
                .any(|home| rule.matches_parts(&[home, rest[0], rest[1]]))
                .then_some(Hit::Possibly)
        }
        // The tool's start directory is the deployment's, not the agent's: a word that stays
        // below it meets only the rules that could match below any directory (`**/.env`).
        Place::InStart(rel) => rule.matches_parts(&["/\u{2026}/", rel]).then_some(Hit::Possibly),
        Place::Anywhere => Some(Hit::Possibly),
    }
}

/// A command that reaches the network may be routed elsewhere than its URL (curl's
/// `--connect-to ::evil:`, `--resolve host:443:6.6.6.6`, proxies, `wget -e http_proxy=…`) or
/// read its destinations from a file (`-K cfg`): every piece of its words that reads as a host
/// the rule names, and any file it reads names from, is a possible destination.
pub(crate) fn routed_destination(pattern: &DomainPattern, effects: &CommandEffects) -> Option<(Hit, String)> {
    if effects.network.is_empty() {
        return None;
    }
    if let Some(p) = effects.paths.iter().find(|p| matches!(p.access, Access::NamesFiles | Access::Any)) {
        return Some((
            Hit::Possibly,
            format!("reaches the network and reads {} (it may name any host)", p.place),
        ));
    }
    effects.canonical.iter().skip(1).flat_map(|w| w.split([':', '=', '@', ',', '/', ' '])).find_map(|piece| {
        let host = piece.trim_matches(['[', ']']);
        (host.contains('.') && pattern.matches(&read_url(host)) != HostMatch::No)
            .then(|| (Hit::Possibly, format!("reaches the network and names the host {host}")))
    })
}

/// The rule's text up to its first wildcard.
fn literal_prefix(rule: &Glob) -> &str {
    let s = rule.as_str();
    &s[..s.find(['*', '?']).unwrap_or(s.len())]
}

/// Whether a command pattern matches the canonical form, or may match a subcommand that could
/// not be placed.
pub(crate) fn canonical_hit(pattern: &CommandPattern, effects: &CommandEffects) -> Option<Hit> {
    let words = &effects.canonical;
    let program = words.first().map(String::as_str);
    // Only a glob needs the canonical line spelled out; a prefix compares words in place.
    let glob_matches = |g: &super::glob::Glob| g.matches(&words.join(" "));
    match (effects.canonical_from, pattern) {
        (Canonical::Placed, CommandPattern::Prefix(p)) => {
            (p.len() <= words.len() && p.iter().zip(words).all(|(p, w)| p == w)).then_some(Hit::Yes)
        }
        (Canonical::Placed, CommandPattern::Glob(g)) => glob_matches(g).then_some(Hit::Yes),
        (Canonical::Unplaced, CommandPattern::Prefix(p)) => {
            (p.first().map(String::as_str) == program).then_some(Hit::Possibly)
        }
        (Canonical::Unplaced, CommandPattern::Glob(g)) if glob_matches(g) => Some(Hit::Yes),
        (Canonical::Unplaced, CommandPattern::Glob(g)) => {
            let after = g.as_str().strip_prefix(program.unwrap_or(""));
            after.is_some_and(|a| a.starts_with(' ')).then_some(Hit::Possibly)
        }
        (Canonical::Literal, _) => None,
    }
    .or_else(|| super::implied::git_effect_hit(pattern, effects).then_some(Hit::Yes))
    .or_else(|| {
        // A program that may run its words (`fakeroot rm x`) may run the rule's program.
        let ruled = super::launder::rule_program(pattern)?;
        super::launder::may_run(ruled, effects).map(|_| Hit::Possibly)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glob::Flavour;

    fn fx(place: Place, access: Access) -> PathEffect {
        PathEffect { place, access, word: String::new(), spelled: None }
    }

    #[test]
    fn places_meet_path_rules_surely_or_possibly() {
        let etc = Glob::new("/etc/**", Flavour::Path);
        let abs = |p: &str| Place::Abs(p.into());
        assert_eq!(path_hit(&etc, &fx(abs("/etc/hostname"), Access::Read)), Some(Hit::Yes));
        assert_eq!(path_hit(&etc, &fx(abs("/usr/x"), Access::Read)), None);
        assert_eq!(path_hit(&etc, &fx(abs("/"), Access::ReadTree)), Some(Hit::Yes));
        assert_eq!(path_hit(&etc, &fx(abs("/"), Access::Any)), Some(Hit::Possibly));
        assert_eq!(path_hit(&etc, &fx(abs("/"), Access::Read)), None);
        assert_eq!(path_hit(&etc, &fx(Place::Anywhere, Access::Read)), Some(Hit::Possibly));
        assert_eq!(path_hit(&etc, &fx(Place::InStart("etc/x".into()), Access::Read)), None);
        let env = Glob::new("**/.env", Flavour::Path);
        assert_eq!(path_hit(&env, &fx(Place::InStart("app/.env".into()), Access::Read)), Some(Hit::Possibly));
        let ssh = Glob::new("/root/.ssh/**", Flavour::Path);
        assert_eq!(path_hit(&ssh, &fx(Place::Home(".ssh/id_rsa".into()), Access::Read)), Some(Hit::Possibly));
        let homes = Glob::new("/home/*/.aws/**", Flavour::Path);
        assert_eq!(
            path_hit(&homes, &fx(Place::Home(".aws/credentials".into()), Access::Read)),
            Some(Hit::Possibly)
        );
    }
}
