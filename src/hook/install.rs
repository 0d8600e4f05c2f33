//! `portcullis hook install`: the `hooks` block of Claude Code's `settings.json` that runs
//! `portcullis hook pre` before and `portcullis hook post` after every tool call, merged into the
//! settings already there. Other keys and other hooks are kept as they are; a portcullis hook
//! already installed is replaced in place, so installing twice changes nothing.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// Why the settings cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{path} is not JSON ({source}); fix it or move it away, it was left as it is")]
    NotJson {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {what} is not what the agent expects (an object of event names to arrays); it was left as it is")]
    Shape { path: String, what: &'static str },
    #[error("{path}: the hook command cannot be wrapped for Codex (a path or argument holds \", $, ` or \\); nothing was written")]
    Unquotable { path: String },
    #[error("cannot {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--user needs $HOME")]
    NoHome,
}

/// Which settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `.claude/settings.json` under the current directory (shared with the repository).
    Project,
    /// `~/.claude/settings.json`.
    User,
}

impl Scope {
    pub fn path(self) -> Result<PathBuf, InstallError> {
        match self {
            Scope::Project => Ok(PathBuf::from(".claude/settings.json")),
            Scope::User => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".claude/settings.json"))
                .ok_or(InstallError::NoHome),
        }
    }
}

/// Whether `command` runs a portcullis hook for `phase` (`pre` or `post`): its program is
/// called `portcullis` and its next words are `hook {phase}`.
fn ours(command: &str, phase: &str) -> bool {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or("").trim_matches(|c| c == '"' || c == '\'');
    let is_portcullis = Path::new(program).file_name().is_some_and(|n| n == "portcullis");
    is_portcullis && words.next() == Some("hook") && words.next() == Some(phase)
}

/// `settings` with the portcullis hooks in it: `pre` and `post` are the commands to run, and
/// `prompt` the `UserPromptSubmit` one (with a running proxy only: it records the user's task).
pub fn merge(
    mut settings: Value,
    pre: &str,
    post: &str,
    prompt: Option<&str>,
    path: &str,
) -> Result<Value, InstallError> {
    let shape = |what| InstallError::Shape { path: path.to_owned(), what };
    let root = settings.as_object_mut().ok_or(shape("the file"))?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or(shape("\"hooks\""))?;
    let prompt = prompt.map(|c| ("UserPromptSubmit", "prompt", c));
    for (event, phase, command) in
        [("PreToolUse", "pre", pre), ("PostToolUse", "post", post)].into_iter().chain(prompt)
    {
        let groups = hooks.entry(event).or_insert_with(|| Value::Array(Vec::new()));
        let groups = groups.as_array_mut().ok_or(shape("a hooks event"))?;
        let mut found = false;
        for group in groups.iter_mut() {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else { continue };
            for h in list.iter_mut() {
                if h.get("command").and_then(Value::as_str).is_some_and(|c| ours(c, phase)) {
                    if found {
                        // A duplicate from an older install: emptied, then dropped below.
                        *h = Value::Null;
                    } else {
                        h["command"] = Value::String(command.to_owned());
                        found = true;
                    }
                }
            }
            list.retain(|h| !h.is_null());
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
        if !found {
            groups.push(json!({ "matcher": "*", "hooks": [{ "type": "command", "command": command }] }));
        }
    }
    Ok(settings)
}

/// The merged settings for the file at `path` (empty settings when it does not exist).
pub fn merged(path: &Path, pre: &str, post: &str, prompt: Option<&str>) -> Result<Value, InstallError> {
    let shown = path.display().to_string();
    let current = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => json!({}),
        Ok(text) => serde_json::from_str(&text)
            .map_err(|source| InstallError::NotJson { path: shown.clone(), source })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(source) => return Err(InstallError::Io { what: "read", path: shown, source }),
    };
    merge(current, pre, post, prompt, &shown)
}

/// Writes `settings` to `path` (through a temporary file in the same directory, then a rename).
pub fn write(path: &Path, settings: &Value) -> Result<(), InstallError> {
    let io = |what, source| InstallError::Io { what, path: path.display().to_string(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io("create the directory of", e))?;
    }
    let text = format!("{settings:#}\n");
    let tmp = path.with_extension("json.portcullis-tmp");
    std::fs::write(&tmp, text).map_err(|e| io("write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| io("replace", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installing_keeps_other_hooks_and_twice_changes_nothing() {
        let mine = json!({
            "permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
            }
        });
        let once = merge(
            mine.clone(),
            "portcullis hook pre --config /p.yaml",
            "portcullis hook post --config /p.yaml",
            None,
            "s",
        )
        .unwrap();
        let twice = merge(
            once.clone(),
            "portcullis hook pre --config /p.yaml",
            "portcullis hook post --config /p.yaml",
            None,
            "s",
        )
        .unwrap();
        assert_eq!(once, twice);
        assert_eq!(once["permissions"], mine["permissions"]);
        assert_eq!(once["hooks"]["Stop"], mine["hooks"]["Stop"]);
        let pre = once["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "./lint.sh");
        assert_eq!(pre[1]["matcher"], "*");
        // A new install (other flags, another path to the binary) replaces the old in place.
        let moved = merge(
            once,
            "/opt/bin/portcullis hook pre --proxy http://x",
            "/opt/bin/portcullis hook post --proxy http://x",
            Some("/opt/bin/portcullis hook prompt --proxy http://x"),
            "s",
        )
        .unwrap();
        let pre = moved["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[1]["hooks"][0]["command"], "/opt/bin/portcullis hook pre --proxy http://x");
        let prompt = moved["hooks"]["UserPromptSubmit"].as_array().unwrap();
        assert_eq!(prompt[0]["hooks"][0]["command"], "/opt/bin/portcullis hook prompt --proxy http://x");
    }

    #[test]
    fn settings_of_the_wrong_shape_are_left_alone() {
        assert!(merge(json!([]), "a", "b", None, "s").is_err());
        assert!(merge(json!({"hooks": []}), "a", "b", None, "s").is_err());
        assert!(!ours("./portcullis-wrapper hook pre", "pre"));
        assert!(ours("\"/usr/local/bin/portcullis\" hook post --config x", "post"));
    }
}
