//! Claude Code's `Glob` and `Grep` as the glob of the files they read, so every field that
//! names files is judged: the jail, the rules and the secret policy see one absolute glob.
//!
//! | tool input | judged as |
//! | --- | --- |
//! | `Glob {pattern: "**/*.rs"}` in `/work/repo` | `/work/repo/**/*.rs` |
//! | `Glob {pattern: "../../etc/*", path: "/work/repo"}` | `/work/repo/../../etc/*` (the jail resolves it to `/etc/*`) |
//! | `Glob {pattern: "/etc/**"}` | `/etc/**` |
//! | `Grep {path: "src", glob: "*.rs"}` in `/work/repo` | `/work/repo/src/**/*.rs` |
//! | `Grep {path: "src/lib.rs"}` (a file) | `/work/repo/src/lib.rs` |
//! | `Grep {}` in `/work/repo` | `/work/repo/**`: every file below, hidden ones included |
//!
//! Grep runs ripgrep over hidden files, so a glob of ripgrep's (`*` matches `.env`) filters what
//! it reads; a negated glob (`!*.lock`), or one with blanks (which may be several), filters
//! nothing that can be relied on and is judged as the whole tree. Its `type` is not a filter
//! here either. Its `pattern` is a regular expression over content, not a path.

use std::path::Path;

use serde_json::{Map, Value};

use super::shape::{absolute, ShapeError};

/// `Glob`'s `pattern`, placed under its `path` (the working directory when it names none).
pub fn glob(input: &Map<String, Value>, cwd: Option<&Path>) -> Result<String, ShapeError> {
    let pattern = field(input, "Glob", "pattern")?.unwrap_or_default();
    if pattern.is_empty() {
        return Err(ShapeError::Field { tool: "Glob".into(), field: "pattern" });
    }
    let base = absolute("Glob", field(input, "Glob", "path")?.unwrap_or("."), cwd)?;
    Ok(below(&base, pattern))
}

/// What `Grep` reads: its `path` (the working directory when it names none), filtered by its
/// `glob` when that filter can be relied on, or the whole tree below it.
pub fn grep(input: &Map<String, Value>, cwd: Option<&Path>) -> Result<String, ShapeError> {
    let base = absolute("Grep", field(input, "Grep", "path")?.unwrap_or("."), cwd)?;
    // An explicit file is searched whatever the filter says.
    if std::fs::metadata(&base).is_ok_and(|m| m.is_file()) {
        return Ok(base);
    }
    let filter =
        field(input, "Grep", "glob")?.filter(|g| !g.starts_with('!') && !g.contains(char::is_whitespace));
    Ok(match filter {
        // A filter with a `/` is matched from the searched directory; one without, at any depth.
        Some(g) if g.contains('/') => below(&base, g.trim_start_matches('/')),
        Some(g) => below(&base, &format!("**/{g}")),
        None => below(&base, "**"),
    })
}

/// A string field, absent or empty as `None`.
fn field<'a>(
    input: &'a Map<String, Value>,
    tool: &str,
    name: &'static str,
) -> Result<Option<&'a str>, ShapeError> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ShapeError::Field { tool: tool.to_owned(), field: name }),
    }
}

/// `pattern` under `base`, unless it is absolute or home-relative itself (which the jail then
/// judges: a `~` is refused).
fn below(base: &str, pattern: &str) -> String {
    if pattern.starts_with('/') || pattern.starts_with('~') {
        return pattern.to_owned();
    }
    format!("{}/{pattern}", base.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn globs_and_searches_become_the_glob_of_what_they_read() {
        let cwd = Some(Path::new("/work/repo"));
        let rows = [
            (json!({"pattern": "**/*.rs"}), "/work/repo/**/*.rs"),
            (json!({"pattern": "../../etc/*", "path": "/work/repo"}), "/work/repo/../../etc/*"),
            (json!({"pattern": "/etc/**"}), "/etc/**"),
            (json!({"pattern": "*.md", "path": "docs"}), "/work/repo/docs/*.md"),
        ];
        for (input, want) in rows {
            assert_eq!(glob(&obj(input.clone()), cwd).unwrap(), want, "{input}");
        }
        let rows = [
            (json!({"pattern": "x"}), "/work/repo/**"),
            (json!({"pattern": "x", "glob": "*.rs"}), "/work/repo/**/*.rs"),
            (json!({"pattern": "x", "path": "src", "glob": "*.{ts,tsx}"}), "/work/repo/src/**/*.{ts,tsx}"),
            (json!({"pattern": "x", "glob": "src/**/*.rs"}), "/work/repo/src/**/*.rs"),
            (json!({"pattern": "x", "glob": "!*.lock"}), "/work/repo/**"),
            (json!({"pattern": "x", "glob": "*.rs *.env"}), "/work/repo/**"),
            (json!({"pattern": "x", "path": "/etc/ssl"}), "/etc/ssl/**"),
        ];
        for (input, want) in rows {
            assert_eq!(grep(&obj(input.clone()), cwd).unwrap(), want, "{input}");
        }
    }

    #[test]
    fn a_search_of_one_file_reads_that_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, "x").unwrap();
        let input = obj(json!({"pattern": "x", "path": file.to_str().unwrap(), "glob": "*.md"}));
        assert_eq!(grep(&input, None).unwrap(), file.to_str().unwrap());
    }

    #[test]
    fn a_glob_without_a_pattern_or_with_a_wrong_field_is_an_error() {
        let cwd = Some(Path::new("/work/repo"));
        assert!(glob(&obj(json!({"path": "/x"})), cwd).is_err());
        assert!(glob(&obj(json!({"pattern": 1})), cwd).is_err());
        assert!(grep(&obj(json!({"pattern": "x", "glob": ["*.rs"]})), cwd).is_err());
    }
}
