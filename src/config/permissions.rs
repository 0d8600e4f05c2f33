//! Compiles the Layer 1 sections — `posture`, `tools`, `permissions` (rules and
//! `category:action:scope` grants), `jail`, upstream `profile`s — into the rule engine,
//! verifying every rule's examples and warning about rules that can never match.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::Problems;
use std::sync::Arc;

use crate::rules::allowlist::{Allowed, Allowlist};
use crate::rules::grants::{is_grant, Grant};
use crate::rules::jail::{Jail, Relative, Resolve, DEFAULT_DENY_NAMES};
use crate::rules::kinds::{Access, KindSpec, ToolKinds};
use crate::rules::spec::{RuleSpec, Subject};
use crate::rules::{Effect, Engine, EngineParts, Posture, Profile, Rule, Scope};
use crate::shell::Dialect;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTool {
    #[serde(rename = "match")]
    pub pattern: String,
    pub kind: String,
    pub command: Option<String>,
    pub path: Option<String>,
    pub access: Option<String>,
    pub url: Option<String>,
    /// Executor mode for shell tools: program -> what it may be given.
    pub allowlist: Option<std::collections::BTreeMap<String, RawAllowed>>,
    /// The shell that runs a shell tool's command: bash (default), zsh, dash, sh, ksh.
    pub shell: Option<String>,
    /// A shell tool's argument naming the directory its command runs in (a JSON pointer):
    /// relative paths in the command are placed there.
    pub cwd: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAllowed {
    #[serde(default)]
    pub options: String,
    #[serde(default)]
    pub min_paths: usize,
    #[serde(default)]
    pub literal: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPermissions {
    #[serde(default)]
    pub allow: Vec<Value>,
    #[serde(default)]
    pub ask: Vec<Value>,
    #[serde(default)]
    pub deny: Vec<Value>,
    /// `permissions.subagent` (the main config's only: [`super::subagent`]).
    #[serde(default)]
    pub subagent: Option<super::subagent::raw::RawSubagent>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExampleRule {
    rule: String,
    #[serde(default, rename = "match")]
    matches: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJail {
    pub root: Option<String>,
    pub deny_names: Option<Vec<String>>,
    pub resolve: Option<String>,
    pub relative: Option<String>,
}

/// A permissions-only file (`--permission-config`, the managed file).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPermissionFile {
    #[serde(default)]
    pub permissions: RawPermissions,
}

/// A rule with its examples, kept until every rule is compiled.
pub struct Example {
    rule: Rule,
    path: String,
    matches: Vec<String>,
    not_match: Vec<String>,
}

/// The Layer 1 sections of every scope.
#[derive(Default)]
pub struct Sections {
    pub posture: Option<String>,
    pub tools: Vec<Value>,
    pub jail: RawJail,
    pub profiles: Vec<(String, String)>,
    pub permissions: Vec<(Scope, String, RawPermissions)>,
}

pub fn compile(s: Sections, p: &mut Problems) -> Engine {
    let posture = match s.posture.as_deref() {
        None => Posture::Strict,
        Some(v) => Posture::parse(v).unwrap_or_else(|| {
            p.add("posture", format!("{v:?} is not a posture (strict, trusted, auto, yolo)"));
            Posture::Strict
        }),
    };
    let kinds = tools(s.tools, p);
    let jail = jail(s.jail, p);
    let mut profiles = HashMap::new();
    for (upstream, name) in s.profiles {
        match Profile::parse(&name) {
            Some(pr) => {
                profiles.insert(upstream, pr);
            }
            None => p.add(
                format!("upstreams.{upstream}.profile"),
                format!("{name:?} is not a profile (readonly, standard, privileged)"),
            ),
        }
    }
    let root = jail.as_ref().and_then(|j| j.root()).map(|r| r.display().to_string());
    let (rules, examples) = rules(s.permissions, &kinds, root.as_deref(), p);
    let engine = Engine::new(EngineParts { rules, kinds, jail, posture, profiles, agent_profile: None });
    verify_examples(&engine, examples, p);
    engine
}

/// The rules of permission layers, each with its scope and the prefix its problems are reported
/// under (`agents.dev.` makes `agents.dev.permissions.deny[0]`); examples are verified once the
/// engine they run in exists ([`verify_examples`]).
pub fn rules(
    layers: Vec<(Scope, String, RawPermissions)>,
    kinds: &ToolKinds,
    root: Option<&str>,
    p: &mut Problems,
) -> (Vec<Rule>, Vec<Example>) {
    let mut rules = Vec::new();
    let mut examples = Vec::new();
    for (scope, source, perms) in layers {
        if perms.subagent.is_some() {
            p.add(
                format!("{source}permissions.subagent"),
                "only the main config's permissions hold subagent rules",
            );
        }
        for (effect, entries) in
            [(Effect::Allow, perms.allow), (Effect::Ask, perms.ask), (Effect::Deny, perms.deny)]
        {
            for (i, v) in entries.into_iter().enumerate() {
                let path = format!("{source}permissions.{}[{i}]", effect.as_str());
                let (text, ex) = match v {
                    Value::String(t) => (t, None),
                    obj @ Value::Object(_) => match serde_json::from_value::<RawExampleRule>(obj) {
                        Ok(r) => (r.rule.clone(), Some(r)),
                        Err(e) => {
                            p.add(&path, e.to_string());
                            continue;
                        }
                    },
                    other => {
                        p.add(
                            &path,
                            format!("a rule is a string or {{rule, match, not_match}}, not {other}"),
                        );
                        continue;
                    }
                };
                // A `category:action:scope` grant compiles to the rule it stands for; a `!`
                // exclusion under `allow:` becomes a deny (rules::grants).
                let parsed = match is_grant(&text) {
                    true => Grant::compile(&text, effect, root).map_err(|e| e.to_string()),
                    false => RuleSpec::parse_under(&text, root).map(|s| (s, effect)),
                };
                let (spec, effect) = match parsed {
                    Ok(s) => s,
                    Err(e) => {
                        p.add(&path, e);
                        continue;
                    }
                };
                warn_unmatchable(&spec, kinds, &path, p);
                let rule = Rule { spec, effect, scope };
                if let Some(ex) = ex {
                    examples.push(Example {
                        rule: rule.clone(),
                        path: path.clone(),
                        matches: ex.matches,
                        not_match: ex.not_match,
                    });
                }
                rules.push(rule);
            }
        }
    }
    (rules, examples)
}

/// Checks every rule against the examples written for it, in `engine`.
pub fn verify_examples(engine: &Engine, examples: Vec<Example>, p: &mut Problems) {
    for ex in examples {
        for m in &ex.matches {
            if !engine.rule_matches_example(&ex.rule, m) {
                p.add(&ex.path, format!("{} does not match its example {m:?}", ex.rule.spec.source));
            }
        }
        for m in &ex.not_match {
            if engine.rule_matches_example(&ex.rule, m) {
                p.add(&ex.path, format!("{} matches {m:?}, listed under not_match", ex.rule.spec.source));
            }
        }
    }
}

fn warn_unmatchable(spec: &RuleSpec, kinds: &ToolKinds, path: &str, p: &mut Problems) {
    let needs = match spec.subject {
        Subject::Shell => Some("shell"),
        Subject::Read | Subject::Write | Subject::File => Some("file"),
        Subject::Fetch => Some("fetch"),
        Subject::Tool(_) => None,
    };
    if let Some(kind) = needs {
        if !kinds.has(kind) {
            p.warn(path, format!("{} can never match: no `tools:` entry has kind {kind}", spec.source));
        }
    }
}

fn tools(raw: Vec<Value>, p: &mut Problems) -> ToolKinds {
    let mut out = Vec::new();
    for (i, v) in raw.into_iter().enumerate() {
        let path = format!("tools[{i}]");
        let t: RawTool = match serde_json::from_value(v) {
            Ok(t) => t,
            Err(e) => {
                p.add(&path, e.to_string());
                continue;
            }
        };
        let pointer = |p: &mut Problems, name: &str, v: Option<String>| match v {
            Some(ptr) if ptr.starts_with('/') => Some(ptr),
            Some(ptr) => {
                p.add(
                    format!("{path}.{name}"),
                    format!("{ptr:?} is not a JSON pointer (it starts with '/': /{ptr})"),
                );
                None
            }
            None => {
                p.add(&path, format!("kind {} needs `{name}:` (a JSON pointer into the arguments)", t.kind));
                None
            }
        };
        if t.shell.is_some() && t.kind != "shell" {
            p.add(format!("{path}.shell"), "only a tool of kind shell has a shell");
        }
        if t.cwd.is_some() && t.kind != "shell" {
            p.add(format!("{path}.cwd"), "only a tool of kind shell has a working directory argument");
        }
        let kind = match t.kind.as_str() {
            "shell" => {
                let allowlist = t.allowlist.map(|programs| {
                    let programs = programs
                        .into_iter()
                        .map(|(name, a)| {
                            if name.contains('/') || name.is_empty() {
                                p.add(
                                    format!("{path}.allowlist.{name}"),
                                    "programs are exact names, never paths",
                                );
                            }
                            if a.literal && (a.min_paths > 0 || !a.options.is_empty()) {
                                p.add(
                                    format!("{path}.allowlist.{name}"),
                                    "a literal program takes no options or paths",
                                );
                            }
                            (name, Allowed { options: a.options, min_paths: a.min_paths, literal: a.literal })
                        })
                        .collect();
                    Arc::new(Allowlist { programs })
                });
                let shell = match t.shell.as_deref().map(str::parse::<Dialect>) {
                    None => Some(Dialect::Bash),
                    Some(Ok(d)) => Some(d),
                    Some(Err(e)) => {
                        p.add(format!("{path}.shell"), e.to_string());
                        None
                    }
                };
                let command = pointer(p, "command", t.command.clone());
                let cwd_pointer = t.cwd.clone().and_then(|c| pointer(p, "cwd", Some(c)));
                match (command, shell) {
                    (Some(command), Some(shell)) => {
                        Some(KindSpec::Shell { command, allowlist, shell, shell_pointer: None, cwd_pointer })
                    }
                    _ => None,
                }
            }
            "file" => {
                let access = match t.access.as_deref() {
                    Some("read") => Some(Access::Read),
                    Some("write") => Some(Access::Write),
                    other => {
                        p.add(format!("{path}.access"), format!("{other:?}: access is read or write"));
                        None
                    }
                };
                match (pointer(p, "path", t.path.clone()), access) {
                    (Some(path), Some(access)) => Some(KindSpec::File { path, access }),
                    _ => None,
                }
            }
            "fetch" => pointer(p, "url", t.url.clone()).map(|url| KindSpec::Fetch { url }),
            "generic" => Some(KindSpec::Generic),
            other => {
                p.add(
                    format!("{path}.kind"),
                    format!("{other:?} is not a kind (shell, file, fetch, generic)"),
                );
                None
            }
        };
        if let Some(k) = kind {
            out.push((t.pattern, k));
        }
    }
    ToolKinds::new(out)
}

/// `jail.relative`: where a tool server takes a relative path from (`refuse` when absent).
pub fn relative(raw: Option<&str>, p: &mut Problems) -> Relative {
    match raw {
        None | Some("refuse") => Relative::Refused,
        Some("root") => Relative::Root,
        Some(other) => {
            p.add("jail.relative", format!("{other:?}: relative is root or refuse"));
            Relative::Refused
        }
    }
}

fn jail(raw: RawJail, p: &mut Problems) -> Option<Jail> {
    let resolve = match raw.resolve.as_deref() {
        None | Some("filesystem") => Resolve::Filesystem,
        Some("lexical") => Resolve::Lexical,
        Some(other) => {
            p.add("jail.resolve", format!("{other:?}: resolve is filesystem or lexical"));
            Resolve::Filesystem
        }
    };
    let relative = relative(raw.relative.as_deref(), p);
    let names = raw.deny_names.unwrap_or_else(|| DEFAULT_DENY_NAMES.iter().map(|s| s.to_string()).collect());
    if let Some(root) = &raw.root {
        if !Path::new(root).is_absolute() {
            p.add("jail.root", format!("{root:?} must be an absolute path"));
            return None;
        }
    }
    match Jail::new(raw.root.as_deref().map(Path::new), &names, resolve) {
        Ok(j) => Some(j.with_relative(relative)),
        Err(e) => {
            p.add("jail.root", format!("{}: {e}", raw.root.unwrap_or_default()));
            None
        }
    }
}
