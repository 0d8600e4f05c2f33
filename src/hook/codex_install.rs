//! `portcullis hook install --codex`: Codex CLI's `hooks.json` (`.codex/hooks.json` in the
//! project, `$CODEX_HOME/hooks.json` or `~/.codex/hooks.json` for the user) with
//! `portcullis hook pre|post --codex` on every tool call, merged into what is there.
//!
//! Codex lets a tool call through when its hook fails, times out or answers what it cannot
//! parse, and has no setting that turns that into a block (`HookHandlerConfig` has `command`,
//! `timeout`, `async`, `statusMessage` only; openai/codex `codex-rs/config/src/hook_config.rs`).
//! What it does honour is exit status 2 with a reason on stderr, whatever stdout says. So the
//! command is wrapped: `/bin/sh -c "PORTCULLIS … || { echo REASON >&2; exit 2; }"` — a missing
//! binary, a crash or a kill answers with a block too. Only Codex's own timeout still lets the
//! call through; the hook bounds itself far below the `timeout` written here.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::install::InstallError;

/// Codex's timeout for one hook run, in seconds (its own default; the hook answers well within).
pub const TIMEOUT_SECS: u64 = 600;

const WRAPPER: &str = "/bin/sh -c \"";

/// Which `hooks.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `.codex/hooks.json` under the current directory (Codex loads it for a trusted project).
    Project,
    /// `$CODEX_HOME/hooks.json`, else `~/.codex/hooks.json`.
    User,
}

impl Scope {
    pub fn path(self) -> Result<PathBuf, InstallError> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        match self {
            Scope::Project => Ok(PathBuf::from(".codex/hooks.json")),
            Scope::User => match var("CODEX_HOME") {
                Some(dir) => Ok(dir.join("hooks.json")),
                None => var("HOME").map(|h| h.join(".codex/hooks.json")).ok_or(InstallError::NoHome),
            },
        }
    }
}

/// The shell command Codex runs for `phase` (`pre` or `post`): `inner` (the portcullis command
/// line, its words already quoted with single quotes where needed), made to exit 2 with a reason
/// when it does not answer. `None` when `inner` holds a character the double-quoted wrapper
/// would give meaning to (`"`, `$`, `` ` ``, `\`).
pub fn command(inner: &str, phase: &str) -> Option<String> {
    if inner.contains(['"', '$', '`', '\\', '\n']) {
        return None;
    }
    let then = match phase {
        "pre" => "the call is refused",
        _ => "do not use this output",
    };
    Some(format!(
        "{WRAPPER}{inner} || {{ echo 'portcullis hook {phase} gave no answer: {then}' >&2; exit 2; }}\""
    ))
}

/// Whether `command` is a portcullis Codex hook for `phase` written by [`command`].
fn ours(command: &str, phase: &str) -> bool {
    let Some(inner) = command.strip_prefix(WRAPPER) else { return false };
    // The program is one word, or a single-quoted one when its path holds a space.
    let split = match inner.strip_prefix('\'') {
        Some(quoted) => quoted.split_once('\''),
        None => inner.split_once(' '),
    };
    let Some((program, rest)) = split else { return false };
    let mut words = rest.split_whitespace();
    let is_portcullis = Path::new(program).file_name().is_some_and(|n| n == "portcullis");
    is_portcullis && words.next() == Some("hook") && words.next() == Some(phase)
}

/// `hooks` (the parsed `hooks.json`) with the portcullis `pre` and `post` commands in it, once each,
/// for every tool (no `matcher`); other hooks are kept as they are.
pub fn merge(mut file: Value, pre: &str, post: &str, path: &str) -> Result<Value, InstallError> {
    let shape = |what| InstallError::Shape { path: path.to_owned(), what };
    let root = file.as_object_mut().ok_or(shape("the file"))?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or(shape("\"hooks\""))?;
    for (event, phase, command) in [("PreToolUse", "pre", pre), ("PostToolUse", "post", post)] {
        let groups = hooks.entry(event).or_insert_with(|| Value::Array(Vec::new()));
        let groups = groups.as_array_mut().ok_or(shape("a hooks event"))?;
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                list.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(|c| ours(c, phase)));
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
        groups.push(json!({ "hooks": [{
            "type": "command",
            "command": command,
            "timeout": TIMEOUT_SECS,
            "statusMessage": format!("portcullis: {phase}-call check"),
        }] }));
    }
    Ok(file)
}

/// The merged `hooks.json` for the file at `path` (an empty one when it does not exist).
pub fn merged(path: &Path, pre: &str, post: &str) -> Result<Value, InstallError> {
    let shown = path.display().to_string();
    let current = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => json!({}),
        Ok(text) => serde_json::from_str(&text)
            .map_err(|source| InstallError::NotJson { path: shown.clone(), source })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(source) => return Err(InstallError::Io { what: "read", path: shown, source }),
    };
    merge(current, pre, post, &shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installing_keeps_other_hooks_and_twice_changes_nothing() {
        let pre = command("/opt/bin/portcullis hook pre --codex --config '/a b.yaml'", "pre").unwrap();
        let post = command("/opt/bin/portcullis hook post --codex", "post").unwrap();
        let mine = json!({"hooks": {
            "PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
        }});
        let once = merge(mine.clone(), &pre, &post, "h").unwrap();
        let twice = merge(once.clone(), &pre, &post, "h").unwrap();
        assert_eq!(once, twice);
        assert_eq!(once["hooks"]["Stop"], mine["hooks"]["Stop"]);
        let groups = once["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0]["hooks"][0]["command"], "./lint.sh");
        assert!(groups[1].get("matcher").is_none(), "every tool, Codex's regex matchers need none");
        assert_eq!(groups[1]["hooks"][0]["timeout"], TIMEOUT_SECS);
        let moved = command("/usr/bin/portcullis hook pre --codex --proxy http://x", "pre").unwrap();
        let again = merge(once, &moved, &post, "h").unwrap();
        let groups = again["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!((groups.len(), groups[1]["hooks"][0]["command"].as_str()), (2, Some(moved.as_str())));
    }

    #[test]
    fn a_command_the_wrapper_cannot_carry_is_refused_and_others_are_left_alone() {
        for bad in ["/x/portcullis hook pre --config \"a\"", "/$HOME/portcullis hook pre", "a\\b"] {
            assert_eq!(command(bad, "pre"), None, "{bad}");
        }
        assert!(merge(json!([]), "a", "b", "h").is_err());
        assert!(merge(json!({"hooks": {"PreToolUse": {}}}), "a", "b", "h").is_err());
        assert!(!ours("/x/portcullis hook pre", "pre"));
        assert!(!ours(&command("/x/portcullis-wrapper hook pre", "pre").unwrap(), "pre"));
        assert!(ours(&command("'/a b/portcullis' hook post --codex", "post").unwrap(), "post"));
    }
}
