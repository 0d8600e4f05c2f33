//! Where a hooked shell command runs: the session's `cwd` (Claude Code's `Bash`), the `workdir`
//! a Codex envelope names, or nowhere the hook can know (Codex's shell payloads).
//!
//! Codex runs `exec_command` and `shell` in `cwd.join(workdir)` (the model chooses `workdir`),
//! but the `PreToolUse` payload it builds for them is `{"command": cmd}` alone (openai/codex
//! `core/src/tools/handlers/unified_exec/exec_command.rs` and `shell.rs`,
//! `pre_tool_use_payload`, commit 019ff651). So a Codex `Bash` envelope with no `workdir` runs
//! somewhere unknown: its relative words are judged as anywhere (the shell analyzer's own
//! reading still places a line that starts with `cd /abs && …`). A `workdir` it does carry is
//! resolved as Codex resolves it, against `cwd`, and canonicalised as the jail resolves a path
//! another process opens (links, `..` after a link, never through /proc, /sys or /dev; a missing
//! tail kept as written: nothing runs there); one that cannot be (relative without an absolute
//! `cwd`, through /proc, a link loop, not a string) cannot be decided.
//!
//! The codex hook writes its reading into the envelope as [`RUNS_IN`], so a running proxy
//! (`--proxy`) decides with the same directory as the hook itself; Claude Code writes no such
//! field, and its envelopes run where they always did, in `cwd`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::envelope::{Envelope, RunsIn, RUNS_IN};
use crate::rules::jail::{Jail, Resolve};

/// Where the `Bash` call in a Codex envelope runs; an error when its `workdir` cannot be placed.
pub fn of_codex(env: &Envelope) -> Result<RunsIn, String> {
    let workdir = match env.input.get("workdir") {
        None | Some(Value::Null) => return Ok(RunsIn::Unknown),
        Some(Value::String(w)) if w.is_empty() => return Ok(RunsIn::Session),
        Some(Value::String(w)) => w,
        Some(other) => return Err(format!("tool_input.workdir is not a string: {other}")),
    };
    let joined = match env.cwd.as_deref().filter(|c| c.is_absolute()) {
        _ if Path::new(workdir).is_absolute() => PathBuf::from(workdir),
        Some(cwd) => cwd.join(workdir),
        None => return Err(format!("the workdir {workdir:?} is relative and cwd is not an absolute path")),
    };
    // As the jail resolves a path another process opens: link by link, `..` after the link
    // before it, never through /proc, /sys or /dev (whose links are the hook's own there).
    let jail = Jail::new(None, &[], Resolve::Filesystem).map_err(|e| e.to_string())?;
    match jail.resolve(&joined) {
        Ok(dir) => Ok(RunsIn::Dir(dir)),
        Err(e) => Err(format!("the workdir {} cannot be placed: it {e}", joined.display())),
    }
}

/// A Codex `Bash` envelope with where it runs written in ([`RUNS_IN`]), as bytes and parsed.
pub fn placed(bytes: &[u8], env: &Envelope) -> Result<(Vec<u8>, Envelope), String> {
    let runs_in = of_codex(env)?;
    let mut raw: Map<String, Value> = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    raw.insert(RUNS_IN.into(), serde_json::to_value(&runs_in).map_err(|e| e.to_string())?);
    let bytes = serde_json::to_vec(&raw).map_err(|e| e.to_string())?;
    let env = Envelope::parse(&bytes, env.event).map_err(|e| e.to_string())?;
    Ok((bytes, env))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::envelope::Event;
    use serde_json::json;

    fn codex(cwd: &Path, input: Value) -> (Vec<u8>, Envelope) {
        let raw = json!({
            "session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": input,
        });
        let bytes = serde_json::to_vec(&raw).unwrap();
        let env = Envelope::parse(&bytes, Event::Pre).unwrap();
        (bytes, env)
    }

    #[test]
    fn a_codex_workdir_is_resolved_against_cwd_and_canonicalised_as_the_kernel_opens_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/sub")).unwrap();
        std::fs::create_dir_all(root.join("secret")).unwrap();
        std::os::unix::fs::symlink(root.join("secret"), root.join("repo/link")).unwrap();
        let repo = root.join("repo");
        let cases: [(Value, RunsIn); 6] = [
            (json!(null), RunsIn::Unknown),
            (json!(""), RunsIn::Session),
            (json!("sub"), RunsIn::Dir(root.join("repo/sub"))),
            (json!("../secret"), RunsIn::Dir(root.join("secret"))),
            (json!("link"), RunsIn::Dir(root.join("secret"))),
            (json!(root.join("secret")), RunsIn::Dir(root.join("secret"))),
        ];
        for (workdir, want) in cases {
            let input = match &workdir {
                Value::Null => json!({ "command": "ls" }),
                w => json!({ "command": "ls", "workdir": w }),
            };
            let (_, env) = codex(&repo, input);
            assert_eq!(of_codex(&env), Ok(want), "{workdir}");
        }
        // A missing tail is kept as written (nothing runs there, and nothing is proven of it).
        let (_, env) = codex(&repo, json!({ "command": "ls", "workdir": "new/../sub" }));
        assert_eq!(of_codex(&env), Ok(RunsIn::Dir(root.join("repo/sub"))));
        // `link/../sub` is the kernel's: the link's target's parent holds no `sub`.
        std::fs::remove_dir(root.join("repo/sub")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let (_, env) = codex(&repo, json!({ "command": "ls", "workdir": "link/../sub" }));
        assert_eq!(of_codex(&env), Ok(RunsIn::Dir(root.join("sub"))));
    }

    #[test]
    fn a_workdir_that_cannot_be_placed_is_an_error_never_the_session_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("/proc/self/cwd", root.join("here")).unwrap();
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        let unplaced = [
            json!("here"),
            json!("/proc/self/cwd"),
            json!("a"),
            json!(7),
            json!(["/"]),
            json!({ "dir": "/" }),
        ];
        for workdir in unplaced {
            let (_, env) = codex(&root, json!({ "command": "ls", "workdir": workdir }));
            assert!(of_codex(&env).is_err(), "{workdir}");
        }
        let mut env = codex(&root, json!({ "command": "ls", "workdir": "sub" })).1;
        env.cwd = None;
        assert!(of_codex(&env).is_err());
    }

    #[test]
    fn the_reading_is_written_into_the_envelope_and_read_back_by_its_parser() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (bytes, env) = codex(&root, json!({ "command": "cat key" }));
        assert_eq!(env.runs_in, RunsIn::Session, "an envelope that says nothing runs in cwd");
        let (bytes, written) = placed(&bytes, &env).unwrap();
        assert_eq!(written.runs_in, RunsIn::Unknown);
        let raw: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(raw[RUNS_IN], "unknown");
        let (bytes, env) = codex(&root, json!({ "command": "cat key", "workdir": "." }));
        let (_, written) = placed(&bytes, &env).unwrap();
        assert_eq!(written.runs_in, RunsIn::Dir(root));
    }
}
