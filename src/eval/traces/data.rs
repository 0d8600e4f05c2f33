//! Trace files for `portcullis eval --traces`: one session a line, each a sequence of calls with
//! the result the tool gave and a label per call (`exfil` or `benign`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// What a recorded call was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// The call that sends the attacker's data out: refusing it is a catch.
    Exfil,
    /// A call the user asked for: refusing it is a false positive.
    Benign,
    /// Any other call the injection asked for (a read, a deletion): reported, never scored.
    Injected,
}

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The tool's bare name (the config's upstream qualifies it).
    pub tool: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The text the tool answered with; the replay upstream gives it back.
    #[serde(default)]
    pub result: String,
    pub label: Label,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// One recorded session.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    pub id: String,
    #[serde(default)]
    pub suite: Option<String>,
    #[serde(default)]
    pub user_task: Option<String>,
    #[serde(default)]
    pub injection_task: Option<String>,
    /// What the user typed (the user task's prompt): the replay records it through the proxy's
    /// trusted channel (`POST /sessions/{id}/task` on the admin listener), as the hook's
    /// `UserPromptSubmit` or an operator-trusted front would, before the session's first call.
    #[serde(default)]
    pub prompt: Option<String>,
    pub steps: Vec<Step>,
}

/// Why a trace file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {source}")]
    Line {
        path: String,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}:{line}: `arguments` must be a JSON object")]
    Arguments { path: String, line: usize },
    #[error("{path}: no sessions")]
    Empty { path: String },
}

/// Reads every session of `path` (blank lines skipped).
pub fn load(path: &Path) -> Result<Vec<Trace>, TraceError> {
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|source| TraceError::Read { path: shown.clone(), source })?;
    parse(&text, &shown)
}

/// Parses the lines of a trace file; `path` names it in errors.
pub fn parse(text: &str, path: &str) -> Result<Vec<Trace>, TraceError> {
    let mut traces = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let t: Trace = serde_json::from_str(line).map_err(|source| TraceError::Line {
            path: path.to_owned(),
            line: i + 1,
            source,
        })?;
        if t.steps.iter().any(|s| !s.arguments.is_object()) {
            return Err(TraceError::Arguments { path: path.to_owned(), line: i + 1 });
        }
        traces.push(t);
    }
    match traces.is_empty() {
        true => Err(TraceError::Empty { path: path.to_owned() }),
        false => Ok(traces),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_line_reads_with_its_steps_and_labels() {
        let line = r#"{"id":"w/u1/i0","suite":"workspace","user_task":"user_task_1","injection_task":"injection_task_0","steps":[{"tool":"search_emails","arguments":{"query":"x"},"result":"hi","label":"benign"},{"tool":"send_email","arguments":{"recipients":["a@b.example"]},"label":"exfil"}]}"#;
        let t = parse(line, "t.jsonl").unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].steps[1].label, Label::Exfil);
        assert_eq!(t[0].steps[1].result, "");
        assert_eq!(t[0].injection_task.as_deref(), Some("injection_task_0"));
    }

    #[test]
    fn malformed_lines_are_refused_with_their_line_number() {
        let cases = [
            ("{\"id\":\"a\",\"steps\":[]}\nnot json", "t:2:"),
            (r#"{"id":"a","steps":[{"tool":"x","label":"maybe"}]}"#, "t:1:"),
            (r#"{"id":"a","steps":[{"tool":"x","arguments":[1],"label":"benign"}]}"#, "t:1: `arguments`"),
            (r#"{"id":"a","steps":[],"extra":1}"#, "t:1:"),
            ("\n\n", "t: no sessions"),
        ];
        for (text, want) in cases {
            let e = parse(text, "t").unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }
}
