//! The effect model: what each simple command of a line does — the files it reads, writes or
//! runs, the destinations it reaches, the variables it sets — placed against a working directory
//! tracked through the line. Rules and the read-only proof judge these, not the words.
//!
//! A command whose every word its program's grammar understands ([`crate::grammar`]) gets exact
//! effects. Any other command gets the conservative reading: every piece of every word that
//! could be a path (the operand, what follows an `=`, what follows a short option letter) is a
//! path it may read, write or run ([`Access::Any`]). Redirections are always exact.
//!
//! The working directory is a set of possibilities: `cd /usr` may fail, and the commands after it
//! run in `/usr` or where the line started, so both are kept — except for the command that
//! follows it with `&&`, which runs in `/usr` or not at all. More than [`MAX_BASES`] collapse
//! to "unknown". `CDPATH` set on the line makes a relative `cd` unknown.

mod connections;
mod conservative;
mod cwd;
mod git;

use super::place::{place, spell, Base, Place};
use super::{Analysis, Command, RedirectKind};

pub use cwd::MAX_BASES;

/// Programs that take a subcommand after global options ([`crate::grammar::subcommand`]): when
/// their grammar cannot place it, any subcommand is possible.
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "git", "cargo", "docker", "kubectl", "npm", "pnpm", "yarn", "pip", "pip3", "go", "gh", "python",
    "python3",
];

/// What a command does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Reads the file.
    Read,
    /// Reads the directory recursively: every file below it, hidden ones included.
    ReadTree,
    /// Creates or changes it.
    Write,
    /// Runs, sources or loads it.
    Execute,
    /// Reads from it the names of further files to open.
    NamesFiles,
    /// Not understood: may read, write or run it.
    Any,
    /// git's repository, found from this directory: its objects hold every tracked file.
    Repository,
}

impl Access {
    /// Whether this access may read the path's content.
    pub fn may_read(self) -> bool {
        !matches!(self, Access::Write)
    }

    /// Whether this access may change the path.
    pub fn may_write(self) -> bool {
        matches!(self, Access::Write | Access::Any)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "reads",
            Access::ReadTree => "reads everything below",
            Access::Write => "writes",
            Access::Execute => "runs",
            Access::NamesFiles => "reads file names from",
            Access::Any => "may read, write or run",
            Access::Repository => "reads the repository at",
        }
    }
}

/// One path a command touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEffect {
    pub place: Place,
    pub access: Access,
    /// The piece of the word as written (after quote removal).
    pub word: String,
    /// The absolute path the kernel walks to open it ([`crate::place::spell`]): `..` and
    /// symlinks unresolved, for the jail's walk to resolve as open(2) will; `None` when the
    /// directory it is opened from is not known. `place` is its lexical reading.
    pub spelled: Option<String>,
}

/// Where a command's canonical form comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Canonical {
    /// The program has no subcommands: the canonical form is the literal one.
    Literal,
    /// Global options were skipped by the program's grammar.
    Placed,
    /// The program takes a subcommand, but an option before it was not understood: any
    /// subcommand is possible.
    Unplaced,
}

/// The effects of one simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEffects {
    /// The program, then its subcommand after global options (`git -C . push -f` → `git push -f`),
    /// then the rest of its words.
    pub canonical: Vec<String>,
    pub canonical_from: Canonical,
    pub paths: Vec<PathEffect>,
    /// Network destinations as written (URLs, hosts, `/dev/tcp/…`).
    pub network: Vec<String>,
    /// Variables the command sets for itself or the shell.
    pub env: Vec<String>,
    /// Every word was understood by the program's grammar (exact effects).
    pub understood: bool,
    /// Why the program's grammar did not understand every word (`None` when it did): the one
    /// reading of the command, kept so no judge reads the words again.
    pub unread: Option<crate::grammar::Unread>,
    /// The canonical names of the options the grammar understood, in order (empty when it did
    /// not understand every word): `rg --fil` is `files`.
    pub options: Vec<&'static str>,
    /// The directory the command runs in, when it is one known directory.
    pub cwd: Option<String>,
    /// It runs somewhere other than where the line started (after `cd`, or its own `-C DIR`).
    pub moved: bool,
}

/// The effects of every command of `analysis`, parallel to `analysis.commands`, starting in
/// `start` with `HOME` = `home` when known.
///
/// ```
/// use portcullis_shell::{analyze, effects::{effects, Access}, place::{Base, Place}};
///
/// let a = analyze("cd /usr && cat ../etc/hostname");
/// let e = effects(&a, &Base::start(), None);
/// assert!(e[1].paths.iter().any(|p| p.place == Place::Abs("/etc/hostname".into())));
/// ```
pub fn effects(analysis: &Analysis, start: &Base, home: Option<&str>) -> Vec<CommandEffects> {
    let mut dirs = cwd::Tracker::new(start.clone(), analysis);
    analysis
        .commands
        .iter()
        .map(|cmd| {
            let bases = dirs.bases_for(cmd);
            let mut e = command_effects(cmd, bases, home);
            e.moved |= bases != std::slice::from_ref(start);
            dirs.after(cmd, home);
            e
        })
        .collect()
}

fn command_effects(cmd: &Command, bases: &[Base], home: Option<&str>) -> CommandEffects {
    let mut out = CommandEffects {
        canonical: std::iter::once(cmd.program.clone()).chain(cmd.args.iter().cloned()).collect(),
        canonical_from: Canonical::Literal,
        paths: Vec::new(),
        network: Vec::new(),
        env: cmd.assignments.iter().map(|(name, _)| name.clone()).collect(),
        understood: false,
        unread: None,
        options: Vec::new(),
        moved: false,
        cwd: match bases {
            [Base::Dir(d)] => Some(d.clone()),
            _ => None,
        },
    };
    let put = |out: &mut CommandEffects, word: &str, access: Access, bases: &[Base]| {
        for base in bases {
            let place = place(word, base, home);
            let spelled = spell(word, base, home);
            // Spellings of one place differ in where the kernel lands only through `..`.
            let same = |p: &PathEffect| {
                p.place == place
                    && p.access == access
                    && (p.spelled == spelled || !(climbs(&p.spelled) || climbs(&spelled)))
            };
            if !out.paths.iter().any(same) {
                out.paths.push(PathEffect { place, access, word: word.to_string(), spelled });
            }
        }
    };
    // Variables glibc reads as file names, relative to its data directories.
    for (name, value) in &cmd.assignments {
        let under = match name.as_str() {
            "TZ" => "/usr/share/zoneinfo",
            "LANGUAGE" | "LANG" | "LC_ALL" | "LC_MESSAGES" | "NLSPATH" | "LOCPATH" => "/usr/share/locale",
            n if n.starts_with("LC_") => "/usr/share/locale",
            "TZDIR" => "/",
            _ => continue,
        };
        let base = [Base::Dir(under.into())];
        for piece in value.split(':').filter(|p| !p.is_empty()) {
            put(&mut out, piece, Access::Read, &base);
        }
    }
    if cmd.path_qualified || cmd.invoked_as.contains('/') {
        put(&mut out, &cmd.invoked_as, Access::Execute, bases);
    }
    for r in &cmd.redirects {
        let access = match r.kind {
            RedirectKind::Input => Access::Read,
            RedirectKind::DupInput if !is_fd(&r.target) => Access::Read,
            RedirectKind::ReadWrite => Access::Any,
            _ if r.writes_file() => Access::Write,
            _ => continue,
        };
        if r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/") {
            out.network.push(r.target.clone());
        }
        put(&mut out, &r.target, access, bases);
    }
    match crate::grammar::read(&cmd.program, &cmd.args) {
        Ok(reading) => {
            out.understood = true;
            out.options = reading.items.iter().filter_map(|i| i.option).collect();
            apply_reading(&mut out, cmd, &reading, bases, home, &put);
        }
        Err(why) => {
            out.unread = Some(why);
            match crate::grammar::subcommand(&cmd.program, &cmd.args) {
                Some(reading) => apply_reading(&mut out, cmd, &reading, bases, home, &put),
                None if SUBCOMMAND_PROGRAMS.contains(&cmd.program.as_str()) => {
                    out.canonical_from = Canonical::Unplaced;
                }
                None => {}
            }
            for piece in cmd.args.iter().flat_map(|a| conservative::pieces(a)) {
                put(&mut out, piece, Access::Any, bases);
            }
            // A program no grammar read may connect to any host its words name.
            out.network.extend(cmd.args.iter().filter(|a| connections::may_name_host(a)).cloned());
        }
    }
    out
}

/// Effects from a grammar's reading: its subcommand places the canonical form, its items are
/// the command's paths and destinations, a `Chdir` item moves the base for the items after it.
fn apply_reading(
    out: &mut CommandEffects,
    cmd: &Command,
    reading: &crate::grammar::Reading<'_>,
    bases: &[Base],
    home: Option<&str>,
    put: &impl Fn(&mut CommandEffects, &str, Access, &[Base]),
) {
    use crate::grammar::Role;
    if !reading.subcommand.is_empty() {
        out.canonical_from = Canonical::Placed;
        let first = reading.subcommand[0];
        // The canonical form drops the global options: the program, its subcommand words, then
        // every word after the first subcommand word.
        let at =
            reading.subcommand_at.unwrap_or_else(|| cmd.args.iter().position(|a| a == first).unwrap_or(0));
        out.canonical = std::iter::once(cmd.program.clone())
            .chain(reading.subcommand.iter().map(|s| s.to_string()))
            .chain(cmd.args[at + reading.subcommand.len().min(cmd.args.len() - at)..].iter().cloned())
            .collect();
        if cmd.program == "git" && git::may_run_another(&out.canonical[1..]) {
            out.canonical_from = Canonical::Unplaced;
        }
    }
    // Copied only when a `Chdir` item moves it.
    let mut here: std::borrow::Cow<'_, [Base]> = std::borrow::Cow::Borrowed(bases);
    for item in &reading.items {
        let access = match item.role {
            // Program text (awk, sed, jq) may open a connection to a host it names.
            Role::Script if connections::may_name_host(item.text) => {
                out.network.push(item.text.to_string());
                continue;
            }
            Role::Flag | Role::Inert | Role::Script => continue,
            Role::Reads => Access::Read,
            Role::ReadsTree => Access::ReadTree,
            Role::Writes => Access::Write,
            Role::Executes => Access::Execute,
            Role::NamesFiles => Access::NamesFiles,
            Role::Connects => {
                out.network.push(item.text.to_string());
                continue;
            }
            Role::Chdir => {
                here = here
                    .iter()
                    .map(|b| super::place::enter_dir(item.text, b, home))
                    .collect::<Vec<_>>()
                    .into();
                out.moved = true;
                continue;
            }
        };
        put(out, item.text, access, &here);
    }
    // git reads the repository it finds from where it runs, whatever its words name.
    if cmd.program == "git" {
        put(out, ".", Access::Repository, &here);
    }
}

fn climbs(spelled: &Option<String>) -> bool {
    spelled.as_deref().is_some_and(|s| s.split('/').any(|c| c == ".."))
}

fn is_fd(target: &str) -> bool {
    target == "-" || (!target.is_empty() && target.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests;
