//! What a built-in tool's input must look like to be judged: why one cannot be read, and paths
//! made absolute against the session's working directory (shared by the field map and the
//! `Glob`/`Grep` readings).

use std::path::Path;

/// A tool input the hook cannot read as its tool defines it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("{tool}: tool_input is not a JSON object")]
    NotAnObject { tool: String },
    #[error("{tool}: tool_input.{field} is missing or not a string")]
    Field { tool: String, field: &'static str },
    #[error("{tool}: the path {path:?} is relative and the session's cwd is not an absolute path")]
    Relative { tool: String, path: String },
    /// The envelope's `tool_name` names no tool ([`crate::gate::tool_name`]); never quoted.
    #[error("tool_name: {0}")]
    Name(String),
}

/// `path` made absolute against `cwd` (`.` and `..` are left for the jail to resolve). A
/// home-relative path (`~/…`) is left as it is: the jail refuses it by name.
pub(super) fn absolute(tool: &str, path: &str, cwd: Option<&Path>) -> Result<String, ShapeError> {
    if path.starts_with('/') || path.starts_with('~') {
        return Ok(path.to_owned());
    }
    match cwd.filter(|c| c.is_absolute()) {
        Some(cwd) if path == "." => Ok(cwd.display().to_string()),
        Some(cwd) => Ok(cwd.join(path).display().to_string()),
        None => Err(ShapeError::Relative { tool: tool.to_owned(), path: path.to_owned() }),
    }
}
