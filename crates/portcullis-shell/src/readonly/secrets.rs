//! The read-only proof's adapters to the secret policy ([`crate::secrets`]), over words: each
//! path-like piece of a word is placed against the start directory and judged. Until the proof
//! reads the effect model, a word is split wide (on `/ = : @ ,`, quotes and blanks' neighbours),
//! so `--key-file=~/.ssh/id_rsa`, `HEAD:.env` and `user@host:~/.aws` are all judged as paths.
//! A false hit only costs a checker call.

use std::borrow::Cow;

use super::paths;
use crate::place::{place, Base};
use crate::secrets::{judge, Context, Globbing, Reading};

/// Where a word is split into path-like pieces (besides `=`, which [`paths::pieces`] splits).
const SEPARATORS: [char; 9] = ['=', ':', '@', ',', '\'', '"', ' ', '\t', '\n'];

/// The pieces of a word that may be paths, each once, in the order they are judged. A `$` or
/// backtick left in a word of a command that is not opaque is literal text (an expansion would
/// have made the command opaque), so it is not taken as "unplaced".
fn pieces(word: &str) -> Vec<Cow<'_, str>> {
    let mut out: Vec<Cow<'_, str>> = Vec::new();
    let all = paths::pieces(word)
        .chain(word.split(SEPARATORS).filter(|f| !f.is_empty()).map(Cow::Borrowed))
        .map(|p| match p.contains(['$', '`']) {
            true => Cow::Owned(p.replace(['$', '`'], "_")),
            false => p,
        });
    // The same piece judged twice gives the same answer (`README.md` is both the word and
    // its only field).
    for p in all {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

fn first_secret(word: &str, reading: Reading, globbing: Globbing) -> Option<String> {
    let cx = Context { globbing, ..Context::default() };
    let start = Base::start();
    pieces(word)
        .iter()
        .find_map(|p| judge(&place(p, &start, None), reading, &cx).err().map(|s| s.to_string()))
}

/// The secret a word names, if any (glob characters taken literally).
pub(super) fn named_in(word: &str) -> Option<String> {
    first_secret(word, Reading::File, Globbing::Literal)
}

/// The secret a glob could expand to, as bash expands it (`~/.ss?`, `id_*`, `*.pem`, `/etc/*`).
///
/// A known gap, kept from the word-based proof until it reads the effect model (which tells a
/// listing from a read): a last component of only `*` and `?` (`ls *`, `du -sh src/*`) is judged
/// by the directory it lists, which must not be home, root or a parent, so `cat *` in a
/// directory holding `server.pem` is proven.
pub(super) fn reachable_by_glob(word: &str) -> Option<String> {
    let normal = paths::normalize(word);
    if let Some((dir, last)) = normal.rsplit_once('/').or(Some(("", normal.as_ref()))) {
        let bare = !last.is_empty() && last.bytes().all(|b| b == b'*' || b == b'?');
        if bare && !paths::is_glob(dir) {
            let dir = if dir.is_empty() && normal.starts_with('/') { "/" } else { dir };
            let dir = if dir.is_empty() { "." } else { dir };
            if is_broad_root(dir) {
                return Some(format!("a glob under {dir}"));
            }
            return first_secret(dir, Reading::File, Globbing::Literal);
        }
    }
    first_secret(word, Reading::File, Globbing::Shell)
}

/// The secret a recursive read of the directory a word names could reach (`.`, `~`, `/etc`,
/// `..`, a hidden directory, an absolute directory that may be another checkout).
pub(super) fn tree_reaches_secret(word: &str, globs: bool) -> Option<String> {
    first_secret(word, Reading::Tree, if globs { Globbing::Shell } else { Globbing::Literal })
}

/// Directories a `cd`, `git -C` or a listing (`find`, `du`, `tree`, `ls -R`, and `rg`, which
/// skips hidden files) must not start from: home, root, `/etc`, a parent. The path is
/// normalised first: `//root`, `/root/.`, `./..` and `~/x/..` are broad too.
pub(super) fn is_broad_root(path: &str) -> bool {
    let lower = path.to_lowercase();
    let normal = paths::normalize(&lower);
    // `..`, `../..`: the parent of a project is often the home directory.
    if normal.split('/').all(|c| c == "..") {
        return true;
    }
    matches!(
        normal.as_ref(),
        "/" | "~"
            | "/home"
            | "/root"
            | "/users"
            | "/etc"
            | "/var"
            | "/var/root"
            | "/proc"
            | "/private"
            | "/private/var"
            | "/run"
            | "/dev"
            | "/sys"
            | "/mnt"
            | "/media"
            | "/srv"
            | "/opt"
    ) || ((normal.starts_with("/home/") || normal.starts_with("/users/")) && normal.matches('/').count() == 2)
        // `~user`, and `~/..` (every home) or anything under it (`~/../bob`).
        || (normal.starts_with('~') && (!normal.contains('/') || normal.starts_with("~/..")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_like_piece_of_a_word_is_judged() {
        for word in [
            "~/.ssh/id_rsa",
            "--key-file=~/keys/deploy_rsa",
            "HEAD:.env",
            "user@host:~/.aws/credentials",
            "-f//proc/1/environ",
            "/home/u/../u/.aws",
            "~root/.ssh",
            ".git/config",
            "~/.kaggle/kaggle.json",
        ] {
            assert!(named_in(word).is_some(), "{word}");
        }
        for word in
            ["Cargo.toml", "src/main.rs", "-n", "^$", "https://docs.rs/x", "--format=%H", "~", "/dev/null"]
        {
            assert_eq!(named_in(word), None, "{word}");
        }
    }

    #[test]
    fn recursive_reads_are_judged_by_the_tree_rule() {
        for dir in [".", "~", "/", "/etc", "..", "~/.config", "/work/other"] {
            assert!(tree_reaches_secret(dir, false).is_some(), "{dir}");
        }
        for dir in ["src", "./tests", "/usr/share/doc", "foo"] {
            assert_eq!(tree_reaches_secret(dir, false), None, "{dir}");
        }
    }

    #[test]
    fn home_and_root_are_broad() {
        for p in ["~", "~/", "/", "/home", "/home/alice", "/Users/bob/", "/etc", "..", "../..", "~alice"] {
            assert!(is_broad_root(p), "{p}");
        }
        for p in [".", "src", "/home/alice/project", "~/code/x", "/tmp", "../sibling"] {
            assert!(!is_broad_root(p), "{p}");
        }
    }
}
