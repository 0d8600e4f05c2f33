//! The `pins:` section: where the lock file of pinned tool definitions is, and what an
//! unpinned tool gets ([`crate::pins`]).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use super::Problems;
use crate::pins::{Lock, Pins, Unpinned};

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
                let why = crate::runtime::Chain(&e).to_string();
                p.add("pins.file", format!("{why} (write it with `portcullis pin --config CONFIG`)"));
                return None;
            }
        },
    };
    Some(Arc::new(Pins { file, on_unpinned, lock }))
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
        assert_eq!(c.policy.pins.unwrap().on_unpinned, crate::pins::Unpinned::Allow);
        let err = Config::parse("pins: { file: x.lock, on_unpinned: maybe, extra: 1 }\n", "t").unwrap_err();
        assert!(err.to_string().contains("pins"), "{err}");
    }
}
