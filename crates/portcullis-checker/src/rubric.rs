//! Rubrics: the checker's instructions, one file each in `rubrics/`, versioned by content hash so
//! that a verdict given under one text is never served (from the cache) or reported (in metrics
//! and audit records) as if given under another.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

/// The built-in rubrics, compiled in so the binary works from any directory.
const EMBEDDED: &[(&str, &str)] = &[
    ("exfiltration", include_str!("../../../rubrics/exfiltration.md")),
    ("shell", include_str!("../../../rubrics/shell.md")),
    ("injection", include_str!("../../../rubrics/injection.md")),
];

/// Largest rubric file accepted: a prompt, not a corpus.
const MAX_RUBRIC_BYTES: usize = 64 << 10;

/// One rubric and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rubric {
    pub name: String,
    pub text: String,
    /// The first 12 hex digits of the SHA-256 of `text`.
    pub version: String,
}

impl Rubric {
    pub fn new(name: &str, text: &str) -> Rubric {
        let digest = Sha256::digest(text.as_bytes());
        let version = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        Rubric { name: name.to_owned(), text: text.to_owned(), version }
    }
}

/// A set of rubrics by name.
#[derive(Debug, Clone)]
pub struct Rubrics(BTreeMap<String, Arc<Rubric>>);

impl Default for Rubrics {
    fn default() -> Self {
        Rubrics::embedded()
    }
}

impl Rubrics {
    pub fn embedded() -> Rubrics {
        Rubrics(EMBEDDED.iter().map(|(n, t)| (n.to_string(), Arc::new(Rubric::new(n, t)))).collect())
    }

    /// The built-in set, overridden and extended by the `*.md` files of `dir`. Every problem is
    /// reported; a set with problems is not returned (the caller keeps its last good one).
    pub fn load_dir(dir: &Path) -> Result<Rubrics, Vec<String>> {
        let mut set = Rubrics::embedded();
        let mut problems = Vec::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => return Err(vec![format!("{}: {e}", dir.display())]),
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "md") || path.file_stem().is_some_and(|s| s == "README") {
                continue;
            }
            let Some(name) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
                problems.push(format!("{}: the file name is not UTF-8", path.display()));
                continue;
            };
            match std::fs::read(&path) {
                Err(e) => problems.push(format!("{}: {e}", path.display())),
                Ok(bytes) if bytes.len() > MAX_RUBRIC_BYTES => {
                    problems.push(format!("{}: over {MAX_RUBRIC_BYTES} bytes", path.display()))
                }
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(text) if text.trim().is_empty() => {
                        problems.push(format!("{}: empty rubric", path.display()))
                    }
                    Ok(text) => {
                        set.0.insert(name.clone(), Arc::new(Rubric::new(&name, &text)));
                    }
                    Err(_) => problems.push(format!("{}: not UTF-8", path.display())),
                },
            }
        }
        match problems.is_empty() {
            true => Ok(set),
            false => Err(problems),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Rubric>> {
        self.0.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_follow_the_text_and_the_embedded_set_is_complete() {
        let set = Rubrics::embedded();
        for name in ["exfiltration", "shell", "injection"] {
            let r = set.get(name).expect(name);
            assert_eq!(r.version.len(), 12);
            assert_eq!(r.version, Rubric::new(name, &r.text).version);
        }
        assert_ne!(Rubric::new("a", "x").version, Rubric::new("a", "y").version);
    }

    #[test]
    fn a_directory_overrides_by_name_and_bad_files_are_all_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shell.md"), "judge shell").unwrap();
        std::fs::write(dir.path().join("custom.md"), "judge custom").unwrap();
        std::fs::write(dir.path().join("README.md"), "not a rubric").unwrap();
        let set = Rubrics::load_dir(dir.path()).unwrap();
        assert_eq!(set.get("shell").unwrap().text, "judge shell");
        assert!(set.get("custom").is_some() && set.get("README").is_none());
        assert_eq!(set.get("injection"), Rubrics::embedded().get("injection"));
        std::fs::write(dir.path().join("empty.md"), "  \n").unwrap();
        std::fs::write(dir.path().join("bin.md"), [0xff, 0xfe]).unwrap();
        let errs = Rubrics::load_dir(dir.path()).unwrap_err();
        assert_eq!(errs.len(), 2, "{errs:?}");
    }
}
