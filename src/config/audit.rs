//! The `audit:` section: where the decision log goes.

use std::path::PathBuf;

use serde::Deserialize;

use super::raw::Scalar;
use super::Problems;

/// `audit.to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Off,
    Stdout,
    /// Where `wrap` sends `stdout` (its stdout is the agent's protocol stream).
    Stderr,
    File(PathBuf),
}

/// Validated `audit:` settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub target: Destination,
    /// A file is rotated (`F` → `F.1` → … → `F.keep`) when it would grow past this.
    pub max_size: u64,
    pub keep: u32,
    /// Entries kept in memory for the console (200 when an `audit:` section is given).
    pub recent: usize,
    /// Decisions kept in memory for `portcullis explain` (`audit.explain`, 1,000 by default):
    /// every line's when lines are written, else refusals' and asks' only.
    pub explain: usize,
}

impl Default for Settings {
    fn default() -> Self {
        // Off means off: no line written and no allowed call kept (no cost on the allow path);
        // refusals and asks are kept in memory for `portcullis explain`.
        Settings { target: Destination::Off, max_size: 100 << 20, keep: 5, recent: 0, explain: 1000 }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    to: Option<To>,
    max_size: Option<Scalar>,
    keep: Option<u32>,
    recent: Option<usize>,
    explain: Option<usize>,
}

/// `to: off` reads as YAML's boolean false; `to: stdout`, a path, or "off" as text.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum To {
    Flag(bool),
    Text(String),
}

pub(crate) fn compile(raw: Option<Raw>, p: &mut Problems) -> Settings {
    let d = Settings::default();
    let Some(raw) = raw else {
        return d;
    };
    let to = match raw.to {
        Some(To::Flag(false)) => Some("off".to_owned()),
        Some(To::Flag(true)) => {
            p.add("audit.to", "stdout, off, or a file path");
            None
        }
        Some(To::Text(t)) => Some(t),
        None => None,
    };
    let target = match to.as_deref() {
        None | Some("stdout") => Destination::Stdout,
        Some("off") => Destination::Off,
        Some("") => {
            p.add("audit.to", "stdout, off, or a file path");
            Destination::Off
        }
        Some(path) => Destination::File(path.into()),
    };
    let s = Settings {
        target,
        max_size: p.size("audit.max_size", raw.max_size, d.max_size as usize) as u64,
        keep: raw.keep.unwrap_or(d.keep),
        recent: raw.recent.unwrap_or(200),
        explain: raw.explain.unwrap_or(d.explain),
    };
    if s.max_size < 4096 {
        p.add("audit.max_size", "must be at least 4KiB");
    }
    s
}
