//! The read-only proof over what a command does: every word understood by its program's
//! grammar; nothing written, run, reached over the network or named through a file; every read
//! off the secret stores, judged where it is placed (after `cd`, `-C`, `..`, `~`).

use std::borrow::Cow;

use crate::effects::{Access, CommandEffects};
use crate::grammar;
use crate::place::Place;
use crate::secrets::{self, Context, Globbing, Reading};
use crate::Command;

/// Whether `fx`, the effects of `command`, prove it read-only.
pub(super) fn check(command: &Command, fx: &CommandEffects, home: Option<&str>) -> Result<(), String> {
    // `command -v NAME` / `-V` looks names up (other forms were unwrapped as a wrapper).
    if command.program == "command" {
        return match command.args.split_first() {
            Some((flag, names))
                if (flag == "-v" || flag == "-V") && names.iter().all(|n| !n.starts_with('-')) =>
            {
                Ok(())
            }
            _ => Err("command runs a command".into()),
        };
    }
    if !fx.understood {
        return Err(match &fx.unread {
            Some(grammar::Unread::UnknownProgram) => format!("{} has no grammar here", command.program),
            Some(why) => format!("not every word is understood ({why:?})"),
            None => "not every word is understood".into(),
        });
    }
    // git prints its configuration's values (remote URLs carry tokens: `https://x:TOKEN@…`)
    // without naming `.git/config`: those subcommands read a secret store.
    if command.program == "git" && fx.canonical.get(1).is_some_and(|s| PRINTS_CONFIG.contains(&s.as_str())) {
        return Err(format!(
            "git {} prints the repository's config, where remote credentials live",
            fx.canonical[1]
        ));
    }
    // A repository elsewhere (`git -C vendor/pkg`, after `cd`) may be one a checkout carries as
    // tracked files, whose config runs code (`core.fsmonitor`): git is proven where the line
    // starts only.
    if command.program == "git" && fx.moved {
        return Err("git runs in another directory, whose repository config may run code".into());
    }
    if command.program == "git" {
        names_object_by_id(&fx.canonical)?;
    }
    if let Some(dest) = fx.network.first() {
        return Err(format!("reaches {dest}"));
    }
    let cx = Context {
        home,
        cwd: fx.cwd.as_deref(),
        globbing: if command.globs { Globbing::Shell } else { Globbing::Literal },
    };
    let lister = LISTERS.contains(&command.program.as_str());
    let names_only = names_only(command, fx);
    for p in &fx.paths {
        let reading = match p.access {
            Access::Read => Reading::File,
            Access::ReadTree => Reading::Tree,
            // git's own repository where the line starts (SECURITY.md: what it prints is judged).
            Access::Repository => continue,
            // The program itself, named by a system path (the caller checked the directory).
            Access::Execute if p.word == command.invoked_as => continue,
            Access::Write if is_sink(&p.place) => continue,
            access => return Err(format!("{} {}", access.as_str(), p.place)),
        };
        // A recursive listing shows names, not contents: judged as its directory, which must be
        // off the stores and not a root that holds them all (home, `/`, a parent).
        if reading == Reading::Tree && (lister || names_only) {
            if let Some(root) = broad_root(&p.place) {
                return Err(format!("lists everything below {root}"));
            }
            let dir_cx = Context { globbing: Globbing::Literal, ..cx };
            secrets::judge(&listed_dir(&p.place), Reading::File, &dir_cx)
                .map_err(|s| format!("lists {}: {s}", p.place))?;
            continue;
        }
        let place = match (reading, lister) {
            (Reading::File, true) => listed_dir(&p.place),
            _ => Cow::Borrowed(&p.place),
        };
        let cx = match *place == p.place {
            true => cx,
            false => Context { globbing: Globbing::Literal, ..cx },
        };
        secrets::judge(&place, reading, &cx)
            .map_err(|s| format!("{} {}: {s}", p.access.as_str(), p.place))?;
    }
    Ok(())
}

/// `git cat-file -p ID`, `git show ID`: an object named by its id may be the blob of any tracked
/// file (a committed `.env`), which no path shows; `REV:path` forms are judged by their path.
fn names_object_by_id(canonical: &[String]) -> Result<(), String> {
    let hex = |w: &str| w.len() >= 4 && w.bytes().all(|b| b.is_ascii_hexdigit());
    let sub = canonical.get(1).map(String::as_str);
    let rest = canonical.get(2..).unwrap_or_default();
    let only_facts = rest.iter().any(|w| matches!(w.as_str(), "-t" | "-s" | "-e"));
    match sub {
        Some("cat-file") if !only_facts => {
            Err("git cat-file prints objects by id, which may be any tracked file".into())
        }
        Some("show") if rest.iter().any(|w| hex(w)) => {
            Err("git show names an object by id, which may be any tracked file's blob".into())
        }
        _ => Ok(()),
    }
}

/// git subcommands that print values of the repository's config.
const PRINTS_CONFIG: &[&str] = &["remote", "config", "var"];

/// Programs that show names and metadata of what they are given, never content: `ls *` shows
/// the names the glob matched (and the listings of directories among them).
const LISTERS: &[&str] = &["ls", "dir", "vdir", "du", "stat"];

/// Programs whose recursive reads are listings of names (`find .`, `tree src`, `ls -R`).
const TREE_LISTERS: &[&str] = &["find", "tree", "fd", "fdfind"];

/// Whether the command's recursive reads list names only: `find`, `tree`, `fd`, and `rg --files`
/// (its long options may be abbreviated: `--fil`; the grammar's reading names it `files`).
fn names_only(command: &Command, fx: &CommandEffects) -> bool {
    let program = command.program.as_str();
    TREE_LISTERS.contains(&program) || (program == "rg" && fx.understood && fx.options.contains(&"files"))
}

/// A directory whose listing shows every store's name: `/`, a home, the homes, a parent.
fn broad_root(place: &Place) -> Option<String> {
    let broad = match place {
        Place::Anywhere => true,
        Place::Home(p) => p == ".",
        Place::Abs(p) => super::secrets::is_broad_root(p),
        Place::InStart(_) => false,
    };
    broad.then(|| place.to_string())
}

/// For a lister, a last component of only `*` and `?` lists its directory: judged as that
/// directory, which must itself be off the stores.
fn listed_dir(place: &Place) -> Cow<'_, Place> {
    let (text, rebuild): (&str, fn(&str) -> Place) = match place {
        Place::Abs(p) => (p, |d| Place::Abs(if d.is_empty() { "/".into() } else { d.into() })),
        Place::Home(p) => (p, |d| Place::Home(if d.is_empty() { ".".into() } else { d.into() })),
        Place::InStart(p) => (p, |d| Place::InStart(if d.is_empty() { ".".into() } else { d.into() })),
        Place::Anywhere => return Cow::Borrowed(place),
    };
    let (dir, last) = text.rsplit_once('/').unwrap_or(("", text));
    let bare = !last.is_empty() && last.bytes().all(|b| b == b'*' || b == b'?');
    match bare && !dir.contains(['*', '?', '[']) {
        true => Cow::Owned(rebuild(dir)),
        false => Cow::Borrowed(place),
    }
}

/// Writes that change no file.
fn is_sink(place: &Place) -> bool {
    matches!(place.absolute(), Some("/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2"))
}
