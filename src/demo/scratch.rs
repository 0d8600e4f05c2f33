//! The demo's scratch directory: one fresh, private directory under the system's temporary
//! directory holding the sample server's jail and the audit log, removed when the demo ends —
//! however it ends (the story done, `--once`, an error, a panic, Ctrl-C or SIGTERM).

use std::path::{Path, PathBuf};

/// Tries at a fresh name before giving up (a name is taken only by a race or an attacker).
const ATTEMPTS: usize = 8;

/// Owns the directory; dropping it removes the directory and everything in it.
#[derive(Debug)]
pub struct Scratch {
    root: PathBuf,
}

impl Scratch {
    /// Makes `portcullis-demo-{pid}-{random}` under `parent`. `create_dir` (never `_all`) fails
    /// on a name that exists — a directory or a symlink someone planted in a shared `/tmp` —
    /// so the demo only ever writes into a directory it made itself, readable by its user alone.
    pub fn create_in(parent: &Path) -> std::io::Result<Scratch> {
        let mut last = None;
        for _ in 0..ATTEMPTS {
            let mut salt = [0u8; 6];
            getrandom::fill(&mut salt).map_err(std::io::Error::other)?;
            let salt: String = salt.iter().map(|b| format!("{b:02x}")).collect();
            let root = parent.join(format!("portcullis-demo-{}-{salt}", std::process::id()));
            match private_dir(&root) {
                Ok(()) => return Ok(Scratch { root }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no free scratch name")))
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The sample server's files (the jail).
    pub fn jail(&self) -> PathBuf {
        self.root.join("files")
    }

    /// The audit log.
    pub fn audit_log(&self) -> PathBuf {
        self.root.join("audit.jsonl")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Nothing to report to at this point (and no one to act on it): a leftover directory is
        // named after the process, so a person can find it.
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[cfg(unix)]
fn private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

#[cfg(not(unix))]
fn private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn the_directory_and_everything_in_it_are_gone_once_dropped() {
        let dir = parent();
        let s = Scratch::create_in(dir.path()).unwrap();
        std::fs::create_dir(s.jail()).unwrap();
        std::fs::write(s.jail().join("notes.txt"), "x").unwrap();
        std::fs::write(s.audit_log(), "{}\n").unwrap();
        let root = s.root().to_owned();
        drop(s);
        assert!(!root.exists(), "{} is left behind", root.display());
    }

    #[cfg(unix)]
    #[test]
    fn the_directory_is_its_users_alone_and_each_run_gets_a_fresh_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = parent();
        let (a, b) = (Scratch::create_in(dir.path()).unwrap(), Scratch::create_in(dir.path()).unwrap());
        assert_ne!(a.root(), b.root());
        let mode = std::fs::metadata(a.root()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }

    #[cfg(unix)]
    #[test]
    fn a_name_someone_planted_a_symlink_at_is_refused_not_followed() {
        let tmp = parent();
        let dir = tmp.path();
        let target = dir.join("victim");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(target.join("keep"), "x").unwrap();
        let planted = dir.join("planted");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        // The name is taken: the builder refuses it rather than writing through the link.
        assert_eq!(private_dir(&planted).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
        assert!(target.join("keep").exists());
    }
}
