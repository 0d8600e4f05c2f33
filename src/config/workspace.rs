//! Which directory a call's workspace is, and whether the user trusts it: both compared on the
//! cleaned, absolute, symlink-resolved path, so no spelling (`..`, a trailing slash, a symlink
//! to a trusted directory or from one) decides — the directory the path leads to does.
//!
//! Trust is an **exact match** of resolved paths: trusting `~/src` does not trust
//! `~/src/cloned-repo`. A workspace is where an agent's files (and a cloned repository's
//! `.portcullis/`) live, and Claude Code's `cwd` follows the agent's `cd`: a trusted parent
//! trusting every child would let an agent `cd` into a directory it wrote and be trusted there.

use std::path::{Component, Path, PathBuf};

/// A workspace: its directory, resolved ([`Workspace::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Workspace {
    root: PathBuf,
}

/// Whether a workspace's own allow rules apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// `trusted_workspaces` in the user file lists this directory.
    Trusted,
    /// Anything else; the reason is shown once, where the project file's allows are dropped.
    Untrusted(Untrusted),
}

/// Why a workspace is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Untrusted {
    /// No user file, or it lists no directory that resolves to this one.
    NotListed,
    /// The user file cannot be read as a trust list: nothing is trusted.
    Corrupt(String),
}

/// Why a directory is no workspace.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("workspace {dir}: {source}")]
    Unresolvable {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("workspace {0} is not a directory")]
    NotADirectory(String),
}

impl Workspace {
    /// `dir` made absolute against `base` (when relative) and resolved: `..`, `.`, repeated and
    /// trailing slashes and every symlink on the way. The directory must exist.
    pub fn resolve(dir: &Path, base: &Path) -> Result<Workspace, WorkspaceError> {
        let absolute = if dir.is_absolute() { dir.to_path_buf() } else { base.join(dir) };
        let root = std::fs::canonicalize(&absolute)
            .map_err(|source| WorkspaceError::Unresolvable { dir: dir.display().to_string(), source })?;
        if !root.is_dir() {
            return Err(WorkspaceError::NotADirectory(root.display().to_string()));
        }
        Ok(Workspace { root })
    }

    /// The resolved directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `listed` (the user file's `trusted_workspaces`, `~/` meaning `home`) names this
    /// workspace. Each entry is resolved as the workspace is; entries that are relative or do not
    /// resolve are reported in `notes` and trust nothing.
    pub fn trust(&self, listed: &[String], home: Option<&Path>, notes: &mut Vec<String>) -> Trust {
        for entry in listed {
            let path = match (entry.strip_prefix("~/"), home) {
                (Some(rest), Some(h)) => h.join(rest),
                (Some(_), None) => {
                    notes.push(format!("trusted_workspaces: {entry:?}: no home directory to expand ~ in"));
                    continue;
                }
                (None, _) => PathBuf::from(entry),
            };
            if !path.is_absolute() {
                notes.push(format!(
                    "trusted_workspaces: {entry:?} is not an absolute path (nor ~/…): it trusts nothing"
                ));
                continue;
            }
            match std::fs::canonicalize(&path) {
                Ok(resolved) if resolved == self.root => return Trust::Trusted,
                Ok(_) => {}
                Err(e) => notes.push(format!("trusted_workspaces: {entry:?}: {e}: it trusts nothing")),
            }
        }
        Trust::Untrusted(Untrusted::NotListed)
    }
}

/// Whether `path` is written without `..` (used to refuse a user-file location that is not a
/// plain absolute path, e.g. an `$XDG_CONFIG_HOME` that climbs).
pub fn is_plain_absolute(path: &Path) -> bool {
    path.is_absolute() && path.components().all(|c| !matches!(c, Component::ParentDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree {
        _dir: tempfile::TempDir,
        base: PathBuf,
    }

    /// base/{trusted/child, other}, base/link → trusted, base/other/up → ..
    fn tree() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("trusted/child")).unwrap();
        std::fs::create_dir_all(base.join("other")).unwrap();
        std::os::unix::fs::symlink(base.join("trusted"), base.join("link")).unwrap();
        std::os::unix::fs::symlink(&base, base.join("other/up")).unwrap();
        std::fs::write(base.join("file"), "x").unwrap();
        Tree { _dir: dir, base }
    }

    fn trust_of(t: &Tree, workspace: &str, listed: &[&str]) -> Trust {
        let ws = Workspace::resolve(Path::new(workspace), &t.base).unwrap();
        let listed: Vec<String> = listed.iter().map(|s| s.replace("$B", t.base.to_str().unwrap())).collect();
        ws.trust(&listed, Some(&t.base), &mut Vec::new())
    }

    #[test]
    fn every_spelling_of_a_trusted_directory_is_trusted_and_nothing_else_is() {
        let t = tree();
        let trusted = Trust::Trusted;
        let not = Trust::Untrusted(Untrusted::NotListed);
        // (workspace as the agent's cwd spells it, trusted_workspaces, expected)
        let table: &[(&str, &[&str], &Trust)] = &[
            ("trusted", &["$B/trusted"], &trusted),
            ("trusted/", &["$B/trusted"], &trusted),
            ("trusted//", &["$B/trusted/"], &trusted),
            ("trusted/child/..", &["$B/trusted"], &trusted),
            ("./other/../trusted", &["$B/./trusted"], &trusted),
            // A workspace that is a symlink to a trusted directory: the target decides.
            ("link", &["$B/trusted"], &trusted),
            ("other/up/trusted", &["$B/trusted"], &trusted),
            // A trusted entry spelled through a symlink trusts its target.
            ("trusted", &["$B/link"], &trusted),
            ("trusted", &["~/trusted"], &trusted),
            // Exact match: a trusted parent does not trust its child, nor a child its parent.
            ("trusted/child", &["$B/trusted"], &not),
            ("trusted", &["$B/trusted/child"], &not),
            (".", &["$B/trusted"], &not),
            ("other", &["$B/trusted", "$B/missing"], &not),
            // Relative entries trust nothing (relative to what?).
            ("trusted", &["trusted", "./trusted"], &not),
            ("trusted", &[], &not),
        ];
        for (ws, listed, want) in table {
            assert_eq!(&trust_of(&t, ws, listed), *want, "workspace {ws:?}, trusted {listed:?}");
        }
    }

    #[test]
    fn entries_that_trust_nothing_say_why() {
        let t = tree();
        let ws = Workspace::resolve(Path::new("trusted"), &t.base).unwrap();
        let mut notes = Vec::new();
        let listed = ["relative".to_owned(), format!("{}/missing", t.base.display()), "~/trusted".into()];
        assert_eq!(ws.trust(&listed, None, &mut notes), Trust::Untrusted(Untrusted::NotListed));
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("not an absolute path"), "{notes:?}");
        assert!(notes[2].contains("no home directory"), "{notes:?}");
    }

    #[test]
    fn a_workspace_must_be_an_existing_directory() {
        let t = tree();
        assert!(matches!(
            Workspace::resolve(Path::new("missing"), &t.base),
            Err(WorkspaceError::Unresolvable { .. })
        ));
        assert!(matches!(
            Workspace::resolve(Path::new("file"), &t.base),
            Err(WorkspaceError::NotADirectory(_))
        ));
        let ws = Workspace::resolve(Path::new("link/"), &t.base).unwrap();
        assert_eq!(ws.root(), t.base.join("trusted"));
    }

    #[test]
    fn a_plain_absolute_path_has_no_parent_steps() {
        assert!(is_plain_absolute(Path::new("/home/u/.config")));
        assert!(!is_plain_absolute(Path::new("/home/u/../v/.config")));
        assert!(!is_plain_absolute(Path::new("relative/.config")));
    }
}
