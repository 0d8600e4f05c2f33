//! `--import-claude-permissions`: Claude Code's own permission rules (`.claude/settings.json` of
//! the project, `~/.claude/settings.json` of the user) read beside portcullis's files, as the
//! tiers they are: the project's file in scope `project` — as writable by a cloned repository as
//! `.portcullis/settings.yaml`, so its allows apply only in a workspace the user file trusts, as
//! that file's — and the user's in scope `user`. Lossy, and never wider than Claude Code itself:
//!
//! - deny and ask rules import as they are meant: a `/path` (relative to the project in Claude
//!   Code) is denied both there and as an absolute path, `~/` is the home directory, a trailing
//!   ` *` also matches the bare command, `mcp__server` is every tool of the server;
//! - allow rules only narrow: `WebFetch(domain:x)` is demoted to ask, `~/…` stays inert (no
//!   expansion: dropped), a rule portcullis cannot parse is dropped; a bare `WebSearch` is kept.
//!
//! Every lossy outcome is reported (the loader prints it as a warning).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::Layer;
use crate::rules::spec::RuleSpec;
use crate::rules::Scope;

/// Claude Code's settings files for a project at `project`: the project's, then the user's.
pub fn settings_files(project: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    scoped_files(project, home).into_iter().map(|(_, f)| f).collect()
}

/// Each settings file with the tier it is laid in.
fn scoped_files(project: &Path, home: Option<&Path>) -> Vec<(Scope, PathBuf)> {
    let mut out = vec![(Scope::SharedProject, project.join(".claude/settings.json"))];
    out.extend(home.map(|h| (Scope::User, h.join(".claude/settings.json"))));
    out
}

/// The permission layers imported from Claude Code's settings for `project`, and what was lost.
pub fn layers(project: &Path, home: Option<&Path>) -> (Vec<Layer>, Vec<String>) {
    let (mut layers, mut notes) = (Vec::new(), Vec::new());
    // Asked once, and only when a project file is there to be trusted.
    let mut trusted = None;
    for (scope, file) in scoped_files(project, home) {
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                notes.push(format!("{}: not read ({e}): nothing imported from it", file.display()));
                continue;
            }
        };
        match import(&text, project, home) {
            Ok((mut perms, lost)) => {
                notes.extend(lost.into_iter().map(|n| format!("{}: {n}", file.display())));
                if scope.is_project() && !*trusted.get_or_insert_with(|| super::tiers::trusts(project)) {
                    let dropped = perms.get_mut("permissions").map_or(0, super::tiers::drop_allows);
                    if dropped > 0 {
                        notes.push(format!(
                            "{}: {dropped} allow rule(s) ignored: workspace {} is not trusted (trusted_workspaces in the user file)",
                            file.display(),
                            project.display()
                        ));
                    }
                }
                let name = format!("claude:{}", file.display());
                layers.push(Layer { scope, name, text: perms.to_string() });
            }
            Err(e) => notes.push(format!("{}: {e}: nothing imported from it", file.display())),
        }
    }
    (layers, notes)
}

/// One settings file's `permissions` as a portcullis `permissions:` document, and what was lost.
pub fn import(text: &str, project: &Path, home: Option<&Path>) -> Result<(Value, Vec<String>), String> {
    let settings: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let mut lost = Vec::new();
    let (mut allow, mut ask, mut deny) = (Vec::new(), Vec::new(), Vec::new());
    let perms = settings.get("permissions");
    for (list, effect) in [("deny", Effect::Deny), ("ask", Effect::Ask), ("allow", Effect::Allow)] {
        let Some(rules) = perms.and_then(|p| p.get(list)) else { continue };
        let Some(rules) = rules.as_array() else {
            lost.push(format!("permissions.{list} is not a list: dropped"));
            continue;
        };
        for rule in rules {
            let Some(rule) = rule.as_str() else {
                lost.push(format!("permissions.{list}: {rule} is not a rule: dropped"));
                continue;
            };
            for (effect, spec) in translate(effect, rule, project, home, &mut lost) {
                if let Err(e) = RuleSpec::parse(&spec) {
                    lost.push(format!("{list} {rule:?}: portcullis cannot read {spec:?} ({e}): dropped"));
                    continue;
                }
                match effect {
                    Effect::Deny => deny.push(spec),
                    Effect::Ask => ask.push(spec),
                    Effect::Allow => allow.push(spec),
                }
            }
        }
    }
    Ok((json!({"permissions": {"allow": allow, "ask": ask, "deny": deny}}), lost))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Allow,
    Ask,
    Deny,
}

/// The portcullis rules one Claude Code rule becomes (none when it is dropped).
fn translate(
    effect: Effect,
    rule: &str,
    project: &Path,
    home: Option<&Path>,
    lost: &mut Vec<String>,
) -> Vec<(Effect, String)> {
    let rule = rule.trim();
    let (tool, spec) = match rule.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(spec) => (tool, Some(spec)),
            None => {
                lost.push(format!("{rule:?} is not Tool(specifier): dropped"));
                return Vec::new();
            }
        },
        None => (rule, None),
    };
    // `mcp__server` is every tool of the server in Claude Code.
    if spec.is_none() && tool.starts_with("mcp__") && !tool["mcp__".len()..].contains("__") {
        return vec![(effect, format!("{tool}__*"))];
    }
    let Some(spec) = spec else { return vec![(effect, tool.to_owned())] };
    match (tool, effect) {
        ("WebFetch", Effect::Allow) if spec.starts_with("domain:") => {
            lost.push(format!("allow {rule:?}: demoted to ask (a host is not proof of what a page says)"));
            vec![(Effect::Ask, rule.to_owned())]
        }
        ("Read" | "Edit" | "Write" | "NotebookEdit", _) => paths(effect, tool, spec, project, home, lost),
        ("Bash", Effect::Deny | Effect::Ask) => {
            // Claude Code's trailing ` *` also matches the bare command: `git push *` is `git push`.
            let mut out = vec![(effect, rule.to_owned())];
            if let Some(prefix) = spec.strip_suffix(" *").filter(|p| !p.contains('*')) {
                out.push((effect, format!("Bash({prefix}:*)")));
            }
            out
        }
        _ => vec![(effect, rule.to_owned())],
    }
}

/// A path rule: `//x` is absolute, `~/x` the home directory, `/x` relative to the project (the
/// directory holding `.claude/`), `x` and `./x` relative to the project too.
fn paths(
    effect: Effect,
    tool: &str,
    spec: &str,
    project: &Path,
    home: Option<&Path>,
    lost: &mut Vec<String>,
) -> Vec<(Effect, String)> {
    let tool = if tool == "NotebookEdit" { "Edit" } else { tool };
    let under = |base: &Path, rest: &str| {
        format!("{tool}({}/{rest})", base.display().to_string().trim_end_matches('/'))
    };
    if let Some(abs) = spec.strip_prefix("//") {
        return vec![(effect, format!("{tool}(/{abs})"))];
    }
    if let Some(rest) = spec.strip_prefix("~/") {
        return match (effect, home) {
            (Effect::Allow, _) => {
                lost.push(format!("allow {tool}({spec}): '~' is not expanded in an allow: dropped"));
                Vec::new()
            }
            (_, Some(home)) => vec![(effect, under(home, rest))],
            (_, None) => {
                lost.push(format!("{tool}({spec}): no home directory to expand '~' in: dropped"));
                Vec::new()
            }
        };
    }
    if let Some(rest) = spec.strip_prefix('/') {
        let mut out = vec![(effect, under(project, rest))];
        // A deny or ask also holds where a reader takes `/x` as absolute: never wider.
        if effect != Effect::Allow {
            out.push((effect, format!("{tool}(/{rest})")));
        }
        return out;
    }
    vec![(effect, under(project, spec.trim_start_matches("./")))]
}

#[cfg(test)]
mod tests;
