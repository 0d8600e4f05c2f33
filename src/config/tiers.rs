//! The user and workspace tiers: `$XDG_CONFIG_HOME/portcullis/settings.yaml` (scope `user`),
//! `<workspace>/.portcullis/settings.yaml` (scope `project`, shared with the repository) and
//! `settings.local.yaml` (scope `project-local`, personal), laid as permission layers under the
//! operator's (docs/config.md "Scope tiers and workspace trust").
//!
//! A workspace is attacker-writable (a cloned repository), so a project file never widens what
//! the operator set: its deny and ask rules always apply, its **allow** rules only in a workspace
//! the user file's `trusted_workspaces` lists ([`super::workspace`]); and every key but
//! `permissions:` is ignored with a note (`guardrails:`, `admin:`, `authority:`, … are the
//! operator's). A file that exists but cannot be read or parsed is an error — its denies cannot
//! be applied, so nothing is decided as if it were absent; the caller fails closed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::permissions::RawPermissionFile;
pub use super::tiers_read::Stamp;
use super::tiers_read::{self, Links};
use super::workspace::{is_plain_absolute, Trust, Untrusted, Workspace};
use super::Layer;
use crate::rules::grants::is_grant;
use crate::rules::kinds::ToolKinds;
use crate::rules::Rule;
use crate::rules::Scope;

/// Writes that would let an agent change its own tiers (grant itself allows in a trusted
/// workspace, or trust one) ask a human: built in whenever the tiers are read, in the `config`
/// scope so that no session waiver answers them (as the jail's escape asks).
const SELF_EDIT: &[&str] = &["Write(**/.portcullis/settings*.yaml)", "Write(**/portcullis/settings*.yaml)"];

/// Where a call's tier files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The user file (none when neither `$XDG_CONFIG_HOME` nor `$HOME` is usable).
    pub user: Option<PathBuf>,
    pub workspace: Option<Workspace>,
}

/// The tiers of one call: permission layers to lay under the operator's, and notes to print.
#[derive(Debug, Clone)]
pub struct Tiers {
    pub layers: Vec<Layer>,
    pub trust: Trust,
    pub notes: Vec<String>,
}

impl Files {
    /// The files for `workspace` (already resolved), with the user file from the environment.
    pub fn new(workspace: Option<Workspace>) -> Files {
        Files { user: user_file(), workspace }
    }

    /// Every file, its scope and whether it may be a symlink.
    fn each(&self) -> Vec<(Scope, PathBuf, Links)> {
        let mut out: Vec<_> = self.user.iter().map(|u| (Scope::User, u.clone(), Links::Follow)).collect();
        if let Some(w) = &self.workspace {
            let dir = w.root().join(".portcullis");
            out.push((Scope::SharedProject, dir.join("settings.yaml"), Links::Refuse));
            out.push((Scope::LocalProject, dir.join("settings.local.yaml"), Links::Refuse));
        }
        out
    }

    /// What the files look like now: a cache compares this before reusing what it read.
    pub fn stamps(&self) -> Vec<Option<Stamp>> {
        self.each().iter().map(|(_, p, links)| Stamp::of(p, *links)).collect()
    }

    /// Reads and assembles the tiers; `Err` names the file that cannot be read or parsed.
    pub fn load(&self) -> Result<Tiers, String> {
        let mut notes = Vec::new();
        let mut found = Vec::new();
        let mut trusted_list = None;
        for (scope, path, links) in self.each() {
            let Some(text) = tiers_read::read(&path, links).map_err(|e| e.to_string())? else { continue };
            let name = path.display().to_string();
            let doc: BTreeMap<String, Value> = match serde_saphyr::from_str_with_options(&text, yaml_limits())
            {
                Ok(Some(d)) => d,
                Ok(None) => BTreeMap::new(),
                // Not the parser's message: it quotes the file, and the reason reaches the agent.
                Err(e) => {
                    let at = e.location().map(|l| format!(" (line {})", l.line())).unwrap_or_default();
                    return Err(format!("{name}: not a YAML mapping of settings within its limits{at}"));
                }
            };
            let (perms, listed) = sections(scope, &name, doc, &mut notes)?;
            if scope == Scope::User {
                trusted_list = Some(listed);
            }
            found.push((scope, name, perms));
        }
        let trust = match (&self.workspace, trusted_list) {
            (None, _) | (_, None) => Trust::Untrusted(Untrusted::NotListed),
            (Some(_), Some(Err(why))) => {
                notes.push(format!("{why}: no workspace is trusted"));
                Trust::Untrusted(Untrusted::Corrupt(why))
            }
            (Some(w), Some(Ok(list))) => w.trust(&list, super::home::home().as_deref(), &mut notes),
        };
        let mut layers = vec![Layer {
            scope: Scope::Config,
            name: "built-in tier protection".into(),
            text: json!({ "permissions": { "ask": SELF_EDIT } }).to_string(),
        }];
        for (scope, name, mut perms) in found {
            if scope.is_project() && trust != Trust::Trusted {
                let dropped = drop_allows(&mut perms);
                if dropped > 0 {
                    let ws =
                        self.workspace.as_ref().map(|w| w.root().display().to_string()).unwrap_or_default();
                    notes.push(format!(
                        "{name}: {dropped} allow rule(s) ignored: workspace {ws} is not trusted (trusted_workspaces in the user file)"
                    ));
                }
            }
            layers.push(Layer { scope, name, text: json!({ "permissions": perms }).to_string() });
        }
        Ok(Tiers { layers, trust, notes })
    }
}

impl Tiers {
    /// The tiers' rules, compiled for an engine with `kinds` and jail `root` (the hook endpoint
    /// lays them on a running guard's engines); `Err` lists every problem.
    pub fn rules(&self, kinds: &ToolKinds, root: Option<&Path>) -> Result<Vec<Rule>, String> {
        let mut p = super::Problems::default();
        let mut layers = Vec::new();
        for layer in &self.layers {
            match serde_json::from_str::<RawPermissionFile>(&layer.text) {
                Ok(f) => layers.push((layer.scope, format!("{}: ", layer.name), f.permissions)),
                Err(e) => p.add(&layer.name, e.to_string()),
            }
        }
        let root = root.map(|r| r.display().to_string());
        let (rules, _examples) = super::permissions::rules(layers, kinds, root.as_deref(), &mut p);
        match p.problems.is_empty() {
            true => Ok(rules),
            false => Err(super::ConfigError { source_name: "workspace tiers".into(), problems: p.problems }
                .to_string()),
        }
    }
}

/// A tier file is a few rules: an attacker's alias bomb or nesting storm is refused long before
/// the parser's general-purpose budget (250,000 nodes) would stop it, and a duplicate key (two
/// `permissions:`, one hiding the other) is an error.
fn yaml_limits() -> serde_saphyr::Options {
    let budget = serde_saphyr::Budget {
        max_events: 40_000,
        max_nodes: 20_000,
        max_aliases: 1_000,
        max_anchors: 1_000,
        max_depth: 32,
        max_documents: 1,
        ..serde_saphyr::Budget::default()
    };
    let alias_limits = serde_saphyr::options::AliasLimits {
        max_total_replayed_events: 20_000,
        ..serde_saphyr::options::AliasLimits::default()
    };
    serde_saphyr::Options {
        budget: Some(budget),
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        alias_limits,
        ..serde_saphyr::Options::default()
    }
}

/// A file's `permissions:` and (the user file's) `trusted_workspaces:`; every other key is noted
/// and ignored. `Err` when `permissions:` is not a mapping.
fn sections(
    scope: Scope,
    name: &str,
    doc: BTreeMap<String, Value>,
    notes: &mut Vec<String>,
) -> Result<(Value, Result<Vec<String>, String>), String> {
    let mut perms = json!({});
    let mut listed = Ok(Vec::new());
    for (key, v) in doc {
        match (key.as_str(), scope) {
            ("permissions", _) => match v {
                Value::Null => {}
                Value::Object(_) => perms = v,
                _ => return Err(format!("{name}: permissions: must be a mapping of allow/ask/deny")),
            },
            ("trusted_workspaces", Scope::User) => {
                listed = match serde_json::from_value::<Option<Vec<String>>>(v) {
                    Ok(l) => Ok(l.unwrap_or_default()),
                    Err(e) => Err(format!("{name}: trusted_workspaces is not a list of paths ({e})")),
                }
            }
            ("trusted_workspaces", _) => notes
                .push(format!("{name}: trusted_workspaces ignored: only the user file trusts a workspace")),
            (k, _) if super::TOP_KEYS.contains(&k) || OPERATOR_ONLY.contains(&k) => {
                notes.push(format!("{name}: {k} ignored: the operator's config only"))
            }
            (k, _) => {
                notes.push(format!("{name}: unknown key {k:?} ignored (a tier file holds permissions:)"))
            }
        }
    }
    Ok((perms, listed))
}

/// Keys of the operator's tier that are not top-level config keys there.
const OPERATOR_ONLY: &[&str] = &["authority", "managed"];

/// Removes every rule under `allow:` that could allow; keeps `!` exclusions (they compile to
/// denies, rules::grants). Returns how many were removed.
pub(super) fn drop_allows(perms: &mut Value) -> usize {
    let Some(allow) = perms.get_mut("allow").and_then(Value::as_array_mut) else {
        return match perms.as_object_mut().and_then(|o| o.remove("allow")) {
            Some(Value::Null) | None => 0,
            Some(_) => 1,
        };
    };
    let before = allow.len();
    allow.retain(|entry| {
        let text = match entry {
            Value::String(t) => t.as_str(),
            Value::Object(o) => o.get("rule").and_then(Value::as_str).unwrap_or(""),
            _ => "",
        };
        is_exclusion(text)
    });
    before - allow.len()
}

/// A grant whose scope starts with `!`: under `allow:` it compiles to a deny.
fn is_exclusion(text: &str) -> bool {
    let text = text.trim();
    is_grant(text) && text.splitn(3, ':').nth(2).is_some_and(|s| s.starts_with('!'))
}

/// `$XDG_CONFIG_HOME/portcullis/settings.yaml`, or `~/.config/…` when it is unset, empty or not
/// absolute (the XDG base directory spec ignores relative values).
pub fn user_file() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| is_plain_absolute(p));
    let base = xdg.or_else(|| super::home::home().map(|h| h.join(".config")))?;
    Some(base.join("portcullis/settings.yaml"))
}

/// Resolves `dir` (relative to the working directory) as a workspace, or says why not: `dir`
/// itself (`--workspace DIR`).
pub fn workspace_at(dir: &Path) -> Result<Workspace, String> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    Workspace::resolve(dir, &here).map_err(|e| e.to_string())
}

/// Whether the user file's `trusted_workspaces` lists `dir` (resolved, as a workspace is): what
/// lets a project's own allows apply. Anything unreadable (no user file, a directory that does not
/// resolve, a list that is not one) trusts nothing.
pub fn trusts(dir: &Path) -> bool {
    let Ok(w) = workspace_at(dir) else { return false };
    let Some(user) = user_file() else { return false };
    let Ok(Some(text)) = tiers_read::read(&user, Links::Follow) else { return false };
    let Ok(Some(doc)) =
        serde_saphyr::from_str_with_options::<Option<BTreeMap<String, Value>>>(&text, yaml_limits())
    else {
        return false;
    };
    let mut notes = Vec::new();
    let Ok((_, Ok(list))) = sections(Scope::User, "", doc, &mut notes) else { return false };
    w.trust(&list, super::home::home().as_deref(), &mut notes) == Trust::Trusted
}

/// The workspace a call made in `cwd` belongs to: the nearest directory, from `cwd` up, that
/// holds `.portcullis/` — an agent's `cd src` leaves its project's denies and asks in force.
/// The walk stops at the home directory when `cwd` is under it (a `.portcullis/` above home is
/// no project of the user's), else at the filesystem root; with none found, `cwd` itself. Trust
/// is then checked on the directory found, as for `--workspace` (an exact match).
pub fn workspace_of_cwd(cwd: &Path) -> Result<Workspace, String> {
    let here = workspace_at(cwd)?;
    let home = super::home::home().and_then(|h| std::fs::canonicalize(h).ok());
    let stop = home.as_deref().filter(|h| here.root().starts_with(h));
    for dir in here.root().ancestors() {
        if dir.join(".portcullis").is_dir() {
            return workspace_at(dir);
        }
        if Some(dir) == stop {
            break;
        }
    }
    Ok(here)
}
