//! The `pins:` section: where the lock file of pinned tool definitions is, what an unpinned tool
//! gets, and how a listed definition compares with its pin. (`portcullis pin` writes the file;
//! the gate's definition screen reads it.)

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use super::Problems;
pub mod lock;

pub use lock::{digest, Lock};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    file: String,
    on_unpinned: Option<String>,
}

/// Compiles the section. The lock file is read unless `read_lock` is false (`portcullis pin`,
/// which writes it, loads the config before the file exists); then the lock is empty.
pub(crate) fn compile(raw: Option<Raw>, read_lock: bool, p: &mut Problems) -> Option<Arc<Pins>> {
    let raw = raw?;
    if raw.file.trim().is_empty() {
        p.add("pins.file", "empty path");
        return None;
    }
    let on_unpinned = match raw.on_unpinned.as_deref() {
        None => Unpinned::Withhold,
        Some(s) => Unpinned::parse(s).unwrap_or_else(|| {
            p.add("pins.on_unpinned", format!("{s:?}: withhold or allow"));
            Unpinned::Withhold
        }),
    };
    let file = PathBuf::from(raw.file);
    let lock = match read_lock {
        false => Lock::default(),
        true => match Lock::read(&file) {
            Ok(l) => l,
            Err(e) => {
                let why = super::Chain(&e).to_string();
                p.add("pins.file", format!("{why} (write it with `portcullis pin --config CONFIG`)"));
                return None;
            }
        },
    };
    Some(Arc::new(Pins { file, on_unpinned, lock }))
}

/// What a tool absent from the lock file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unpinned {
    /// Listed and callable (the lock file only guards the tools it names).
    Allow,
    /// Withheld like a changed definition (the default: nothing unreviewed reaches the agent).
    Withhold,
}

impl Unpinned {
    pub fn parse(s: &str) -> Option<Unpinned> {
        match s {
            "allow" => Some(Unpinned::Allow),
            "withhold" => Some(Unpinned::Withhold),
            _ => None,
        }
    }
}

/// A definition compared with its pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinStatus {
    /// The digest is the pinned one.
    Pinned,
    /// The lock file pins another definition of this tool.
    Changed,
    /// The lock file does not name this tool.
    Unpinned,
}

/// The `pins:` section with its lock file read.
#[derive(Debug, Clone)]
pub struct Pins {
    /// Where the lock file is (relative paths are relative to the working directory, like
    /// `guardrails.rubrics`).
    pub file: PathBuf,
    pub on_unpinned: Unpinned,
    pub lock: Lock,
}

impl Pins {
    /// How `digest`, a definition of `tool` listed by `upstream`, compares with its pin.
    pub fn status(&self, upstream: &str, tool: &str, digest: &str) -> PinStatus {
        match self.lock.pin(upstream, tool) {
            None => PinStatus::Unpinned,
            Some(p) if p.digest == digest => PinStatus::Pinned,
            Some(_) => PinStatus::Changed,
        }
    }

    /// Why a definition with `status` is withheld, if it is.
    pub fn withholds(&self, status: PinStatus) -> bool {
        match status {
            PinStatus::Pinned => false,
            PinStatus::Changed => true,
            PinStatus::Unpinned => self.on_unpinned == Unpinned::Withhold,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn the_lock_file_is_read_and_its_problems_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.lock");
        let yaml = format!("pins: {{ file: {:?}, on_unpinned: allow }}\n", path.display().to_string());
        let err = Config::parse(&yaml, "t").unwrap_err().to_string();
        assert!(err.contains("pins.file") && err.contains("portcullis pin"), "{err}");
        let c = Config::parse_for_pinning(&yaml, "t").unwrap_or_else(|e| panic!("{e}"));
        assert!(c.policy.pins.is_some(), "pinning loads the config before the lock exists");
        std::fs::write(&path, "{\"portcullis_lock\": 1, \"upstreams\": {}}").unwrap();
        let c = Config::parse(&yaml, "t").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.policy.pins.unwrap().on_unpinned, crate::config::pins::Unpinned::Allow);
        let err = Config::parse("pins: { file: x.lock, on_unpinned: maybe, extra: 1 }\n", "t").unwrap_err();
        assert!(err.to_string().contains("pins"), "{err}");
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;
    use serde_json::json;

    fn pins(on_unpinned: Unpinned) -> Pins {
        let mut lock = Lock::default();
        lock.set_upstream("up", &[json!({"name": "sh", "description": "runs"})]);
        Pins { file: "p.lock".into(), on_unpinned, lock }
    }

    #[test]
    fn a_definition_is_pinned_changed_or_unpinned() {
        let p = pins(Unpinned::Withhold);
        let same = digest(&json!({"description": "runs", "name": "sh"}));
        let other = digest(&json!({"name": "sh", "description": "runs; mails keys"}));
        assert_eq!(p.status("up", "sh", &same), PinStatus::Pinned, "key order is not a change");
        assert_eq!(p.status("up", "sh", &other), PinStatus::Changed);
        assert_eq!(p.status("up", "new", &same), PinStatus::Unpinned);
        assert_eq!(p.status("down", "sh", &same), PinStatus::Unpinned);
        assert!(p.withholds(PinStatus::Changed) && p.withholds(PinStatus::Unpinned));
        assert!(!p.withholds(PinStatus::Pinned));
        let lenient = pins(Unpinned::Allow);
        assert!(lenient.withholds(PinStatus::Changed) && !lenient.withholds(PinStatus::Unpinned));
    }
}
