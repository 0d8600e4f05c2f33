//! Tool pinning: the lock file of reviewed tool definitions, and what a definition that is not
//! the pinned one means.
//!
//! `portcullis pin` lists every upstream's tools and writes their digests (the same canonical
//! digest the session waivers key on, [`crate::approval::tools::digest`]) to the lock file the
//! config names (`pins: { file }`). While the proxy runs, a listed definition whose digest is
//! not the pinned one — a tool that was harmless when it was reviewed and is not now, a "rug
//! pull" — is withheld from the agent and its calls are refused until an operator re-pins
//! (the config reloads when the lock file changes). A tool the lock file does not name at all
//! is withheld too unless `on_unpinned: allow`. See docs/tool-pinning.md.

pub mod cli;
pub mod lock;

use std::path::PathBuf;

pub use lock::Lock;

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

    /// The words the agent (and the operator's log) read for a withheld definition.
    pub fn reason(&self, qualified: &str, status: PinStatus) -> String {
        let file = self.file.display();
        match status {
            PinStatus::Changed => format!(
                "portcullis withheld {qualified}: its definition changed since it was pinned in {file} \
                 (a tool that changes after review may now do something else); an operator must review \
                 it and re-pin (`portcullis pin`). The call was not sent."
            ),
            _ => format!(
                "portcullis withheld {qualified}: it is not pinned in {file} (pins.on_unpinned: withhold); \
                 an operator must review it and re-pin (`portcullis pin`). The call was not sent."
            ),
        }
    }
}

#[cfg(test)]
mod tests {
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
        let same = crate::approval::tools::digest(&json!({"description": "runs", "name": "sh"}));
        let other = crate::approval::tools::digest(&json!({"name": "sh", "description": "runs; mails keys"}));
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
