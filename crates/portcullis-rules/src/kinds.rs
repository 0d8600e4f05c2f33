//! Tool kinds: what config says a tool *is*, and where its meaningful argument lives.
//! The first `tools:` entry whose glob matches the qualified name decides.

use std::sync::Arc;

use serde_json::Value;

use portcullis_shell::secrets;

use super::allowlist::Allowlist;

use super::glob::{Flavour, Glob};

/// File access a file-kind tool performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// Reads the files a tool's glob names: Claude Code's `Glob` and `Grep`, whose path the
    /// hook makes the glob they expand (`/work/repo/**/*.rs`; a bare `**` for a whole tree).
    /// `*` matches hidden names too and `**` walks hidden directories, as ripgrep's do.
    Search,
}

impl Access {
    /// Whether the access reads (`Read` rules match it).
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::Search)
    }

    /// The secret reading `path` (absolute, as the jail resolved it) may reveal, by the one
    /// secret policy every file reader shares ([`portcullis_shell::secrets`]). `cwd` is the
    /// working directory when known (the jail's root): a tree strictly below it can be proven.
    /// Writes reveal nothing.
    pub fn secret(self, path: &str, cwd: Option<&str>) -> Option<secrets::Secret> {
        let globbing = match self {
            Access::Read => secrets::Globbing::Literal,
            Access::Search => secrets::Globbing::Tool,
            Access::Write => return None,
        };
        let place = portcullis_shell::place::Place::Abs(portcullis_shell::place::normalize_abs(path));
        let cx = secrets::Context { globbing, cwd, home: None };
        secrets::judge(&place, secrets::Reading::File, &cx).err()
    }
}

/// A configured kind, with JSON pointers into the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KindSpec {
    /// `allowlist`: executor mode, only listed plain invocations.
    Shell {
        command: String,
        allowlist: Option<Arc<Allowlist>>,
    },
    File {
        path: String,
        access: Access,
    },
    Fetch {
        url: String,
    },
    Generic,
}

impl KindSpec {
    pub fn name(&self) -> &'static str {
        match self {
            KindSpec::Shell { .. } => "shell",
            KindSpec::File { .. } => "file",
            KindSpec::Fetch { .. } => "fetch",
            KindSpec::Generic => "generic",
        }
    }
}

/// A call's meaningful argument, read by its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Shell {
        command: String,
        allowlist: Option<Arc<Allowlist>>,
    },
    File {
        path: String,
        access: Access,
    },
    Fetch {
        url: String,
    },
    /// Any other tool: its arguments as canonical JSON (sorted keys), for `Tool(glob)` rules.
    Generic {
        args: String,
    },
    /// The kind's argument is missing or not a string: the call cannot be judged.
    Malformed {
        kind: &'static str,
        pointer: String,
    },
}

/// Compiled `tools:` entries, then Claude Code's built-in tools ([`CLAUDE_CODE`]).
#[derive(Debug, Clone)]
pub struct ToolKinds {
    entries: Vec<(Glob, KindSpec)>,
}

impl Default for ToolKinds {
    fn default() -> Self {
        ToolKinds::new([])
    }
}

/// Claude Code's built-in tools and where their meaningful argument lives, as `portcullis hook`
/// hands them to the gate (paths already absolute; `Glob`/`Grep` given the glob they expand:
/// their `path`, default the working directory, joined with `Glob`'s `pattern` or `Grep`'s
/// `glob`, or `**` for a whole tree). Their names are never qualified (`mcp__…`, `http__…`), so they cannot
/// collide with a proxied tool; a configured `tools:` entry still wins.
pub const CLAUDE_CODE: &[(&str, &str, &str, Option<Access>)] = &[
    ("Bash", "shell", "/command", None),
    ("Read", "file", "/file_path", Some(Access::Read)),
    ("Glob", "file", "/path", Some(Access::Search)),
    ("Grep", "file", "/path", Some(Access::Search)),
    ("LS", "file", "/path", Some(Access::Read)),
    ("NotebookRead", "file", "/notebook_path", Some(Access::Read)),
    ("Edit", "file", "/file_path", Some(Access::Write)),
    ("MultiEdit", "file", "/file_path", Some(Access::Write)),
    ("Write", "file", "/file_path", Some(Access::Write)),
    ("NotebookEdit", "file", "/notebook_path", Some(Access::Write)),
    ("WebFetch", "fetch", "/url", None),
];

fn claude_code() -> impl Iterator<Item = (Glob, KindSpec)> {
    CLAUDE_CODE.iter().map(|&(name, kind, pointer, access)| {
        let spec = match (kind, access) {
            ("shell", _) => KindSpec::Shell { command: pointer.into(), allowlist: None },
            ("file", Some(access)) => KindSpec::File { path: pointer.into(), access },
            _ => KindSpec::Fetch { url: pointer.into() },
        };
        (Glob::new(name, Flavour::Text), spec)
    })
}

impl ToolKinds {
    pub fn new(entries: impl IntoIterator<Item = (String, KindSpec)>) -> ToolKinds {
        let configured = entries.into_iter().map(|(m, k)| (Glob::new(&m, Flavour::Text), k));
        ToolKinds { entries: configured.chain(claude_code()).collect() }
    }

    pub fn kind_of(&self, qualified: &str) -> &KindSpec {
        self.entries.iter().find(|(g, _)| g.matches(qualified)).map(|(_, k)| k).unwrap_or(&KindSpec::Generic)
    }

    /// Whether some tool has `kind` (Claude Code's built-ins give shell, file and fetch).
    pub fn has(&self, kind: &str) -> bool {
        self.entries.iter().any(|(_, k)| k.name() == kind)
    }

    /// Reads the call's subject from its arguments.
    pub fn classify(&self, qualified: &str, args: &Value) -> Subject {
        let text = |pointer: &str| args.pointer(pointer).and_then(Value::as_str).map(str::to_owned);
        match self.kind_of(qualified) {
            KindSpec::Shell { command, allowlist } => match text(command) {
                Some(c) => Subject::Shell { command: c, allowlist: allowlist.clone() },
                None => Subject::Malformed { kind: "shell", pointer: command.clone() },
            },
            KindSpec::File { path, access } => match text(path) {
                Some(p) => Subject::File { path: p, access: *access },
                None => Subject::Malformed { kind: "file", pointer: path.clone() },
            },
            KindSpec::Fetch { url } => match text(url) {
                Some(url) => Subject::Fetch { url },
                None => Subject::Malformed { kind: "fetch", pointer: url.clone() },
            },
            KindSpec::Generic => Subject::Generic { args: canonical_json(args) },
        }
    }
}

/// JSON with object keys sorted at every level, so a rule cannot be dodged by reordering keys
/// (serde_json may keep insertion order, depending on features other crates enable).
pub fn canonical_json(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_matching_entry_decides_and_pointers_read_arguments() {
        let kinds = ToolKinds::new([
            ("mcp__sh__run".to_owned(), KindSpec::Shell { command: "/command".into(), allowlist: None }),
            ("mcp__fs__read_*".to_owned(), KindSpec::File { path: "/path".into(), access: Access::Read }),
            ("mcp__fs__*".to_owned(), KindSpec::File { path: "/path".into(), access: Access::Write }),
        ]);
        assert_eq!(
            kinds.classify("mcp__sh__run", &json!({"command":"ls"})),
            Subject::Shell { command: "ls".into(), allowlist: None }
        );
        assert_eq!(
            kinds.classify("mcp__fs__read_file", &json!({"path":"/a"})),
            Subject::File { path: "/a".into(), access: Access::Read }
        );
        assert_eq!(
            kinds.classify("mcp__fs__write_file", &json!({"path":"/a"})),
            Subject::File { path: "/a".into(), access: Access::Write }
        );
        assert!(matches!(
            kinds.classify("mcp__sh__run", &json!({"command": ["rm"]})),
            Subject::Malformed { .. }
        ));
        assert_eq!(
            kinds.classify("mcp__x__y", &json!({"b":1,"a":2})),
            Subject::Generic { args: r#"{"a":2,"b":1}"#.into() }
        );
    }

    #[test]
    fn claude_codes_built_in_tools_have_kinds_and_a_configured_entry_wins() {
        let kinds = ToolKinds::default();
        assert_eq!(
            kinds.classify("Bash", &json!({"command":"ls"})),
            Subject::Shell { command: "ls".into(), allowlist: None }
        );
        assert_eq!(
            kinds.classify("NotebookEdit", &json!({"notebook_path":"/a.ipynb"})),
            Subject::File { path: "/a.ipynb".into(), access: Access::Write }
        );
        assert_eq!(
            kinds.classify("WebFetch", &json!({"url":"https://x"})),
            Subject::Fetch { url: "https://x".into() }
        );
        assert_eq!(kinds.kind_of("WebSearch"), &KindSpec::Generic);
        assert_eq!(kinds.kind_of("Bashful"), &KindSpec::Generic, "exact names only");
        let mine = ToolKinds::new([("Bash".to_owned(), KindSpec::Generic)]);
        assert_eq!(mine.kind_of("Bash"), &KindSpec::Generic);
    }
}
