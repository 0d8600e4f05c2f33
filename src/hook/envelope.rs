//! The hook's input: the JSON object Claude Code writes on stdin before (`PreToolUse`) and after
//! (`PostToolUse`) each tool call. Fields Claude Code adds later are ignored; the ones read here
//! must be there and have the right type, or the hook answers conservatively.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most stdin the hook reads: a `PostToolUse` envelope carries the whole tool output.
pub const MAX_ENVELOPE: u64 = 32 * 1024 * 1024;

/// Which hook event an invocation answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// `PreToolUse`: the call has not run; the answer may allow, ask or deny it.
    Pre,
    /// `PostToolUse`: the call has run; the answer may block its result or add context.
    Post,
}

impl Event {
    /// The `hook_event_name` Claude Code sends (and the `hookEventName` it expects back).
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Pre => "PreToolUse",
            Event::Post => "PostToolUse",
        }
    }

    /// `pre` or `post`, as the command line and the proxy's `/hook/{phase}` spell it.
    pub fn parse(phase: &str) -> Option<Event> {
        match phase {
            "pre" => Some(Event::Pre),
            "post" => Some(Event::Post),
            _ => None,
        }
    }
}

/// One hook invocation's input.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub event: Event,
    /// Claude Code's session: waivers and the repeated-denial breaker are kept per session.
    pub session: Option<String>,
    /// The session's working directory; relative paths in tool input resolve against it.
    pub cwd: Option<PathBuf>,
    /// `Bash`, `Read`, …, or `mcp__{server}__{tool}`.
    pub tool: String,
    pub input: Value,
    pub tool_use_id: Option<String>,
    /// `PostToolUse` only: what the tool returned.
    pub response: Option<Value>,
    /// Claude Code's `permission_mode`: `plan` is plan mode; anything else acts.
    pub mode: crate::call::Mode,
    /// A subagent's call (the input carries `agent_id`), decided as a delegated child's.
    pub spawn: crate::call::Spawn,
    /// Where a `Bash` command runs: `cwd` unless the codex hook wrote otherwise
    /// ([`super::workdir`]).
    pub runs_in: RunsIn,
}

/// The envelope field the codex hook writes its [`RunsIn`] reading into ([`super::workdir`]).
pub const RUNS_IN: &str = "portcullis_runs_in";

/// Where a shell command runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunsIn {
    /// The session's working directory (the envelope's `cwd`).
    #[default]
    Session,
    /// This absolute, canonical directory.
    Dir(PathBuf),
    /// No directory the hook can know: relative words may be anywhere.
    Unknown,
}

/// Why an envelope cannot be decided.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    #[error("the hook input is not a JSON object with tool_name and hook_event_name: {0}")]
    Malformed(#[source] serde_json::Error),
    #[error("the hook input is larger than {MAX_ENVELOPE} bytes")]
    TooLarge,
    #[error("cannot read the hook input: {0}")]
    Unreadable(#[source] std::io::Error),
    #[error("hook_event_name {0:?} is not one portcullis answers (PreToolUse, PostToolUse)")]
    UnknownEvent(String),
    #[error("hook_event_name is {got} but this is `portcullis hook {expected}`: check the hooks block in settings.json")]
    WrongEvent { expected: &'static str, got: &'static str },
    #[error("a PostToolUse input carries tool_response")]
    NoResponse,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    hook_event_name: String,
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    tool_response: Option<Value>,
    #[serde(default)]
    permission_mode: Option<String>,
    /// Present only on a call a subagent makes (Claude Code's `Task` tool); its value is not used.
    #[serde(default)]
    agent_id: Option<Value>,
    /// Written by the codex hook only ([`RUNS_IN`]).
    #[serde(default)]
    portcullis_runs_in: RunsIn,
}

impl Envelope {
    /// Parses `bytes` as the input of the `expected` event.
    pub fn parse(bytes: &[u8], expected: Event) -> Result<Envelope, EnvelopeError> {
        if bytes.len() as u64 > MAX_ENVELOPE {
            return Err(EnvelopeError::TooLarge);
        }
        let raw: Raw = serde_json::from_slice(bytes).map_err(EnvelopeError::Malformed)?;
        let event = match raw.hook_event_name.as_str() {
            "PreToolUse" => Event::Pre,
            "PostToolUse" => Event::Post,
            other => return Err(EnvelopeError::UnknownEvent(other.to_owned())),
        };
        if event != expected {
            let spell = |e: Event| if e == Event::Pre { "pre" } else { "post" };
            return Err(EnvelopeError::WrongEvent { expected: spell(expected), got: event.as_str() });
        }
        if event == Event::Post && raw.tool_response.is_none() {
            return Err(EnvelopeError::NoResponse);
        }
        Ok(Envelope {
            event,
            session: raw.session_id.filter(|s| !s.is_empty()),
            cwd: raw.cwd.filter(|c| !c.is_empty()).map(PathBuf::from),
            tool: raw.tool_name,
            input: raw.tool_input,
            tool_use_id: raw.tool_use_id,
            response: raw.tool_response,
            mode: crate::call::Mode::parse(raw.permission_mode.as_deref()),
            spawn: match raw.agent_id {
                None | Some(Value::Null) => crate::call::Spawn::Main,
                Some(_) => crate::call::Spawn::Subagent,
            },
            runs_in: raw.portcullis_runs_in,
        })
    }

    /// Reads and parses the whole of `input` (stdin), at most [`MAX_ENVELOPE`] bytes.
    pub fn read(input: impl std::io::Read, expected: Event) -> Result<(Vec<u8>, Envelope), EnvelopeError> {
        use std::io::Read as _;
        let mut bytes = Vec::new();
        input.take(MAX_ENVELOPE + 1).read_to_end(&mut bytes).map_err(EnvelopeError::Unreadable)?;
        let env = Envelope::parse(&bytes, expected)?;
        Ok((bytes, env))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_of_the_other_event_or_an_unknown_one_is_refused_with_a_reason() {
        let pre = br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"session_id":"s","cwd":"/w"}"#;
        let e = Envelope::parse(pre, Event::Pre).unwrap();
        assert_eq!((e.tool.as_str(), e.session.as_deref()), ("Bash", Some("s")));
        let err = Envelope::parse(pre, Event::Post).unwrap_err().to_string();
        assert!(err.contains("portcullis hook post"), "{err}");
        let stop = br#"{"hook_event_name":"Stop","tool_name":"Bash"}"#;
        assert!(matches!(Envelope::parse(stop, Event::Pre), Err(EnvelopeError::UnknownEvent(_))));
        for bad in [&b""[..], b"[]", b"{\"tool_name\":1}", b"not json"] {
            assert!(matches!(Envelope::parse(bad, Event::Pre), Err(EnvelopeError::Malformed(_))));
        }
        let post = br#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}"#;
        assert!(matches!(Envelope::parse(post, Event::Post), Err(EnvelopeError::NoResponse)));
    }
}
