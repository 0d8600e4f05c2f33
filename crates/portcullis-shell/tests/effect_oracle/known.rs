//! The documented gaps: violations of a class docs/SECURITY.md names as accepted or out of
//! scope, matched narrowly (program, path and class), counted and printed, never hidden. Any
//! other violation fails the oracle.

use crate::judge::{Class, Violation};

/// A documented gap, with where it is written down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Gap {
    /// `git status`/`git diff` refresh the index's stat cache through `.git/index.lock`: it
    /// changes no tracked content, ref or config (SECURITY.md, "Effects the proof accepts").
    GitIndexRefresh,
    /// git reads its own repository (`.git/HEAD`, refs, objects, the worktree) wherever it runs:
    /// not an output; the secret markers are judged separately.
    GitRepository,
    /// bash lists a directory to expand a glob: names, before any program runs.
    GlobListing,
    /// `whereis` searches the system's fixed directories.
    WhereisDirectories,
    /// `egrep`/`fgrep` are scripts that run `grep -E`/`grep -F`.
    GrepScripts,
    /// A symlink inside the project pointing into home (`docs/setup.txt`): proofs place paths
    /// lexically (SECURITY.md, "Out of scope": symlinks in read-only proofs).
    SymlinkIntoHome,
}

impl Gap {
    pub fn as_str(self) -> &'static str {
        match self {
            Gap::GitIndexRefresh => "git refreshes .git/index through index.lock",
            Gap::GitRepository => "git reads its own repository",
            Gap::GlobListing => "bash lists a directory to expand a glob",
            Gap::WhereisDirectories => "whereis lists the system's directories",
            Gap::GrepScripts => "egrep/fgrep run grep",
            Gap::SymlinkIntoHome => "a symlink in the project into home (lexical placement)",
        }
    }
}

/// The documented gap `v` belongs to, if any; `line` is the line's commands as bash reads them.
pub fn gap(line: &str, v: &Violation) -> Option<Gap> {
    let e = v.effect.as_str();
    let by = |p: &str| e.starts_with(&format!("{p} "));
    let index_lock = e.contains("/.git/index.lock") || e.ends_with("/.git/index (ok=true)");
    match v.class {
        Class::Write | Class::Change if by("git") && index_lock => Some(Gap::GitIndexRefresh),
        Class::UnpredictedRead if by("git") && e.contains("$RUN/acme-app") => Some(Gap::GitRepository),
        Class::UnpredictedRead if by("bash") && e.contains(" listed ") => Some(Gap::GlobListing),
        Class::UnpredictedRead if by("whereis") && e.contains(" listed /") => Some(Gap::WhereisDirectories),
        Class::UnpredictedProgram
            if (by("egrep") || by("fgrep"))
                && (e.contains(" ran /usr/bin/grep ") || e.contains(" ran /bin/grep ")) =>
        {
            Some(Gap::GrepScripts)
        }
        Class::SecretOpened | Class::SecretPrinted | Class::UnpredictedRead
            if e.contains("home/.aws/credentials") && (line.contains("docs") || line.contains("setup")) =>
        {
            Some(Gap::SymlinkIntoHome)
        }
        _ => None,
    }
}
