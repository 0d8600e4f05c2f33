//! The lock file: per upstream, per tool, the definition's digest and the first line of its
//! description, as pretty JSON with sorted keys — so a re-pin shows up in review as a small
//! diff that says which tool changed and what it now claims to do.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::rules::kinds::canonical_json;

/// The format version written in every lock file.
pub const VERSION: u32 = 1;
/// The most of a description's first line kept for review.
const SUMMARY_CHARS: usize = 160;

/// Why a lock file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a portcullis lock file")]
    Parse {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: lock file version {found}, this portcullis reads version {VERSION}")]
    Version { path: String, found: u32 },
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub portcullis_lock: u32,
    /// Upstream name → tool name → its pin.
    pub upstreams: BTreeMap<String, BTreeMap<String, Pin>>,
}

/// One tool's pinned definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    pub digest: String,
    /// The first line of the description when pinned (for the reviewer; not compared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

impl Lock {
    pub fn read(path: &Path) -> Result<Lock, LockError> {
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|source| LockError::Read { path: name.clone(), source })?;
        Lock::parse(&text, &name)
    }

    pub fn parse(text: &str, name: &str) -> Result<Lock, LockError> {
        let lock: Lock = serde_json::from_str(text)
            .map_err(|source| LockError::Parse { path: name.to_owned(), source })?;
        if lock.portcullis_lock != VERSION {
            return Err(LockError::Version { path: name.to_owned(), found: lock.portcullis_lock });
        }
        Ok(lock)
    }

    /// Writes the file whole (to a temporary beside it, then renamed: a reloading proxy never
    /// reads half a lock file).
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        let name = path.display().to_string();
        let mut text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other);
        if let Ok(t) = &mut text {
            t.push(b'\n');
        }
        let tmp = path.with_extension("lock.tmp");
        text.and_then(|t| std::fs::write(&tmp, t))
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|source| LockError::Write { path: name, source })
    }

    pub fn pin(&self, upstream: &str, tool: &str) -> Option<&Pin> {
        self.upstreams.get(upstream)?.get(tool)
    }

    /// Replaces `upstream`'s pins with `tools` (definitions as listed); other upstreams stay.
    pub fn set_upstream(&mut self, upstream: &str, tools: &[Value]) {
        self.portcullis_lock = VERSION;
        let pins = tools
            .iter()
            .filter_map(|t| {
                let name = t.get("name").and_then(Value::as_str)?;
                Some((name.to_owned(), Pin { digest: digest(t), description: summary(t) }))
            })
            .collect();
        self.upstreams.insert(upstream.to_owned(), pins);
    }
}

/// The digest of one tool definition (canonical JSON, so key order does not matter).
pub fn digest(tool: &Value) -> String {
    let d: [u8; 32] = Sha256::digest(canonical_json(tool).as_bytes()).into();
    d[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The first line of a tool's description, cut short, without control characters.
fn summary(tool: &Value) -> String {
    let d = tool.get("description").and_then(Value::as_str).unwrap_or("");
    let line = d.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    line.chars().filter(|c| !c.is_control()).take(SUMMARY_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_lock_file_round_trips_and_refuses_other_versions_and_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("portcullis.lock");
        let mut lock = Lock::default();
        lock.set_upstream(
            "py",
            &[json!({"name": "echo", "description": "\n  Echo it.\nMore."}), json!({"x": 1})],
        );
        lock.write(&path).unwrap();
        let back = Lock::read(&path).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.pin("py", "echo").unwrap().description, "Echo it.");
        assert_eq!(back.upstreams["py"].len(), 1, "a tool without a name is not pinned");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(Lock::parse(&text.replace("\"portcullis_lock\": 1", "\"portcullis_lock\": 9"), "t").is_err());
        assert!(Lock::parse(&text.replace("\"digest\"", "\"digets\""), "t").is_err());
    }
}
