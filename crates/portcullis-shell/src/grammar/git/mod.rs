//! git: global options by `git.c`'s `handle_options` (exact spellings only), then the
//! subcommand, read by its own grammar when it is one of the reading subcommands modelled here.
//!
//! Subcommand options are read with exact names only. git's parse-options accepts unique
//! abbreviations (`git diff --out=x` is `--output=x`), but a table that listed fewer options
//! than git has would resolve some abbreviations differently from git; an exact name cannot be
//! misread, so an abbreviation is refused instead.

pub mod effect;
mod log;
mod more;
mod small;

use super::getopt;
use super::spec::{Grammar, Parsed};
use super::{Item, Reading, Role, Unread};

use Role::{Chdir, Executes, Flag, Inert, Reads, ReadsTree};

/// `-c` keys whose values name no program, file or host: printing preferences.
const INERT_CONFIG: &[&str] = &[
    "color.ui",
    "color.diff",
    "color.status",
    "color.branch",
    "color.grep",
    "color.showbranch",
    "core.quotepath",
    "core.abbrev",
    "column.ui",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "diff.noprefix",
    "diff.mnemonicprefix",
    "diff.renames",
    "grep.linenumber",
    "status.short",
    "status.branch",
];

/// The role of a `-c name=value` word: inert only for a printing preference (names are
/// case-insensitive in their section and key), else it may name a program (`core.pager`,
/// `core.fsmonitor`, `diff.external`, `alias.*`).
fn config_role(assignment: &str) -> Role {
    let name = assignment.split_once('=').map_or(assignment, |(n, _)| n).to_ascii_lowercase();
    let advice = name.strip_prefix("advice.").is_some_and(|k| !k.is_empty() && !k.contains('.'));
    if advice || INERT_CONFIG.contains(&name.as_str()) {
        Inert
    } else {
        Executes
    }
}

/// Read git's global options; returns their items and the index of the subcommand.
fn globals(args: &[String]) -> Result<(Vec<Item<'_>>, usize), Unread> {
    let mut items = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i).map(String::as_str) {
        if !w.starts_with('-') || matches!(w, "--help" | "-h" | "--version" | "-v") {
            break;
        }
        let next = |name: &str| args.get(i + 1).ok_or_else(|| Unread::MissingValue(name.into()));
        let (text, role, option, used): (&str, Role, &'static str, usize) = match w {
            "-p" | "--paginate" => (w, Flag, "paginate", 1),
            "-P" | "--no-pager" => (w, Flag, "no-pager", 1),
            "--no-lazy-fetch"
            | "--no-replace-objects"
            | "--bare"
            | "--literal-pathspecs"
            | "--no-literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-optional-locks"
            | "--no-advice" => (w, Flag, "flag", 1),
            "--html-path" | "--man-path" | "--info-path" => (w, Flag, "path", 1),
            // The repository's configuration names programs git runs (core.fsmonitor, hooks).
            "--git-dir" => (next(w)?, Executes, "git-dir", 2),
            "--work-tree" => (next(w)?, ReadsTree, "work-tree", 2),
            "--namespace" => (next(w)?, Inert, "namespace", 2),
            "--attr-source" => (next(w)?, Inert, "attr-source", 2),
            "--shallow-file" => (next(w)?, Reads, "shallow-file", 2),
            "--config-env" => (next(w)?, Executes, "config-env", 2),
            "-c" => {
                let v = next(w)?;
                (v, config_role(v), "c", 2)
            }
            "-C" => (next(w)?, Chdir, "C", 2),
            _ => match w.split_once('=') {
                Some(("--git-dir", v)) => (v, Executes, "git-dir", 1),
                Some(("--work-tree", v)) => (v, ReadsTree, "work-tree", 1),
                Some(("--namespace", v)) => (v, Inert, "namespace", 1),
                Some(("--attr-source", v)) => (v, Inert, "attr-source", 1),
                Some(("--config-env", v)) => (v, Executes, "config-env", 1),
                Some(("--exec-path", v)) => (v, Executes, "exec-path", 1),
                Some(("--list-cmds", v)) => (v, Inert, "list-cmds", 1),
                // `--exec-path` alone (or followed by anything but `=`) prints it and exits.
                _ if w.starts_with("--exec-path") => (w, Flag, "exec-path", 1),
                _ => return Err(Unread::UnknownOption(w.into())),
            },
        };
        items.push(Item { text, role, option: Some(option) });
        i += used;
    }
    Ok((items, i))
}

/// The subcommand, named by its effect ([`effect`]: `send-pack` is `push`), and the global
/// options' items.
pub(crate) fn subcommand(args: &[String]) -> Option<Reading<'_>> {
    let (items, at) = globals(args).ok()?;
    let mut reading = Reading::placed(args, at, items);
    if let Some(first) = reading.subcommand.first_mut() {
        *first = effect::named(first);
    }
    Some(reading)
}

/// The whole command: global options, then a modelled subcommand's grammar.
pub(crate) fn read(args: &[String]) -> Result<Reading<'_>, Unread> {
    let (mut items, at) = globals(args)?;
    let Some(sub) = args.get(at) else {
        return Ok(Reading::plain(items));
    };
    if let Some((grammar, second)) = two_words(sub, args.get(at + 1).map(String::as_str)) {
        let from = at + 1 + usize::from(second.is_some());
        let mut parsed = getopt::split(grammar, args, from)?;
        (grammar.operands)(&mut parsed)?;
        items.extend(parsed.items);
        let mut reading = Reading::placed(args, at, items);
        reading.subcommand.extend(second);
        return Ok(reading);
    }
    let grammar = grammar(sub).ok_or_else(|| Unread::UnknownSubcommand(sub.clone()))?;
    let mut parsed = getopt::split(grammar, args, at + 1)?;
    (grammar.operands)(&mut parsed)?;
    items.extend(parsed.items);
    Ok(Reading::placed(args, at, items))
}

/// The listing forms of subcommands with subcommands of their own: `stash list`, `stash
/// show`, `remote`, `remote -v`, `remote get-url`, `reflog` / `reflog show`. The second word is
/// returned when it is one.
fn two_words<'a>(sub: &str, next: Option<&'a str>) -> Option<(&'static Grammar, Option<&'a str>)> {
    match (sub, next) {
        ("stash", Some(w @ "list")) => Some((&log::LOG, Some(w))),
        ("stash", Some(w @ "show")) => Some((&more::STASH_SHOW, Some(w))),
        ("remote", None) => Some((&more::REMOTE, None)),
        ("remote", Some(w)) if w.starts_with('-') => Some((&more::REMOTE, None)),
        ("remote", Some(w @ "get-url")) => Some((&more::REMOTE_GET_URL, Some(w))),
        ("reflog", Some(w @ "show")) => Some((&log::LOG, Some(w))),
        ("reflog", Some(w)) if w.starts_with('-') => Some((&log::LOG, None)),
        ("reflog", None) => Some((&log::LOG, None)),
        _ => None,
    }
}

fn grammar(sub: &str) -> Option<&'static Grammar> {
    Some(match sub {
        "log" | "show" | "whatchanged" | "shortlog" => &log::LOG,
        "diff" => &log::DIFF,
        "status" => &small::STATUS,
        "blame" | "annotate" => &small::BLAME,
        "branch" => &small::BRANCH,
        "rev-parse" => &small::REV_PARSE,
        "ls-files" => &small::LS_FILES,
        "ls-tree" => &small::LS_TREE,
        "grep" => &small::GREP,
        "describe" => &small::DESCRIBE,
        "merge-base" => &small::MERGE_BASE,
        "rev-list" => &small::REV_LIST,
        "show-ref" => &small::SHOW_REF,
        "cat-file" => &small::CAT_FILE,
        "version" => &small::VERSION,
        "tag" => &more::TAG,
        "for-each-ref" => &more::FOR_EACH_REF,
        "check-ignore" => &more::CHECK_IGNORE,
        "check-attr" => &more::CHECK_ATTR,
        "name-rev" => &more::NAME_REV,
        "cherry" => &more::CHERRY,
        "show-branch" => &more::SHOW_BRANCH,
        "count-objects" => &more::COUNT_OBJECTS,
        _ => return None,
    })
}

/// Revisions and paths: whatever git reads through them is the repository's content.
pub(crate) fn revisions_and_paths(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Reads);
    Ok(())
}

#[cfg(test)]
mod tests;
