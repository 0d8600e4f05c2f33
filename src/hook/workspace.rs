//! The proxy's hook endpoint answers many calls from many workspaces in one process: each call
//! is decided by a guard with its workspace's tiers ([`crate::config::tiers`]) laid on the
//! running one. The guard is kept per workspace while the tier files are unchanged (device,
//! inode, size, times) and the running guard is the one it was built on, so a deny written
//! mid-session holds from the next call; a file changed in the last two seconds is read again
//! on every call (a same-size write in the same clock tick leaves its stamp as it was); at most
//! [`MAX_WORKSPACES`] are kept.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::config::tiers::{Files, Stamp};
use crate::gate::Guard;

/// Workspaces whose guards are kept (the least recently used goes first).
pub const MAX_WORKSPACES: usize = 64;

/// Tier guards by resolved workspace.
#[derive(Default)]
pub struct Workspaces {
    entries: Mutex<HashMap<PathBuf, Entry>>,
}

struct Entry {
    stamps: Vec<Option<Stamp>>,
    built_on: Weak<Guard>,
    /// A file changed within the last tick or two when it was read: read again next time.
    racy: bool,
    /// The guard, or why the tiers cannot be read (the call is then refused with it).
    guard: Result<Arc<Guard>, String>,
    used: u64,
}

/// The process's workspaces (the hook endpoint's; a reload of the proxy keeps them, and each
/// entry notices the new guard it must be rebuilt on).
pub fn shared() -> &'static Workspaces {
    static ONE: OnceLock<Workspaces> = OnceLock::new();
    ONE.get_or_init(Workspaces::default)
}

impl Workspaces {
    /// The guard a call made in `cwd` is decided by (the tiers of the project `cwd` is in,
    /// [`crate::config::tiers::workspace_of_cwd`]): `base` itself when there is no workspace (no
    /// `cwd`, or one that is no directory: it holds no project file).
    pub fn guard_for(&self, base: &Arc<Guard>, cwd: Option<&Path>) -> Result<Arc<Guard>, String> {
        let Some(dir) = cwd.filter(|c| c.is_absolute() && c.is_dir()) else { return Ok(base.clone()) };
        let workspace = crate::config::tiers::workspace_of_cwd(dir)?;
        let key = workspace.root().to_path_buf();
        let files = Files::new(Some(workspace));
        let stamps = files.stamps();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let tick = entries.values().map(|e| e.used).max().unwrap_or(0) + 1;
        if let Some(e) = entries.get_mut(&key) {
            let settled = !e.racy;
            if settled && e.stamps == stamps && e.built_on.upgrade().is_some_and(|b| Arc::ptr_eq(&b, base)) {
                e.used = tick;
                return e.guard.clone();
            }
        }
        let guard = build(base, &files);
        if entries.len() >= MAX_WORKSPACES && !entries.contains_key(&key) {
            let oldest = entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                entries.remove(&k);
            }
        }
        let now = std::time::SystemTime::now();
        let racy = stamps.iter().flatten().any(|s| s.is_recent(now));
        let entry = Entry { stamps, built_on: Arc::downgrade(base), guard: guard.clone(), used: tick, racy };
        entries.insert(key, entry);
        guard
    }

    /// How many workspaces are kept.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Reads the tiers (their notes logged once per change) and lays their rules on `base`.
fn build(base: &Guard, files: &Files) -> Result<Arc<Guard>, String> {
    let tiers = files.load().inspect_err(|e| tracing::warn!("workspace tiers: {e}"))?;
    for note in &tiers.notes {
        tracing::warn!("workspace tiers: {note}");
    }
    let rules = tiers.rules(base.kinds(), base.jail_root())?;
    Ok(Arc::new(base.with_rules(&rules)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_guard_is_kept_until_a_tier_file_or_the_running_guard_changes_and_at_most_64_are_kept() {
        let cache = Workspaces::default();
        let base = Arc::new(Guard::default());
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join(".portcullis")).unwrap();

        assert!(Arc::ptr_eq(&cache.guard_for(&base, None).unwrap(), &base), "no cwd: the running guard");
        let relative = cache.guard_for(&base, Some(Path::new("ws"))).unwrap();
        assert!(Arc::ptr_eq(&relative, &base), "a relative cwd is no workspace");
        let first = cache.guard_for(&base, Some(&ws)).unwrap();
        assert!(!Arc::ptr_eq(&first, &base));
        assert!(Arc::ptr_eq(&cache.guard_for(&base, Some(&ws)).unwrap(), &first), "unchanged: kept");
        std::fs::write(ws.join(".portcullis/settings.yaml"), "permissions: { deny: [Bash] }\n").unwrap();
        let edited = cache.guard_for(&base, Some(&ws)).unwrap();
        assert!(!Arc::ptr_eq(&edited, &first), "a new tier file: rebuilt");
        let reloaded = Arc::new(Guard::default());
        let rebuilt = cache.guard_for(&reloaded, Some(&ws)).unwrap();
        assert!(!Arc::ptr_eq(&rebuilt, &edited), "a reloaded running guard: rebuilt on it");
        std::fs::write(ws.join(".portcullis/settings.yaml"), "permissions: [\n").unwrap();
        let broken = cache.guard_for(&reloaded, Some(&ws)).map(|_| ()).unwrap_err();
        assert!(broken.contains("settings.yaml"), "{broken}");

        for i in 0..MAX_WORKSPACES + 6 {
            let other = dir.path().join(format!("w{i}"));
            std::fs::create_dir(&other).unwrap();
            cache.guard_for(&base, Some(&other)).unwrap();
            assert!(cache.len() <= MAX_WORKSPACES);
        }
        assert_eq!(cache.len(), MAX_WORKSPACES);
    }
}
