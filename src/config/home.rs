//! The user's home directory, which the user tier and Claude Code's settings are found under.

use std::path::PathBuf;

/// The user's home directory (`$HOME`).
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}
