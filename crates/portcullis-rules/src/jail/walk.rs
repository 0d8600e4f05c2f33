//! Resolves a path as the kernel will for another process: one component at a time, reading
//! each symlink, refusing any walk that passes through `/proc`, `/sys` or `/dev`.
//!
//! `canonicalize` in the proxy's process is wrong for a tool that is another process: a link to
//! `/proc/self/cwd`, `/proc/self/root`, `/proc/<pid>/…`, `/proc/thread-self/…` or `/dev/fd/N`
//! (whose target is `/proc/self/fd`) is a per-process magic link, which names the proxy's own
//! directory or descriptor here and the tool's there. So no resolution may enter those trees at
//! all, whether the path names them or any link on the way points into them. `..` is resolved
//! after the link before it, as the kernel does (`link/..` is the link target's parent).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Trees whose entries differ from process to process or are devices: refused everywhere.
pub const HARD_DENIED: &[&str] = &["/proc", "/sys", "/dev"];

/// Symlinks followed in one resolution before giving up, as Linux's `ELOOP` limit.
pub const MAX_LINKS: usize = 40;

/// Why a walk was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The walk entered a hard-denied tree: the tree, and the link that led there if any.
    HardDenied { tree: &'static str, via: Option<PathBuf> },
    /// More than [`MAX_LINKS`] symlinks.
    TooManyLinks,
    /// A link whose target could not be read.
    Unreadable(PathBuf),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::HardDenied { tree, via: None } => {
                write!(f, "resolves into {tree}, which is refused everywhere")
            }
            Refusal::HardDenied { tree, via: Some(link) } => write!(
                f,
                "passes through the link {} into {tree}, which is refused everywhere",
                link.display()
            ),
            Refusal::TooManyLinks => write!(f, "follows more than {MAX_LINKS} symlinks (ELOOP)"),
            Refusal::Unreadable(link) => {
                write!(f, "has a link {} whose target cannot be read", link.display())
            }
        }
    }
}

/// The hard-denied tree `p` lies in, if any.
pub fn hard_denied(p: &Path) -> Option<&'static str> {
    HARD_DENIED.iter().copied().find(|tree| p.starts_with(tree))
}

/// Resolves the absolute path `p` through the filesystem. Components that do not exist are kept
/// as written (a file about to be created); `..` after them is resolved lexically.
pub fn resolve(p: &Path) -> Result<PathBuf, Refusal> {
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_front(&mut queue, p);
    let mut out = PathBuf::from("/");
    let mut links = 0usize;
    let mut via: Option<PathBuf> = None;
    while let Some(name) = queue.pop_front() {
        if name == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        if let Some(tree) = hard_denied(&candidate) {
            return Err(Refusal::HardDenied { tree, via });
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(Refusal::TooManyLinks);
                }
                let target =
                    std::fs::read_link(&candidate).map_err(|_| Refusal::Unreadable(candidate.clone()))?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_front(&mut queue, &target);
                via = Some(candidate);
            }
            _ => out = candidate,
        }
    }
    Ok(out)
}

/// Puts the components of `p` at the front of `queue`, in order; `.` and the root are dropped
/// (the caller resets to `/` for an absolute link target).
fn push_front(queue: &mut VecDeque<OsString>, p: &Path) {
    let names: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    for n in names.into_iter().rev() {
        queue.push_front(n);
    }
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
