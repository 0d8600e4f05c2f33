//! What each word of a command means to its program, read by the program's own option grammar.
//!
//! The read is positive: a program is read only if it is listed here, and a command only if
//! every word is understood — a known option (spelled any way the program itself accepts:
//! GNU abbreviations `--fil=-`, glued values `-ob64.txt`, `--opt=value`, the value in the next
//! word, options after operands), its value, or an operand whose meaning the program's grammar
//! gives. Anything else is an [`Unread`], and the caller must assume the worst of the command.
//!
//! ```
//! use portcullis_shell::grammar::{read, Role};
//!
//! let args: Vec<String> = ["-n", "data", "--out=sorted"].map(String::from).to_vec();
//! let reading = read("sort", &args).unwrap();
//! assert!(reading.items.iter().any(|i| i.text == "sorted" && i.role == Role::Writes));
//! ```
//!
//! Each table was taken from the program's source (`long_options`, the getopt string) and is
//! checked against the installed program in `differential` tests: every abbreviation accepted
//! here is accepted there, every one refused as ambiguous or unknown is refused there.
//!
//! **Partial tables.** Some GNU tables list only part of a program's options (tar, wget, make,
//! hostname). Reading their abbreviations by GNU rules is still safe: every listed option exists
//! in the program, so the program's candidates for an abbreviation include the table's; where
//! the table finds one option, the program finds the same one or calls the spelling ambiguous
//! and stops. Programs whose parsers are not getopt (git's subcommands, curl, jq, clap and cobra
//! programs) are read with exact names only, which can never be misread.
//!
//! **Items.** Items come in argument order, so a [`Role::Chdir`] item applies to the items after
//! it (`tar -C dir -x`, `git -C a -C b`, `make -C dir` then its makefile). Some items name what
//! the program uses without its being written: `.` for `grep -r`, `ls`, `du`, `find`, `rg`, `fd`,
//! `tar -x` (written), `wget` and `curl -O` (written); `~` for a bare `cd`; `/tmp` for `mktemp`;
//! `GNUmakefile`, `makefile`, `Makefile` for `make`. [`Role::Script`] text (sed scripts, awk
//! programs, jq filters) can itself read, write and run (`sed 'w f'`, awk's `system`): its
//! effects are not items, and the language's checker must judge it.
//!
//! **What the words do not say.** The environment changes some readings, and the caller must
//! refuse them: `POSIXLY_CORRECT` stops GNU programs at the first operand (`grep x f -e
//! /etc/shadow` then reads `/etc/shadow`, which this reading calls a pattern); `_POSIX2_VERSION`
//! changes `tail +3`; configuration files and variables add options (`~/.curlrc`, `~/.wgetrc`,
//! `RIPGREP_CONFIG_PATH`, `MAKEFLAGS`, `GIT_*`, `npm_config_*`), and git and make run what
//! their own configuration and makefiles say.

mod getopt;
mod spec;

mod coreutils;
mod files;
mod find;
mod git;

/// The porcelain effects a git command has besides its own name (`pull` fetches).
pub use git::effect::includes as git_includes;
/// The porcelain git command a plumbing command's effect equals (`send-pack` → `push`).
pub use git::effect::porcelain as git_porcelain;
mod grep;
mod listing;
mod make;
mod net;
mod printing;
mod routes;
pub use routes::DESTINATIONS_IN_A_FILE;
mod scripts;
mod search;
mod shell;
mod subcommands;
mod table;
mod tar;
mod util;

#[cfg(test)]
mod differential;
#[cfg(test)]
mod subcommand_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod traced;

/// What one argument word means to the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// An option carrying no value.
    Flag,
    /// A value or operand naming no file and running nothing (pattern, count, format, name).
    Inert,
    /// A file the program reads.
    Reads,
    /// A directory or file read recursively (every file below, hidden ones included).
    ReadsTree,
    /// A file it creates or changes.
    Writes,
    /// A program, script or command it runs, sources or loads.
    Executes,
    /// A file from which it reads further file names to open (`--files0-from`, `-T`, `@file`).
    NamesFiles,
    /// A network destination (URL, host).
    Connects,
    /// It changes into this directory first (`git -C`, `make -C`, `tar -C`): later relative
    /// paths resolve there.
    Chdir,
    /// Program text in a language the program interprets (a sed script, an awk program, a jq
    /// filter): what it does is for that language's checker to say.
    Script,
}

/// One understood word (or part of a word: the value of `-ofile` is `file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    /// The word, or the part of it that carries the meaning: the value after `=` or after the
    /// option letter, the option letter of a flag in a cluster.
    pub text: &'a str,
    pub role: Role,
    /// The canonical name of the option (its long name, else its letter; `NUM` for a digit
    /// option, `--` for the end of options); `None` for operands.
    pub option: Option<&'static str>,
}

/// A command read by its program's grammar.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reading<'a> {
    /// The subcommand after global options (`["push"]` for `git -C x push`); empty when the
    /// program has none.
    pub subcommand: Vec<&'a str>,
    /// The index in the arguments of the first subcommand word (`2` for `git -C log log`,
    /// where searching for the word would find the `-C` value).
    pub subcommand_at: Option<usize>,
    pub items: Vec<Item<'a>>,
}

impl<'a> Reading<'a> {
    /// A reading of a program without subcommands.
    pub(crate) fn plain(items: Vec<Item<'a>>) -> Reading<'a> {
        Reading { subcommand: Vec::new(), subcommand_at: None, items }
    }

    /// A reading whose subcommand is the word `args[at]`, if there is one.
    pub(crate) fn placed(args: &'a [String], at: usize, items: Vec<Item<'a>>) -> Reading<'a> {
        let sub = args.get(at).map(String::as_str);
        Reading { subcommand: sub.into_iter().collect(), subcommand_at: sub.map(|_| at), items }
    }
}

/// Why a command was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// No grammar for this program.
    UnknownProgram,
    /// No grammar for this subcommand of a known program (`git frobnicate`, an alias).
    UnknownSubcommand(String),
    /// An option the grammar does not list.
    UnknownOption(String),
    /// A long-option abbreviation naming more than one option.
    Ambiguous(String),
    /// An option whose value is missing at the end of the words.
    MissingValue(String),
    /// A value given to an option that takes none (`--count=3`).
    UnexpectedValue(String),
    /// An operand the program's grammar has no place for.
    Unplaced(String),
}

/// Read `args` (the words after the program name) by `program`'s grammar. `Ok` only when every
/// word is understood.
pub fn read<'a>(program: &str, args: &'a [String]) -> Result<Reading<'a>, Unread> {
    match table::lookup(program).ok_or(Unread::UnknownProgram)? {
        table::Kind::Getopt(grammar) => Ok(Reading::plain(getopt::read(grammar, args)?)),
        table::Kind::Obsolete(grammar, is_obsolete) => {
            Ok(Reading::plain(table::obsolete(grammar, is_obsolete, args)?))
        }
        table::Kind::Custom(custom) => custom(args),
    }
}

/// For programs with global options before a subcommand (git, cargo, docker, kubectl, npm, …):
/// the subcommand words after skipping the global options by the program's own grammar, with
/// the items those options carry (`git -C DIR` is [`Role::Chdir`], `-c core.pager=…` is
/// [`Role::Executes`]). `None` when the subcommand cannot be placed (an unknown global option)
/// or the program has no subcommands: callers must treat every subcommand as possible.
pub fn subcommand<'a>(program: &str, args: &'a [String]) -> Option<Reading<'a>> {
    table::subcommand(program, args)
}
