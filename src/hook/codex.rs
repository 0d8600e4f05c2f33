//! `portcullis hook pre|post --codex`: Codex CLI's `PreToolUse` / `PostToolUse` hooks decided by
//! the same policy as Claude Code's.
//!
//! Codex's envelope has Claude Code's field names (`session_id`, `cwd`, `hook_event_name`,
//! `tool_name`, `tool_input`, `tool_use_id`, `tool_response`; plus `turn_id` and `model`, which
//! are not read). Its tools reach the hook as `Bash` (`{"command": "…"}`, every shell tool),
//! `apply_patch` (`{"command": "<patch>"}`) and `mcp__{server}__{tool}` (the arguments).
//! Source: openai/codex `codex-rs/hooks/src/events/pre_tool_use.rs` (commit 0082977c),
//! `codex-rs/core/src/tools/handlers/apply_patch.rs`, `codex-rs/core/src/tools/hook_names.rs`.
//!
//! Before an `apply_patch`, the patch is read ([`super::patch`]) and every path it writes is
//! decided as a `Write` (added, deleted, moved to) or an `Edit` (updated in place) through the
//! jail and the rules; the strictest decision is the answer, and a patch that cannot be read
//! is refused. Every other call, and every call after it ran, is decided as Claude Code's
//! would be. [`super::codex_answer`] renders the decision in Codex's words.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::answer::Permission;
use super::codex_answer::{post_to_codex, Pre};
use super::envelope::{Envelope, Event, RunsIn};
use super::one::{decide_envelope, HookArgs, Loader};
use super::patch::{self, Operation};
use crate::config::Config;
use crate::says::Said;

/// Codex's name for its file-editing tool.
pub const APPLY_PATCH: &str = "apply_patch";

/// Codex's name, in a hook's envelope, for every shell tool (`exec_command`, `shell`, …).
pub const BASH: &str = "Bash";

/// The answer to print (in Codex's words) to the envelope on stdin, and the error to show.
pub fn decide(event: Event, args: &HookArgs, load: Loader<'_>) -> (Value, Option<String>) {
    let (bytes, env) = match Envelope::read(std::io::stdin().lock(), event) {
        Ok(read) => read,
        Err(e) => return (cannot_decide(event, &e.to_string()), Some(e.to_string())),
    };
    // A patch is decided once per path, all under the same arguments and `cwd`: the config is
    // loaded once.
    let loaded: RefCell<Option<Result<Config, String>>> = RefCell::new(None);
    let once =
        |config: Option<&PathBuf>, extra: &[PathBuf], project: Option<&Path>, workspace: Option<&Path>| {
            loaded.borrow_mut().get_or_insert_with(|| load(config, extra, project, workspace)).clone()
        };
    decide_read(event, &bytes, &env, &mut |bytes, env| decide_envelope(event, args, &once, bytes, env))
}

/// One Claude-shaped envelope decided: its answer in Claude Code's words and an error to show.
pub type Decider<'a> = dyn FnMut(Vec<u8>, &Envelope) -> (Value, Option<String>) + 'a;

/// Decides the envelope `env` read as `bytes` with `decide`, in Codex's words.
pub fn decide_read(
    event: Event,
    bytes: &[u8],
    env: &Envelope,
    decide: &mut Decider<'_>,
) -> (Value, Option<String>) {
    if env.tool == BASH {
        // Where the command runs, written in for whoever decides it ([`super::workdir`]).
        return match super::workdir::placed(bytes, env) {
            Ok((bytes, placed)) => shell(event, &bytes, &placed, decide),
            Err(why) => (cannot_decide(event, &why), Some(why)),
        };
    }
    match event {
        Event::Post => {
            let (answer, error) = decide(bytes.to_vec(), env);
            (post_to_codex(&env.tool, &answer), error)
        }
        Event::Pre if env.tool == APPLY_PATCH => match writes(bytes, env) {
            Ok(parts) => {
                let mut errors = Vec::new();
                let decisions: Vec<Pre> = parts
                    .into_iter()
                    .map(|(bytes, part)| {
                        let (answer, error) = decide(bytes, &part);
                        errors.extend(error);
                        Pre::of_claude(&answer)
                    })
                    .collect();
                let error = (!errors.is_empty()).then(|| errors.join("; "));
                (Pre::strictest(decisions).to_codex(&env.input), error)
            }
            Err(why) => (cannot_decide(event, &why), Some(why)),
        },
        Event::Pre => {
            let (answer, error) = decide(bytes.to_vec(), env);
            (Pre::of_claude(&answer).to_codex(&env.input), error)
        }
    }
}

/// A `Bash` envelope placed by [`super::workdir`]: a refusal of a line whose directory the hook
/// cannot know says how to make it known.
fn shell(event: Event, bytes: &[u8], env: &Envelope, decide: &mut Decider<'_>) -> (Value, Option<String>) {
    let (answer, error) = decide(bytes.to_vec(), env);
    match event {
        Event::Post => (post_to_codex(&env.tool, &answer), error),
        Event::Pre => {
            let mut pre = Pre::of_claude(&answer);
            if pre.permission != Permission::Allow && env.runs_in == RunsIn::Unknown {
                pre.reason = format!("{} ({UNKNOWN_WORKDIR})", pre.reason.trim_end_matches('.'));
            }
            (pre.to_codex(&env.input), error)
        }
    }
}

/// What a refused shell call whose directory the hook cannot know is told.
pub const UNKNOWN_WORKDIR: &str = "Codex does not tell the hook which workdir a shell command runs in, so \
                                   its relative paths are judged as anywhere: name files by absolute paths, \
                                   or start the line with `cd /absolute/dir &&`";

/// Codex's conservative answer: a deny before the call, a block after it.
pub fn cannot_decide(event: Event, why: &str) -> Value {
    let reason = Said::CannotDecide { why }.to_string();
    match event {
        Event::Pre => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        Event::Post => post_to_codex("", &json!({ "decision": "block", "reason": reason })),
    }
}

/// One `Write`/`Edit` envelope per path the patch in `env` writes, with the bytes that carry it.
fn writes(bytes: &[u8], env: &Envelope) -> Result<Vec<(Vec<u8>, Envelope)>, String> {
    let Some(text) = env.input.get("command").and_then(Value::as_str) else {
        return Err("apply_patch: tool_input.command is missing or not a string".to_owned());
    };
    let ops = patch::parse(text).map_err(|e| format!("apply_patch: {e}"))?;
    let raw: Map<String, Value> = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let mut parts = Vec::new();
    for op in &ops {
        for (i, path) in op.written().into_iter().enumerate() {
            // An update's first path is rewritten in place; anything else is created or removed.
            let tool = match (op, i) {
                (Operation::Update { .. }, 0) => "Edit",
                _ => "Write",
            };
            let mut part = raw.clone();
            part.insert("tool_name".into(), json!(tool));
            part.insert("tool_input".into(), json!({ "file_path": path }));
            let bytes = serde_json::to_vec(&part).map_err(|e| e.to_string())?;
            let envelope = Envelope::parse(&bytes, env.event).map_err(|e| e.to_string())?;
            parts.push((bytes, envelope));
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::answer::Answer;

    fn envelope(tool: &str, input: Value) -> (Vec<u8>, Envelope) {
        let raw = json!({
            "session_id": "s", "turn_id": "t", "cwd": "/work/repo", "model": "gpt-5",
            "hook_event_name": "PreToolUse", "permission_mode": "default",
            "tool_name": tool, "tool_input": input, "tool_use_id": "call_1",
        });
        let bytes = serde_json::to_vec(&raw).unwrap();
        let env = Envelope::parse(&bytes, Event::Pre).unwrap();
        (bytes, env)
    }

    #[test]
    fn a_patch_is_decided_once_per_path_it_writes_and_the_strictest_answer_wins() {
        let patch =
            "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/b.rs\n*** Move to: /etc/b\n\
                     @@\n-a\n+b\n*** End Patch";
        let (bytes, env) = envelope("apply_patch", json!({ "command": patch }));
        let mut seen = Vec::new();
        let (answer, _) = decide_read(Event::Pre, &bytes, &env, &mut |_, part| {
            let path = part.input["file_path"].as_str().unwrap().to_owned();
            seen.push((part.tool.clone(), path.clone()));
            let permission = if path.starts_with("/etc") { Permission::Deny } else { Permission::Allow };
            (Answer::Pre { permission, reason: format!("about {path}") }.to_json(), None)
        });
        let want = [("Write", "a.txt"), ("Edit", "src/b.rs"), ("Write", "/etc/b")];
        assert_eq!(seen, want.map(|(t, p)| (t.to_owned(), p.to_owned())));
        assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(answer["hookSpecificOutput"]["permissionDecisionReason"], "about /etc/b");
    }

    #[test]
    fn a_patch_that_cannot_be_read_is_refused_without_asking_the_policy() {
        for input in [json!({ "command": "rm -rf /" }), json!({ "patch": "*** Begin Patch" }), json!("x")] {
            let (bytes, env) = envelope("apply_patch", input.clone());
            let (answer, error) = decide_read(Event::Pre, &bytes, &env, &mut |_, _| unreachable!());
            assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{input}");
            assert!(error.is_some());
        }
    }

    #[test]
    fn an_allowed_call_runs_exactly_the_input_that_was_judged() {
        let (bytes, env) = envelope("Bash", json!({ "command": "git status" }));
        let (answer, _) = decide_read(Event::Pre, &bytes, &env, &mut |_, _| {
            (Answer::Pre { permission: Permission::Allow, reason: "ok".into() }.to_json(), None)
        });
        assert_eq!(answer["hookSpecificOutput"]["updatedInput"], json!({ "command": "git status" }));
        assert_eq!(cannot_decide(Event::Post, "x")["decision"], "block");
    }
}
