//! git commands named by their effect: plumbing that does what a porcelain command does is
//! spelled as that porcelain command in the canonical form, so `Shell(git push:*)` holds for
//! every spelling that pushes (SECURITY.md class 5: rules decide on effects).
//!
//! Only exact equivalents are listed (the plumbing does nothing the porcelain cannot):
//! - `send-pack`, `http-push` update a remote's refs from local objects: `push`;
//! - `fetch-pack` downloads a remote's objects: `fetch`.
//!
//! Commands whose effect includes another's keep their name and list the other ([`includes`]):
//! `pull` fetches, then merges or rebases; `remote update` fetches (renaming `pull` to `fetch`
//! would let a deny on `git pull` deny every `git fetch`). `receive-pack` and `upload-pack` are the serving ends
//! (they act on a local repository, driven by stdin); `remote-*` helpers (`remote-ext` runs a
//! command) are judged as themselves. Every word not listed is its own effect.

/// The porcelain command whose effect `sub` has, when it is a listed plumbing command.
pub fn porcelain(sub: &str) -> Option<&'static str> {
    EQUIVALENTS.iter().find(|(plumbing, _)| *plumbing == sub).map(|(_, effect)| *effect)
}

/// `(plumbing, porcelain)`.
const EQUIVALENTS: &[(&str, &str)] = &[("send-pack", "push"), ("http-push", "push"), ("fetch-pack", "fetch")];

/// The porcelain effects that the git command `words` (after `git` and its global options) has
/// besides its own name, and how many of its words name it: `pull …` → (`fetch`, `merge`,
/// `rebase`; 1), `remote update …` → (`fetch`; 2).
pub fn includes(words: &[String]) -> (&'static [&'static str], usize) {
    match words {
        [pull, ..] if pull == "pull" => (&["fetch", "merge", "rebase"], 1),
        [remote, update, ..] if remote == "remote" && update == "update" => (&["fetch"], 2),
        _ => (&[], 0),
    }
}

/// The subcommand word as its effect: the porcelain for listed plumbing, else itself.
pub fn named(sub: &str) -> &str {
    porcelain(sub).unwrap_or(sub)
}

#[cfg(test)]
mod tests {
    use crate::effects::{effects, Canonical};
    use crate::place::Base;

    #[test]
    fn plumbing_is_canonically_the_porcelain_whose_effect_it_has() {
        let table = [
            ("git send-pack ../r.git HEAD:refs/heads/x", "git push ../r.git HEAD:refs/heads/x"),
            ("git -C w http-push https://h/r.git main", "git push https://h/r.git main"),
            ("git --no-pager fetch-pack ../r.git main", "git fetch ../r.git main"),
            ("git push origin", "git push origin"),
            ("git pull origin", "git pull origin"),
            ("git receive-pack r.git", "git receive-pack r.git"),
            ("git log send-pack", "git log send-pack"),
        ];
        for (line, canonical) in table {
            let a = crate::analyze(line);
            let e = &effects(&a, &Base::start(), None)[0];
            assert_eq!(e.canonical.join(" "), canonical, "{line}");
            assert_eq!(e.canonical_from, Canonical::Placed, "{line}");
        }
    }
}
