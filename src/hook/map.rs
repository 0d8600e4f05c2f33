//! From Claude Code's tool names and inputs to the portcullis [`ToolCall`] the gate decides.
//!
//! Built-in tools keep their own names (`Bash`, `Read`, …) so that rules written in Claude Code's
//! spelling (`Bash(git push:*)`, `Read(/work/**)`, `WebFetch(domain:…)`) and portcullis's
//! (`Shell(…)`, `File(…)`, `Fetch(…)`) both address them; their kinds are in
//! [`crate::rules::kinds::CLAUDE_CODE`]. File paths are made absolute against the session's
//! `cwd` before the jail and the rules see them; `Glob` and `Grep` are judged as the glob of
//! the files they read ([`super::search`]: `Glob`'s `pattern` under its `path`, `Grep`'s `path`
//! filtered by its `glob`), the working directory when they name no `path`. MCP tools Claude Code calls
//! (`mcp__{server}__{tool}`) keep their names, so a rule covers them whether they reach the
//! tool through the proxy or straight from Claude Code.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::envelope::{Envelope, RunsIn};
use super::shape::absolute;
pub use super::shape::ShapeError;
use crate::call::{ToolCall, Transport};
use crate::rules::kinds::{CWD_UNKNOWN, HOOK_CWD_POINTER, HOOK_SHELL_POINTER};
use crate::shell::Dialect;

/// The `upstream` label of Claude Code's built-in tools.
pub const BUILT_IN: &str = "claude-code";

/// What a built-in tool's input means to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A string argument that must be there (`Bash`'s `command`, `WebFetch`'s `url`).
    Text(&'static str),
    /// A path that must be there; made absolute.
    Path(&'static str),
    /// `Glob`: its `pattern` under its `path`, judged as one glob ([`super::search`]).
    Glob,
    /// `Grep`: its `path` walked, filtered by its `glob` ([`super::search`]).
    Grep,
    /// Anything else: judged as its JSON.
    Any,
}

/// Every field of a built-in tool that names files. `pattern` of `Grep` is a regular
/// expression over content; `LS`'s `ignore` only narrows what it lists.
fn shape(tool: &str) -> Shape {
    match tool {
        "Bash" => Shape::Text("command"),
        "WebFetch" => Shape::Text("url"),
        "Read" | "Edit" | "MultiEdit" | "Write" => Shape::Path("file_path"),
        "NotebookEdit" | "NotebookRead" => Shape::Path("notebook_path"),
        "LS" => Shape::Path("path"),
        "Glob" => Shape::Glob,
        "Grep" => Shape::Grep,
        _ => Shape::Any,
    }
}

/// The shell that runs Claude Code's `Bash` tool on this machine: the dialect of `$SHELL`'s
/// basename (`/bin/zsh` on macOS), bash when it is unset or names a shell we do not model
/// (Claude Code itself falls back to bash then).
pub fn shell_of(var: Option<&std::ffi::OsStr>) -> Dialect {
    var.and_then(|v| v.to_str()).and_then(Dialect::of_program).unwrap_or(Dialect::Bash)
}

/// The call an envelope stands for, its `Bash` command run by bash.
pub fn call(env: &Envelope) -> Result<ToolCall, ShapeError> {
    call_in(env, Dialect::Bash)
}

/// The call an envelope stands for, its `Bash` command run by `shell`: written into the
/// arguments at [`HOOK_SHELL_POINTER`] (over anything the tool input held there), where the
/// `Bash` kind reads it.
pub fn call_in(env: &Envelope, shell: Dialect) -> Result<ToolCall, ShapeError> {
    // Claude Code's plan mode comes with the envelope: it narrows, never widens.
    shaped(env, shell).map(|c| c.with_mode(env.mode).with_spawn(env.spawn))
}

fn shaped(env: &Envelope, shell: Dialect) -> Result<ToolCall, ShapeError> {
    let tool = env.tool.as_str();
    // A name with a control or format character is no tool's: refused before anything reads it.
    if let Some(why) = crate::gate::tool_name::refusal(tool) {
        return Err(ShapeError::Name(why));
    }
    let Some(input) = env.input.as_object() else {
        // `null` (no input) is an empty input for tools that read none.
        if env.input.is_null() && shape(tool) == Shape::Any {
            return Ok(build(tool, Map::new()));
        }
        return Err(ShapeError::NotAnObject { tool: tool.to_owned() });
    };
    let mut args = input.clone();
    let text = |field: &'static str| match input.get(field) {
        Some(Value::String(s)) => Ok(s.as_str()),
        _ => Err(ShapeError::Field { tool: tool.to_owned(), field }),
    };
    match shape(tool) {
        Shape::Text(field) => {
            text(field)?;
            if tool == "Bash" {
                let key = HOOK_SHELL_POINTER.trim_start_matches('/');
                args.insert(key.into(), Value::String(shell.as_str().into()));
                // Where the command runs is the envelope's to say (the session's `cwd`, or what
                // the codex hook read, [`super::workdir`]), never the tool input's.
                let key = HOOK_CWD_POINTER.trim_start_matches('/');
                let dir = match &env.runs_in {
                    RunsIn::Session => {
                        env.cwd.as_deref().filter(|c| c.is_absolute()).and_then(|c| c.to_str())
                    }
                    // A directory that is not absolute UTF-8 is not placed: the line starts nowhere known.
                    RunsIn::Dir(d) => Some(d.to_str().filter(|_| d.is_absolute()).unwrap_or(CWD_UNKNOWN)),
                    RunsIn::Unknown => Some(CWD_UNKNOWN),
                };
                match dir {
                    Some(dir) => args.insert(key.into(), Value::String(dir.into())),
                    None => args.remove(key),
                };
            }
        }
        Shape::Path(field) => {
            let p = absolute(tool, text(field)?, env.cwd.as_deref())?;
            args.insert(field.into(), Value::String(p));
        }
        // The kinds read the searched glob from `path` (`rules::kinds::CLAUDE_CODE`).
        Shape::Glob => {
            args.insert("path".into(), Value::String(super::search::glob(input, env.cwd.as_deref())?));
        }
        Shape::Grep => {
            args.insert("path".into(), Value::String(super::search::grep(input, env.cwd.as_deref())?));
        }
        Shape::Any => {}
    }
    Ok(build(tool, args))
}

fn build(tool: &str, args: Map<String, Value>) -> ToolCall {
    let (upstream, name) = match tool.strip_prefix("mcp__").and_then(|r| r.split_once("__")) {
        Some((server, name)) => (server, name),
        None => (BUILT_IN, tool),
    };
    let args = serde_json::value::to_raw_value(&Value::Object(args)).ok();
    ToolCall {
        upstream: Arc::from(upstream),
        name: name.to_owned(),
        qualified: tool.to_owned(),
        args,
        session: None,
        caller: None,
        agent: None,
        transport: Transport::Hook,
        method: crate::call::Method::ToolsCall,
        task: None,
        user_task: None,
        mode: crate::call::Mode::Act,
        spawn: crate::call::Spawn::Main,
        decision: crate::decision::DecisionId::next(),
    }
}

/// A tool's output as a result the post checks read: an MCP tool's result as it is (its content
/// blocks, when Claude Code hands over only those), a built-in tool's output as one text block
/// of every string in it (stdout and stderr, a file's content, a fetched page's summary…).
pub fn result(call: &ToolCall, response: &Value) -> Value {
    if call.qualified.starts_with("mcp__") {
        match response {
            Value::Object(m) if m.get("content").is_some_and(Value::is_array) => return response.clone(),
            Value::Array(_) => return serde_json::json!({ "content": response }),
            _ => {}
        }
    }
    let mut text = String::new();
    strings(response, &mut text);
    serde_json::json!({ "content": [{ "type": "text", "text": text }] })
}

fn strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(m) => m.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::envelope::Event;
    use serde_json::json;

    fn env(tool: &str, input: Value) -> Envelope {
        Envelope {
            event: Event::Pre,
            session: None,
            cwd: Some("/work/repo".into()),
            tool: tool.into(),
            input,
            tool_use_id: None,
            response: None,
            mode: crate::call::Mode::Act,
            spawn: crate::call::Spawn::Main,
            runs_in: RunsIn::Session,
        }
    }

    fn args(c: &ToolCall) -> Value {
        serde_json::from_str(c.args.as_ref().unwrap().get()).unwrap()
    }

    #[test]
    fn bash_commands_run_in_the_sessions_cwd_whatever_the_input_said() {
        let input = json!({"command": "cat hostname", "portcullis_cwd": "/tmp"});
        let c = call(&env("Bash", input.clone())).unwrap();
        assert_eq!(args(&c)["portcullis_cwd"], "/work/repo");
        let mut e = env("Bash", input);
        e.cwd = None;
        assert!(args(&call(&e).unwrap()).get("portcullis_cwd").is_none());
    }

    #[test]
    fn a_bash_command_runs_where_the_envelope_says_and_nowhere_known_when_it_cannot_say() {
        let input = json!({"command": "cat key", "portcullis_cwd": "/tmp"});
        let cases = [
            (RunsIn::Dir("/work/secret".into()), "/work/secret"),
            (RunsIn::Dir("relative".into()), CWD_UNKNOWN),
            (RunsIn::Unknown, CWD_UNKNOWN),
            (RunsIn::Session, "/work/repo"),
        ];
        for (runs_in, want) in cases {
            let mut e = env("Bash", input.clone());
            e.runs_in = runs_in.clone();
            assert_eq!(args(&call(&e).unwrap())["portcullis_cwd"], want, "{runs_in:?}");
            // Files named by other tools are still placed against the session's cwd.
            let mut r = env("Read", json!({"file_path": "key"}));
            r.runs_in = runs_in;
            assert_eq!(args(&call(&r).unwrap())["file_path"], "/work/repo/key");
        }
    }

    #[test]
    fn bash_commands_carry_the_hooks_shell_over_anything_the_input_said() {
        let input = json!({"command": "ls", "portcullis_shell": "bash"});
        let c = call_in(&env("Bash", input), Dialect::Zsh).unwrap();
        assert_eq!(args(&c)["portcullis_shell"], "zsh");
        assert_eq!(args(&call(&env("Bash", json!({"command": "ls"}))).unwrap())["portcullis_shell"], "bash");
        let read = call_in(&env("Read", json!({"file_path": "/a"})), Dialect::Zsh).unwrap();
        assert!(args(&read).get("portcullis_shell").is_none());
        let cases =
            [(Some("/bin/zsh"), Dialect::Zsh), (Some("/usr/bin/fish"), Dialect::Bash), (None, Dialect::Bash)];
        for (var, want) in cases {
            assert_eq!(shell_of(var.map(std::ffi::OsStr::new)), want, "{var:?}");
        }
    }

    #[test]
    fn paths_resolve_against_cwd_and_searches_default_to_it() {
        let c = call(&env("Read", json!({"file_path": "src/main.rs"}))).unwrap();
        assert_eq!(args(&c)["file_path"], "/work/repo/src/main.rs");
        assert_eq!((c.upstream.as_ref(), c.qualified.as_str()), (BUILT_IN, "Read"));
        let g = call(&env("Grep", json!({"pattern": "x"}))).unwrap();
        assert_eq!(args(&g)["path"], "/work/repo/**");
        let g = call(&env("Glob", json!({"pattern": "../../etc/*"}))).unwrap();
        assert_eq!(args(&g)["path"], "/work/repo/../../etc/*");
        let l = call(&env("LS", json!({"path": "/root/.ssh"}))).unwrap();
        assert_eq!(args(&l)["path"], "/root/.ssh");
        let n = call(&env("NotebookRead", json!({"notebook_path": "nb.ipynb"}))).unwrap();
        assert_eq!(args(&n)["notebook_path"], "/work/repo/nb.ipynb");
        let n = call(&env("NotebookEdit", json!({"notebook_path": "/a/b.ipynb", "new_source": ""}))).unwrap();
        assert_eq!(args(&n)["notebook_path"], "/a/b.ipynb");
        let m = call(&env("mcp__fs__read_file", json!({"path": "x"}))).unwrap();
        assert_eq!((m.upstream.as_ref(), m.name.as_str()), ("fs", "read_file"));
    }

    #[test]
    fn inputs_of_the_wrong_shape_are_errors_that_name_the_field() {
        for (tool, input) in [
            ("Bash", json!({"command": ["rm", "-rf", "/"]})),
            ("Bash", json!("ls")),
            ("Write", json!({"content": "x"})),
            ("WebFetch", json!({"url": 7})),
            ("Grep", json!({"path": 1})),
        ] {
            assert!(call(&env(tool, input.clone())).is_err(), "{tool} {input}");
        }
        let mut e = env("Read", json!({"file_path": "rel"}));
        e.cwd = None;
        assert!(matches!(call(&e), Err(ShapeError::Relative { .. })));
        for tool in ["mcp__py__write_\u{202e}dda", "Bash\u{200b}", "mcp__a__b\r\nrule: x"] {
            let e = env(tool, json!({"command": "ls"}));
            assert!(matches!(call(&e), Err(ShapeError::Name(why)) if !why.contains(tool)), "{tool:?}");
        }
    }

    #[test]
    fn a_built_in_output_is_judged_as_all_of_its_text() {
        let c = call(&env("Bash", json!({"command": "ls"}))).unwrap();
        let r = result(&c, &json!({"stdout": "a", "stderr": "b", "interrupted": false}));
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.lines().any(|l| l == "a") && text.lines().any(|l| l == "b"), "{text}");
        let m = call(&env("mcp__fs__read", json!({}))).unwrap();
        let blocks = json!([{"type": "text", "text": "t"}]);
        assert_eq!(result(&m, &blocks)["content"], blocks);
    }
}
