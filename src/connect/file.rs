//! Where each client keeps its configuration, and the write: merged into what is there, through
//! a temporary file renamed over the old one, never over a file of the wrong shape.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::{codex, json, Client, Server};

/// What `--write` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Updated,
    /// The file already held exactly these entries.
    Unchanged,
}

impl Written {
    pub fn as_str(self) -> &'static str {
        match self {
            Written::Created => "created",
            Written::Updated => "updated",
            Written::Unchanged => "unchanged",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} was left unchanged: {why}")]
    Shape { path: String, why: String },
    #[error("no default file for {client}: {why}; pass --file PATH")]
    NoDefault { client: &'static str, why: &'static str },
}

/// The client's usual file: the project's for Claude Code, Cursor and VS Code (run from the
/// project's root), the user's for the others.
pub fn default_path(client: Client) -> Result<PathBuf, WriteError> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = || var("HOME").or_else(|| var("USERPROFILE"));
    let no_home = WriteError::NoDefault { client: client.as_str(), why: "HOME is not set" };
    Ok(match client {
        Client::ClaudeCode => PathBuf::from(".mcp.json"),
        Client::Cursor => PathBuf::from(".cursor/mcp.json"),
        Client::VsCode => PathBuf::from(".vscode/mcp.json"),
        Client::Codex => match var("CODEX_HOME") {
            Some(dir) => dir.join("config.toml"),
            None => home().ok_or(no_home)?.join(".codex/config.toml"),
        },
        Client::Windsurf => home().ok_or(no_home)?.join(".codeium/windsurf/mcp_config.json"),
        Client::ClaudeDesktop => {
            if cfg!(target_os = "macos") {
                home().ok_or(no_home)?.join("Library/Application Support/Claude/claude_desktop_config.json")
            } else if cfg!(windows) {
                let why = "APPDATA is not set";
                var("APPDATA")
                    .ok_or(WriteError::NoDefault { client: client.as_str(), why })?
                    .join("Claude/claude_desktop_config.json")
            } else {
                match var("XDG_CONFIG_HOME") {
                    Some(dir) => dir.join("Claude/claude_desktop_config.json"),
                    None => home().ok_or(no_home)?.join(".config/Claude/claude_desktop_config.json"),
                }
            }
        }
    })
}

/// Whether the entries written hold a token itself (`--inline-token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    References,
    Token,
}

/// Merges `servers` into the file at `path` (created with its directory if missing). A file
/// that will hold a token is never written through a link (a checkout could plant one pointing
/// anywhere) and never left readable by others, whatever its old mode.
pub fn write(client: Client, path: &Path, servers: &[Server], holds: Holds) -> Result<Written, WriteError> {
    let io = |source| WriteError::Io { path: path.display().to_string(), source };
    if holds == Holds::Token && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(WriteError::Shape {
            path: path.display().to_string(),
            why: "it is a link, and a token is not written through one: pass the file it points to with --file, or leave out --inline-token".into(),
        });
    }
    // A link is followed: the client reads the file it points to, so that is what is rewritten.
    let target = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(io(e)),
    };
    let existing = match std::fs::read(&target) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| WriteError::Shape {
            path: path.display().to_string(),
            why: "it is not UTF-8 text".into(),
        })?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };
    let old = existing.as_deref().unwrap_or("");
    let merged = match client {
        Client::Codex => codex::merge(old, servers).map_err(|e| e.to_string()),
        c => json::merge(c, old, servers).map_err(|e| e.to_string()),
    }
    .map_err(|why| WriteError::Shape { path: path.display().to_string(), why })?;
    if existing.as_deref() == Some(merged.as_str()) {
        return Ok(Written::Unchanged);
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let mut tmp = tempfile_in(&dir).map_err(io)?;
    if let Ok(meta) = std::fs::metadata(&target) {
        // The new file keeps the old one's permissions (a 0600 file stays private), less
        // everyone else's when it holds a token.
        let mut permissions = meta.permissions();
        #[cfg(unix)]
        if holds == Holds::Token {
            use std::os::unix::fs::PermissionsExt;
            permissions.set_mode(permissions.mode() & 0o700);
        }
        tmp.1.set_permissions(permissions).map_err(io)?;
    }
    tmp.1.write_all(merged.as_bytes()).map_err(io)?;
    tmp.1.sync_all().map_err(io)?;
    std::fs::rename(&tmp.0, &target).map_err(|e| {
        let _ = std::fs::remove_file(&tmp.0);
        io(e)
    })?;
    Ok(if existing.is_some() { Written::Updated } else { Written::Created })
}

/// A new file beside the target (same filesystem, so the rename is atomic), created exclusively.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    for i in 0..16u32 {
        let p = dir.join(format!(".portcullis-connect-{}-{i}.tmp", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        // A new file is private (it may hold an --inline-token); an old one's mode is copied after.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        match opts.open(&p) {
            Ok(f) => return Ok((p, f)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary file name was free")))
}
