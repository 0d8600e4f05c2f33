//! Tool kinds: what config says a tool *is*, and where its meaningful argument lives.
//! The first `tools:` entry whose glob matches the qualified name decides.

use std::sync::Arc;

use portcullis_shell::Dialect;
use serde_json::Value;

use super::allowlist::Allowlist;

use super::glob::{Flavour, Glob};

pub use crate::subject::{Access, Subject};

/// A configured kind, with JSON pointers into the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KindSpec {
    /// `allowlist`: executor mode, only listed plain invocations. `shell`: the shell that runs
    /// the command (config `shell:`, default bash), unless `shell_pointer` names an argument
    /// that says (Claude Code's `Bash`, see [`HOOK_SHELL_POINTER`]).
    Shell {
        command: String,
        allowlist: Option<Arc<Allowlist>>,
        shell: Dialect,
        shell_pointer: Option<String>,
        /// An argument naming the directory the command runs in (a shell tool's own `cwd`, or
        /// Claude Code's `Bash` through [`HOOK_CWD_POINTER`]): relative paths are placed there.
        cwd_pointer: Option<String>,
    },
    File {
        path: String,
        access: Access,
    },
    Fetch {
        url: String,
    },
    /// An MCP request naming a resource by its URI (`resources/read`, `resources/subscribe`),
    /// read by [`crate::resource::subject`]: built in, never configured.
    Resource {
        uri: String,
    },
    Generic,
}

/// Where `portcullis hook` writes the dialect of the shell that runs Claude Code's `Bash`
/// (from `$SHELL` in the hook's process, overwriting anything the tool input held there).
pub const HOOK_SHELL_POINTER: &str = "/portcullis_shell";

/// Where `portcullis hook` writes the session's working directory (the envelope's `cwd`) for
/// Claude Code's `Bash`, overwriting anything the tool input held there.
pub const HOOK_CWD_POINTER: &str = "/portcullis_cwd";

/// The working directory a caller writes at a shell kind's cwd pointer when it cannot know where
/// the command runs (Codex's shell payloads carry no `workdir`): not absolute, so the line starts
/// nowhere known and every relative word may be anywhere (any non-absolute value is read so).
pub const CWD_UNKNOWN: &str = "(unknown)";

impl KindSpec {
    /// A shell kind run by bash, reading its command at `command`.
    pub fn bash(command: &str) -> KindSpec {
        KindSpec::Shell {
            command: command.into(),
            allowlist: None,
            shell: Dialect::Bash,
            shell_pointer: None,
            cwd_pointer: None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            KindSpec::Shell { .. } => "shell",
            KindSpec::File { .. } => "file",
            KindSpec::Fetch { .. } => "fetch",
            KindSpec::Resource { .. } => "resource",
            KindSpec::Generic => "generic",
        }
    }
}

/// The MCP methods that name a resource, decided as the pseudo-tool `mcp__{upstream}__{method}`
/// with the resource's URI at `/uri` of the request's params. They come before any configured
/// `tools:` entry: what they touch is fixed by the protocol, not by a glob that happens to match.
pub const RESOURCE_METHODS: &[&str] = &["resources/read", "resources/subscribe"];

/// The resource methods ([`RESOURCE_METHODS`]), then compiled `tools:` entries, then Claude
/// Code's built-in tools ([`CLAUDE_CODE`]).
#[derive(Debug, Clone)]
pub struct ToolKinds {
    entries: Vec<(Glob, KindSpec)>,
    /// The kind of every resource method ([`RESOURCE_METHODS`]).
    resource: KindSpec,
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
            ("shell", _) => KindSpec::Shell {
                command: pointer.into(),
                allowlist: None,
                shell: Dialect::Bash,
                shell_pointer: Some(HOOK_SHELL_POINTER.into()),
                cwd_pointer: Some(HOOK_CWD_POINTER.into()),
            },
            ("file", Some(access)) => KindSpec::File { path: pointer.into(), access },
            _ => KindSpec::Fetch { url: pointer.into() },
        };
        (Glob::new(name, Flavour::Text), spec)
    })
}

impl ToolKinds {
    pub fn new(entries: impl IntoIterator<Item = (String, KindSpec)>) -> ToolKinds {
        let configured = entries.into_iter().map(|(m, k)| (Glob::new(&m, Flavour::Text), k));
        ToolKinds {
            entries: configured.chain(claude_code()).collect(),
            resource: KindSpec::Resource { uri: "/uri".into() },
        }
    }

    /// Whether `qualified` is `mcp__{upstream}__{method}` for a resource method (a suffix test:
    /// no glob is matched on a tool call's way).
    pub fn is_resource_method(qualified: &str) -> bool {
        qualified.starts_with("mcp__")
            && RESOURCE_METHODS.iter().any(|m| {
                qualified
                    .strip_suffix(m)
                    .is_some_and(|head| head.len() > "mcp____".len() && head.ends_with("__"))
            })
    }

    pub fn kind_of(&self, qualified: &str) -> &KindSpec {
        if Self::is_resource_method(qualified) {
            return &self.resource;
        }
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
            KindSpec::Shell { command, allowlist, shell, shell_pointer, cwd_pointer } => {
                match text(command) {
                    Some(c) => {
                        // A dialect named at the pointer that is not one we know is judged as the
                        // configured default's, never skipped.
                        let named = shell_pointer.as_deref().and_then(text).and_then(|d| d.parse().ok());
                        Subject::Shell {
                            command: c,
                            allowlist: allowlist.clone(),
                            shell: named.unwrap_or(*shell),
                            cwd: cwd_pointer.as_deref().and_then(text),
                        }
                    }
                    None => Subject::Malformed { kind: "shell", pointer: command.clone() },
                }
            }
            KindSpec::File { path, access } => match text(path) {
                Some(p) => Subject::File { path: p, access: *access },
                None => Subject::Malformed { kind: "file", pointer: path.clone() },
            },
            KindSpec::Fetch { url } => match text(url) {
                Some(url) => Subject::Fetch { url },
                None => Subject::Malformed { kind: "fetch", pointer: url.clone() },
            },
            KindSpec::Resource { uri } => match text(uri) {
                Some(uri) => crate::resource::subject(&uri),
                None => Subject::Malformed { kind: "resource", pointer: uri.clone() },
            },
            KindSpec::Generic => Subject::Generic { args: canonical_json(args) },
        }
    }
}

/// JSON with object keys sorted at every level, so a rule cannot be dodged by reordering keys
/// (serde_json may keep insertion order, depending on features other crates enable).
/// Written straight from the borrowed value (no sorted copy of the tree is built): every call of
/// a generic tool spells its arguments so.
pub fn canonical_json(v: &Value) -> String {
    fn write(v: &Value, out: &mut Vec<u8>) {
        match v {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                out.push(b'{');
                for (i, (k, v)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    // Writing a string or a scalar into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut *out, k);
                    out.push(b':');
                    write(v, out);
                }
                out.push(b'}');
            }
            Value::Array(a) => {
                out.push(b'[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(v, out);
                }
                out.push(b']');
            }
            scalar => {
                let _ = serde_json::to_writer(&mut *out, scalar);
            }
        }
    }
    let mut out = Vec::with_capacity(64);
    write(v, &mut out);
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The spelling before it was written without a copy: a sorted clone, serialised.
    fn canonical_by_copy(v: &Value) -> String {
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

    fn text() -> impl Strategy<Value = String> {
        let c = prop_oneof![Just('"'), Just('\\'), Just('\u{1}'), Just('\u{2028}'), Just('a'), any::<char>()];
        proptest::collection::vec(c, 0..8).prop_map(String::from_iter)
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((text(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn canonical_json_is_spelled_exactly_as_the_sorted_copy_was(v in json_value()) {
            prop_assert_eq!(canonical_json(&v), canonical_by_copy(&v));
        }
    }

    #[test]
    fn first_matching_entry_decides_and_pointers_read_arguments() {
        let kinds = ToolKinds::new([
            ("mcp__sh__run".to_owned(), KindSpec::bash("/command")),
            (
                "mcp__zsh__run".to_owned(),
                KindSpec::Shell {
                    command: "/command".into(),
                    allowlist: None,
                    shell: Dialect::Zsh,
                    shell_pointer: None,
                    cwd_pointer: None,
                },
            ),
            ("mcp__fs__read_*".to_owned(), KindSpec::File { path: "/path".into(), access: Access::Read }),
            ("mcp__fs__*".to_owned(), KindSpec::File { path: "/path".into(), access: Access::Write }),
        ]);
        assert_eq!(
            kinds.classify("mcp__sh__run", &json!({"command":"ls"})),
            Subject::Shell { command: "ls".into(), allowlist: None, shell: Dialect::Bash, cwd: None }
        );
        assert_eq!(
            kinds.classify("mcp__zsh__run", &json!({"command":"ls", "portcullis_shell": "bash"})),
            Subject::Shell { command: "ls".into(), allowlist: None, shell: Dialect::Zsh, cwd: None },
            "only a kind with a shell pointer reads the shell from its arguments"
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
    fn resource_methods_have_their_kind_before_any_configured_entry() {
        let kinds = ToolKinds::new([("mcp__fs__*".to_owned(), KindSpec::Generic)]);
        for name in ["mcp__fs__resources/read", "mcp__a__b__resources/subscribe"] {
            assert!(matches!(kinds.kind_of(name), KindSpec::Resource { .. }), "{name}");
        }
        for name in
            ["mcp__fs__resources/list", "mcp__fs__xresources/read", "mcp____resources/read", "resources/read"]
        {
            assert!(!matches!(kinds.kind_of(name), KindSpec::Resource { .. }), "{name}");
        }
        assert_eq!(
            kinds.classify("mcp__fs__resources/read", &json!({"uri":"file:///etc/passwd"})),
            Subject::File { path: "/etc/passwd".into(), access: Access::Read }
        );
        assert!(matches!(
            kinds.classify("mcp__fs__resources/read", &json!({"uri": 1})),
            Subject::Malformed { kind: "resource", .. }
        ));
    }

    #[test]
    fn claude_codes_built_in_tools_have_kinds_and_a_configured_entry_wins() {
        let kinds = ToolKinds::default();
        assert_eq!(
            kinds.classify("Bash", &json!({"command":"ls"})),
            Subject::Shell { command: "ls".into(), allowlist: None, shell: Dialect::Bash, cwd: None }
        );
        assert_eq!(
            kinds.classify("Bash", &json!({"command":"ls", "portcullis_shell": "zsh"})),
            Subject::Shell { command: "ls".into(), allowlist: None, shell: Dialect::Zsh, cwd: None }
        );
        assert_eq!(
            kinds.classify("Bash", &json!({"command":"ls", "portcullis_shell": "fish"})),
            Subject::Shell { command: "ls".into(), allowlist: None, shell: Dialect::Bash, cwd: None }
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
