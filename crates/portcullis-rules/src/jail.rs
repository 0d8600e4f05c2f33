//! Path jails for file tools: a root, names refused inside it, and places refused everywhere.
//!
//! A path is refused when it is home-relative (`~`), escapes the root after `..` and symlinks
//! are resolved, names a denied file (`.env`, `.envrc`, …) in any component, or lands in
//! `/proc`, `/sys` or `/dev` — by its spelling or through any link on the way (`jail::walk`). With
//! `resolve: filesystem` (the default) the path is walked one component at a time, each symlink
//! read and followed as the kernel will for the tool (at most 40) — correct when the proxy sees
//! the same filesystem as the tool server (same host, same mount namespace: the `wrap` case and
//! local servers). For a remote tool server set `resolve: lexical`: `..` is still resolved, but a
//! symlink on the far side cannot be seen, which the tool server's own root must then cover.
//!
//! [`Jail::place`] tells a path that merely leaves the root ([`Placed::Outside`], which the
//! engine decides by posture: [`crate::escape`]) from one refused everywhere; [`Jail::confine`]
//! refuses both, for callers with no escape table (allowlisted operands, rule examples).

use std::path::{Component, Path, PathBuf};

use super::glob::{Flavour, Glob};

mod landing;
mod walk;

pub use walk::{Refusal, MAX_LINKS};

/// How paths are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolve {
    Filesystem,
    Lexical,
}

/// Where a tool server takes a relative path from (`jail.relative`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Relative {
    /// From the jail's root: the operator knows every file tool resolves relative paths there
    /// (the demo's sample server, a server started in the root that never changes directory).
    Root,
    /// Not known (the default): a tool opens a relative path from its own working directory,
    /// which may not be the root and may have changed, so a relative path is refused.
    #[default]
    Refused,
}

/// A jail; with no root it still applies the hard denials and name denials.
#[derive(Debug, Clone)]
pub struct Jail {
    root: Option<PathBuf>,
    deny_names: Vec<Glob>,
    resolve: Resolve,
    relative: Relative,
}

/// The jail's verdict on a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confined {
    /// Inside: the resolved path, for rules to match.
    Inside(String),
    Refused(String),
}

/// Where a path lands, with an escape from the root kept apart from a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// Inside the root (or anywhere, with no root): the resolved path.
    Inside(String),
    /// Resolves outside the root after `..` and symlinks, and is refused by nothing else: not
    /// in `/proc`, `/sys` or `/dev`, no denied name. `resolved` is what rules match.
    Outside { resolved: String, root: String },
    /// Refused everywhere: the reason.
    Refused(String),
}

/// Who opens a path, which says where a relative one is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opener<'a> {
    /// A process that runs in the jail's root.
    Root,
    /// A process whose working directory is known to be this absolute directory.
    Dir(&'a Path),
    /// A tool server, whose working directory the proxy does not know (its own, or one it
    /// changed to): a relative path is refused rather than guessed.
    Unknown,
}

pub const DEFAULT_DENY_NAMES: &[&str] = &[".env", ".env.*", ".envrc", ".netrc", ".git-credentials"];

impl Jail {
    /// `root` must exist when `resolve` is `Filesystem` (it is canonicalised).
    pub fn new(root: Option<&Path>, deny_names: &[String], resolve: Resolve) -> std::io::Result<Jail> {
        let root = match (root, resolve) {
            (Some(r), Resolve::Filesystem) => Some(std::fs::canonicalize(r)?),
            (Some(r), Resolve::Lexical) => Some(lexical(r).unwrap_or_else(|| r.to_path_buf())),
            (None, _) => None,
        };
        let deny_names = deny_names.iter().map(|n| Glob::new(n, Flavour::Path)).collect();
        Ok(Jail { root, deny_names, resolve, relative: Relative::default() })
    }

    /// This jail with tools' relative paths taken as `relative` says.
    pub fn with_relative(self, relative: Relative) -> Jail {
        Jail { relative, ..self }
    }

    /// Where a tool server's path `raw` lands: a relative one from the root only when
    /// `jail.relative: root` says the tool resolves it there, else refused ([`Opener::Unknown`]).
    pub fn place_tool(&self, raw: &str) -> Placed {
        match self.relative {
            Relative::Root => self.place_from(raw, Opener::Root),
            Relative::Refused => self.place_from(raw, Opener::Unknown),
        }
    }

    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// [`Jail::place`] with an escape refused: for callers that have no escape table.
    pub fn confine(&self, raw: &str) -> Confined {
        match self.place(raw) {
            Placed::Inside(p) => Confined::Inside(p),
            Placed::Refused(why) => Confined::Refused(why),
            Placed::Outside { resolved, root } => {
                Confined::Refused(format!("{raw:?} resolves to {resolved}, outside the jail {root}"))
            }
        }
    }

    /// Where `raw` lands, a relative path taken from the jail's root (allowlisted operands, rule
    /// examples: callers for which the root is where they run). A tool's path is placed with
    /// [`Jail::place_from`].
    pub fn place(&self, raw: &str) -> Placed {
        self.place_from(raw, Opener::Root)
    }

    /// Where `raw` lands when `opener` opens it. The hard denials and the denied names are
    /// checked before the root, so an escape never carries a path refused everywhere.
    pub fn place_from(&self, raw: &str, opener: Opener<'_>) -> Placed {
        let refuse = |why: String| Placed::Refused(why);
        if raw.is_empty() || raw.contains('\0') {
            return refuse("an empty path or one with a NUL byte".into());
        }
        if raw.starts_with('~') {
            return refuse(format!("{raw:?} is home-relative ('~' is refused): give an absolute path"));
        }
        let joined = match (Path::new(raw).is_absolute(), opener, &self.root) {
            (true, _, _) => PathBuf::from(raw),
            (false, Opener::Dir(dir), _) => dir.join(raw),
            (false, Opener::Root, Some(root)) => root.join(raw),
            (false, Opener::Root, None) => {
                return refuse(format!("{raw:?} is relative and no jail root is configured"))
            }
            (false, Opener::Unknown, _) => {
                return refuse(format!(
                    "{raw:?} is relative: the tool opens it from its own working directory, which the \
                 proxy does not know, so where it lands cannot be judged; give an absolute path \
                 (or set jail.relative: root if every file tool resolves it from the jail's root)"
                ))
            }
        };
        let resolved = match self.resolve(&joined) {
            Ok(p) => p,
            Err(why) => return refuse(format!("{raw:?} {why}")),
        };
        if let Some(tree) = walk::hard_denied(&resolved) {
            return refuse(format!("{raw:?} {}", Refusal::HardDenied { tree, via: None }));
        }
        let shown = resolved.display().to_string();
        for comp in resolved.components() {
            if let Component::Normal(name) = comp {
                let name = name.to_string_lossy();
                if let Some(g) = self.deny_names.iter().find(|g| g.matches(&name)) {
                    return refuse(format!(
                        "{raw:?} names {name:?}, refused by the jail's deny_names ({})",
                        g.as_str()
                    ));
                }
            }
        }
        match &self.root {
            Some(root) if !resolved.starts_with(root) => {
                Placed::Outside { resolved: shown, root: root.display().to_string() }
            }
            _ => Placed::Inside(shown),
        }
    }
}

impl Jail {
    /// Where the absolute path `abs` lands once `.`, `..` and (with `resolve: filesystem`) every
    /// symlink on the way are resolved as open(2) will for another process: the one resolution
    /// behind file tools' paths ([`Jail::place`]) and shell operands ([`Jail::land`]).
    pub fn resolve(&self, abs: &Path) -> Result<PathBuf, Refusal> {
        match self.resolve {
            Resolve::Filesystem => walk::resolve(abs),
            // An absolute path never climbs above `/`: `lexical` answers.
            Resolve::Lexical => Ok(lexical(abs).unwrap_or_else(|| PathBuf::from("/"))),
        }
    }
}

/// Resolves `.` and `..` without touching the filesystem. `..` at `/` stays at `/`, as the
/// kernel resolves it; `None` only for a relative path that climbs above its start.
fn lexical(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if out.as_os_str() != "/" && !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        DEFAULT_DENY_NAMES.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn real_symlinks_and_traversal_cannot_escape() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "x").unwrap();
        std::fs::write(root.join("ok.txt"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("passwd")).unwrap();
        let jail = Jail::new(Some(&root), &names(), Resolve::Filesystem).unwrap();
        let r = root.canonicalize().unwrap();
        let inside = |p: &str| matches!(jail.confine(p), Confined::Inside(_));
        assert!(inside(&format!("{}/ok.txt", r.display())));
        assert!(inside("ok.txt"), "relative to the root");
        assert!(inside("sub/new-file.txt"), "a file that does not exist yet");
        assert!(!inside("link/secret"), "a symlink out of the root");
        assert!(!inside("link/new"), "a new file behind a symlink out of the root");
        assert!(!inside("passwd"), "a file symlink out of the root");
        assert!(!inside("../outside/secret"));
        assert!(!inside("sub/../../outside/secret"));
        assert!(!inside(&format!("{}/../outside/secret", r.display())));
        assert!(!inside("~/x"));
        assert!(!inside("/etc/passwd"));
        assert!(!inside(".env"));
        assert!(!inside("sub/.env.local"));
        assert!(!inside("sub/.envrc"));
        assert!(inside("sub/env.txt"));
        assert!(!inside(""));
    }

    #[test]
    fn proc_sys_and_dev_are_refused_even_without_a_root() {
        let jail = Jail::new(None, &[], Resolve::Filesystem).unwrap();
        for p in ["/proc/self/environ", "/sys/kernel", "/dev/sda", "/tmp/../proc/1/mem"] {
            assert!(matches!(jail.confine(p), Confined::Refused(_)), "{p}");
        }
        assert!(matches!(jail.confine("/tmp/x"), Confined::Inside(_)));
        assert!(matches!(jail.confine("relative"), Confined::Refused(_)));
    }

    #[test]
    fn a_relative_path_is_taken_from_its_opener_and_refused_when_nobody_knows_where_that_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let jail = Jail::new(Some(&root), &names(), Resolve::Filesystem).unwrap();
        let at = |p: &str| root.join(p).display().to_string();
        assert_eq!(jail.place_from("x", Opener::Root), Placed::Inside(at("x")));
        assert_eq!(jail.place_from("x", Opener::Dir(&root.join("sub"))), Placed::Inside(at("sub/x")));
        assert!(matches!(jail.place_from("x", Opener::Dir(Path::new("/tmp"))), Placed::Outside { .. }));
        assert!(
            matches!(jail.place_from("x", Opener::Unknown), Placed::Refused(why) if why.contains("absolute"))
        );
        assert_eq!(jail.place_from(&at("x"), Opener::Unknown), Placed::Inside(at("x")));
        assert!(matches!(jail.place_tool("x"), Placed::Refused(_)), "refused unless the operator says");
        assert_eq!(jail.clone().with_relative(Relative::Root).place_tool("x"), Placed::Inside(at("x")));
    }

    #[test]
    fn lexical_mode_still_resolves_dot_dot() {
        let jail = Jail::new(Some(Path::new("/srv/data")), &names(), Resolve::Lexical).unwrap();
        assert_eq!(jail.confine("a/../b"), Confined::Inside("/srv/data/b".into()));
        assert!(matches!(jail.confine("../etc"), Confined::Refused(_)));
        assert!(matches!(jail.confine("/../../x"), Confined::Refused(_)));
    }
}
