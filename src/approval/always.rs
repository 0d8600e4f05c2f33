//! "Allow always": the allow rule for exactly one asked call, in the syntax the engine reads —
//! never wider than the call. What is understood gets a rule; everything else gets none:
//!
//! | the tool's kind | the call must be | the rule |
//! | --- | --- | --- |
//! | generic | any arguments | `tool(<canonical JSON, glob characters escaped>)` |
//! | shell | `{command}` alone; one simple command of plain words | `tool(<canonical command>)` |
//! | file | `{path}` alone; an absolute, normal, plain path | `tool(<path>)` |
//! | fetch | `{url}` alone; an http(s) URL with no spaces | `tool(<URL, glob characters escaped>)` |
//!
//! A shell command with a substitution, an expansion, a redirection, a wrapper, an assignment,
//! a glob, a second command or a word outside the plain set gets no rule: its canonical form
//! would stand for more than what was asked. Only a built-in floor ask is offered one; a
//! configured `ask` rule, a checker's block and a flagged session are the operator's or the
//! checker's to keep asking.

use serde_json::Value;

use super::Source;
use crate::rules::kinds::{canonical_json, KindSpec};
use crate::rules::spec::{RuleSpec, Subject};

/// Why a call gets no "always" rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoRule {
    #[error("only a call the built-in floor asked about can be allowed always (this one was asked by {0})")]
    NotFloor(&'static str),
    #[error("the tool name {0:?} cannot be written as an exact rule")]
    ToolName(String),
    #[error("the arguments are not a JSON object")]
    NotAnObject,
    #[error(
        "a {kind} tool's call gets a rule only when its one argument is {pointer} (this call has others)"
    )]
    OtherArguments { kind: &'static str, pointer: String },
    #[error("the command is not one simple command of plain words (a substitution, expansion, redirection, wrapper, glob, compound or quoted space): it gets no rule")]
    NotSimple,
    #[error("the path is not an absolute, normal path of plain characters")]
    PathNotPlain,
    #[error("the URL is not an http(s) URL without spaces or control characters")]
    UrlNotPlain,
    #[error("{0} calls are not written as rules")]
    Kind(&'static str),
    #[error("the rule could not be checked against the call: {0}")]
    Unchecked(String),
    #[error("the arguments hold what the detectors read as a {0}, which a rule would keep in the file: allow the call once instead")]
    Secret(&'static str),
}

/// The first masked finding (a secret, data smuggled in a URL) in any string of `v`, if any.
fn secret_in(v: &Value) -> Option<&'static str> {
    match v {
        Value::String(s) => secret_in_str(s),
        Value::Array(items) => items.iter().find_map(secret_in),
        Value::Object(map) => map.iter().find_map(|(k, v)| secret_in_str(k).or_else(|| secret_in(v))),
        _ => None,
    }
}

fn secret_in_str(s: &str) -> Option<&'static str> {
    use crate::checker::detect::{self, Direction};
    let found = detect::scan(s, Direction::Outbound).into_iter().find(|f| f.category.is_masked())?;
    Some(match found.category {
        detect::Category::DataInUrl => "payload carried in a URL",
        _ => "secret",
    })
}

/// The exact allow rule for `tool` called with `args` (canonical JSON), asked for `source`,
/// whose kind is `kind`.
pub fn rule_for(tool: &str, args: &str, source: Source, kind: &KindSpec) -> Result<String, NoRule> {
    if source != Source::Floor {
        return Err(NoRule::NotFloor(match source {
            Source::Configured => "a configured ask rule",
            Source::Checker => "the checker",
            Source::Escape => "the jail's escape row",
            Source::Unread => "a command line the shell parser could not read",
            Source::Flagged | Source::Floor => "the flagged-session breaker",
        }));
    }
    // Visible ASCII only (glob characters are escaped below): no control, format, bidi or
    // look-alike character reaches a rule, its preview or its diff.
    let plain_name = (tool.starts_with("mcp__") || tool.starts_with("http__"))
        && tool.len() <= 256
        && tool.chars().all(|c| c.is_ascii_graphic() && !"()".contains(c));
    if !plain_name {
        return Err(NoRule::ToolName(tool.escape_default().to_string()));
    }
    let name = escape(tool);
    let v: Value = serde_json::from_str(args).map_err(|_| NoRule::NotAnObject)?;
    let Value::Object(map) = &v else { return Err(NoRule::NotAnObject) };
    // A rule is the call's exact text, kept in a file (often versioned) and shown in previews:
    // a secret the detectors find in it is never written there. Allow the call once instead.
    if let Some(category) = secret_in(&v) {
        return Err(NoRule::Secret(category));
    }
    let only = |pointer: &str, kind: &'static str| -> Result<&str, NoRule> {
        let other = || NoRule::OtherArguments { kind, pointer: pointer.to_owned() };
        let key = pointer.strip_prefix('/').filter(|k| !k.contains(['/', '~'])).ok_or_else(other)?;
        match (map.len(), map.get(key)) {
            (1, Some(Value::String(s))) => Ok(s),
            _ => Err(other()),
        }
    };
    let (rule, check): (String, Check) = match kind {
        KindSpec::Generic => {
            let canonical = canonical_json(&v);
            (format!("{name}({})", escape(&canonical)), Check::Text(canonical))
        }
        KindSpec::Shell { command, shell, .. } => {
            let line = only(command, "shell")?;
            let canonical = simple_command(line, *shell).ok_or(NoRule::NotSimple)?;
            (format!("{name}({canonical})"), Check::Command(canonical))
        }
        KindSpec::File { path, .. } => {
            let p = only(path, "file")?;
            if !plain_path(p) {
                return Err(NoRule::PathNotPlain);
            }
            (format!("{name}({p})"), Check::Path(p.to_owned()))
        }
        KindSpec::Fetch { url } => {
            let u = only(url, "fetch")?;
            let plain = (u.starts_with("http://") || u.starts_with("https://"))
                && !u.chars().any(|c| c.is_whitespace() || c.is_control());
            if !plain {
                return Err(NoRule::UrlNotPlain);
            }
            (format!("{name}({})", escape(u)), Check::Text(u.to_owned()))
        }
        KindSpec::Resource { .. } => return Err(NoRule::Kind("resource")),
    };
    check.holds(&rule, tool)?;
    Ok(rule)
}

/// What the written rule must match once the engine parses it.
enum Check {
    Text(String),
    Command(String),
    Path(String),
}

impl Check {
    /// Parses `rule` as the engine will, and checks it names `tool` and this exact subject.
    fn holds(&self, rule: &str, tool: &str) -> Result<(), NoRule> {
        let spec = RuleSpec::parse(rule).map_err(NoRule::Unchecked)?;
        let Subject::Tool(g) = &spec.subject else { return Err(NoRule::Unchecked("not a tool rule".into())) };
        let s = spec.specifier.as_ref().ok_or_else(|| NoRule::Unchecked("no specifier".into()))?;
        let ok = g.matches(tool)
            && match self {
                Check::Text(t) => s.text.matches(t),
                Check::Command(c) => {
                    let words: Vec<&str> = c.split(' ').collect();
                    s.command.matches(&words, c)
                }
                Check::Path(p) => s.path.matches(p),
            };
        ok.then_some(()).ok_or_else(|| NoRule::Unchecked(format!("{rule} does not match the call")))
    }
}

/// The canonical line of `line` when it is one simple command of plain words, run as written.
fn simple_command(line: &str, shell: crate::shell::Dialect) -> Option<String> {
    let a = crate::shell::analyze_in(line, shell);
    let [cmd] = a.commands.as_slice() else { return None };
    let plain = a.parse_error.is_none()
        && cmd.opaque.is_empty()
        && cmd.redirects.is_empty()
        && cmd.wrappers.is_empty()
        && cmd.assignments.is_empty()
        && !cmd.globs
        && !cmd.path_qualified
        && !cmd.program.is_empty()
        && std::iter::once(&cmd.program).chain(&cmd.args).all(|w| plain_word(w));
    plain.then(|| cmd.canonical())
}

/// A word made only of characters no shell or glob reads specially, not starting with `~`.
fn plain_word(w: &str) -> bool {
    !w.is_empty()
        && !w.starts_with('~')
        && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c))
}

/// An absolute path with no empty, `.` or `..` segment, of plain characters.
fn plain_path(p: &str) -> bool {
    p.len() > 1
        && p.starts_with('/')
        && p[1..].split('/').all(|seg| !seg.is_empty() && seg != "." && seg != "..")
        && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c))
}

/// Escapes the characters a text glob reads (`*`, `?`, `\`).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "always_tests.rs"]
mod tests;
